"""``tauray bench judge``: re-judging throughput against the latency-bound ideal.

Makes a stored run of N telecom conversations with the reference policies (no
model needed), starts the local test endpoint with a fixed latency L, and
re-judges the run at concurrency C with one overall prompt and one sample per
conversation. The ideal is ceil(calls / C) × L; the wall time is the whole
re-judge (reading the tables, rendering, judging, writing the rows).
"""

from __future__ import annotations

import asyncio
import math
import tempfile
from pathlib import Path
from typing import Any

from tauray.actors.judge import JudgeConfig
from tauray.actors.llm import close_clients, get_client
from tauray.endpoint import start_endpoint
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.judging import rejudge


def make_reference_run(out: Path, conversations: int, run_id: str = "judge-bench") -> int:
    """A stored run of ``conversations`` telecom conversations (oracle agent, scripted user)."""

    cfg = run_config(name=run_id, domain="telecom", split="full", variant="manual", limit=conversations,
                     agent={"model": "oracle"}, user={"model": "scripted"}, max_in_flight=64)
    return execute(cfg, out=out, probe=False, progress=False).ran


def _warm_up(config: Any) -> None:
    """One call first: litellm imports most of itself lazily on the first request of a
    process (seconds), a one-off cost that is not the judge's throughput."""


    async def call() -> None:
        await get_client(config.model).complete([{"role": "user", "content": "warm-up"}])
        await close_clients()

    asyncio.run(call())


def run_judge_bench(latency: float, concurrency: int, conversations: int) -> dict[str, Any]:
    """Return conversations, concurrency, judge_calls, latency_s, ideal_seconds,
    wall_seconds and ratio (wall / ideal)."""

    with tempfile.TemporaryDirectory(prefix="tauray-judge-bench-") as tmp:
        run_dir = Path(tmp) / "run"
        stored = make_reference_run(run_dir, conversations)
        import ray

        ray.shutdown()  # re-judging needs no Ray; its daemons would only compete for the CPUs
        with start_endpoint(latency=latency) as ep:
            config = JudgeConfig(model={"model": "openai/judge-good", "api_base": ep.base_url,
                                        "concurrency": concurrency}, prompt="overall-plain")
            _warm_up(config)
            summary = rejudge(run_dir, [config], concurrency=concurrency)
            requests = ep.stats()["requests"]
    ideal = math.ceil(summary.calls / concurrency) * latency if summary.calls else 0.0
    result = {
        "conversations": stored,
        "concurrency": concurrency,
        "judge_calls": summary.calls,
        "endpoint_requests": requests,
        "rows": summary.rows["judge_verdicts"],
        "unscored_rows": summary.unscored_rows,
        "latency_s": latency,
        "ideal_seconds": round(ideal, 3),
        "wall_seconds": summary.seconds,
        "ratio": round(summary.seconds / ideal, 3) if ideal else None,
    }
    return result


__all__ = ["make_reference_run", "run_judge_bench"]
