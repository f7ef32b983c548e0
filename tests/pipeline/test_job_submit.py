"""Two-node Ray clusters, for real: one cluster on loopback (a head and a worker node),
shared by this module's tests. The cluster recipe of docs/sweeps.md (a sweep sent with
``ray job submit`` writing to a folder outside the job's working directory, then the same
job again with ``--resume``: every unit exactly once), and actors spread over both nodes.
Bounded: each step has a timeout and the cluster is stopped at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tauray.results import conversations_df, messages_df

pytestmark = pytest.mark.slow

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


CLUSTER = textwrap.dedent("""
    import json, sys
    from ray.cluster_utils import Cluster

    dash, head_agent, worker_agent = (int(a) for a in sys.argv[1:4])
    # Own agent ports: the defaults (52365) are taken when another Ray runs here, e.g. the suite's,
    # and a head without its agent refuses every job ("No available agent to submit job").
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": True, "dashboard_host": "127.0.0.1", "dashboard_port": dash,
        "dashboard_agent_listen_port": head_agent})
    cluster.add_node(num_cpus=1, dashboard_agent_listen_port=worker_agent)
    cluster.wait_for_nodes()
    print(json.dumps({"address": cluster.address}), flush=True)
    sys.stdin.read()  # up until the test closes the pipe
    cluster.shutdown()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """A head and a worker node on 127.0.0.1, in a process of their own (never the suite's Ray).

    Why not two ``ray start`` commands: Ray's CLI refuses to start a worker node while
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (the setting that keeps every port on loopback),
    and with it set to 1 it rewrites the head's 127.0.0.1 address to the machine's external
    IP. ``ray.cluster_utils.Cluster`` starts the same head and worker processes on loopback.
    """
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled",
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    dash = _free_port()
    script = tmp_path_factory.mktemp("cluster") / "cluster.py"
    script.write_text(CLUSTER)
    ports = [str(dash), str(_free_port()), str(_free_port())]
    proc = subprocess.Popen([sys.executable, str(script), *ports], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()[-3000:] if proc.poll() is not None else "the cluster printed nothing"
        yield env, f"http://127.0.0.1:{dash}", json.loads(line)["address"]
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _ray(*args: str, env: dict, timeout: float) -> subprocess.CompletedProcess:
    ray = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_ray_job_submit_to_two_nodes_then_resume_leaves_each_unit_once(two_nodes, tmp_path):
    env, dashboard, _ = two_nodes
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    out = tmp_path / "results" / "job"  # outside the job's working directory, which Ray discards

    def submit(limit: int, *flags: str) -> subprocess.CompletedProcess:
        (job_dir / "sweep.toml").write_text(SWEEP.format(limit=limit))
        deadline = time.monotonic() + 90
        while True:
            done = _ray("job", "submit", f"--address={dashboard}", f"--working-dir={job_dir}", "--",
                        sys.executable, "-m", "tauray", "sweep", "sweep.toml", "--out", str(out), "--no-progress",
                        "--json", *flags, env=env, timeout=300)
            # the head's job agent registers a few seconds after the cluster is up; until then
            # Ray refuses the submission (nothing ran), so it is sent again
            if "No available agent to submit job" not in done.stdout + done.stderr or time.monotonic() > deadline:
                return done
            time.sleep(3)

    first = submit(3)
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert len(conversations_df(out)) == 3
    assert '"nodes": 2' in first.stdout  # the job's driver joined the two-node cluster
    # the sweep grows (more scenarios) and is sent again: only the new units run
    again = submit(5, "--resume")
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert '"skipped": 3' in again.stdout and '"ran": 2' in again.stdout
    conv = conversations_df(out)
    assert len(conv) == 5 and conv["conversation_id"].is_unique and conv["error_kind"].isna().all()
    msgs = messages_df(out)
    assert not msgs.duplicated(["conversation_id", "seq"]).any()


SPREAD = textwrap.dedent("""
    import json, sys
    import ray
    from tauray.pipeline.scheduler import Hooks
    from tauray.pipeline.config import SweepConfig
    from tauray.pipeline.driver import execute as run_sweep

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
    s = run_sweep(cfg, out=sys.argv[2], address=sys.argv[1], progress=False, hooks=Hooks(on_submit=on_submit))
    nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
    print(json.dumps({"summary": s.model_dump(mode="json"), "placement": placement, "nodes": nodes}))
    ray.shutdown()
""")


def test_set_counts_spread_one_actor_of_each_role_on_each_node(two_nodes, tmp_path):
    env, _, address = two_nodes
    script = tmp_path / "spread.py"
    script.write_text(SPREAD)
    proc = subprocess.run([sys.executable, str(script), address, str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=150, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(data["nodes"]) == 2 and data["summary"]["nodes"] == 2
    for role in ("coordinator", "agent", "user"):
        assert set(data["placement"][role]) == set(data["nodes"]), data["placement"]  # one of each on each node
    assert data["summary"]["rows"] == data["summary"]["units"] == 2
    conv = conversations_df(tmp_path / "out")
    assert len(conv) == 2 and conv["error_kind"].isna().all()
