"""``tauray bench voice``: what the speech channel costs and how well it hears, measured here.

* real-time factor of synthesis and of recognition (compute seconds per second of audio);
* speech compute per conversation (a conversation of ``turns`` caller and agent utterances);
* throughput (utterances per second) with 1, 2, ... speech workers on Ray, each figure also
  as a ratio against the one-worker baseline measured in the same run;
* with ``--accuracy N``: WER and identifier error rate per profile on N telecom caller
  utterances (:mod:`tauray.actors.speech.corpus`), with Wilson intervals.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tauray.actors.speech.channel import SpeechChannel
from tauray.actors.speech.corpus import caller_utterances
from tauray.actors.speech.engines import DEFAULT_ASR, DEFAULT_TTS
from tauray.actors.speech.pool import start_pool
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.results.intervals import wilson_interval


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
    return {"profile": profile, "asr": ch.asr.name, "tts": ch.tts.name, "utterances": len(utterances),
            "wer": round(errors / max(1, words), 4), "mean_utterance_wer": round(wer_sum / max(1, len(utterances)), 4),
            "identifiers": ids, "identifiers_exact": ids - lost,
            "identifier_exact_rate": round((ids - lost) / max(1, ids), 4),
            "identifier_exact_ci95": [round(lo, 4), round(hi, 4)],
            "identifier_error_rate": round(lost / max(1, ids), 4),
            "digit_error_rate": round(digit_err / max(1, digits), 4),
            "audio_seconds": round(audio, 1), "tts_rtf": round(tts_s / max(audio, 1e-9), 4),
            "asr_rtf": round(asr_s / max(audio, 1e-9), 4)}


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
                    asr: str = DEFAULT_ASR, accuracy_utterances: int = 0,
                    profiles: Sequence[str] = ("control", "regular")) -> dict[str, Any]:
    """The figures of ``tauray bench voice`` (see the module docstring)."""
    texts = caller_utterances(max(utterances, 2), seed=7)
    ch = SpeechChannel("control", asr=asr)
    ch.carry(texts[0], unit_id="warm", turn=0, side="user")  # engines loaded and warm before timing
    base = accuracy("control", texts, asr=asr, channel=SpeechChannel("control", tts=ch.tts, asr=ch.asr))
    seconds_per_utt = base["audio_seconds"] / max(1, base["utterances"])
    per_conversation = turns * seconds_per_utt * (base["tts_rtf"] + base["asr_rtf"])
    result: dict[str, Any] = {"asr": ch.asr.name, "tts": ch.tts.name, "utterances": base["utterances"],
                              "tts_rtf": base["tts_rtf"], "asr_rtf": base["asr_rtf"],
                              "audio_seconds_per_utterance": round(seconds_per_utt, 2),
                              "speech_cpu_seconds_per_conversation": round(per_conversation, 1),
                              "conversation_turns": turns}
    import ray  # lazy: Ray: about 0.7 s to import

    ensure_ray()
    rates = {n: _throughput(n, texts * max(1, n), asr) for n in workers}
    first = rates[workers[0]]
    result["throughput_utterances_per_s"] = {str(n): round(r, 3) for n, r in rates.items()}
    result["throughput_ratio_vs_first"] = {str(n): round(r / first, 3) for n, r in rates.items()}
    result["cluster_cpus"] = ray.cluster_resources().get("CPU")
    if accuracy_utterances:
        corpus = caller_utterances(accuracy_utterances)
        result["accuracy"] = [accuracy(p, corpus, asr=asr, channel=SpeechChannel(p, tts=ch.tts, asr=ch.asr))
                              for p in profiles]
    return result
