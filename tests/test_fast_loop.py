"""The fast loop guards itself: under ``-m "not slow"`` a test that starts a subprocess or Ray
without being marked ``slow`` fails, naming itself; a test that requests a slow fixture is
marked ``slow`` without being told, and so left out.

The check runs the suite's own ``tests/conftest.py`` on a few made-up tests in a child pytest
(so it is itself slow: it starts a subprocess).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SLOW_FIXTURES

MADE_UP = textwrap.dedent('''
    import subprocess, sys

    import pytest


    def test_pure():
        assert 1 + 1 == 2


    def test_forgot_its_mark():
        subprocess.run([sys.executable, "-c", "pass"], check=True)


    def test_forgot_its_mark_and_swallowed_the_error():
        try:
            subprocess.Popen([sys.executable, "-c", "pass"]).wait()
        except Exception:
            pass


    def test_starts_ray_unmarked():
        import ray

        ray.init(address="local", num_cpus=1, include_dashboard=False)


    @pytest.mark.slow
    def test_marked_by_hand():
        subprocess.run([sys.executable, "-c", "pass"], check=True)


    def test_marked_by_its_fixture(endpoint):
        raise AssertionError("left out in a fast run: never reached")
''')


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_made_up.py").write_text(MADE_UP)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore::pytest.PytestUnknownMarkWarning",
                           "--rootdir", str(tmp_path), str(tmp_path), *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


@pytest.mark.slow
def test_a_fast_run_fails_a_test_that_starts_a_subprocess_or_ray_unmarked(tmp_path):
    run = _run(tmp_path, "-m", "not slow and not provider")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "3 failed, 1 passed, 2 deselected" in out, out
    for name in ("test_forgot_its_mark", "test_forgot_its_mark_and_swallowed_the_error", "test_starts_ray_unmarked"):
        assert f"test_made_up.py::{name} is not marked slow but started" in out, out
    assert "test_pure is not marked" not in out


def test_the_slow_fixtures_exist():
    # A renamed fixture would silently stop marking its tests: each name must still be a fixture.
    root = Path(__file__).parent
    defined = "".join(p.read_text() for p in root.rglob("conftest.py"))
    missing = [name for name in SLOW_FIXTURES if f"def {name}(" not in defined]
    assert not missing, f"SLOW_FIXTURES names fixtures that no conftest.py defines: {missing}"
