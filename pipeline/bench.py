"""``tauray bench engine``: how close the engine gets to the latency bound.

Starts the local test endpoint with a fixed latency, runs N conversations at
concurrency C through the actors (scripted agent and scripted user served by
the endpoint, over telecom scenarios), and compares the wall time with the
latency-bound ideal: the sum over conversations of their sequential model calls
× latency, divided by C. CPU is measured over every tauray process (driver,
Ray's own processes and workers; the endpoint excluded) and divided by the
model calls; litellm's bare client cost is measured in the same run, in the
driver, against the same endpoint, as the baseline.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel


class EngineBench(BaseModel):
    conversations: int
    concurrency: int
    llm_calls: int
    endpoint_requests: int
    latency_s: float
    ideal_seconds: float
    wall_seconds: float
    ratio: float
    cpu_ms_per_call: float
    litellm_cpu_ms_per_call: float
    cpu_ratio_vs_litellm: float
    lost: int
    duplicated: int
    success_rows: int
    terminations: dict[str, int]
    cpu_seconds_by_process: dict[str, float]


def _process_cpu(exclude: set[int]) -> dict[int, tuple[str, float]]:
    import psutil

    me = psutil.Process()
    out = {}
    for p in [me, *me.children(recursive=True)]:
        if p.pid in exclude:
            continue
        try:
            t = p.cpu_times()
            name = " ".join(p.cmdline()[:2])[-60:] if p.pid != me.pid else "driver"
            out[p.pid] = (name, t.user + t.system + t.children_user * 0 + t.children_system * 0)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return out


def _label(cmd: str) -> str:
    for key in ("AgentHost", "UserSimHost", "CoordinatorHost", "raylet", "gcs_server", "driver", "default_worker",
                "log_monitor", "dashboard", "ray::"):
        if key in cmd:
            return key
    return "other"


async def _bare_litellm(base_url: str, calls: int, concurrency: int, scenario_name: str) -> float:
    """CPU ms per bare ``litellm.acompletion`` call in this process, for requests shaped
    like the engine's (the scenario's agent prompt and tools, then its user prompt
    and phone tools, alternately) against the same endpoint."""
    import litellm
    from tauray.scenarios import get_scenario

    s = get_scenario(scenario_name)
    shapes = [
        ("openai/scripted-agent", [{"role": "system", "content": s.agent_prompt},
                                   {"role": "user", "content": "My phone has no data."}],
         [t.openai() for t in s.agent_tools]),
        ("openai/scripted-user", [{"role": "system", "content": s.user_prompt},
                                  {"role": "user", "content": "How can I help you today?"}],
         [t.openai() for t in s.user_tools]),
    ]
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        model, messages, tools = shapes[i % 2]
        async with sem:
            await litellm.acompletion(model=model, api_base=base_url, api_key="bench", messages=messages,
                                      tools=tools)

    await asyncio.gather(*(one(i) for i in range(4)))  # warm up imports and the HTTP client
    start = time.process_time()
    await asyncio.gather(*(one(i) for i in range(calls)))
    return (time.process_time() - start) * 1000 / calls


def run_engine_bench(latency: float = 1.0, concurrency: int = 128, conversations: int = 500,
                     user_turns: int = 3, bare_calls: int = 400, progress: bool = False) -> EngineBench:
    from tauray.actors.endpoint import start_endpoint
    from tauray.pipeline.ray_runtime import ensure_ray
    from tauray.pipeline.run import RunConfig, execute
    from tauray.pipeline.units import make_units
    from tauray.results import read_conversations
    from tauray.scenarios import select_scenarios

    with start_endpoint(latency=latency, user_turns=user_turns) as ep, \
            tempfile.TemporaryDirectory(prefix="tauray-bench-") as tmp:
        names = [e.name for e in select_scenarios(domain="telecom", split="base")]
        litellm_ms = asyncio.run(_bare_litellm(ep.base_url, bare_calls, concurrency, names[0]))
        ray = ensure_ray()
        agent = {"model": "openai/scripted-agent", "api_base": ep.base_url, "concurrency": concurrency}
        user = {"model": "openai/scripted-user", "api_base": ep.base_url, "concurrency": concurrency}
        out = Path(tmp) / "run"
        cfg = RunConfig(agent=agent, user=user, concurrency=concurrency, out=out, run_id="bench")
        units = []
        for trial in range(-(-conversations // len(names))):
            units += make_units("bench", names, 1, agent, user, cfg.max_steps, cfg.max_errors, base_seed=trial)
        units = units[:conversations]
        # warm the actors (imports, registry, model clients) before the clock starts
        warm = RunConfig(agent=agent, user=user, concurrency=4, out=Path(tmp) / "warm", run_id="warm")
        execute(warm, units=make_units("warm", names[:4], 1, agent, user, 100, 10, base_seed=99), progress=False,
                keep_actors=True)
        ep.reset_stats()
        exclude = {ep.process.pid}
        before = _process_cpu(exclude)
        start = time.perf_counter()
        summary = execute(cfg, units=units, progress=progress, keep_actors=True)
        wall = time.perf_counter() - start
        after = _process_cpu(exclude)
        stats = ep.stats()
        df = read_conversations(out)
        calls = df["agent_llm_calls"] + df["user_llm_calls"]
        llm_calls = int(calls.sum())
        ideal = float((calls * latency).sum()) / concurrency
        by_proc: dict[str, float] = {}
        for pid, (name, cpu) in after.items():
            delta = cpu - before.get(pid, (name, 0.0))[1]
            by_proc[_label(name)] = round(by_proc.get(_label(name), 0.0) + delta, 3)
        cpu_total = sum(by_proc.values())
        ids = set(u.unit_id for u in units)
        seen = df["conversation_id"].value_counts()
        from tauray.pipeline.run import shutdown_actors

        shutdown_actors()
        ray.shutdown()
        cpu_ms = cpu_total * 1000 / max(llm_calls, 1)
        return EngineBench(
            conversations=len(units), concurrency=concurrency, llm_calls=llm_calls,
            endpoint_requests=int(stats.get("requests", 0)), latency_s=latency,
            ideal_seconds=round(ideal, 3), wall_seconds=round(wall, 3), ratio=round(wall / ideal, 3),
            cpu_ms_per_call=round(cpu_ms, 3), litellm_cpu_ms_per_call=round(litellm_ms, 3),
            cpu_ratio_vs_litellm=round(cpu_ms / litellm_ms, 2),
            lost=len(ids - set(seen.index)), duplicated=int((seen > 1).sum()),
            success_rows=summary.conversations, terminations=summary.by_termination,
            cpu_seconds_by_process=by_proc,
        )
