"""``tauray bench duplex``: what the duplex clock costs the harness, measured here.

The same conversations (the reference policies on telecom tasks, profile control) run turn by turn
(half duplex, over the speech channel) and on the duplex clock, in this process with no Ray and no
speech model: both speak the engine's tone voice and hear it back exactly (``tones.py``; energy VAD),
with the synthesis cache off and one conversation of each mode run first, unmeasured (imports,
scenario loading), so what is measured is the harness (the loop, the hosts, the channel
or the clock, the line, the segments and metrics), not a model's compute. Figures:

* simulated seconds of conversation per CPU second of this process, per mode;
* harness CPU seconds per simulated minute, per mode, and duplex's against half's;
* how the duplex figures move with conversations in flight (``--in-flight``), with the wall time.

Simulated time is the clock's: the call's length in duplex, the last utterance's end in half duplex
(the channel's clock, which has no gaps between turns), so half duplex covers less time for the
same words and its cost per minute is higher than the same work spread over a duplex call.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from tauray.actors.conversation import run_conversation
from tauray.actors.duplex_call import use_engines
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.unit import WorkUnit
from tauray.actors.voice.duplex import ToneCodec
from tauray.actors.voice.speaker import LocalSpeech
from tauray.pipeline.config import run_config
from tauray.pipeline.plan import SweepPlan
from tauray.scenarios import select_scenarios

__all__ = ["run_duplex_bench"]


def _units(conversations: int) -> tuple[list[WorkUnit], list[WorkUnit]]:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")][:conversations]
    cfg = run_config(name="bench-duplex", agent={"model": "oracle"}, user={"model": "scripted"}, patterns=names,
                     voice={"profiles": ["control"], "turn_taking": ["half", "duplex"], "keep_audio": "none",
                            "tts": "local/espeak-ng", "duplex_pipeline": {"vad": "energy"}})
    plan = SweepPlan(cfg, names)
    half, duplex = ([u for u in plan.units(cell)] for cell in plan.cells)
    return half, duplex


async def _batch(units: list[WorkUnit], speech: Any, in_flight: int) -> list[Any]:
    gate = asyncio.Semaphore(in_flight)

    async def one(unit: WorkUnit) -> Any:
        async with gate:
            return await run_conversation(unit, AgentHost(), UserSimHost(), speech=speech)
    return await asyncio.gather(*(one(u) for u in units))


def _measure(units: list[WorkUnit], speech: Any, in_flight: int) -> dict[str, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    results = asyncio.run(_batch(units, speech, in_flight))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    errors = [r.conversation.error_message for r in results if r.conversation.error_kind is not None]
    simulated = sum((r.conversation.duplex_duration_s if r.conversation.turn_taking == "duplex" else
                     max([u.end_s for u in r.utterances], default=0.0)) for r in results)
    return {"conversations": len(results), "errors": len(errors), "simulated_s": round(simulated, 1),
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "simulated_s_per_cpu_s": round(simulated / cpu, 1) if cpu else None,
            "cpu_s_per_simulated_min": round(60 * cpu / simulated, 3) if simulated else None,
            "success": sum(r.conversation.success is True for r in results),
            "first_error": errors[0][:200] if errors else None}


def run_duplex_bench(conversations: int = 10, in_flight: tuple[int, ...] = (1, 4)) -> dict[str, Any]:
    """Half against duplex on the same ``conversations`` telecom tasks with the tone voice, then
    duplex at each number of conversations in flight."""
    os.environ["TAURAY_SPEECH_CACHE"] = "off"  # every utterance synthesised, in both modes
    half, duplex = _units(conversations)
    codec = ToneCodec()
    voice = duplex[0].voice
    use_engines(voice.tts, voice.asr, codec.tts(), codec.asr())
    speech = LocalSpeech()
    speech.use_engines(voice.tts, voice.asr, codec.tts(), codec.asr())
    _measure(half[:1], speech, 1), _measure(duplex[:1], None, 1)  # warm: imports and scenarios, not measured
    out: dict[str, Any] = {"voice": "tones (exact, instant; energy VAD)", "half": _measure(half, speech, 1)}
    out["duplex"] = _measure(duplex, None, 1)
    h, d = out["half"]["cpu_s_per_simulated_min"], out["duplex"]["cpu_s_per_simulated_min"]
    out["duplex_vs_half_cpu_per_simulated_min"] = round(d / h, 2) if h and d else None
    out["duplex_in_flight"] = {n: _measure(duplex, None, n) for n in in_flight if n != 1} | {1: out["duplex"]}
    return out
