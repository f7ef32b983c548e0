"""Suite-wide settings: offline, loopback-only, quiet; and the fast loop.

The fast loop (``make test-fast``, i.e. ``pytest -m "not slow and not provider"``) runs the
tests that need no Ray, no endpoint, no served model and no subprocess. Marking is automatic
where it can be: every test that requests one of :data:`SLOW_FIXTURES` (directly or through
another fixture) is marked ``slow`` at collection. A test that starts such a thing by hand
carries ``pytest.mark.slow`` itself. So that a forgotten mark cannot hide, a fast run makes
``ray.init`` and ``subprocess.Popen`` raise inside every test, naming the test.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest

# Fixtures (of this file and of tests/**/conftest.py) that start Ray, the local endpoint (a
# child process), Ray Serve or a served model, or a whole sweep on them. A test whose fixture
# closure holds one of them is slow.
SLOW_FIXTURES = frozenset({
    "ray_local",  # a local Ray (tests/conftest.py)
    "endpoint",  # the local test endpoint, a child process (tests/conftest.py)
    "_serve_for_the_package",  # Ray Serve (tests/serving/conftest.py)
    "serve_up",  # Ray Serve started for a test (tests/serving/conftest.py)
    "fixture_sweep",  # a four-cell sweep through Ray and the endpoint (tests/report/conftest.py)
    "report_dir",  # the report built from that sweep (tests/report/conftest.py)
    "chromium",  # headless chromium, installed with apt-get where it is missing (below)
})


# The files that take longest under `make test` (2 cores, `--durations=0`, 2026-12-07), longest
# first, started in this order. Only an order: a file missing from it runs all the same, later.
LONGEST_FILES: tuple[str, ...] = (
    "tests/serving/test_real_model.py", "tests/voice/test_voice_bench.py", "tests/pipeline/test_quota.py",
    "tests/house/test_install.py", "tests/report/test_duplex_browser.py", "tests/pipeline/test_job_submit.py",
    "tests/voice/test_live_sweep.py", "tests/voice/test_live_pipecat.py", "tests/pipeline/test_sweep_run.py",
    "tests/voice/test_neural_voices.py",
    "tests/pipeline/test_bench_engine.py", "tests/pipeline/test_one_path.py", "tests/serving/test_lifecycle.py",
    "tests/serving/test_retries.py", "tests/pipeline/test_kill_and_nodes.py",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that requests a fixture of :data:`SLOW_FIXTURES`."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    # Longest files first, fast files last (a file's tests stay together and in order): with
    # `--dist loadfile` a long file handed out near the end leaves the other worker idle while it
    # runs, and the fast files fill the tail instead.
    last = len(LONGEST_FILES) + 1
    rank: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        slow = item.get_closest_marker("slow") is not None
        here = LONGEST_FILES.index(path) if path in LONGEST_FILES else last - 1 if slow else last
        rank[path] = min(rank.get(path, last), here)
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])


def fast_run(config: pytest.Config) -> bool:
    """Whether this run leaves the slow tests out (``-m "not slow ..."``): then the guard is on."""
    return "not slow" in " ".join(str(config.getoption("markexpr") or "").split())


class SlowWorkInFastTest(RuntimeError):
    """A test that is not marked ``slow`` tried to start Ray or a subprocess."""


@contextmanager
def forbid_slow_work(nodeid: str) -> Iterator[list[str]]:
    """Make ``subprocess.Popen`` and ``ray.init`` raise, naming the test, while the block runs.

    Yields the list of refusals, so that a caller can fail the test even where the code under
    test caught the exception. Popen covers the endpoint (a child process), ``asyncio``
    subprocesses and every Ray start (Ray starts its processes through Popen); ``ray.init`` is
    patched too when Ray is already imported, for a clearer message.
    """
    refusals: list[str] = []

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            caller = "".join(traceback.format_list(traceback.extract_stack()[-6:-1]))
            message = (f"{nodeid} is not marked slow but started {what}: mark it @pytest.mark.slow (or use a "
                       f"fixture of SLOW_FIXTURES in tests/conftest.py) so that `make test-fast` leaves it out; "
                       f"called from:\n{caller}")
            refusals.append(message)
            raise SlowWorkInFastTest(message)

        return refused

    # The SDKs' platform headers ask for the processor name, which runs `uname -p` once per
    # process (then cached): not a test's own subprocess, so it runs before the guard goes on.
    platform.processor()
    ray = sys.modules.get("ray")
    # Popen's fork-and-exec step, not the class itself: a module that subclasses Popen (Ray
    # does) still imports, and every subclass is refused too.
    saved_execute, saved_init = subprocess.Popen._execute_child, getattr(ray, "init", None)  # type: ignore[attr-defined]
    subprocess.Popen._execute_child = refuse("a subprocess (subprocess.Popen)")  # type: ignore[attr-defined]
    if ray is not None:
        ray.init = refuse("Ray (ray.init)")
    try:
        yield refusals
    finally:
        subprocess.Popen._execute_child = saved_execute  # type: ignore[attr-defined]
        if ray is not None:
            ray.init = saved_init


def _guarded(item: pytest.Item) -> Iterator[None]:
    """One phase of a test (setup, call or teardown) under the guard in a fast run; it fails if
    the guard refused anything, even if the code under test swallowed the exception."""
    if not fast_run(item.config) or item.get_closest_marker("slow") is not None:
        return (yield)
    with forbid_slow_work(item.nodeid) as refusals:
        try:
            result = yield
        except BaseException as error:
            if refusals and not isinstance(error, SlowWorkInFastTest):
                raise SlowWorkInFastTest(refusals[0]) from error
            raise
    if refusals:
        raise SlowWorkInFastTest(refusals[0])
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    return (yield from _guarded(item))


# A fast test that takes longer than this on its own (2 cores) is named at the end of a fast
# run: the loop must stay within a minute, so such a test is a candidate for `slow`.
FAST_TEST_BUDGET_S = 2.0
_over_budget: list[tuple[float, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.duration > FAST_TEST_BUDGET_S and "slow" not in report.keywords:
        _over_budget.append((report.duration, f"{report.when} {report.nodeid}"))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if fast_run(config) and _over_budget:
        terminalreporter.section(f"fast tests over {FAST_TEST_BUDGET_S:.0f} s (candidates for @pytest.mark.slow)")
        for seconds, what in sorted(_over_budget, reverse=True):
            terminalreporter.write_line(f"{seconds:6.2f}s {what}")


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray on 127.0.0.1 for the whole suite."""
    from tauray.pipeline.ray_runtime import ensure_ray

    ray = ensure_ray(num_cpus=2)
    yield ray
    from tauray.pipeline.pool import KEPT

    KEPT.drop()
    ray.shutdown()


@pytest.fixture(scope="session")
def endpoint():
    """The local test endpoint (no faults, no latency), shared by the suite, serving the
    tests' faulty customers, agents and judges too (``tests/test_helpers``)."""
    from tauray.endpoint import start_endpoint

    with start_endpoint(latency=0.0, behaviours="tests.test_helpers.faulty") as ep:
        yield ep


def _install_chromium() -> str | None:
    """Install Debian's chromium with apt-get; the reason it cannot be, or None. Held under a file
    lock: the suite's workers may ask at the same time, and apt takes one at a time."""
    import fcntl
    import shutil

    if shutil.which("apt-get") is None:
        return "apt-get is not available (not a Debian-like system)"
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install chromium"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with open("/tmp/tauray-tests-chromium.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shutil.which("chromium"):  # another worker installed it while this one waited
            return None
        for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]):
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, check=False)
            except subprocess.TimeoutExpired:
                return f"{' '.join(cmd)} timed out"
            if proc.returncode != 0:
                return f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def chromium(tmp_path_factory) -> list[str]:
    """Headless chromium's command line (installed first where it is missing), for every test that
    renders a page, whatever the order the tests run in or the worker they run on."""
    import shutil

    binary = shutil.which("chromium")
    if binary is None:
        reason = _install_chromium()
        binary = shutil.which("chromium")
        if binary is None:
            pytest.skip(f"chromium could not be installed: {reason or 'not on PATH after install'}")
    profile = tmp_path_factory.mktemp("chromium-profile")
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", f"--user-data-dir={profile}"]


@pytest.fixture()
def cli_json(capsys):
    """Runs ``tauray ARGV... --json`` in process and returns its parsed document. What ran
    before in the test (a model call's log line, a line Ray forwards) is dropped first, so
    the document is the command's stdout alone, as a user's pipe would see it."""
    from tauray.pipeline.cli.main import main

    def run(*argv: str, code: int = 0) -> Any:
        capsys.readouterr()
        assert main([*argv, "--json"]) == code
        return json.loads(capsys.readouterr().out)

    return run
