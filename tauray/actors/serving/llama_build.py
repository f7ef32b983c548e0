"""Whether the installed llama.cpp can run a CPU kernel that crashes: the AMX matmul path.

ggml's AMX kernel (``ggml_backend_amx_mul_mat``, built when the compiler is told the CPU has
AMX, as a ``-march=native`` build on an Intel Sapphire Rapids or later CPU is) segfaults on
the first generation in llama-cpp-python 0.3.36. tauray builds llama.cpp portable
(``cmake/llama.cmake``: no native tuning, no AMX), but a user may have built it otherwise.
The kernel's symbols are in the library exactly when it was compiled in, so reading the
files (not loading them: a library built for another CPU may not even load) tells whether
any library of the installed package, a runtime-selected CPU variant included, has it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

AMX_MARKER = b"ggml_backend_amx_"
"""In the symbol names of the AMX kernel and its buffer type (C++-mangled or not)."""


def llama_lib_dir() -> Path | None:
    """The folder of the installed llama-cpp-python's native libraries; None without the package."""
    found = importlib.util.find_spec("llama_cpp")
    if found is None or not found.submodule_search_locations:
        return None
    lib = Path(list(found.submodule_search_locations)[0]) / "lib"
    return lib if lib.is_dir() else None


def amx_libraries(lib_dir: Path) -> list[str]:
    """Names of the shared libraries in ``lib_dir`` that contain the AMX kernel."""
    hits = []
    for path in sorted(lib_dir.iterdir()):
        shared = ".so" in path.name or path.suffix in (".dylib", ".dll")
        if shared and path.is_file() and not path.is_symlink() and AMX_MARKER in path.read_bytes():
            hits.append(path.name)
    return hits


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """This CPU has AMX (Linux; False where it cannot tell)."""
    try:
        flags = next((line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        return False
    return "amx_int8" in flags.split() or "amx_tile" in flags.split()


def amx_problem() -> str | None:
    """A one-line refusal when the installed llama.cpp has the AMX kernel and this CPU would run it."""
    lib = llama_lib_dir()
    if lib is None or not cpu_has_amx():
        return None
    hits = amx_libraries(lib)
    if not hits:
        return None
    return (f"the installed llama-cpp-python was built with ggml's AMX kernel ({', '.join(hits)} in {lib}), which "
            "crashes on this AMX CPU on the first generation; rebuild it portable: `make llamacpp` "
            "(or CMAKE_ARGS=\"-DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/cmake/llama.cmake\" pip install "
            "--force-reinstall --no-cache-dir llama-cpp-python), see docs/serve.md")


__all__ = ["AMX_MARKER", "amx_libraries", "amx_problem", "cpu_has_amx", "llama_lib_dir"]
