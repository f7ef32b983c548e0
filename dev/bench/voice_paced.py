"""``python -m dev.bench coordinator --paced N``: the coordinator's CPU per conversation, voice against text,
on the same conversations at the same pace.

Why a second comparison. The reference policies answer at once, so their text run is a burst
(48 conversations in about a second) while the voice run waits on speech for minutes; and a
coordinator's event loop spends more CPU on the same host call when calls arrive a few a second
than when they arrive in a burst (each one wakes an idle process: measured 1.14–1.32× per turn
on the same text conversations, endpoint latency 4 s against 0; docs/voice.md). The reference
policies also talk differently in voice cells (spelled identifiers, what the line lost), so
their voice conversations have more turns. Both differences are real, but neither is what
voice costs the coordinator.

Here both runs use the endpoint's writing pair (the agent follows the scenario's reference
steps whatever it hears, so a voice conversation makes the same calls and turns as its text
twin), the voice run first at ``latency``, then the text run with its latency set so that it
lasts as long: the voice run's wall time over the most calls any of its conversations made.

At the same wall time the voice run's calls are still spread differently (each user step waits
for its speech, in the pool's queue), so each round also runs a replay
(:mod:`dev.bench.voice_replay`): the same voice conversations with their speech
replayed at once, and text, both at ``latency``, so that voice and text differ in nothing but
voice (``same_timing``). ``rounds`` rounds; each figure per round, and their paired ratios.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dev.bench.coordinator import HOOKS, MeasuredCoordinator, coordinators_loop_cpu
from dev.bench.voice_replay import recorded_utterances, replayed_count, replaying
from tauray.actors.voice.spec import DEFAULT_ASR
from tauray.endpoint import start_endpoint
from tauray.pipeline.bench.engine import bench_models, bench_scenarios
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.pipeline.scheduler import Hooks
from tauray.results.tables.readers import conversations_df


def _leg(tmp: Path, name: str, names: list[str], latency: float, knobs: dict[str, Any],
         hooks: Hooks | None = None) -> dict[str, Any]:
    """One timed run of ``names`` on an endpoint of ``latency``: the coordinators' loop CPU and the run's shape."""
    with start_endpoint(latency=latency) as ep:
        agent, user = bench_models(ep.base_url, max(64, len(names)))
        cfg = run_config(name=name, agent=agent, user=user, patterns=names, audit=False, max_in_flight=len(names),
                         **knobs)
        loop, started = coordinators_loop_cpu(), time.perf_counter()
        execute(cfg, out=tmp / name, probe=False, progress=False, keep_actors=True, hooks=hooks or HOOKS)
        loop, wall = coordinators_loop_cpu() - loop, time.perf_counter() - started
    rows = conversations_df(tmp / name)
    calls = rows["agent_llm_calls"] + rows["user_llm_calls"]
    n, turns = max(1, len(rows)), max(1, int(rows["turns"].sum()))
    return {"latency_s": round(latency, 3), "wall_s": round(wall, 1), "turns_per_conversation": round(turns / n, 2),
            "calls_per_conversation": round(float(calls.sum()) / n, 2), "most_calls": int(calls.max()),
            "successes": int(rows["success"].fillna(False).astype(bool).sum()),
            "loop_cpu_ms_per_conversation": round(1000 * loop / n, 2),
            "loop_cpu_ms_per_turn": round(1000 * loop / turns, 3)}


def paced_coordinator_cpu(conversations: int, *, latency: float = 3.0, rounds: int = 2, profile: str = "control",
                          asr: str = DEFAULT_ASR, domain: str = "telecom", warm_voice: bool = True) -> dict[str, Any]:
    """The coordinators' event-loop CPU per conversation, voice (``profile``) against text, on
    ``conversations`` tasks of ``domain`` with the endpoint's writing pair, each text run paced
    to last as long as the voice run before it (module docstring). ``warm_voice=False`` leaves out
    the voice warm-up (a smoke run: the first voice leg then pays the speech engines' start)."""
    names = bench_scenarios(domain=domain)[: max(1, conversations)]
    ensure_ray()
    voice = {"voice": {"profiles": [profile], "asr": asr, "keep_audio": "none"}}
    figures: dict[str, Any] = {"conversations": len(names), "domain": domain, "profile": profile, "rounds": []}
    with tempfile.TemporaryDirectory(prefix="tauray-voice-paced-") as tmp:
        try:
            # warm once per mode on a latency-free endpoint (imports, registry, speech pool): the kept
            # actor pool, and so the coordinators read around each timed run, stay the same throughout.
            # Text warms every task: a coordinator caches each task's initial state and gold replay
            # (3 ms a conversation under cProfile, the same in both modes), which the first timed run paid alone
            warm_ups = (("text", {}, names), ("voice", voice, names[:1]))
            for mode, knobs, warmed in warm_ups if warm_voice else warm_ups[:1]:
                with start_endpoint(latency=0.0) as ep:
                    agent, user = bench_models(ep.base_url, max(8, len(warmed)))
                    warm = run_config(name=f"warm-{mode}", agent=agent, user=user, patterns=warmed, seed=99,
                                      audit=False, max_in_flight=len(warmed), **knobs)
                    execute(warm, out=Path(tmp) / warm.name, probe=False, progress=False, keep_actors=True,
                            hooks=HOOKS)
            for r in range(max(1, rounds)):
                said = _leg(Path(tmp), f"voice-{r}", names, latency, voice)
                paced = said["wall_s"] / max(1, said["most_calls"])
                typed = _leg(Path(tmp), f"text-{r}", names, paced, {})
                # the replay (voice_replay.py): the same voice conversations, speech replayed at once,
                # against text at the same latency; which of the two goes first alternates by round
                recorded = recorded_utterances(Path(tmp) / f"voice-{r}")
                replay = Hooks(classes={"coordinator": MeasuredCoordinator, "speech": replaying(recorded)})
                legs = {"replayed": (voice, replay),
                        "text": ({}, None)}
                order = ("replayed", "text") if r % 2 == 0 else ("text", "replayed")
                same = {mode: _leg(Path(tmp), f"same-{mode}-{r}", names, latency, *legs[mode]) for mode in order}
                same["replayed"]["utterances_replayed"], same["replayed"]["utterances_carried"] = replayed_count(
                    recorded, Path(tmp) / f"same-replayed-{r}")
                figures["rounds"].append({
                    "voice": said, "text": typed, **_ratios(said, typed),
                    "same_timing": {"voice_replayed": same["replayed"], "text": same["text"],
                                    **_ratios(same["replayed"], same["text"])}})
        finally:
            KEPT.drop()
    for key in ("per_conversation_voice_vs_text", "per_turn_voice_vs_text"):
        figures[f"median_{key}"] = round(statistics.median(r[key] for r in figures["rounds"]), 3)
        controls = [r["same_timing"][key] for r in figures["rounds"]]
        figures[f"median_same_timing_{key}"] = round(statistics.median(controls), 3)
    return figures


def _ratios(voice: dict[str, Any], text: dict[str, Any]) -> dict[str, float]:
    return {f"per_{unit}_voice_vs_text": round(voice[f"loop_cpu_ms_per_{unit}"] / text[f"loop_cpu_ms_per_{unit}"], 3)
            for unit in ("conversation", "turn")}


__all__ = ["paced_coordinator_cpu"]
