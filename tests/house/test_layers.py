"""The house's import rules, checked on the code as it is.

1. The import contract in pyproject.toml (import-linter): layers import downward only, the
   features that must not know each other are independent, what the actors host knows
   nothing of the actors, and the product imports nothing of ``dev/`` or ``tests/``.
2. No import cycle between product modules, through any import, top-level or not.
3. A function-local import only where it avoids a measured cost (LAZY below): a package
   that is slow to import or an optional extra, or a command of the CLI loading what it
   runs. Anything else goes at the top of its module, where a reader (and a cycle) sees it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from tests.house.imports import ROOT, cycles, imports, modules, product_edges

# Measured on 2 cores (docs/architecture.md, "Imports"): what a function-local import of these saves a
# process that does not use them, or why it cannot be at the top.
LAZY: dict[str, str] = {
    "ray": "Ray: about 0.7 s to import; commands that never start Ray (report, compact, validate) skip it",
    "litellm": "litellm: the slowest import of the stack (several seconds); offline commands skip it",
    "openai": "the OpenAI SDK: about 1 s; only error classification and the endpoint's tests need it",
    "pandas": "pandas: about 1 s; the engine never needs it, only readers and reports",
    "tau2": "τ²'s domain modules pull in loguru, their toolkits and data files",
    "loguru": "τ²'s logger (about 0.5 s): configured only where τ²'s modules are loaded",
    "llama_cpp": "optional extra tauray[llamacpp]",
    "faster_whisper": "optional extra tauray[voice]; about 1 s to import (CTranslate2, onnxruntime)",
    "scipy": "optional extra tauray[voice] (the line's filters and resampling); about 0.3 s per submodule",
    "soundfile": "optional extra tauray[voice] (libsndfile: the line's μ-law codec)",
    "jiwer": "optional extra tauray[voice] (WER)",
    "starlette": "installed with ray[serve] (optional extra); only a served replica needs it",
}
CLI_PREFIX = "tauray/pipeline/cli/"
"""A command loads what it runs when it runs: `tauray --help` imports 0.15 s of modules, a command
that drives a sweep about 1.3 s."""


@pytest.mark.slow  # a child process (import-linter's graph of the whole package)
def test_the_import_contract_holds():
    # The source tree is the installed package (tests/house/test_install.py), so import-linter reads it as is.
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    done = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                           f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert f"Contracts: {len(contracts)} kept, 0 broken" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0


def test_the_product_loads_no_test_or_developer_module_by_name():
    """What import-linter cannot see: a module named in a string (``import_module``, ``__import__``)."""
    named = re.compile(r"""(?:import_module|__import__)\(\s*f?["'](tests|dev)[."']""")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in modules().values()
             for n, line in enumerate(path.read_text().splitlines(), 1) if named.search(line)]
    assert found == []


def test_no_import_cycles():
    found = cycles(product_edges())
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_function_local_imports_only_where_a_cost_is_measured():
    offenders = []
    for imp in imports():
        if not imp.local or imp.lazy_reason or imp.path.startswith(CLI_PREFIX):
            continue
        if imp.target.split(".")[0] in LAZY:
            continue
        offenders.append(f"{imp.path}:{imp.line} imports {imp.target} inside a function")
    assert offenders == [], ("move these to the top of their module (or say `# lazy: <measured reason>`):\n"
                             + "\n".join(offenders))


@pytest.mark.parametrize("name", sorted(LAZY))
def test_each_lazy_package_is_one_the_product_imports(name: str):
    """The list above stays true: a package nobody imports lazily any more leaves it."""
    assert any(i.local and i.target.split(".")[0] == name for i in imports()), f"{name} is never imported lazily"


def test_no_product_module_over_450_lines():
    """One concept per module: a module past 450 lines holds more than one (split it by concern)."""
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > 450}
    assert long == {}, long
