"""``tauray bench vs-tau2``: tauray against upstream's own runner on the same telecom tasks.

Both talk to the local test endpoint (loopback, fixed latency, 3 s by default:
an agentic model call) through litellm as ``openai/scripted-agent`` and
``openai/scripted-user``: upstream's ``tau2 run`` gets the endpoint through
``--agent-llm-args``/``--user-llm-args`` (``{"api_base": ..., "api_key": ...}``,
passed to ``litellm.completion``), tauray through its ModelSpecs (``tauray run``'s
engine, ``pipeline.run.execute``, with ``hosts`` agent and user hosts). Neither
retries a model call. Each runs at an equal concurrency and at each of a few
candidate concurrencies; its best is the one with the highest throughput. A
tau2 run that fails is run once more; a candidate that fails twice is reported
with its error and not counted (upstream's threads can break their shared HTTP
client at 128 and more here), and ``tau2_failed_attempts`` counts the failures.

Each run holds ``waves`` × its concurrency conversations, so the start and the
drain weigh the same at every concurrency. Throughput is conversations per hour
from the first conversation's start to the last one's end: for tau2 from the
start/end times in its results file, for tauray the wall time of ``execute``
with warm actors. Neither counts its process start. ``ideal_per_hour`` is the
latency-bound rate at tauray's best concurrency: concurrency × 3600 / (model
calls per conversation × latency).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel


class Tau2Bench(BaseModel):
    tasks: int
    latency_s: float
    equal_concurrency: int
    tau2_concurrency: int
    tauray_concurrency: int
    tau2_per_hour: float
    tauray_per_hour: float
    speedup: float
    tau2_per_hour_at_equal: float | None  # None: tau2 failed at the equal concurrency
    tauray_per_hour_at_equal: float
    speedup_at_equal: float | None
    ideal_per_hour: float
    tauray_vs_ideal: float
    tau2_calls_per_conversation: float
    tauray_calls_per_conversation: float
    tau2_runs: dict[str, float]
    tauray_runs: dict[str, float]
    tau2_failed: dict[str, str]
    tau2_failed_attempts: int
    waves: int
    tauray_hosts: int
    tauray_vs_ideal_by_concurrency: dict[str, float]
    seconds: float


def _tau2_bin() -> str:
    return str(Path(sys.executable).with_name("tau2"))


def _run_tau2(base_url: str, task_ids: list[str], trials: int, concurrency: int, tmp: Path,
              timeout: float) -> tuple[float, float, int]:
    """(conversations per hour, model calls per conversation, conversations)."""
    args = json.dumps({"api_base": base_url, "api_key": "bench", "temperature": 0.0})
    name = f"c{concurrency}"
    cmd = [_tau2_bin(), "run", "--domain", "telecom", "--agent-llm", "openai/scripted-agent", "--agent-llm-args", args,
           "--user-llm", "openai/scripted-user", "--user-llm-args", args, "--task-split-name", "base",
           "--task-ids", *task_ids, "--num-trials", str(trials), "--max-concurrency", str(concurrency),
           "--max-retries", "0", "--results-dir", str(tmp), "--save-to", name, "--log-level", "ERROR"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    (tmp / f"{name}.json").unlink(missing_ok=True)  # a failed attempt's partial results must not be resumed
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
                          cwd=tmp)
    if proc.returncode != 0:
        raise RuntimeError(f"tau2 run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    sims = json.loads((tmp / f"{name}.json").read_text())["simulations"]
    starts = [datetime.fromisoformat(s["start_time"]) for s in sims]
    ends = [datetime.fromisoformat(s["end_time"]) for s in sims]
    wall = (max(ends) - min(starts)).total_seconds()
    calls = sum(1 for s in sims for m in s["messages"] if m.get("role") in ("assistant", "user")) / len(sims)
    return len(sims) * 3600 / wall, calls, len(sims)


def _run_tauray(base_url: str, names: list[str], trials: int, concurrency: int, tmp: Path,
                hosts: int) -> tuple[float, float, int]:
    from tauray.pipeline.run import RunConfig, execute
    from tauray.pipeline.units import make_units
    from tauray.results import conversations_df

    agent = {"model": "openai/scripted-agent", "api_base": base_url, "concurrency": 4096, "num_retries": 0}
    user = {"model": "openai/scripted-user", "api_base": base_url, "concurrency": 4096, "num_retries": 0}
    out = tmp / f"tauray-c{concurrency}"
    cfg = RunConfig(agent=agent, user=user, concurrency=concurrency, out=out, run_id=f"c{concurrency}",
                    agent_hosts=hosts, user_hosts=hosts)
    units = make_units(cfg.run_id, names, trials, agent, user, cfg.max_steps, cfg.max_errors)
    start = time.perf_counter()
    execute(cfg, units=units, progress=False, keep_actors=True)
    wall = time.perf_counter() - start
    df = conversations_df(out)
    calls = float((df["agent_llm_calls"] + df["user_llm_calls"]).mean())
    return len(df) * 3600 / wall, calls, len(df)


def run_tau2_bench(tasks: int | None = None, latency: float | None = None, equal: int = 128,
                   tau2_candidates: tuple[int, ...] = (32, 64, 128),
                   tauray_candidates: tuple[int, ...] = (128, 256, 384), waves: int = 3, hosts: int = 2,
                   user_turns: int = 3, timeout: float = 600.0) -> Tau2Bench:
    from tauray.actors.endpoint import start_endpoint
    from tauray.pipeline.ray_runtime import ensure_ray
    from tauray.pipeline.run import RunConfig, execute, shutdown_actors
    from tauray.pipeline.units import make_units
    from tauray.scenarios import select_scenarios
    from tauray.scenarios.registry import default_registry

    t0 = time.perf_counter()
    latency = 3.0 if latency is None else latency
    entries = select_scenarios(domain="telecom", split="base", variant="manual")
    tasks = min(tasks or 64, len(entries))
    names = [e.name for e in entries[:tasks]]
    task_ids = [default_registry().get(n).upstream_id for n in names]
    trials = lambda c: max(1, math.ceil(waves * c / tasks))  # noqa: E731 - `waves` rounds of c in flight
    tau2_runs: dict[str, float] = {}
    tauray_runs: dict[str, float] = {}
    tau2_failed: dict[str, str] = {}
    tau2_failed_attempts = 0
    t2_calls: list[float] = []
    tr_calls: list[float] = []
    with start_endpoint(latency=latency, user_turns=user_turns) as ep, \
            tempfile.TemporaryDirectory(prefix="tauray-vs-tau2-") as tmpname:
        tmp = Path(tmpname)
        for c in sorted({equal, *tau2_candidates}):
            for _attempt in range(2):  # a broken run gets one more go before the candidate counts as failed
                try:
                    rate, calls, _ = _run_tau2(ep.base_url, task_ids, trials(c), c, tmp, timeout)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    tau2_failed_attempts += 1
                    tau2_failed[str(c)] = _last_error_line(str(exc))
                    continue
                tau2_failed.pop(str(c), None)
                tau2_runs[str(c)] = round(rate, 1)
                t2_calls.append(calls)
                break
        if not tau2_runs:
            raise RuntimeError(f"tau2 run failed at every concurrency: {tau2_failed}")
        ensure_ray()
        agent = {"model": "openai/scripted-agent", "api_base": ep.base_url}
        user = {"model": "openai/scripted-user", "api_base": ep.base_url}
        warm = RunConfig(agent=agent, user=user, concurrency=4, out=tmp / "warm", run_id="warm",
                         agent_hosts=hosts, user_hosts=hosts)
        execute(warm, units=make_units("warm", names[:4], 1, agent, user, 100, 10), progress=False, keep_actors=True)
        try:
            for c in sorted({equal, *tauray_candidates}):
                rate, calls, _ = _run_tauray(ep.base_url, names, trials(c), c, tmp, hosts)
                tauray_runs[str(c)] = round(rate, 1)
                tr_calls.append(calls)
        finally:
            shutdown_actors()
    best_t2 = max(tau2_runs, key=lambda c: tau2_runs[c])
    best_tr = max(tauray_runs, key=lambda c: tauray_runs[c])
    calls = sum(tr_calls) / len(tr_calls)

    def ideal(c: str) -> float:
        return int(c) * 3600 / (calls * latency)

    at_equal = tau2_runs.get(str(equal))
    return Tau2Bench(
        tasks=tasks, latency_s=latency, equal_concurrency=equal, tau2_concurrency=int(best_t2),
        tauray_concurrency=int(best_tr), tau2_per_hour=tau2_runs[best_t2], tauray_per_hour=tauray_runs[best_tr],
        speedup=round(tauray_runs[best_tr] / tau2_runs[best_t2], 2),
        tau2_per_hour_at_equal=at_equal, tauray_per_hour_at_equal=tauray_runs[str(equal)],
        speedup_at_equal=round(tauray_runs[str(equal)] / at_equal, 2) if at_equal else None,
        ideal_per_hour=round(ideal(best_tr), 1), tauray_vs_ideal=round(tauray_runs[best_tr] / ideal(best_tr), 3),
        tau2_calls_per_conversation=round(sum(t2_calls) / len(t2_calls), 2),
        tauray_calls_per_conversation=round(calls, 2), tau2_runs=tau2_runs, tauray_runs=tauray_runs,
        tau2_failed=tau2_failed, tau2_failed_attempts=tau2_failed_attempts, waves=waves, tauray_hosts=hosts,
        tauray_vs_ideal_by_concurrency={c: round(r / ideal(c), 3) for c, r in tauray_runs.items()},
        seconds=round(time.perf_counter() - t0, 1),
    )


def _last_error_line(text: str) -> str:
    """The exception line that ends a traceback (what went wrong, without the stack)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line.split(":", 1)[0] or "Exception" in line.split(":", 1)[0]]
    return (errors[-1] if errors else lines[-1] if lines else "failed")[:300]
