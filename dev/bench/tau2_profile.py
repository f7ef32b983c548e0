"""``python -m dev.bench tau2-profile``: where τ²'s runner spends its one core.

``tau2 run`` keeps every conversation in threads of one Python process, so all
of its Python work shares one GIL. This runs it as ``bench vs-tau2`` does (the
writing scripted pair on the local endpoint, its ground-truth agent) under
py-spy (``py-spy record --gil``: a sample is taken only while some thread holds
the GIL) and says how many seconds of GIL time went where: its start-up
imports, the results-file save after every simulation, the tool schemas it
rebuilds for every model call, the task file and environment it loads again
per simulation, the evaluation of each simulation, its console output,
litellm, the domain's tools, everything else.
``gil_busy_fraction`` near 1 means the process is bound by one core: more
threads wait longer, they do not finish sooner.

The save is also timed directly: after the run, one save of the final results
file (read it all, append one simulation, write it all back indented, the way
the runner does after each simulation) is repeated here, and since the file
grows by one simulation per save, the run's saves cost about
``(n + 1) / 2`` times the last one.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from dev.bench.vs_tau2 import tau2_command
from tauray.endpoint import start_endpoint
from tauray.pipeline.bench.engine import bench_scenarios
from tauray.pipeline.ray_runtime import LOOPBACK_ENV
from tauray.scenarios import get_scenario

# (part, frame text that marks it), first match wins; matched against py-spy's folded stacks
PARTS: tuple[tuple[str, str], ...] = (
    ("results-file save", "_save (tau2/run.py"),
    ("tool schemas rebuilt per call", "Tool.openai_schema (tau2/"),
    ("task file reloaded", "get_tasks (tau2/"),
    ("environment built (DB files read)", "get_environment (tau2/"),
    ("evaluation", "tau2/evaluator/"),
    ("console output", "rich/"),
    ("litellm", "litellm/"),
    ("domain tools", "tau2/domains/"),
    ("environment", "tau2/environment/"),
)


class Tau2Profile(BaseModel):
    concurrency: int
    tasks: int
    latency_s: float
    simulations: int
    completed: int
    wall_seconds: float = Field(description="First simulation's start to the last one's end.")
    process_seconds: float = Field(description="The tau2 process from start to exit, start-up included.")
    gil_samples: int
    sample_rate: int
    gil_seconds_by_part: dict[str, float] = Field(description="Seconds some thread held the GIL, by what it ran.")
    gil_busy_fraction: float = Field(description="GIL-held seconds (start-up excluded) over wall_seconds.")
    save_share_of_gil: float = Field(description="The results-file saves' share of the GIL time after start-up.")
    results_file_mb: float
    last_save_cpu_s: float = Field(description="CPU of one save at the final file size, timed here.")
    saves_cpu_s_estimate: float = Field(description="About (n + 1) / 2 × last_save_cpu_s for n saves.")
    command: str


def classify(folded: str, rate: int) -> tuple[dict[str, float], int]:
    """GIL seconds by part from py-spy's raw (folded) output, and the sample count."""
    parts: Counter[str] = Counter()
    total = 0
    for line in folded.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        if "_find_and_load" in stack.split(";", 2)[1 if ";" in stack else 0]:
            parts["start-up imports"] += n
            continue
        parts[next((name for name, mark in PARTS if mark in stack), "other")] += n
    return {k: round(v / rate, 2) for k, v in parts.most_common()}, total


def time_one_save(results: Path) -> float:
    """CPU seconds of one save the way the runner does it, on a copy of ``results``."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "r.json"
        shutil.copy(results, copy)
        sample = json.loads(copy.read_text())["simulations"][-1]
        start = time.process_time()
        with open(copy) as fp:
            data = json.load(fp)
        data["simulations"].append(sample)
        with open(copy, "w") as fp:
            json.dump(data, fp, indent=2)
        return time.process_time() - start


def run_tau2_profile(concurrency: int = 128, tasks: int = 64, waves: int = 3, latency: float = 3.0,
                     rate: int = 100, py_spy: str | None = None, timeout: float = 900.0,
                     keep: Path | None = None) -> Tau2Profile:

    spy = py_spy or shutil.which("py-spy")
    if not spy:
        raise RuntimeError("py-spy is not installed: `pip install py-spy` (or pass its path with --py-spy)")
    names = bench_scenarios(split="base", variant="manual")[:tasks]
    task_ids = [get_scenario(n).upstream_id for n in names]
    trials = max(1, math.ceil(waves * concurrency / len(names)))

    env = {**LOOPBACK_ENV, **os.environ}
    with start_endpoint(latency=latency) as ep, tempfile.TemporaryDirectory(prefix="tauray-tau2-profile-") as tmp:
        folder = Path(tmp)
        tau2 = tau2_command(ep.base_url, task_ids, trials, concurrency, folder, "profile")
        # --nonblocking: sampling must not stop the process's 100+ threads 100 times a second
        cmd = [spy, "record", "--gil", "--nonblocking", "--format", "raw", "--rate", str(rate), "-o", str(folder / "profile.txt"),
               "--", *tau2]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=folder, check=False,
                              stdin=subprocess.DEVNULL)
        process_seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(f"py-spy/tau2 failed ({proc.returncode}): {proc.stderr[-2000:]}")
        results = folder / "profile.json"
        sims = json.loads(results.read_text())["simulations"]
        wall = (max(datetime.fromisoformat(s["end_time"]) for s in sims)
                - min(datetime.fromisoformat(s["start_time"]) for s in sims)).total_seconds()
        if keep is not None:  # the folded stacks, for a closer look (e.g. flamegraph.pl)
            shutil.copy(folder / "profile.txt", keep)
        by_part, samples = classify((folder / "profile.txt").read_text(), rate)
        run_gil = sum(v for k, v in by_part.items() if k != "start-up imports")
        last = time_one_save(results)
        return Tau2Profile(
            concurrency=concurrency, tasks=len(names), latency_s=latency, simulations=len(sims),
            completed=sum(s.get("termination_reason") == "user_stop" for s in sims), wall_seconds=round(wall, 2),
            process_seconds=round(process_seconds, 2),
            gil_samples=samples, sample_rate=rate, gil_seconds_by_part=by_part,
            gil_busy_fraction=round(run_gil / wall, 3) if wall else 0.0,
            save_share_of_gil=round(by_part.get("results-file save", 0.0) / run_gil, 3) if run_gil else 0.0,
            results_file_mb=round(results.stat().st_size / 2**20, 2), last_save_cpu_s=round(last, 4),
            saves_cpu_s_estimate=round((len(sims) + 1) / 2 * last, 2),
            command=_shown(cmd, task_ids, folder, ep.base_url),
        )


def _shown(cmd: list[str], task_ids: list[str], folder: Path, base_url: str) -> str:
    """The command as run, with the task ids, the temporary folder and the endpoint's port abridged."""
    first = cmd.index(task_ids[0])
    words = [*cmd[:first], f"<{len(task_ids)} task ids>", *cmd[first + len(task_ids):]]
    words[0] = "py-spy"
    words[words.index("--") + 1] = "tau2"
    text = " ".join(f"'{w}'" if "{" in w else w for w in words)
    return text.replace(str(folder), "DIR").replace(base_url, "http://127.0.0.1:PORT/v1")
