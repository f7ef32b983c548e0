"""``tauray bench voice``: what the speech channel costs and how well it hears, measured here.

* real-time factor of synthesis and of recognition (compute seconds per second of audio);
* speech compute per conversation (a conversation of ``turns`` caller and agent utterances);
* throughput (utterances per second) with 1, 2, ... speech workers on Ray, each figure also
  as a ratio against the one-worker baseline measured in the same run (``--workers``);
* with ``--accuracy N``: WER and identifier error rate per recogniser (``--asr``, one or more)
  and profile on N telecom caller utterances (:mod:`tauray.actors.voice.corpus`, drawn with
  ``--seed``), with Wilson intervals; with ``--voices`` the same per caller voice (``control``).

What voice costs tauray's own coordinators (against text, on the same conversations, at the
same pace and timing) is a developer's bench outside the package (``dev/bench/coordinator.py``,
docs/benchmarks.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.corpus import caller_utterances
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.pool import start_pool
from tauray.actors.voice.profiles import get_profile
from tauray.actors.voice.spec import DEFAULT_ASR, DEFAULT_TTS
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.results.stats.intervals import wilson_interval

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


def run_voice_bench(*, utterances: int = 6, workers: Sequence[int] = (1, 2), turns: int = 20,
                    asr: Sequence[str] = (DEFAULT_ASR,), accuracy_utterances: int = 0,
                    profiles: Sequence[str] = ("control", "regular"), seed: int = CORPUS_SEED,
                    voices: Sequence[str] = ()) -> dict[str, Any]:
    """The figures of ``tauray bench voice`` (see the module docstring). ``workers`` empty: no
    throughput part."""
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


__all__ = ["CORPUS_SEED", "accuracy", "run_voice_bench", "voice_accuracy"]
