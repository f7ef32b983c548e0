"""The driver SIGKILLed mid-sweep (a subprocess with its own Ray) then rerun (the same
CLI, in this process on the suite's Ray) leaves each unit exactly once; a two-node
cluster on loopback (a subprocess, so it never touches the suite's Ray) gets actors
on both nodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tauray.actors.endpoint import start_endpoint
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


MULTINODE = textwrap.dedent("""
    import json, os, sys
    from ray.cluster_utils import Cluster
    from tauray.pipeline.scheduler import Hooks
    from tauray.pipeline.config import SweepConfig
    from tauray.pipeline.driver import execute as run_sweep

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    placement = {}

    def on_submit(pool, n):
        if n == 1:
            placement.update(pool.current.node_ids())

    # the reference policies: placement does not depend on the model, and six hosts importing
    # litellm would be most of this test's time on two cores
    cfg = SweepConfig.model_validate({
        "name": "mn", "models": {"a": {"model": "oracle"}, "u": {"model": "scripted"}},
        "agents": ["a"], "users": ["u"], "trials": 1, "policy_variants": ["manual"],
        "scenarios": [{"domain": "telecom", "split": "small", "limit": 2}],
        "cluster": {"coordinators": 2, "agent_hosts": 2, "user_hosts": 2}})
    s = run_sweep(cfg, out=sys.argv[1], address=cluster.address, progress=False, hooks=Hooks(on_submit=on_submit))
    import ray
    nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
    print(json.dumps({"summary": s.model_dump(mode="json"), "placement": placement, "nodes": nodes}))
    ray.shutdown()
    cluster.shutdown()
""")


def test_two_node_cluster_spreads_actors(tmp_path):
    script = tmp_path / "mn.py"
    script.write_text(MULTINODE)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=150, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(data["nodes"]) == 2 and data["summary"]["nodes"] == 2
    for role in ("coordinator", "agent", "user"):
        assert set(data["placement"][role]) == set(data["nodes"]), data["placement"]  # one of each on each node
    assert data["summary"]["rows"] == data["summary"]["units"] == 2
    conv = conversations_df(tmp_path / "out")
    assert len(conv) == 2 and conv["error_kind"].isna().all()
