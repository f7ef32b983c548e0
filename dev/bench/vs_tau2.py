"""``python -m dev.bench vs-tau2``: tauray against upstream's own runner, like for like.

Both runners talk to the local test endpoint (loopback, fixed latency, 3 s by
default: an agentic model call) through litellm, on the same telecom tasks,
with the same writing scripted behaviours (:mod:`tauray.endpoint.writers`):
the agent follows the task's reference steps, its own writes as tool calls and
phone actions asked of the customer; the customer performs them on its phone.
Each runner tells the agent the steps its own way: upstream's ``tau2 run
--agent llm_agent_gt`` (its ground-truth agent) and tauray's agent spec
``reference_steps``. So both run the same conversations, writes and syncs
included, with the same model calls per conversation (checked per task; τ²'s
transcript also holds its fixed greeting, which is no model call and is not
counted). Neither retries a model call.

Only conversations that completed (the customer's stop) count, on both sides;
the others are reported. Each runner runs at an equal concurrency and at a
few candidate concurrencies; a run holds ``waves`` × its concurrency
conversations, so the start and the drain weigh the same at every
concurrency. Throughput is completed conversations per hour from the first
conversation's start to the last one's end: for tau2 from the times in its
results file, for tauray the wall time of ``execute`` with warm actors. CPU is
what each runner's processes spent over the run: the tau2 process from the
moment its results file exists (setup done) to its exit, tauray's driver and
Ray processes around ``execute`` (the endpoint excluded on both sides).

Three comparisons: at equal concurrency, best against best, and completed
conversations per CPU-second at the equal concurrency. ``ideal_per_hour`` is the
latency-bound rate at tauray's best concurrency. A tau2 run that fails is run
once more; a candidate that fails twice is reported with its error and not
counted.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Callable

import psutil
from pydantic import BaseModel, Field

from tauray.endpoint import start_endpoint
from tauray.pipeline.bench.engine import (
    WRITING_AGENT,
    WRITING_USER,
    bench_models,
    bench_scenarios,
    cpu_delta,
    process_cpu,
)
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.pipeline.ray_runtime import LOOPBACK_ENV, ensure_ray
from tauray.results import actions_df, conversations_df
from tauray.scenarios import get_scenario


class RunFigures(BaseModel):
    """One run of one runner at one concurrency."""

    per_hour: float = Field(description="Completed conversations per hour, first start to last end.")
    completed: int
    incomplete: int = Field(description="Conversations that ended otherwise (errors, limits); not counted.")
    wall_seconds: float
    cpu_seconds: float
    calls: int = Field(description="Model calls of the completed conversations.")
    calls_by_task: dict[str, float] = Field(description="Mean model calls per completed conversation, per task id.")
    writes: int = 0
    syncs: int = 0


class Tau2Bench(BaseModel):
    tasks: int
    latency_s: float
    waves: int
    tauray_hosts: int
    equal_concurrency: int
    tau2_concurrency: int = Field(description="tau2's best concurrency (highest throughput).")
    tauray_concurrency: int = Field(description="tauray's best concurrency.")
    tau2_per_hour: float
    tauray_per_hour: float
    speedup_best: float = Field(description="tauray at its best over tau2 at its best.")
    tau2_per_hour_at_equal: float | None  # None: tau2 failed at the equal concurrency
    tauray_per_hour_at_equal: float
    speedup_equal_concurrency: float | None
    tau2_per_cpu_second: float | None = Field(description="Completed conversations per CPU-second, at equal concurrency.")
    tauray_per_cpu_second: float
    speedup_per_cpu_second: float | None
    ideal_per_hour: float
    tauray_vs_ideal: float
    tauray_vs_ideal_by_concurrency: dict[str, float]
    calls_per_conversation_tau2: float = Field(description="Model calls per completed conversation (greeting excluded).")
    calls_per_conversation_tauray: float
    calls_equal: bool = Field(description="Every task took the same model calls on both runners.")
    writes_per_conversation: float = Field(description="tauray: write tool calls per completed conversation.")
    syncs_per_conversation: float = Field(description="tauray: syncs that pushed updates, per completed conversation.")
    tau2_cpu_per_wall_second: dict[str, float] = Field(
        description="tau2's process CPU-seconds per wall-second, by concurrency: 1.0 is one core, its ceiling under the GIL.")
    tau2_runs: dict[str, RunFigures]
    tauray_runs: dict[str, RunFigures]
    tau2_failed: dict[str, str]
    tau2_failed_attempts: int
    seconds: float


def _tau2_bin() -> str:
    return str(Path(sys.executable).with_name("tau2"))


def tau2_command(base_url: str, task_ids: list[str], trials: int, concurrency: int, results_dir: Path,
                 name: str) -> list[str]:
    """``tau2 run`` with its ground-truth agent and the writing pair on the endpoint."""
    args = json.dumps({"api_base": base_url, "api_key": "bench", "temperature": 0.0})
    return [_tau2_bin(), "run", "--domain", "telecom", "--agent", "llm_agent_gt",
            "--agent-llm", WRITING_AGENT, "--agent-llm-args", args,
            "--user-llm", WRITING_USER, "--user-llm-args", args, "--task-split-name", "base",
            "--task-ids", *task_ids, "--num-trials", str(trials), "--max-concurrency", str(concurrency),
            "--max-retries", "0", "--results-dir", str(results_dir), "--save-to", name, "--log-level", "ERROR"]


def tau2_calls(sim: dict) -> int:
    """Model calls of one τ² simulation: its assistant and user messages, less the fixed greeting."""
    messages = sim["messages"]
    calls = sum(1 for m in messages if m.get("role") in ("assistant", "user"))
    greeting = bool(messages) and messages[0].get("role") == "assistant" and not messages[0].get("tool_calls")
    return calls - greeting


def _run_tau2(base_url: str, task_ids: list[str], trials: int, concurrency: int, tmp: Path,
              timeout: float) -> RunFigures:
    name = f"c{concurrency}"
    results = tmp / f"{name}.json"
    results.unlink(missing_ok=True)  # a failed attempt's partial results must not be resumed

    env = {**LOOPBACK_ENV, **os.environ}
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(tau2_command(base_url, task_ids, trials, concurrency, tmp, name),
                                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=tmp)
        ps = psutil.Process(proc.pid)
        setup_cpu = None
        deadline = time.monotonic() + timeout
        while True:
            # wait4 reaps the child and hands back its CPU (rusage), which psutil cannot read after exit
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            if setup_cpu is None and results.exists():  # written once setup is done, before any simulation
                t = ps.cpu_times()
                setup_cpu = t.user + t.system
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(proc.args, timeout)
            time.sleep(0.1)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"tau2 run failed ({proc.returncode}):\n{err.read()[-3000:]}")
    sims = json.loads(results.read_text())["simulations"]
    starts = [datetime.fromisoformat(s["start_time"]) for s in sims]
    ends = [datetime.fromisoformat(s["end_time"]) for s in sims]
    wall = (max(ends) - min(starts)).total_seconds()
    done = [s for s in sims if s.get("termination_reason") == "user_stop"]
    by_task: dict[str, list[int]] = defaultdict(list)
    for s in done:
        by_task[s["task_id"]].append(tau2_calls(s))
    cpu = usage.ru_utime + usage.ru_stime - (setup_cpu or 0.0)
    return RunFigures(per_hour=round(len(done) * 3600 / wall, 1), completed=len(done), incomplete=len(sims) - len(done),
                      wall_seconds=round(wall, 2), cpu_seconds=round(cpu, 2), calls=sum(map(sum, by_task.values())),
                      calls_by_task={k: sum(v) / len(v) for k, v in by_task.items()})


def _run_tauray(base_url: str, names: list[str], trials: int, concurrency: int, tmp: Path, hosts: int,
                exclude: set[int]) -> RunFigures:

    agent, user = bench_models(base_url, concurrency=4096, retries=0)
    out = tmp / f"tauray-c{concurrency}"
    cfg = run_config(name=f"c{concurrency}", agent=agent, user=user, patterns=names, trials=trials,
                     max_in_flight=concurrency, cluster={"agent_hosts": hosts, "user_hosts": hosts})
    before = process_cpu(exclude)
    start = time.perf_counter()
    execute(cfg, out=out, probe=False, progress=False, keep_actors=True)
    wall = time.perf_counter() - start
    cpu = sum(cpu_delta(before, process_cpu(exclude)).values())
    df = conversations_df(out)
    done = df[(df["termination_reason"] == "user_stop") & df["error_kind"].isna()]
    actions = actions_df(out)
    actions = actions[actions["conversation_id"].isin(set(done["conversation_id"]))]
    per_conversation = done["agent_llm_calls"] + done["user_llm_calls"]
    calls = per_conversation.groupby(done["upstream_id"]).mean()
    return RunFigures(per_hour=round(len(done) * 3600 / wall, 1), completed=len(done), incomplete=len(df) - len(done),
                      wall_seconds=round(wall, 2), cpu_seconds=round(cpu, 2), calls=int(per_conversation.sum()),
                      calls_by_task={str(k): float(v) for k, v in calls.items()},
                      writes=int(((actions["kind"] == "tool_call") & actions["is_write"]).sum()),
                      syncs=int(((actions["kind"] == "sync") & (actions["result"] != "sync after init")).sum()))


def _mean_calls(runs: dict[str, RunFigures]) -> tuple[dict[str, float], float]:
    """Calls per task over all runs, and the mean over completed conversations."""
    per_task: dict[str, list[float]] = defaultdict(list)
    for r in runs.values():
        for task, calls in r.calls_by_task.items():
            per_task[task].append(calls)
    completed = sum(r.completed for r in runs.values())
    return {t: sum(v) / len(v) for t, v in per_task.items()}, sum(r.calls for r in runs.values()) / max(completed, 1)


def _run_tau2_candidates(base_url: str, task_ids: list[str], concurrencies: list[int],
                         trials: Callable[[int], int], tmp: Path, timeout: float) -> tuple[dict[str, RunFigures], dict[str, str], int]:
    """``tau2 run`` at each concurrency; a broken run gets one more go before the candidate
    counts as failed. Returns the runs, the failures (last error line) and the failed attempts."""
    runs: dict[str, RunFigures] = {}
    failed: dict[str, str] = {}
    attempts = 0
    for c in concurrencies:
        for _attempt in range(2):
            try:
                figures = _run_tau2(base_url, task_ids, trials(c), c, tmp, timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                attempts += 1
                failed[str(c)] = _last_error_line(str(exc))
                continue
            failed.pop(str(c), None)
            runs[str(c)] = figures
            break
    return runs, failed, attempts


def run_tau2_bench(tasks: int | None = None, latency: float | None = None, equal: int = 128,
                   tau2_candidates: tuple[int, ...] = (32, 64, 128),
                   tauray_candidates: tuple[int, ...] = (128, 256, 384), waves: int = 2, hosts: int = 2,
                   timeout: float = 600.0, scenarios: list[str] | None = None) -> Tau2Bench:

    t0 = time.perf_counter()
    latency = 3.0 if latency is None else latency
    candidates = scenarios or bench_scenarios(split="base", variant="manual")
    tasks = min(tasks or 64, len(candidates))
    names = candidates[:tasks]
    task_ids = [get_scenario(n).upstream_id for n in names]
    trials = lambda c: max(1, math.ceil(waves * c / tasks))
    tauray_runs: dict[str, RunFigures] = {}
    with start_endpoint(latency=latency) as ep, tempfile.TemporaryDirectory(prefix="tauray-vs-tau2-") as tmpname:
        tmp = Path(tmpname)
        tau2_runs, tau2_failed, tau2_failed_attempts = _run_tau2_candidates(
            ep.base_url, task_ids, sorted({equal, *tau2_candidates}), trials, tmp, timeout)
        if not tau2_runs:
            raise RuntimeError(f"tau2 run failed at every concurrency: {tau2_failed}")
        ensure_ray()
        agent, user = bench_models(ep.base_url)
        warm = run_config(name="warm", agent=agent, user=user, patterns=names[:4], max_in_flight=4,
                          cluster={"agent_hosts": hosts, "user_hosts": hosts})
        execute(warm, out=tmp / "warm", probe=False, progress=False, keep_actors=True)
        try:
            for c in sorted({equal, *tauray_candidates}):
                tauray_runs[str(c)] = _run_tauray(ep.base_url, names, trials(c), c, tmp, hosts, {ep.process.pid})
        finally:
            KEPT.drop()
    best_t2 = max(tau2_runs, key=lambda c: tau2_runs[c].per_hour)
    best_tr = max(tauray_runs, key=lambda c: tauray_runs[c].per_hour)
    t2_tasks, t2_calls = _mean_calls(tau2_runs)
    tr_tasks, tr_calls = _mean_calls(tauray_runs)
    if not tr_calls:
        raise RuntimeError("tauray completed no conversation: "
                           + ", ".join(f"{c}: {r.incomplete} incomplete" for c, r in tauray_runs.items()))
    done = sum(r.completed for r in tauray_runs.values()) or 1

    def ideal(c: str) -> float:
        return int(c) * 3600 / (tr_calls * latency)

    def per_cpu(r: RunFigures | None) -> float | None:
        return round(r.completed / r.cpu_seconds, 2) if r is not None and r.cpu_seconds > 0 else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 2) if a and b else None

    at_equal = tau2_runs.get(str(equal))
    tr_equal = tauray_runs[str(equal)]
    return Tau2Bench(
        tasks=tasks, latency_s=latency, waves=waves, tauray_hosts=hosts, equal_concurrency=equal,
        tau2_concurrency=int(best_t2), tauray_concurrency=int(best_tr),
        tau2_per_hour=tau2_runs[best_t2].per_hour, tauray_per_hour=tauray_runs[best_tr].per_hour,
        speedup_best=ratio(tauray_runs[best_tr].per_hour, tau2_runs[best_t2].per_hour),
        tau2_per_hour_at_equal=at_equal.per_hour if at_equal else None, tauray_per_hour_at_equal=tr_equal.per_hour,
        speedup_equal_concurrency=ratio(tr_equal.per_hour, at_equal.per_hour if at_equal else None),
        tau2_per_cpu_second=per_cpu(at_equal), tauray_per_cpu_second=per_cpu(tr_equal),
        speedup_per_cpu_second=ratio(per_cpu(tr_equal), per_cpu(at_equal)),
        ideal_per_hour=round(ideal(best_tr), 1), tauray_vs_ideal=round(tauray_runs[best_tr].per_hour / ideal(best_tr), 3),
        tauray_vs_ideal_by_concurrency={c: round(r.per_hour / ideal(c), 3) for c, r in tauray_runs.items()},
        calls_per_conversation_tau2=round(t2_calls, 2), calls_per_conversation_tauray=round(tr_calls, 2),
        calls_equal=bool(t2_tasks) and t2_tasks == {t: v for t, v in tr_tasks.items() if t in t2_tasks}
        and set(t2_tasks) == set(tr_tasks),
        writes_per_conversation=round(sum(r.writes for r in tauray_runs.values()) / done, 2),
        syncs_per_conversation=round(sum(r.syncs for r in tauray_runs.values()) / done, 2),
        tau2_cpu_per_wall_second={c: round(r.cpu_seconds / r.wall_seconds, 2) for c, r in tau2_runs.items()
                                  if r.wall_seconds > 0},
        tau2_runs=tau2_runs, tauray_runs=tauray_runs, tau2_failed=tau2_failed,
        tau2_failed_attempts=tau2_failed_attempts, seconds=round(time.perf_counter() - t0, 1),
    )


def _last_error_line(text: str) -> str:
    """The exception line that ends a traceback (what went wrong, without the stack)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line.split(":", 1)[0] or "Exception" in line.split(":", 1)[0]]
    return (errors[-1] if errors else lines[-1] if lines else "failed")[:300]
