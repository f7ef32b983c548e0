"""The llama.cpp that `make test` builds runs on any machine of this kind: no AMX kernel.

A native (-march=native) build on an AMX CPU compiles ggml's AMX matmul kernel in, and
llama-cpp-python 0.3.36's kernel segfaults on the first generation (issue 33). Machines
without AMX never run it, so a green run on one says nothing about the next: this test
reads the built libraries themselves, and fails on any machine when a build contains the
kernel (or a runtime-selected CPU variant that does).
"""

from __future__ import annotations

import ctypes
import importlib.util
from pathlib import Path

import pytest

from tauray.actors.serving.llama_build import AMX_MARKER, amx_libraries, amx_problem, cpu_has_amx, llama_lib_dir

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="needs tauray[llamacpp] (make test installs it)")


@needs_llama
def test_the_installed_llama_cpp_has_no_amx_kernel():
    lib = llama_lib_dir()
    assert lib is not None, "llama_cpp is installed but has no lib folder"
    # Read before anything loads them: a library built for another CPU may not even load here.
    assert amx_libraries(lib) == [], (
        f"{lib} contains ggml's AMX kernel: llama.cpp was built host-tuned or with AMX on; "
        "build it with cmake/llama.cmake (make llamacpp)")
    assert not [p.name for p in lib.iterdir() if p.name.startswith("libggml-cpu-")], \
        "runtime CPU variants (GGML_BACKEND_DL) are built: one of them may be an AMX one"


@needs_llama
def test_the_installed_llama_cpp_was_compiled_for_a_fixed_portable_cpu():
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    assert "AVX2 = 1" in info, info  # x86-64-v3, the portable level cmake/llama.cmake asks for
    for feature in ("AMX", "AVX512"):
        assert feature not in info, f"compiled with {feature}: {info}"
    cpu = ctypes.CDLL(str(llama_lib_dir() / "libggml-cpu.so"))
    assert cpu.ggml_cpu_has_amx_int8() == 0


def test_the_check_finds_the_kernel_in_a_library(tmp_path: Path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libggml-base.so").write_bytes(b"\x7fELF" + b"\0" * 64 + b"ggml_backend_cpu_reg\0")
    (lib / "libggml-cpu.so.0.25.3").write_bytes(
        b"\x7fELF" + b"\0" * 64 + b"_Z24" + AMX_MARKER + b"mul_matPK19ggml_compute_paramsP11ggml_tensor\0")
    (lib / "libggml-cpu.so").symlink_to("libggml-cpu.so.0.25.3")
    assert amx_libraries(lib) == ["libggml-cpu.so.0.25.3"]


def test_an_amx_cpu_is_told_from_its_flags(tmp_path: Path):
    amd = tmp_path / "amd"
    amd.write_text("processor : 0\nflags : fpu sse2 avx avx2 fma f16c bmi2\n")
    intel = tmp_path / "intel"
    intel.write_text("processor : 0\nflags : fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8\n")
    assert not cpu_has_amx(amd) and cpu_has_amx(intel) and not cpu_has_amx(tmp_path / "missing")


@needs_llama
def test_this_machine_may_serve_with_the_installed_build():
    assert amx_problem() is None
