"""``tauray bench memory``: the driver's peak RSS on a large sweep vs a 10× smaller one.

Each sweep runs in its own driver process (fresh Ray, fresh peak) against the
local test endpoint with no latency and short conversations (scripted agent,
a scripted user that stops after one reply), telecom scenarios × trials to the
requested number of units. The driver reports its own peak RSS
(``ru_maxrss``); results stream to the tables, so the two peaks should be
close.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from pydantic import BaseModel

_DRIVER = r"""
import json, os, resource, sys, time
from tauray.pipeline.ray_runtime import loopback_env
loopback_env()
from tauray.pipeline.sweep import SweepConfig
from tauray.pipeline.sweep_run import run_sweep
units, base_url, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
scenarios = min(units, 2000)
trials = -(-units // scenarios)
cfg = SweepConfig.model_validate({
    "name": "mem", "models": {"a": {"model": "openai/scripted-agent-quiet", "api_base": base_url, "concurrency": 256},
                              "u": {"model": "openai/scripted-user:1", "api_base": base_url, "concurrency": 256}},
    "agents": ["a"], "users": ["u"], "trials": trials, "policy_variants": ["manual"], "max_in_flight": 128,
    "scenarios": [{"domain": "telecom", "split": "full", "limit": scenarios}]})
t = time.perf_counter()
s = run_sweep(cfg, out=out, progress=False)
print(json.dumps({"units": s.units, "rows": s.rows, "seconds": round(time.perf_counter() - t, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


class MemoryBench(BaseModel):
    small_units: int
    large_units: int
    small_peak_rss_mb: float
    large_peak_rss_mb: float
    ratio: float
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
    from tauray.actors.endpoint import start_endpoint

    with start_endpoint(latency=0.0, user_turns=1) as ep:
        a = _one(small, ep.base_url, timeout)
        b = _one(large, ep.base_url, timeout)
    return MemoryBench(small_units=a["units"], large_units=b["units"], small_peak_rss_mb=a["peak_rss_mb"],
                       large_peak_rss_mb=b["peak_rss_mb"], ratio=round(b["peak_rss_mb"] / a["peak_rss_mb"], 3),
                       small_seconds=a["seconds"], large_seconds=b["seconds"], large_rows=b["rows"])
