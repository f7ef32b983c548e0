"""``python -m dev.bench memory``: peak RSS of the driver, the coordinators and the hosts on a
large sweep vs a 10× smaller one.

Each sweep runs in its own driver process (fresh Ray, fresh peaks) against the
local test endpoint with no latency and short conversations (scripted agent,
a scripted user that stops after one reply), telecom scenarios × trials to the
requested number of units. The driver reports its own peak RSS
(``ru_maxrss``); for the actors (one coordinator, one agent host, one user
host) it reads each process's high-water mark (``VmHWM`` in
``/proc/PID/status``, Linux) at the end, and also samples their RSS with psutil
while the sweep runs (the only figure where ``/proc`` has no high-water mark).
Results stream to the tables and the coordinator's per-task cache is bounded,
so the small and large peaks of every process should be close.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from pydantic import BaseModel, Field

from tauray.endpoint import start_endpoint

_DRIVER = r"""
import json, os, resource, sys, threading, time
from tauray.pipeline.ray_runtime import ensure_ray, loopback_env
loopback_env()
import psutil
from tauray.pipeline.pool import ActorPool
from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
units, base_url, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
scenarios = min(units, 2000)
trials = -(-units // scenarios)
cfg = SweepConfig.model_validate({
    "name": "mem", "models": {"a": {"model": "openai/scripted-agent-quiet", "api_base": base_url, "concurrency": 256},
                              "u": {"model": "openai/scripted-user:1", "api_base": base_url, "concurrency": 256}},
    "agents": ["a"], "users": ["u"], "trials": trials, "policy_variants": ["manual"], "max_in_flight": 128,
    "scenarios": [{"domain": "telecom", "split": "full", "limit": scenarios}]})
ray = ensure_ray()

def hwm_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None

with ActorPool(1, 1, 1, spread=False) as pool:
    gen = pool.current
    roles = {"coordinator": gen.coordinators, "agent_host": gen.agents, "user_host": gen.users}
    pids = {role: [int(p.rsplit(":", 1)[1]) for p in ray.get([a.ping.remote() for a in actors])]
            for role, actors in roles.items()}
    sampled = {role: 0.0 for role in pids}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for role, ps in pids.items():
                for pid in ps:
                    try:
                        sampled[role] = max(sampled[role], psutil.Process(pid).memory_info().rss / 2**20)
                    except psutil.Error:
                        pass
            stop.wait(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t = time.perf_counter()
    s = execute(cfg, out=out, progress=False, probe=False, pool=pool)
    seconds = time.perf_counter() - t
    stop.set()
    sampler.join()
    peaks = {}
    for role, ps in pids.items():
        marks = [m for m in (hwm_mb(pid) for pid in ps) if m is not None]
        peaks[role] = round(max(marks + [sampled[role]]), 1)
print(json.dumps({"units": s.units, "rows": s.rows, "seconds": round(seconds, 1),
                  "actor_generations": s.actor_generations,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "actor_peaks_mb": peaks, "hwm": hwm_mb(os.getpid()) is not None}))
"""


class MemoryBench(BaseModel):
    small_units: int
    large_units: int
    small_peak_rss_mb: float = Field(description="Driver peak RSS, small sweep.")
    large_peak_rss_mb: float = Field(description="Driver peak RSS, large sweep.")
    ratio: float = Field(description="Driver: large / small peak.")
    small_coordinator_peak_rss_mb: float
    large_coordinator_peak_rss_mb: float
    coordinator_ratio: float
    small_host_peak_rss_mb: dict[str, float] = Field(description="Agent and user host peaks, small sweep.")
    large_host_peak_rss_mb: dict[str, float] = Field(description="Agent and user host peaks, large sweep.")
    host_ratio: float = Field(description="Largest host peak, large / small.")
    peaks_from: str = Field(description="How actor peaks were read: the kernel's high-water mark, or sampling.")
    small_seconds: float
    large_seconds: float
    large_rows: int


def _one(units: int, base_url: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="tauray-mem-") as tmp:
        proc = subprocess.run([sys.executable, "-c", _DRIVER, str(units), base_url, os.path.join(tmp, "out")],
                              capture_output=True, text=True, timeout=timeout,
                              env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    if proc.returncode != 0:
        raise RuntimeError(f"memory bench driver failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_memory_bench(small: int = 1000, large: int = 10000, timeout: float = 1800.0) -> MemoryBench:
    with start_endpoint(latency=0.0, user_turns=1) as ep:
        a = _one(small, ep.base_url, timeout)
        b = _one(large, ep.base_url, timeout)
    hosts = ("agent_host", "user_host")
    small_hosts = {r: a["actor_peaks_mb"][r] for r in hosts}
    large_hosts = {r: b["actor_peaks_mb"][r] for r in hosts}
    return MemoryBench(
        small_units=a["units"], large_units=b["units"], small_peak_rss_mb=a["peak_rss_mb"],
        large_peak_rss_mb=b["peak_rss_mb"], ratio=round(b["peak_rss_mb"] / a["peak_rss_mb"], 3),
        small_coordinator_peak_rss_mb=a["actor_peaks_mb"]["coordinator"],
        large_coordinator_peak_rss_mb=b["actor_peaks_mb"]["coordinator"],
        coordinator_ratio=round(b["actor_peaks_mb"]["coordinator"] / a["actor_peaks_mb"]["coordinator"], 3),
        small_host_peak_rss_mb=small_hosts, large_host_peak_rss_mb=large_hosts,
        host_ratio=round(max(large_hosts.values()) / max(small_hosts.values()), 3),
        peaks_from="VmHWM (kernel high-water mark) and 4 Hz psutil samples" if a["hwm"] and b["hwm"]
        else "4 Hz psutil samples",
        small_seconds=a["seconds"], large_seconds=b["seconds"], large_rows=b["rows"])
