"""``tauray bench engine``: how close the engine gets to the latency bound.

Starts the local test endpoint with a fixed latency and runs N conversations at
concurrency C through the actors, over telecom scenarios (``--domain``: another
domain's, where only the agent writes and nothing syncs), with the writing
scripted behaviours: the agent follows the scenario's reference steps (its
own writes as tool calls, phone actions asked of the customer), the customer
performs them. So every conversation runs what a solved one does: writes on
both sides, a sync after each (over the sides' sync views), updates pushed to
the hosts.
The wall time is compared with the latency-bound ideal: the sum over
conversations of their sequential model calls × latency, divided by C.

CPU is measured over every tauray process (driver, Ray's own processes and
workers; the endpoint excluded) and divided by the model calls.

The baseline is bare ``litellm.acompletion`` against the same endpoint, after
Ray has stopped, replaying every recorded conversation of the run (system
prompt, tools and the history as it grew, call by call, for both sides,
rebuilt from the messages table) the way the engine ran them: each
conversation's calls one after another, C conversations in flight, spread
over as many processes as the engine makes model calls from (an agent host
and a user host). So it is the same work at the same concurrency and latency,
with nothing but litellm in between: its wall time over the same ideal
(``litellm_ratio``) is the best a litellm client reaches on this machine, and
the engine's wall over the baseline's (``ratio_vs_litellm``) is what the
engine itself adds. When the ideal asks for more CPU than the machine has,
both ratios exceed 1 by the same bound, which ``ratio`` alone would hide.

What measures tauray against its own floors (the same requests sent from bare Ray actors,
the bytes that cross between the actors) is a developer's bench outside the package
(``dev/bench/engine_floor.py``, docs/benchmarks.md): it runs this bench with ``extra``, a
measurement made while the run's Ray and endpoint are still up.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from pydantic import BaseModel, Field

from tauray.endpoint import start_endpoint
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.plan import SweepPlan
from tauray.pipeline.pool import KEPT
from tauray.pipeline.ray_runtime import ensure_ray, loopback_env
from tauray.results import actions_df, conversations_df, messages_df
from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.conventions import TRANSFER_TO_HUMAN
from tauray.scenarios.prompts import reference_steps_prompt

WRITING_AGENT = "openai/scripted-agent-writes"
WRITING_USER = "openai/scripted-user-writes"


class EngineBench(BaseModel):
    conversations: int
    audit: bool = Field(description="Each conversation was audited in the loop (the default of every run).")
    concurrency: int
    llm_calls: int = Field(description="Model calls the engine counted (agent + user, every conversation).")
    endpoint_requests: int = Field(description="Requests the endpoint served during the timed run.")
    requests_match: bool = Field(description="endpoint_requests == llm_calls.")
    latency_s: float
    ideal_seconds: float
    wall_seconds: float
    ratio: float
    cpu_ms_per_call: float
    litellm_cpu_ms_per_call: float = Field(description="CPU ms per call of the bare-litellm replay (its processes).")
    cpu_ratio_vs_litellm: float
    litellm_wall_seconds: float = Field(description="Wall time of the bare-litellm replay of the same conversations "
                                        "at the same concurrency and latency.")
    litellm_ratio: float = Field(description="litellm_wall_seconds / ideal_seconds: the floor a litellm client "
                                 "reaches on this machine for this work.")
    ratio_vs_litellm: float = Field(description="wall_seconds / litellm_wall_seconds: what the engine adds.")
    baseline_calls: int = Field(description="Requests the litellm baseline replayed.")
    baseline_conversations: int = Field(description="Whole conversations those requests came from.")
    baseline_processes: int = Field(description="Processes the baseline's conversations were spread over.")
    writes_per_conversation: float = Field(description="Write tool calls (both sides) per conversation.")
    syncs_per_conversation: float = Field(
        description="Syncs after a write that changed a side (updates pushed to its host), per conversation; "
        "every write also computes a sync, changed or not.")
    lost: int
    duplicated: int
    success_rows: int
    successes: int = Field(description="Conversations scored successful (the scripted pair follows the gold path).")
    terminations: dict[str, int]
    cpu_seconds_by_process: dict[str, float]
    domain: str = Field(description="Domain of the scenarios.")
    extra: dict[str, Any] = Field(default_factory=dict, description="What the caller's ``extra`` measured while "
                                  "the run's Ray and endpoint were up (nothing for `tauray bench engine`).")


@dataclass(frozen=True)
class EngineRun:
    """What an ``extra`` measurement of :func:`run_engine_bench` gets: the timed run's endpoint, its
    model specs and scenarios, and every model request of its recorded conversations."""

    base_url: str
    agent: dict[str, Any]
    user: dict[str, Any]
    names: list[str]
    concurrency: int
    conversations: list[list[tuple[str, list[dict], list[dict]]]]
    workdir: Path
    reset_endpoint: Callable[[], None]
    endpoint_requests: Callable[[], int]
    cpu_snapshot: Callable[[], dict[int, tuple[str, float]]]


def bench_models(base_url: str, concurrency: int = 64, retries: int | None = None) -> tuple[dict, dict]:
    """Agent and user specs of the writing scripted pair on the endpoint at ``base_url``."""
    extra = {} if retries is None else {"num_retries": retries}
    agent = {"model": WRITING_AGENT, "api_base": base_url, "reference_steps": True, "concurrency": concurrency,
             **extra}
    user = {"model": WRITING_USER, "api_base": base_url, "concurrency": concurrency, **extra}
    return agent, user


def bench_scenarios(split: str = "base", variant: str | None = None, domain: str = "telecom") -> list[str]:
    """Scenarios of ``domain`` whose reference steps the scripted pair can follow to the end
    on either runner: those that hand over to a human end differently in τ²'s runner
    and in tauray's, so they are left out."""

    names = []
    for entry in select_scenarios(domain=domain, split=split, variant=variant):
        actions = get_scenario(entry.name).reference_actions
        if actions and all(a.name != TRANSFER_TO_HUMAN for a in actions):
            names.append(entry.name)
    return names


def process_cpu(exclude: set[int]) -> dict[int, tuple[str, float]]:
    me = psutil.Process()
    out = {}
    for p in [me, *me.children(recursive=True)]:
        if p.pid in exclude:
            continue
        try:
            t = p.cpu_times()
            name = " ".join(p.cmdline()[:2])[-60:] if p.pid != me.pid else "driver"
            out[p.pid] = (name, t.user + t.system)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return out


PROCESS_KINDS = ("AgentHost", "UserSimHost", "CoordinatorHost", "raylet", "gcs_server", "driver", "default_worker",
                 "log_monitor", "dashboard", "ray::")
"""How CPU is told apart by process: the first of these its command line names (else "other")."""


def _label(cmd: str, kinds: Sequence[str]) -> str:
    return next((key for key in kinds if key in cmd), "other")


def cpu_delta(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
              kinds: Sequence[str] = PROCESS_KINDS) -> dict[str, float]:
    """CPU seconds spent between two :func:`process_cpu` snapshots, by process kind."""
    by_proc: dict[str, float] = {}
    for pid, (name, cpu) in after.items():
        delta = cpu - before.get(pid, (name, 0.0))[1]
        kind = _label(name, kinds)
        by_proc[kind] = round(by_proc.get(kind, 0.0) + delta, 3)
    return by_proc


# --------------------------------------------------------------------------- baseline


def _openai_calls(calls: Any) -> list[dict[str, Any]] | None:
    if calls is None or len(calls) == 0:
        return None
    return [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls]


def replay_requests(scenario: Any, messages: list[dict[str, Any]], agent_spec: dict[str, Any]
                    ) -> tuple[list[tuple[str, list[dict], list[dict]]], list[dict], list[dict]]:
    """Every model request of one recorded conversation as its host sent it:
    ``(side, messages, tools)`` per call, in order, and both sides' final views.

    Rebuilt from the transcript records (``side``, ``role``, ``content``,
    ``tool_calls``, ``tool_call_id``, in ``seq`` order) with the same rules a
    side's session keeps its view by: its own replies as ``assistant``, the
    other side's text as ``user``, its own tool results as ``tool``; the
    agent's greeting (the first message) is no model call.
    """

    agent_prompt = scenario.agent_prompt
    if agent_spec.get("reference_steps"):
        agent_prompt += "\n\n" + reference_steps_prompt(scenario.reference_actions)
    views = {"agent": [{"role": "system", "content": agent_prompt}],
             "user": [{"role": "system", "content": scenario.user_prompt}]}
    tools = {"agent": [t.openai() for t in scenario.agent_tools], "user": [t.openai() for t in scenario.user_tools]}
    requests: list[tuple[str, list[dict], list[dict]]] = []
    for i, m in enumerate(messages):
        side, other = m["side"], "user" if m["side"] == "agent" else "agent"
        if m["role"] == "tool":
            views[side].append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
            continue
        calls = _openai_calls(m.get("tool_calls"))
        if i > 0:  # the first message is the agent's fixed greeting
            requests.append((side, list(views[side]), tools[side]))
        if calls:
            views[side].append({"role": "assistant", "content": m["content"], "tool_calls": calls})
        else:
            views[side].append({"role": "assistant", "content": m["content"] or ""})
            views[other].append({"role": "user", "content": m["content"] or ""})
    return requests, views["agent"], views["user"]


def baseline_conversations(out: Path, agent_spec: dict[str, Any], user_spec: dict[str, Any],
                           limit: int | None = None) -> list[list[tuple[str, list[dict], list[dict]]]]:
    """The requests of each recorded conversation of the run, in order, as
    ``(model, messages, tools)``; the first ``limit`` conversations when given."""

    df = messages_df(out, decode_json=True).sort_values(["conversation_id", "seq"])
    models = {"agent": agent_spec["model"], "user": user_spec["model"]}
    conversations: list[list[tuple[str, list[dict], list[dict]]]] = []
    for _, group in df.groupby("conversation_id", sort=True):
        if limit is not None and len(conversations) >= limit:
            break
        rows = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}  # a null cell
                for r in group.to_dict("records")]
        requests, _, _ = replay_requests(get_scenario(rows[0]["scenario"]), rows, agent_spec)
        conversations.append([(models[side], msgs, tools) for side, msgs, tools in requests])
    return conversations


async def _replay(base_url: str, conversations: list[list[tuple[str, list[dict], list[dict]]]],
                  concurrency: int) -> tuple[float, float, int]:
    """Bare ``litellm.acompletion`` over whole conversations, each one's calls in
    order, ``concurrency`` conversations at once: (wall seconds, CPU seconds, warm-up calls)."""
    import litellm

    async def call(request: tuple[str, list[dict], list[dict]]) -> None:
        model, messages, tools = request
        await litellm.acompletion(model=model, api_base=base_url, api_key="bench", messages=messages,
                                  tools=tools or None)

    # warm up imports and the HTTP client (the engine's actors were warmed too)
    warm = [c[0] for c in conversations[:2] if c]
    await asyncio.gather(*(call(r) for r in warm))
    sem = asyncio.Semaphore(concurrency)

    async def conversation(requests: list[tuple[str, list[dict], list[dict]]]) -> None:
        async with sem:
            for request in requests:
                await call(request)

    cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(conversation(c) for c in conversations))
    return time.perf_counter() - start, time.process_time() - cpu, len(warm)


def _replay_worker(args: tuple) -> tuple[float, float, int]:
    """One baseline process: litellm imported first (not timed), then, once every
    process is loaded, its share of the conversations."""

    loopback_env()
    import litellm  # noqa: F401

    base_url, conversations, concurrency, ready, go = args
    ready.wait()
    go.wait()
    return asyncio.run(_replay(base_url, conversations, concurrency))


def litellm_baseline(base_url: str, conversations: list[list[tuple[str, list[dict], list[dict]]]],
                     concurrency: int, processes: int = 2) -> tuple[float, float, int]:
    """Replay ``conversations`` with bare litellm over ``processes`` processes (conversations
    dealt round robin, ``concurrency`` in flight in all): (wall seconds, CPU seconds in all,
    warm-up calls in all)."""

    processes = max(1, min(processes, len(conversations)))
    if processes == 1:
        return asyncio.run(_replay(base_url, conversations, concurrency))
    ctx = mp.get_context("spawn")
    with mp.Manager() as manager, ProcessPoolExecutor(processes, mp_context=ctx) as pool:
        ready, go = manager.Barrier(processes + 1), manager.Event()
        parts = [conversations[i::processes] for i in range(processes)]
        shares = [concurrency // processes + (i < concurrency % processes) for i in range(processes)]
        futures = [pool.submit(_replay_worker, (base_url, part, max(1, share), ready, go))
                   for part, share in zip(parts, shares)]
        ready.wait()
        go.set()
        results = [f.result() for f in futures]
    # each process times its replay after its warm-up; the slowest one is the replay's wall
    return max(r[0] for r in results), sum(r[1] for r in results), sum(r[2] for r in results)


# --------------------------------------------------------------------------- the bench


def run_engine_bench(latency: float = 1.0, concurrency: int = 128, conversations: int = 500,
                     baseline_processes: int = 2, progress: bool = False,
                     scenarios: list[str] | None = None, domain: str = "telecom", audit: bool = True,
                     extra: Callable[[EngineRun], dict[str, Any]] | None = None) -> EngineBench:
    """The figures of ``tauray bench engine`` (see the module docstring); ``extra`` is called after the
    timed run, with Ray and the endpoint still up, and what it returns is kept as ``EngineBench.extra``."""

    with start_endpoint(latency=latency) as ep, tempfile.TemporaryDirectory(prefix="tauray-bench-") as tmp:
        names = scenarios or bench_scenarios(domain=domain)
        import ray

        started_ray = not ray.is_initialized()  # a caller's Ray (tests) is left running
        ensure_ray()
        agent, user = bench_models(ep.base_url, concurrency)
        out = Path(tmp) / "run"
        trials = -(-conversations // len(names))
        names = names[:-(-conversations // trials)]  # trials × scenarios = conversations where it divides
        cfg = run_config(name="bench", agent=agent, user=user, patterns=names, trials=trials,
                         max_in_flight=concurrency, audit=audit)
        # warm the actors (imports, registry, model clients) before the clock starts
        warm = run_config(name="warm", agent=agent, user=user, patterns=names[:4], seed=99, max_in_flight=4,
                          audit=audit)
        execute(warm, out=Path(tmp) / "warm", probe=False, progress=False, keep_actors=True)
        ep.reset_stats()
        exclude = {ep.process.pid}
        before = process_cpu(exclude)
        start = time.perf_counter()
        summary = execute(cfg, out=out, probe=False, progress=progress, keep_actors=True)
        wall = time.perf_counter() - start
        by_proc = cpu_delta(before, process_cpu(exclude))
        stats = ep.stats()
        KEPT.drop()
        replayed = baseline_conversations(out, agent, user)
        measured: dict[str, Any] = {}
        if extra is not None:
            measured = extra(EngineRun(base_url=ep.base_url, agent=agent, user=user, names=names,
                                       concurrency=concurrency, conversations=replayed, workdir=Path(tmp),
                                       reset_endpoint=ep.reset_stats,
                                       endpoint_requests=lambda: int(ep.stats().get("requests", 0)),
                                       cpu_snapshot=lambda: process_cpu(exclude)))
        if started_ray:
            ray.shutdown()  # the baseline below runs in a driver without Ray's threads
        df = conversations_df(out)
        actions = actions_df(out)
        calls = df["agent_llm_calls"] + df["user_llm_calls"]
        llm_calls = int(calls.sum())
        ideal = float((calls * latency).sum()) / concurrency
        cpu_total = sum(by_proc.values())
        plan = SweepPlan(cfg, names)
        ids = {uid for cell in plan.cells for uid, _, _ in plan.unit_ids(cell)}
        seen = df["conversation_id"].value_counts()
        writes = int(((actions["kind"] == "tool_call") & actions["is_write"]).sum())
        syncs = int(((actions["kind"] == "sync") & (actions["result"] != "sync after init")).sum())
        baseline_calls = sum(len(c) for c in replayed)
        ep.reset_stats()
        litellm_wall, litellm_cpu, warm_calls = litellm_baseline(ep.base_url, replayed, concurrency,
                                                                  baseline_processes)
        if int(ep.stats().get("requests", 0)) != baseline_calls + warm_calls:
            raise RuntimeError("the litellm baseline's requests do not match the calls it replayed")
        litellm_ms = litellm_cpu * 1000 / max(baseline_calls, 1)
        cpu_ms = cpu_total * 1000 / max(llm_calls, 1)
        requests_served = int(stats.get("requests", 0))
        return EngineBench(
            conversations=len(ids), audit=audit, concurrency=concurrency, llm_calls=llm_calls,
            endpoint_requests=requests_served, requests_match=requests_served == llm_calls, latency_s=latency,
            ideal_seconds=round(ideal, 3), wall_seconds=round(wall, 3), ratio=round(wall / ideal, 3),
            cpu_ms_per_call=round(cpu_ms, 3), litellm_cpu_ms_per_call=round(litellm_ms, 3),
            cpu_ratio_vs_litellm=round(cpu_ms / litellm_ms, 2), litellm_wall_seconds=round(litellm_wall, 3),
            litellm_ratio=round(litellm_wall / ideal, 3), ratio_vs_litellm=round(wall / litellm_wall, 3),
            baseline_calls=baseline_calls, baseline_conversations=len(replayed),
            baseline_processes=max(1, min(baseline_processes, len(replayed))),
            writes_per_conversation=round(writes / max(len(df), 1), 2),
            syncs_per_conversation=round(syncs / max(len(df), 1), 2),
            lost=len(ids - set(seen.index)), duplicated=int((seen > 1).sum()),
            success_rows=summary.ran, successes=int(df["success"].fillna(False).astype(bool).sum()),
            terminations=summary.by_termination, cpu_seconds_by_process=by_proc,
            domain=domain if not scenarios else _domain_of(names),
            extra=measured,
        )


def _domain_of(names: list[str]) -> str:
    domains = sorted({get_scenario(n).domain for n in names})
    return ",".join(domains)
