"""``python -m dev.bench engine-floor``: ``tauray bench engine`` with tauray measured against its
own floors, in the same run.

* the Ray floor (:mod:`dev.bench.ray_floor`): the timed run's requests sent again by bare
  litellm from Ray actors, one actor call per model call. Its CPU over the bare-litellm
  baseline's is what making the calls behind Ray actors costs; the engine's CPU over the
  floor's is what tauray's own work costs.
* bytes per conversation: what crosses between the coordinator and the hosts (the pickled
  request and result of every host call), weighed by hosts that count it
  (:mod:`dev.bench.traffic`) on a separate pass over one conversation of each of the first
  :data:`BYTES_SAMPLE` scenarios, after the timed run (weighing costs CPU).

Both run as the engine bench's ``extra`` measurement, while its Ray and endpoint are up.
"""

from __future__ import annotations

from typing import Any

from dev.bench import traffic
from dev.bench.ray_floor import ray_floor
from tauray.pipeline.bench.engine import PROCESS_KINDS, EngineRun, cpu_delta, run_engine_bench
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.pipeline.scheduler import Hooks

BYTES_SAMPLE = 24
FLOOR_KINDS = ("FloorSide", "FloorCoordinator", *PROCESS_KINDS)


def measure_bytes(run: EngineRun) -> dict[str, Any]:
    """One conversation of each of the first :data:`BYTES_SAMPLE` scenarios on hosts that weigh
    every call: bytes per conversation, by host method."""
    import ray

    sample = run_config(name="bytes", agent=run.agent, user=run.user, patterns=run.names[:BYTES_SAMPLE], seed=7,
                        max_in_flight=run.concurrency)
    try:
        summary = execute(sample, out=run.workdir / "bytes", probe=False, progress=False, keep_actors=True,
                          hooks=Hooks(classes=traffic.CLASSES))
        hosts = [h for group in KEPT.pool.groups for h in (*group.agents, *group.users)]
        weighed = traffic.merged(ray.get([h.weighed.remote() for h in hosts]))
    finally:
        KEPT.drop()
    n = max(summary.ran, 1)
    return {"bytes_per_conversation": round(weighed["bytes"] / n, 1),
            "bytes_by_method": {m: round(b / n, 1) for m, b in sorted(weighed["bytes_by_method"].items())},
            "bytes_conversations": summary.ran}


def floor_and_bytes(run: EngineRun) -> dict[str, Any]:
    run.reset_endpoint()
    wall, before, after, calls, warm = ray_floor(run.base_url, run.conversations, run.agent["model"],
                                                 run.concurrency, run.cpu_snapshot)
    if run.endpoint_requests() != calls + warm:
        raise RuntimeError("the Ray floor's requests do not match the calls it replayed")
    by_process = cpu_delta(before, after, FLOOR_KINDS)
    return {"ray_floor_wall_seconds": round(wall, 3), "ray_floor_cpu_seconds_by_process": by_process,
            "ray_floor_cpu_seconds": round(sum(by_process.values()), 3), **measure_bytes(run)}


def run_engine_floor_bench(**engine: Any) -> dict[str, Any]:
    """The engine bench's figures (``engine`` are :func:`run_engine_bench`'s keywords) with the floor's
    and the bytes', and the ratios that split the engine's CPU into Ray's share and tauray's."""
    bench = run_engine_bench(extra=floor_and_bytes, **engine)
    figures = bench.model_dump(exclude={"extra"})
    extra = bench.extra
    floor_ms = extra["ray_floor_cpu_seconds"] * 1000 / max(bench.baseline_calls, 1)
    figures.update({k: v for k, v in extra.items() if k != "ray_floor_cpu_seconds"},
                   ray_floor_cpu_ms_per_call=round(floor_ms, 3),
                   ray_floor_cpu_ratio_vs_litellm=round(floor_ms / bench.litellm_cpu_ms_per_call, 2),
                   cpu_ratio_vs_ray_floor=round(bench.cpu_ms_per_call / floor_ms, 2))
    return figures


__all__ = ["BYTES_SAMPLE", "floor_and_bytes", "measure_bytes", "run_engine_floor_bench"]
