"""``tauray bench voice``: what the speech channel costs and how well it hears, measured here.

* real-time factor of synthesis and of recognition (compute seconds per second of audio);
* speech compute per conversation (a conversation of ``turns`` caller and agent utterances);
* throughput (utterances per second) with 1, 2, ... speech workers on Ray, each figure also
  as a ratio against the one-worker baseline measured in the same run (``--workers``);
* the coordinator's CPU per conversation in a voice run against a text run of the same tasks
  (the reference policies on Ray, speech on the run's speech pool; ``--conversations``), and
  the voice run's speech cost per conversation (money, from the conversation rows, and compute
  seconds, from the utterance rows);
* with ``--paced N``: the same comparison on the same conversations at the same pace, and with
  the same timing (speech replayed at once: :mod:`tauray.pipeline.bench.voice_replay`)
  (:mod:`tauray.pipeline.bench.voice_paced`, which says why both are needed);
* with ``--accuracy N``: WER and identifier error rate per recogniser (``--asr``, one or more)
  and profile on N telecom caller utterances (:mod:`tauray.actors.speech.corpus`, drawn with
  ``--seed``), with Wilson intervals; with ``--voices`` the same per caller voice (``control``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from tauray.actors.speech.channel import SpeechChannel
from tauray.actors.speech.corpus import caller_utterances
from tauray.actors.speech.errors import SpeechConfigError
from tauray.actors.speech.pool import start_pool
from tauray.actors.speech.profiles import get_profile
from tauray.actors.speech.spec import DEFAULT_ASR, DEFAULT_TTS
from tauray.pipeline.bench.engine import bench_scenarios, process_cpu
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.results.intervals import wilson_interval
from tauray.results.readers import conversations_df, utterances_df

CORPUS_SEED = 2026
"""The measured corpus's draw (docs/voice.md); tuning used another seed, apart from it."""


def accuracy(profile: str, utterances: Sequence[str], *, asr: str = DEFAULT_ASR, tts: str = DEFAULT_TTS,
             channel: SpeechChannel | None = None) -> dict[str, Any]:
    """WER and identifier errors of the offline pair on ``utterances`` under ``profile``; each
    utterance is its own task (unit), so voices are drawn across them as across tasks."""
    ch = channel or SpeechChannel(profile, tts=tts, asr=asr)
    words = errors = ids = lost = digits = digit_err = 0
    wer_sum = audio = tts_s = asr_s = 0.0
    for i, text in enumerate(utterances):
        r, _ = ch.carry(text, unit_id=f"corpus-{i}", turn=0, side="user")
        words += r.words_spoken
        errors += round(r.wer * max(1, r.words_spoken))
        wer_sum += r.wer
        ids, lost = ids + r.identifiers_spoken, lost + r.identifiers_lost
        digits, digit_err = digits + r.digits_spoken, digit_err + r.digit_errors
        audio, tts_s, asr_s = audio + r.audio_seconds, tts_s + r.tts_seconds, asr_s + r.asr_seconds
    lo, hi = wilson_interval(ids - lost, ids) if ids else (0.0, 0.0)
    return {"profile": ch.profile.name, "asr": ch.asr.name, "tts": ch.tts.name, "utterances": len(utterances),
            "wer": round(errors / max(1, words), 4), "mean_utterance_wer": round(wer_sum / max(1, len(utterances)), 4),
            "identifiers": ids, "identifiers_exact": ids - lost,
            "identifier_exact_rate": round((ids - lost) / max(1, ids), 4),
            "identifier_exact_ci95": [round(lo, 4), round(hi, 4)],
            "identifier_error_rate": round(lost / max(1, ids), 4),
            "digit_error_rate": round(digit_err / max(1, digits), 4),
            "audio_seconds": round(audio, 1), "tts_rtf": round(tts_s / max(audio, 1e-9), 4),
            "asr_rtf": round(asr_s / max(audio, 1e-9), 4)}


def voice_accuracy(voice: str, utterances: Sequence[str], channel: SpeechChannel) -> dict[str, Any]:
    """:func:`accuracy` with every caller utterance in one espeak-ng ``voice`` ('en-us+f2'),
    over the telephone line (``control``), on ``channel``'s engines."""
    language, _, variant = voice.partition("+")
    if not variant:
        raise SpeechConfigError(f"voice {voice!r}: expected language+variant, e.g. en-us+f2")
    channel.tts.check_voice(voice)
    control = get_profile("control")
    profile = control.model_copy(update={"name": f"control@{voice}", "persona": control.persona.model_copy(
        update={"languages": (language,), "variants": (variant,)})})
    one = SpeechChannel(profile, tts=channel.tts, asr=channel.asr)
    return {"voice": voice, **{k: v for k, v in accuracy(profile.name, utterances, channel=one).items()
                               if k not in ("profile", "tts")}}


def _throughput(workers: int, texts: Sequence[str], asr: str) -> float:
    import ray  # lazy: Ray: about 0.7 s to import

    client = start_pool(workers, asr=asr)
    try:
        started = time.perf_counter()
        refs = [client.workers[i % workers].carry.remote("control", t, unit_id=f"tp-{i}", turn=0, side="user")
                for i, t in enumerate(texts)]
        ray.get(refs)
        return len(texts) / (time.perf_counter() - started)
    finally:
        for w in client.workers:
            ray.kill(w)


def _cpu_by_kind(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds between two :func:`~tauray.pipeline.bench.engine.process_cpu` snapshots, per
    kind of process (coordinators, hosts, the rest; the speech workers end with their run, so
    their compute is read from the utterance rows instead)."""
    out: dict[str, float] = {}
    for pid, (name, cpu) in after.items():
        kind = next((k for k in ("CoordinatorHost", "AgentHost", "UserSimHost") if k in name), "other")
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
            if "CoordinatorHost" not in " ".join(proc.cmdline()[:2]):
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
    """CPU seconds of the kept coordinators' event-loop threads, summed (their ``stats``): the
    conversations' own work, which costs next to nothing while the loop waits."""
    import ray  # lazy: Ray: about 0.7 s to import

    pool = KEPT.pool
    coordinators = [c for group in (pool.groups if pool is not None else []) for c in group.coordinators]
    return sum(s["loop_cpu_s"] for s in ray.get([c.stats.remote() for c in coordinators]))


IDLE_S = 10.0
"""Seconds the coordinators' idle CPU is measured for (Ray's own threads spend CPU in every
process while it waits, so a run that lasts longer costs more CPU doing nothing)."""


def coordinator_cpu(conversations: int, *, profile: str = "control", asr: str = DEFAULT_ASR,
                    domain: str = "telecom") -> dict[str, Any]:
    """The coordinators' CPU per conversation in a voice run (``profile``, speech on the run's
    pool) against a text run of the same tasks, both with the reference policies on Ray, after
    a warm-up of each (imports, registry, engines); and the voice run's speech cost per
    conversation. CPU is read from each process's own counters (psutil, 10 ms ticks), also net
    of the coordinators' idle CPU over the run's wall time (measured for :data:`IDLE_S` seconds
    after the warm-ups): a voice run lasts longer while its coordinators wait for speech, and
    waiting costs Ray's own threads CPU too. The figure that separates the two: the CPU of the
    coordinators' task threads alone (:func:`coordinator_threads_cpu`, nanoseconds)."""
    names = bench_scenarios(domain=domain)[: max(1, conversations)]
    ensure_ray()
    figures: dict[str, Any] = {"conversations": len(names), "domain": domain, "profile": profile}
    with tempfile.TemporaryDirectory(prefix="tauray-voice-bench-") as tmp:
        try:
            for mode, voice in (("text", None), ("voice", {"profiles": [profile], "asr": asr, "keep_audio": "none"})):
                knobs = {"voice": voice} if voice else {}
                warm = run_config(name=f"warm-{mode}", agent={"model": "oracle"}, user={"model": "scripted"},
                                  patterns=names[:1], seed=99, audit=False, **knobs)
                execute(warm, out=Path(tmp) / warm.name, probe=False, progress=False, keep_actors=True)
                if "idle_coordinator_cpu_ms_per_s" not in figures:
                    before, threads, loop = process_cpu(set()), coordinator_threads_cpu(), coordinators_loop_cpu()
                    time.sleep(IDLE_S)
                    idle = _cpu_by_kind(before, process_cpu(set())).get("CoordinatorHost", 0.0) / IDLE_S
                    idle_own = _threads_delta(threads, coordinator_threads_cpu())[0] / IDLE_S
                    idle_loop = (coordinators_loop_cpu() - loop) / IDLE_S
                    figures["idle_coordinator_cpu_ms_per_s"] = round(1000 * idle, 3)
                    figures["idle_coordinator_task_threads_cpu_ms_per_s"] = round(1000 * idle_own, 3)
                    figures["idle_coordinator_loop_cpu_ms_per_s"] = round(1000 * idle_loop, 3)
                cfg = run_config(name=f"cpu-{mode}", agent={"model": "oracle"}, user={"model": "scripted"},
                                 patterns=names, audit=False, **knobs)
                before, threads, started = process_cpu(set()), coordinator_threads_cpu(), time.perf_counter()
                loop = coordinators_loop_cpu()
                execute(cfg, out=Path(tmp) / cfg.name, probe=False, progress=False, keep_actors=True)
                loop = coordinators_loop_cpu() - loop
                cpu = _cpu_by_kind(before, process_cpu(set()))
                own, other = _threads_delta(threads, coordinator_threads_cpu())
                wall = time.perf_counter() - started
                rows = conversations_df(Path(tmp) / cfg.name)
                n, turns = max(1, len(rows)), max(1, int(rows["turns"].sum()))
                figures[f"{mode}_coordinator_cpu_s_per_conversation"] = round(cpu.get("CoordinatorHost", 0.0) / n, 4)
                figures[f"{mode}_coordinator_cpu_ms_per_turn"] = round(1000 * cpu.get("CoordinatorHost", 0.0) / turns, 3)
                net = cpu.get("CoordinatorHost", 0.0) - idle * wall
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


def run_voice_bench(*, utterances: int = 6, workers: Sequence[int] = (1, 2), turns: int = 20,
                    asr: Sequence[str] = (DEFAULT_ASR,), accuracy_utterances: int = 0,
                    profiles: Sequence[str] = ("control", "regular"), seed: int = CORPUS_SEED,
                    voices: Sequence[str] = (), conversations: int = 0) -> dict[str, Any]:
    """The figures of ``tauray bench voice`` (see the module docstring). ``workers`` empty: no
    throughput part; ``conversations`` 0: no coordinator part."""
    texts = caller_utterances(max(utterances, 2), seed=7)
    first = asr[0]
    ch = SpeechChannel("control", asr=first)
    ch.carry(texts[0], unit_id="warm", turn=0, side="user")  # engines loaded and warm before timing
    base = accuracy("control", texts, channel=SpeechChannel("control", tts=ch.tts, asr=ch.asr))
    seconds_per_utt = base["audio_seconds"] / max(1, base["utterances"])
    per_conversation = turns * seconds_per_utt * (base["tts_rtf"] + base["asr_rtf"])
    result: dict[str, Any] = {"asr": ch.asr.name, "tts": ch.tts.name, "utterances": base["utterances"],
                              "tts_rtf": base["tts_rtf"], "asr_rtf": base["asr_rtf"],
                              "audio_seconds_per_utterance": round(seconds_per_utt, 2),
                              "speech_cpu_seconds_per_conversation": round(per_conversation, 1),
                              "conversation_turns": turns}
    if workers:
        import ray  # lazy: Ray: about 0.7 s to import

        ensure_ray()
        rates = {n: _throughput(n, texts * max(1, n), first) for n in workers}
        one = rates[workers[0]]
        result["throughput_utterances_per_s"] = {str(n): round(r, 3) for n, r in rates.items()}
        result["throughput_ratio_vs_first"] = {str(n): round(r / one, 3) for n, r in rates.items()}
        result["cluster_cpus"] = ray.cluster_resources().get("CPU")
    if conversations:
        result["coordinator"] = coordinator_cpu(conversations, asr=first)
    if accuracy_utterances:
        corpus = caller_utterances(accuracy_utterances, seed=seed)
        result["corpus_seed"] = seed
        result["accuracy"] = []
        for name in asr:
            engines = ch if name == first else SpeechChannel("control", tts=ch.tts, asr=name)
            result["accuracy"] += [accuracy(p, corpus, channel=SpeechChannel(p, tts=engines.tts, asr=engines.asr))
                                   for p in profiles]
        if voices:
            result["voices"] = [voice_accuracy(v, corpus, ch) for v in voices]
    return result


__all__ = ["CORPUS_SEED", "accuracy", "coordinator_cpu", "run_voice_bench", "voice_accuracy"]
