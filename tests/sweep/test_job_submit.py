"""The cluster recipe of docs/sweeps.md, for real: a two-node Ray cluster on loopback
(``ray start`` head + worker), a sweep sent with ``ray job submit`` writing to a folder
outside the job's working directory, then the same job again with ``--resume``: every unit
exactly once. Bounded: each step has a timeout and the cluster is stopped at the end."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tauray.results import conversations_df, messages_df

SWEEP = """
name = "job"
agents = ["a"]
users = ["u"]
trials = 1
policy_variants = ["manual"]
[[scenarios]]
domain = "telecom"
split = "small"
limit = {limit}
[models.a]
model = "oracle"
[models.u]
model = "scripted"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(*args: str, env: dict, timeout: float) -> subprocess.CompletedProcess:
    ray = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture()
def two_nodes(tmp_path):
    """A head and a worker node on 127.0.0.1 (their own temp dir, never the suite's Ray)."""
    if shutil.which("ray", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("the ray CLI is not installed next to this Python")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled",
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    port, dash = _free_port(), _free_port()
    temp = Path("/tmp") / f"tauray-job-{os.getpid()}"  # short: Ray's socket paths must fit 107 bytes
    head = _ray("start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1",
                "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
                f"--temp-dir={temp}", "--disable-usage-stats", env=env, timeout=120)
    try:
        assert head.returncode == 0, head.stderr[-3000:]
        worker = _ray("start", f"--address=127.0.0.1:{port}", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                      env=env, timeout=120)
        assert worker.returncode == 0, worker.stderr[-3000:]
        yield env, f"http://127.0.0.1:{dash}"
    finally:
        _ray("stop", "--force", env=env, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_job_submit_to_two_nodes_then_resume_leaves_each_unit_once(two_nodes, tmp_path):
    env, dashboard = two_nodes
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    out = tmp_path / "results" / "job"  # outside the job's working directory, which Ray discards

    def submit(limit: int, *flags: str) -> subprocess.CompletedProcess:
        (job_dir / "sweep.toml").write_text(SWEEP.format(limit=limit))
        return _ray("job", "submit", f"--address={dashboard}", f"--working-dir={job_dir}", "--",
                    "python", "-m", "tauray", "sweep", "sweep.toml", "--out", str(out), "--no-progress", "--json",
                    *flags, env=env, timeout=300)

    first = submit(3)
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert len(conversations_df(out)) == 3
    # the sweep grows (more scenarios) and is sent again: only the new units run
    again = submit(5, "--resume")
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert '"skipped": 3' in again.stdout and '"ran": 2' in again.stdout
    conv = conversations_df(out)
    assert len(conv) == 5 and conv["conversation_id"].is_unique and conv["error_kind"].isna().all()
    msgs = messages_df(out)
    assert not msgs.duplicated(["conversation_id", "seq"]).any()
