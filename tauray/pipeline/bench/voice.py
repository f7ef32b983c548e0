"""``tauray bench voice``: what the speech channel costs and how well it hears, measured here.

* real-time factors (compute seconds per second of audio) of synthesis, per kind of speaker
  (clear and accented callers, the agent), with the synthesis cache off, and of recognition;
* speech compute per conversation (``turns`` utterances, half the caller's, half the agent's),
  for a clear and for an accented caller;
* throughput (utterances per second) with 1, 2, ... speech workers on Ray, each figure also
  as a ratio against the one-worker baseline measured in the same run (``--workers``);
* with ``--accuracy N``: WER and identifiers exact per synthesiser (``--tts``), recogniser
  (``--asr``), decoding (``--decoding``, :data:`DECODINGS`) and profile on N telecom caller
  utterances (:mod:`tauray.actors.voice.corpus`, drawn with ``--seed``), with Wilson intervals;
  with ``--voices`` the same per caller voice (``control``).

What voice costs tauray's own coordinators (against text, on the same conversations, at the
same pace and timing) is a developer's bench outside the package (``dev/bench/coordinator.py``,
docs/benchmarks.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.corpus import CORPUS_SEED, caller_utterances
from tauray.actors.voice.engines import CachedTTS, make_asr, make_tts
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.pool import start_pool
from tauray.actors.voice.profiles import get_profile
from tauray.actors.voice.spec import DEFAULT_ASR, DEFAULT_TTS, ESPEAK, SpeechModelSpec
from tauray.pipeline.ray_runtime import ensure_ray
from tauray.results.stats.intervals import wilson_interval

DECODINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "greedy": {"beam_size": 1, "prompt": ""},
    "beam": {"prompt": ""},
    "greedy+prompt": {"beam_size": 1},
    "vad": {"vad_filter": True},
}
"""Named decodings of a local recogniser for ``--decoding``: the spec's defaults (beam 5, the
domain prompt), plain greedy decoding (what tauray used before), the beam alone, the prompt alone,
and the defaults with faster-whisper's VAD filter."""


def asr_spec(model: str, decoding: str = "default") -> SpeechModelSpec:
    """A local recogniser decoding as :data:`DECODINGS` names (a hosted one as it is)."""
    if decoding not in DECODINGS:
        raise SpeechConfigError(f"decoding {decoding!r} is unknown; known: {', '.join(DECODINGS)}")
    local = model.startswith("local/")
    if not local and decoding != "default":
        raise SpeechConfigError(f"decoding {decoding!r} is a local recogniser's; {model!r} is hosted")
    return SpeechModelSpec(role="asr", model=model, **(DECODINGS[decoding] if local else {}))


def accuracy(profile: str, utterances: Sequence[str], *, asr: Any = DEFAULT_ASR, tts: Any = DEFAULT_TTS,
             channel: SpeechChannel | None = None) -> dict[str, Any]:
    """WER and identifier errors of the pair on ``utterances`` under ``profile``; each utterance is
    its own task (unit), so voices are drawn across them as across tasks."""
    ch = channel or SpeechChannel(profile, tts=tts, asr=asr)
    words = errors = ids = lost = digits = digit_err = synthesised = 0
    wer_sum = audio = tts_s = asr_s = 0.0
    for i, text in enumerate(utterances):
        r, _ = ch.carry(text, unit_id=f"corpus-{i}", turn=0, side="user")
        words += r.words_spoken
        errors += round(r.wer * max(1, r.words_spoken))
        wer_sum += r.wer
        ids, lost = ids + r.identifiers_spoken, lost + r.identifiers_lost
        digits, digit_err = digits + r.digits_spoken, digit_err + r.digit_errors
        audio, tts_s, asr_s = audio + r.audio_seconds, tts_s + r.tts_seconds, asr_s + r.asr_seconds
        synthesised += r.tts_seconds > 0
    lo, hi = wilson_interval(ids - lost, ids) if ids else (0.0, 0.0)
    return {"profile": ch.profile.name, "tts": ch.tts.name, "asr": ch.asr.name,
            "decoding": getattr(ch.asr, "decoding", ""), "utterances": len(utterances),
            "wer": round(errors / max(1, words), 4), "mean_utterance_wer": round(wer_sum / max(1, len(utterances)), 4),
            "identifiers": ids, "identifiers_exact": ids - lost,
            "identifier_exact_rate": round((ids - lost) / max(1, ids), 4),
            "identifier_exact_ci95": [round(lo, 4), round(hi, 4)],
            "identifier_error_rate": round(lost / max(1, ids), 4),
            "digit_error_rate": round(digit_err / max(1, digits), 4),
            "audio_seconds": round(audio, 1), "utterances_synthesised": synthesised,
            "tts_rtf": round(tts_s / max(audio, 1e-9), 4), "asr_rtf": round(asr_s / max(audio, 1e-9), 4)}


class _OneVoice:
    """A synthesiser with one of its voices for every kind of speaker (``--voices``)."""

    def __init__(self, tts: CachedTTS, voice: str) -> None:
        tts.check_voice(voice)
        self.engine, self.voice = tts.engine, voice
        self.name, self.price, self.sample_rate = tts.engine.name, tts.price, tts.sample_rate
        self.deterministic = getattr(tts.engine, "deterministic", False)
        self.packages = getattr(tts.engine, "packages", ())

    def voices(self, kind: str) -> tuple[str, ...]:
        return (self.voice,)

    def check_voice(self, voice: str) -> None:
        self.engine.check_voice(voice)

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> Any:
        return self.engine.synth(text, voice, rate_wpm, pitch, seed)


def voice_accuracy(voice: str, utterances: Sequence[str], channel: SpeechChannel) -> dict[str, Any]:
    """:func:`accuracy` with every caller utterance in one ``voice`` of ``channel``'s synthesiser
    ('piper/joe', espeak-ng's 'en-us+f2'), over the telephone line (``control``)."""
    one = SpeechChannel("control", tts=_OneVoice(channel.tts, voice), asr=channel.asr)
    return {"voice": voice, **{k: v for k, v in accuracy("control", utterances, channel=one).items() if k != "profile"}}


def synthesis_rtf(tts: Any, texts: Sequence[str], kind: str) -> dict[str, Any]:
    """CPU seconds (this process's, every thread's) per second of audio of ``kind``'s voices on
    ``texts``, the cache off: CPU, not wall time, so other work on the machine does not count."""
    engine = tts.engine if isinstance(tts, CachedTTS) else make_tts(tts).engine
    voices = engine.voices(kind)
    for voice in voices:
        engine.synth("Hello.", voice)  # every voice loaded before timing
    spent = audio = 0.0
    for i, text in enumerate(texts):
        voice = voices[i % len(voices)]
        started = time.process_time()
        out = engine.synth(text, voice, 170, 50, i)
        spent += time.process_time() - started
        audio += out.size / engine.sample_rate
    return {"voices": list(voices), "rtf": round(spent / max(audio, 1e-9), 4),
            "audio_seconds_per_utterance": round(audio / max(1, len(texts)), 2)}


def _throughput(workers: int, texts: Sequence[str], tts: str, asr: str) -> float:
    import ray  # lazy: Ray: about 0.7 s to import

    client = start_pool(workers, tts=tts, asr=asr)
    try:
        started = time.perf_counter()
        refs = [client.workers[i % workers].carry.remote("control", t, unit_id=f"tp-{i}", turn=0, side="user")
                for i, t in enumerate(texts)]
        ray.get(refs)
        return len(texts) / (time.perf_counter() - started)
    finally:
        for w in client.workers:
            ray.kill(w)


def cost(texts: Sequence[str], *, tts: str = DEFAULT_TTS, asr: str = DEFAULT_ASR, turns: int = 20) -> dict[str, Any]:
    """Synthesis and recognition cost of the pair, in CPU seconds per second of audio: synthesis
    per kind of speaker (the cache off) beside espeak-ng's, recognition with the recogniser's
    decoding beside greedy's, and the speech CPU of a conversation of ``turns`` utterances, half
    the caller's (each recognised once), half the agent's."""
    engine = make_tts(tts)
    rtf = {kind: synthesis_rtf(engine, texts, kind) for kind in ("clear", "accented", "agent")}
    # the baseline, measured in the same run: espeak-ng's voices of each kind on the same texts
    espeak = {kind: synthesis_rtf(make_tts(ESPEAK), texts, kind)["rtf"] for kind in rtf}
    ch = SpeechChannel("control", tts=engine, asr=asr)
    wavs = [ch.speak(text, unit_id=f"cost-{i}", turn=0, side="user")[0] for i, text in enumerate(texts)]
    audio = sum(max(0.0, (len(wav) - 44) / 8000) for wav in wavs)
    # recognition CPU on the same line audio, with the recogniser's decoding and greedy (the
    # baseline, in the same run); a hosted recogniser has no decoding of ours: its one figure
    hearers = {"asr": ch}
    if asr.startswith("local/"):
        hearers["greedy"] = SpeechChannel("control", tts=engine, asr=make_asr(asr_spec(asr, "greedy")))
    asr_cpu: dict[str, float] = {}
    for name, hearer in hearers.items():
        hearer.hear(wavs[0])  # the recogniser loaded and warm
        started = time.process_time()
        for wav in wavs:
            hearer.hear(wav)
        asr_cpu[name] = (time.process_time() - started) / max(audio, 1e-9)
    asr_rtf = asr_cpu["asr"]
    per_utt = audio / max(1, len(texts))
    half = turns / 2

    def conversation(kind: str) -> float:
        return half * per_utt * (rtf[kind]["rtf"] + asr_rtf) + half * per_utt * rtf["agent"]["rtf"]

    return {"tts": engine.name, "asr": ch.asr.name, "decoding": getattr(ch.asr, "decoding", ""),
            "utterances": len(texts), "audio_seconds_per_utterance": round(per_utt, 2),
            "tts_rtf": {kind: r["rtf"] for kind, r in rtf.items()}, "tts_voices": {k: r["voices"] for k, r in rtf.items()},
            "tts_rtf_espeak": espeak,
            "tts_rtf_vs_espeak": {k: round(r["rtf"] / max(espeak[k], 1e-9), 1) for k, r in rtf.items()},
            "asr_rtf": round(asr_rtf, 4), "asr_rtf_greedy": round(asr_cpu["greedy"], 4) if "greedy" in asr_cpu else None,
            "asr_rtf_vs_greedy": round(asr_rtf / asr_cpu["greedy"], 2) if asr_cpu.get("greedy") else None,
            "conversation_turns": turns,
            "speech_cpu_seconds_per_conversation": {"clear_caller": round(conversation("clear"), 1),
                                                    "accented_caller": round(conversation("accented"), 1)}}


def run_voice_bench(*, utterances: int = 6, workers: Sequence[int] = (1, 2), turns: int = 20,
                    tts: Sequence[str] = (DEFAULT_TTS,), asr: Sequence[str] = (DEFAULT_ASR,),
                    decodings: Sequence[str] = ("default",), accuracy_utterances: int = 0,
                    profiles: Sequence[str] = ("control", "regular"), seed: int = CORPUS_SEED,
                    voices: Sequence[str] = ()) -> dict[str, Any]:
    """The figures of ``tauray bench voice`` (see the module docstring). ``workers`` empty: no
    throughput part. The cost is the first synthesiser's and recogniser's."""
    for name in decodings:
        asr_spec(asr[0], name)  # an unknown decoding fails before anything is loaded
    for p in profiles:
        get_profile(p)
    texts = caller_utterances(max(utterances, 2), seed=7)
    result: dict[str, Any] = cost(texts, tts=tts[0], asr=asr[0], turns=turns)
    if workers:
        import ray  # lazy: Ray: about 0.7 s to import

        ensure_ray()
        rates = {n: _throughput(n, texts * max(1, n), tts[0], asr[0]) for n in workers}
        one = rates[workers[0]]
        result["throughput_utterances_per_s"] = {str(n): round(r, 3) for n, r in rates.items()}
        result["throughput_ratio_vs_first"] = {str(n): round(r / one, 3) for n, r in rates.items()}
        result["cluster_cpus"] = ray.cluster_resources().get("CPU")
    if accuracy_utterances:
        corpus = caller_utterances(accuracy_utterances, seed=seed)
        result["corpus_seed"] = seed
        result["accuracy"] = []
        synthesisers = {name: make_tts(name) for name in tts}
        for model in asr:
            for decoding in decodings:
                recogniser = make_asr(asr_spec(model, decoding))
                for name, engine in synthesisers.items():
                    result["accuracy"] += [accuracy(p, corpus, channel=SpeechChannel(p, tts=engine, asr=recogniser))
                                           for p in profiles]
        if voices:
            first = SpeechChannel("control", tts=synthesisers[tts[0]], asr=make_asr(asr_spec(asr[0], decodings[0])))
            result["voices"] = [voice_accuracy(v, corpus, first) for v in voices]
    return result


__all__ = ["CORPUS_SEED", "DECODINGS", "accuracy", "asr_spec", "cost", "run_voice_bench", "synthesis_rtf",
           "voice_accuracy"]
