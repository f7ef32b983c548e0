"""The driver SIGKILLed mid-sweep (a subprocess with its own Ray) then rerun (the same
CLI, in this process on the suite's Ray) leaves each unit exactly once. (Actors on a
two-node cluster: tests/pipeline/test_job_submit.py, which shares one cluster.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tauray.endpoint import start_endpoint
from tauray.results import conversations_df, messages_df

SWEEP = """
name = "k"
agents = ["a"]
users = ["u"]
trials = 1
max_in_flight = 4
policy_variants = ["manual"]
[[scenarios]]
domain = "telecom"
split = "small"
limit = 8
[models.a]
model = "oracle"
[models.u]
model = "openai/scripted-user:2"
api_base = "${TAURAY_ENDPOINT}"
"""


def _sweep(path: Path, out: Path, env: dict, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(out),
                             "--json", "--no-progress", *flags], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_sigkill_driver_then_rerun_leaves_each_unit_once(ray_local, tmp_path, monkeypatch, capsys):
    from tauray.pipeline.cli.main import main

    path = tmp_path / "k.toml"
    path.write_text(SWEEP)
    out = tmp_path / "out"
    with start_endpoint(latency=0.2) as ep:
        env = {**os.environ, "TAURAY_ENDPOINT": ep.base_url}
        env.pop("RAY_ADDRESS", None)  # the killed driver starts its own Ray, never the suite's
        proc = _sweep(path, out, env)
        deadline = time.monotonic() + 240  # its own Ray's start takes most of this on a loaded machine
        while time.monotonic() < deadline and proc.poll() is None:
            if any((out / "conversations").glob("part-*.parquet")) if (out / "conversations").is_dir() else False:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        partial = len(conversations_df(out))
        assert partial < 8 and any((out / "conversations").glob("part-*.parquet")), "killed before any row"
        assert partial > 0
        # the rerun: the same command in this process (no second Ray start and import of everything)
        monkeypatch.setenv("TAURAY_ENDPOINT", ep.base_url)
        capsys.readouterr()
        code = main(["sweep", str(path), "--out", str(out), "--json", "--no-progress", "--resume"])
        stdout, stderr = capsys.readouterr()
    assert code == 0, stderr[-2000:]
    summary = json.loads(stdout)
    assert summary["units"] == summary["rows"] == 8 and summary["skipped"] >= partial
    conv = conversations_df(out)
    assert len(conv) == 8 and conv["conversation_id"].is_unique
    msgs = messages_df(out)
    assert set(msgs["conversation_id"]) == set(conv["conversation_id"])
    assert not msgs.duplicated(["conversation_id", "seq"]).any()
