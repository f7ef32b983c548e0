"""What a user installs is what is tested: the wheel ``pip install .`` builds from this tree,
installed into a fresh environment where no editable finder can stand in for a missing module.

The environment is new for every session and holds only the wheel (``--no-deps``); the
third-party packages it imports are the test environment's, put on its path by a plain
``.pth`` line, which adds the folder but runs none of the ``.pth`` files in it (so the
editable install of this checkout stays inert). Then, from that environment: ``tauray
--help``, ``tauray demo`` on a few scenarios, a voice conversation, and a run on a two-node
Ray cluster, whose workers import the package the run ships them (``py_modules``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from tests.house.imports import PACKAGE, ROOT

pytestmark = pytest.mark.slow  # builds a wheel and runs tauray in child processes

BUILD_TIMEOUT_S = 300


def checkout_files() -> list[str]:
    """The files a fresh clone of this checkout has: tracked, and new ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True, text=True, timeout=60).stdout
    return sorted(f for f in listed.split("\0") if f and (ROOT / f).is_file())


def tree_files() -> set[str]:
    """Every file of the package folder as a fresh clone has it, named as a wheel names it."""
    return {f for f in checkout_files() if f.startswith(f"{PACKAGE.name}/")}


def fresh_copy(dest: Path) -> Path:
    """The checkout as a fresh clone would be (no build/ or egg-info left by an earlier build, whose
    stale files a wheel would pick up)."""
    for f in checkout_files():
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dest / f)
    return dest


def build_wheel(out: Path, source: Path) -> Path:
    """The wheel as ``pip install .`` builds it: from the tree, in pip's isolated build environment."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(source), "-w", str(out)],
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("tauray-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"), fresh_copy(tmp_path_factory.mktemp("checkout")))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with the wheel installed; returns its ``bin`` folder."""
    env = tmp_path_factory.mktemp("fresh") / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet",
                           str(wheel)], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env / "bin"


def run_installed(bin_dir: Path, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A command of the fresh environment, run away from the checkout (no ``tauray/`` beside it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_holds_the_tree_and_nothing_else(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if not n.startswith("tauray-")}
    assert package == tree_files(), {"missing": sorted(tree_files() - package)[:20],
                                     "extra": sorted(package - tree_files())[:20]}


def test_a_sub_package_added_to_the_tree_is_in_the_wheel(tmp_path: Path):
    """The build finds packages itself: a room nobody listed anywhere is installed (the defect was
    a hand-kept list that had missed the two newest sub-packages)."""
    clone = fresh_copy(tmp_path / "clone")
    room = clone / "tauray" / "results" / "newroom" / "deeper"
    room.mkdir(parents=True)
    (room.parent / "__init__.py").write_text('"""A room no list names."""\n')
    (room / "__init__.py").write_text("")
    (room / "thing.py").write_text("VALUE = 1\n")
    names = zipfile.ZipFile(build_wheel(tmp_path / "w", clone)).namelist()
    assert "tauray/results/newroom/deeper/thing.py" in names
    assert "tauray/results/newroom/__init__.py" in names


def test_the_installed_package_is_the_wheel_and_answers_help(installed: Path, tmp_path: Path):
    probe = run_installed(installed, "python", "-c", textwrap.dedent("""
        import json, sys, tauray
        print(json.dumps({"file": tauray.__file__,
                          "finders": [type(f).__name__ for f in sys.meta_path if "ditable" in type(f).__name__]}))
    """), cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    assert seen["file"].startswith(str(installed.parent)), seen
    assert seen["finders"] == []
    done = run_installed(installed, "tauray", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "demo" in done.stdout and "sweep" in done.stdout


def test_the_installed_demo_runs(installed: Path, tmp_path: Path):
    done = run_installed(installed, "tauray", "demo", "--limit", "3", "--out", str(tmp_path / "demo"), "--json",
                         cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    summary = json.loads(done.stdout)
    assert summary["rows"] == 3 and summary["success"] == 3


def test_the_installed_voice_conversation_runs(installed: Path, tmp_path: Path):
    sweep = tmp_path / "voice.toml"
    sweep.write_text(textwrap.dedent("""
        name = "installed-voice"
        agents = ["oracle"]
        users = ["scripted"]
        [[scenarios]]
        domain = "mock"
        limit = 1
        [voice]
        profiles = ["control"]
    """))
    done = run_installed(installed, "tauray", "sweep", str(sweep), "--out", str(tmp_path / "run"), "--json",
                         cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    check = run_installed(installed, "python", "-c", textwrap.dedent(f"""
        from tauray.results import utterances_df
        u = utterances_df({str(tmp_path / 'run')!r})
        print(len(u), int(u["words_spoken"].sum()))
    """), cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    utterances, words = map(int, check.stdout.split())
    # the caller's opening at least (the oracle may act on it without a word, as it does when the
    # neural caller is heard right), and words in it
    assert utterances >= 1 and words > 0


def test_a_cluster_run_ships_the_installed_package(installed: Path, tmp_path: Path):
    """A run on a two-node cluster from the installed package: every worker imports ``tauray`` from
    what the run shipped (Ray's ``py_modules``), and that is the installed tree, file for file."""
    script = tmp_path / "cluster_run.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, pathlib
        from ray.cluster_utils import Cluster
        import ray, tauray
        from tauray.pipeline.config import run_config
        from tauray.pipeline.driver import execute
        from tauray.pipeline.ray_runtime import loopback_env

        loopback_env()
        cluster = Cluster(initialize_head=True, head_node_args={{"num_cpus": 2}})
        cluster.add_node(num_cpus=2)
        try:
            cfg = run_config(name="shipped", agent={{"model": "oracle"}}, user={{"model": "scripted"}},
                             domain="mock", limit=2)
            summary = execute(cfg, out={str(tmp_path / 'run')!r}, address=cluster.address, progress=False, probe=False)

            @ray.remote(num_cpus=1)
            def where():
                import tauray as t
                root = pathlib.Path(t.__file__).parent
                return str(root), sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                                         if p.is_file() and "__pycache__" not in p.parts)

            shipped = ray.get([where.remote() for _ in range(4)])
            installed = pathlib.Path(tauray.__file__).parent
            files = sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts)
            print(json.dumps({{"rows": summary.rows, "success": summary.success, "installed": str(installed),
                              "workers": sorted({{s[0] for s in shipped}}),
                              "same_files": all(s[1] == files for s in shipped)}}))
        finally:
            ray.shutdown()
            cluster.shutdown()
    """))
    done = run_installed(installed, "python", str(script), cwd=tmp_path, timeout=400)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["rows"] == 2 and seen["success"] == 2, seen
    assert seen["same_files"], seen
    assert seen["workers"] and all("runtime_resources" in w and w != seen["installed"] for w in seen["workers"]), seen
