"""What voice costs tauray's own coordinators, against text on the same tasks: the CPU of their
processes, of their task threads and of their event-loop threads per conversation (the
reference policies on Ray, speech on the run's pool), and the voice run's speech cost.

The coordinators are :class:`MeasuredCoordinator`, tauray's own with one method added that reads
its event-loop thread's CPU, put in place by the run's ``Hooks`` (nothing in the product's
coordinator exists for this measurement). ``python -m dev.bench coordinator`` runs it, with
``--paced`` also :mod:`dev.bench.voice_paced`; docs/benchmarks.md and docs/voice.md give the figures.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from tauray.actors.coordinator import CoordinatorHost
from tauray.actors.voice.spec import DEFAULT_ASR
from tauray.pipeline.bench.engine import bench_scenarios, process_cpu
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.pipeline.scheduler import Hooks
from tauray.results.tables.readers import conversations_df, utterances_df


class MeasuredCoordinator(CoordinatorHost):
    """tauray's coordinator, able to say how much CPU its event-loop thread has spent."""

    async def loop_cpu(self) -> float:
        # CPU seconds of the thread that runs this event loop, i.e. the conversations' own work,
        # without Ray's other threads (which spend CPU even while the actor only waits)
        return time.thread_time()


HOOKS = Hooks(classes={"coordinator": MeasuredCoordinator})
"""A run whose coordinators can say their loop's CPU (keep its actors to read them)."""


def _cpu_by_kind(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds between two :func:`~tauray.pipeline.bench.engine.process_cpu` snapshots, per
    kind of process (coordinators, hosts, the rest; the speech workers end with their run, so
    their compute is read from the utterance rows instead)."""
    out: dict[str, float] = {}
    for pid, (name, cpu) in after.items():
        kind = next((k for k in ("MeasuredCoordinator", "AgentHost", "UserSimHost") if k in name), "other")
        out[kind] = out.get(kind, 0.0) + cpu - before.get(pid, (name, 0.0))[1]
    return out


def coordinator_threads_cpu() -> dict[int, tuple[float, float]]:
    """Per coordinator process (pid): CPU seconds of its task threads (the threads Ray names
    ``ray::...``: the event loop and what runs on it, i.e. the conversations' own work) and of
    its other threads (Ray's gRPC and I/O threads, which spend CPU while the process merely
    waits), read from each thread's scheduler statistics (nanoseconds; Linux). Empty elsewhere."""
    out: dict[int, tuple[float, float]] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            if "MeasuredCoordinator" not in " ".join(proc.cmdline()[:2]):
                continue
            own = other = 0
            for task in Path(f"/proc/{proc.pid}/task").iterdir():
                ns = int((task / "schedstat").read_text().split()[0])
                if (task / "comm").read_text().startswith("ray::"):
                    own += ns
                else:
                    other += ns
            out[proc.pid] = (own / 1e9, other / 1e9)
        except (OSError, psutil.Error, ValueError, IndexError):
            continue
    return out


def _threads_delta(before: dict[int, tuple[float, float]], after: dict[int, tuple[float, float]]) -> tuple[float, float]:
    own = sum(a[0] - before.get(pid, (0.0, 0.0))[0] for pid, a in after.items())
    other = sum(a[1] - before.get(pid, (0.0, 0.0))[1] for pid, a in after.items())
    return own, other


def coordinators_loop_cpu() -> float:
    """CPU seconds of the kept coordinators' event-loop threads, summed: the conversations' own
    work, which costs next to nothing while the loop waits. The kept pool must be one of
    :data:`HOOKS`'s coordinators (a run with ``hooks=HOOKS, keep_actors=True``)."""
    import ray

    pool = KEPT.pool
    coordinators = [c for group in (pool.groups if pool is not None else []) for c in group.coordinators]
    return sum(ray.get([c.loop_cpu.remote() for c in coordinators]))


IDLE_S = 10.0
"""Seconds the coordinators' idle CPU is measured for (Ray's own threads spend CPU in every
process while it waits, so a run that lasts longer costs more CPU doing nothing)."""


def coordinator_cpu(conversations: int, *, profile: str = "control", asr: str = DEFAULT_ASR,
                    domain: str = "telecom", idle_s: float = IDLE_S, warm_voice: bool = True) -> dict[str, Any]:
    """The coordinators' CPU per conversation in a voice run (``profile``, speech on the run's
    pool) against a text run of the same tasks, both with the reference policies on Ray, after
    a warm-up of each (imports, registry, engines); and the voice run's speech cost per
    conversation. CPU is read from each process's own counters (psutil, 10 ms ticks), also net
    of the coordinators' idle CPU over the run's wall time (measured for :data:`IDLE_S` seconds
    after the warm-ups): a voice run lasts longer while its coordinators wait for speech, and
    waiting costs Ray's own threads CPU too. The figure that separates the two: the CPU of the
    coordinators' task threads alone (:func:`coordinator_threads_cpu`, nanoseconds).

    ``idle_s`` and ``warm_voice=False`` make a smoke run cheaper (the text warm-up always runs: the
    idle figure is read on its pool); without the voice warm-up the voice figures include the
    speech engines' start."""
    names = bench_scenarios(domain=domain)[: max(1, conversations)]
    ensure_ray()
    figures: dict[str, Any] = {"conversations": len(names), "domain": domain, "profile": profile}
    with tempfile.TemporaryDirectory(prefix="tauray-voice-bench-") as tmp:
        try:
            for mode, voice in (("text", None), ("voice", {"profiles": [profile], "asr": asr, "keep_audio": "none"})):
                knobs = {"voice": voice} if voice else {}
                if warm_voice or not voice:
                    warm = run_config(name=f"warm-{mode}", agent={"model": "oracle"}, user={"model": "scripted"},
                                      patterns=names[:1], seed=99, audit=False, **knobs)
                    execute(warm, out=Path(tmp) / warm.name, probe=False, progress=False, keep_actors=True,
                            hooks=HOOKS)
                if "idle_coordinator_cpu_ms_per_s" not in figures:
                    before, threads, loop = process_cpu(set()), coordinator_threads_cpu(), coordinators_loop_cpu()
                    time.sleep(idle_s)
                    idle = _cpu_by_kind(before, process_cpu(set())).get("MeasuredCoordinator", 0.0) / idle_s
                    idle_own = _threads_delta(threads, coordinator_threads_cpu())[0] / idle_s
                    idle_loop = (coordinators_loop_cpu() - loop) / idle_s
                    figures["idle_coordinator_cpu_ms_per_s"] = round(1000 * idle, 3)
                    figures["idle_coordinator_task_threads_cpu_ms_per_s"] = round(1000 * idle_own, 3)
                    figures["idle_coordinator_loop_cpu_ms_per_s"] = round(1000 * idle_loop, 3)
                cfg = run_config(name=f"cpu-{mode}", agent={"model": "oracle"}, user={"model": "scripted"},
                                 patterns=names, audit=False, **knobs)
                before, threads, started = process_cpu(set()), coordinator_threads_cpu(), time.perf_counter()
                loop = coordinators_loop_cpu()
                execute(cfg, out=Path(tmp) / cfg.name, probe=False, progress=False, keep_actors=True, hooks=HOOKS)
                loop = coordinators_loop_cpu() - loop
                cpu = _cpu_by_kind(before, process_cpu(set()))
                own, other = _threads_delta(threads, coordinator_threads_cpu())
                wall = time.perf_counter() - started
                rows = conversations_df(Path(tmp) / cfg.name)
                n, turns = max(1, len(rows)), max(1, int(rows["turns"].sum()))
                figures[f"{mode}_coordinator_cpu_s_per_conversation"] = round(cpu.get("MeasuredCoordinator", 0.0) / n, 4)
                figures[f"{mode}_coordinator_cpu_ms_per_turn"] = round(1000 * cpu.get("MeasuredCoordinator", 0.0) / turns, 3)
                net = cpu.get("MeasuredCoordinator", 0.0) - idle * wall
                figures[f"{mode}_coordinator_cpu_s_per_conversation_net_of_idle"] = round(net / n, 4)
                figures[f"{mode}_coordinator_task_threads_cpu_ms_per_conversation"] = round(1000 * own / n, 2)
                figures[f"{mode}_coordinator_task_threads_cpu_ms_per_conversation_net_of_idle"] = round(
                    1000 * (own - idle_own * wall) / n, 2)
                figures[f"{mode}_coordinator_ray_threads_cpu_ms_per_conversation"] = round(1000 * other / n, 2)
                figures[f"{mode}_coordinator_loop_cpu_ms_per_conversation"] = round(1000 * loop / n, 2)
                figures[f"{mode}_coordinator_loop_cpu_ms_per_conversation_net_of_idle"] = round(
                    1000 * (loop - idle_loop * wall) / n, 2)
                figures[f"{mode}_coordinator_loop_cpu_ms_per_turn"] = round(1000 * loop / turns, 3)
                figures[f"{mode}_wall_s"] = round(wall, 1)
                figures[f"{mode}_turns_per_conversation"] = round(turns / n, 2)
                if mode == "voice":
                    said = utterances_df(Path(tmp) / cfg.name)
                    compute = said[["tts_seconds", "effects_seconds", "asr_seconds"]].to_numpy().sum()
                    costs = rows["speech_cost_usd"]
                    figures["speech_cost_usd_per_conversation"] = (
                        round(float(costs.sum()) / n, 6) if costs.notna().all() else None)
                    figures["speech_compute_s_per_conversation"] = round(float(compute) / n, 2)
                    figures["utterances_per_conversation"] = round(len(said) / n, 2)
        finally:
            KEPT.drop()
    text, voice = (figures[f"{m}_coordinator_cpu_ms_per_turn"] for m in ("text", "voice"))
    figures["coordinator_cpu_per_turn_voice_vs_text"] = round(voice / text, 3) if text else None
    for name in ("coordinator_cpu_s_per_conversation", "coordinator_cpu_s_per_conversation_net_of_idle",
                 "coordinator_task_threads_cpu_ms_per_conversation",
                 "coordinator_task_threads_cpu_ms_per_conversation_net_of_idle",
                 "coordinator_loop_cpu_ms_per_conversation", "coordinator_loop_cpu_ms_per_conversation_net_of_idle",
                 "coordinator_loop_cpu_ms_per_turn"):
        text, voice = (figures[f"{m}_{name}"] for m in ("text", "voice"))
        figures[f"{name}_voice_vs_text"] = round(voice / text, 3) if text > 0 else None
    return figures


__all__ = ["HOOKS", "IDLE_S", "MeasuredCoordinator", "coordinator_cpu", "coordinator_threads_cpu",
           "coordinators_loop_cpu"]
