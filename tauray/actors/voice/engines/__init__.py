"""Speech engines bound to the sweep's ``tts`` and ``asr`` roles: a :class:`SpeechModelSpec`
names one, :func:`make_tts` and :func:`make_asr` build it.

Offline engines are ``local/...`` names: synthesisers ``local/neural`` (the packaged neural
voices, the default), ``local/piper``, ``local/hibari``, ``local/kokoro`` (one engine's voices
alone) and ``local/espeak-ng`` (robotic, the fastest); recognisers ``local/whisper-tiny.en``
and ``local/whisper-base``. Any other model string is a hosted engine reached through
litellm's ``speech``/``transcription`` calls. :func:`check_spec` validates a spec without
loading a model. Every synthesiser :func:`make_tts` builds has the synthesis cache in front
(:mod:`tauray.actors.voice.engines.cache`).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tauray.actors.voice.engines.cache import CachedTTS
from tauray.actors.voice.engines.espeak import EspeakTTS
from tauray.actors.voice.engines.hibari import HibariTTS
from tauray.actors.voice.engines.hosted import HostedASR, HostedTTS
from tauray.actors.voice.engines.kokoro import KokoroTTS
from tauray.actors.voice.engines.neural import NeuralTTS
from tauray.actors.voice.engines.piper import PiperTTS
from tauray.actors.voice.engines.served import ServedASR
from tauray.actors.voice.engines.whisper import SAMPLE_RATE, WhisperASR, whisper_for
from tauray.actors.voice.spec import (
    DEFAULT_ASR,
    DEFAULT_TTS,
    ESPEAK,
    HIBARI,
    KOKORO,
    NEURAL,
    PACKAGED,
    PIPER,
    SpeechModelSpec,
    as_spec,
    check_spec,
)


class TTS(Protocol):
    """Speech synthesis: text in a voice to float32 mono audio at ``sample_rate``. ``price`` is
    how a call is priced (:func:`~tauray.actors.voice.spec.speech_price`; None: unknown).
    ``voices(kind)`` are the engine's voices for a kind of speaker ('clear', 'accented',
    'agent'), which a task's voice is drawn from (:func:`~tauray.actors.voice.profiles.draw_voice`);
    ``pitch`` counts for espeak-ng only, ``seed`` for engines that sample."""

    name: str
    sample_rate: int
    price: tuple[str, float] | None

    def voices(self, kind: str) -> tuple[str, ...]: ...
    def check_voice(self, voice: str) -> None: ...
    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray: ...


class ASR(Protocol):
    """Speech recognition: float32 mono audio at 16 kHz to text. ``decoding`` says how a local
    recogniser decodes (:func:`~tauray.actors.voice.spec.decoding_label`; '' for a hosted one)."""

    name: str
    decoding: str
    price: tuple[str, float] | None

    def transcribe(self, audio: np.ndarray) -> str: ...


LOCAL_TTS: dict[str, type] = {NEURAL: NeuralTTS, PIPER: PiperTTS, HIBARI: HibariTTS, KOKORO: KokoroTTS,
                               ESPEAK: EspeakTTS}


def make_tts(value: SpeechModelSpec | str | None = None) -> CachedTTS:
    """The speech synthesiser a spec (or model string) names, behind the synthesis cache; the
    default is the packaged neural voices (``local/neural``)."""
    spec = as_spec(value, "tts")
    check_spec(spec)
    return CachedTTS(LOCAL_TTS[spec.model]() if spec.local else HostedTTS(spec))


def make_asr(value: SpeechModelSpec | str | None = None, *, cpu_threads: int = 1) -> ASR:
    """The recogniser a spec (or model string) names; the default is the best packaged Whisper."""
    spec = as_spec(value, "asr")
    check_spec(spec)
    if spec.serve is not None:  # the run's Serve application hears it (engines/served.py)
        return ServedASR(spec)
    if spec.local:
        return whisper_for(spec, cpu_threads=cpu_threads)
    return HostedASR(spec)


__all__ = ["ASR", "DEFAULT_ASR", "DEFAULT_TTS", "ESPEAK", "HIBARI", "KOKORO", "LOCAL_TTS", "NEURAL", "PACKAGED", "PIPER",
           "SAMPLE_RATE", "TTS", "CachedTTS", "EspeakTTS", "HibariTTS", "HostedASR", "HostedTTS", "KokoroTTS", "NeuralTTS",
           "PiperTTS", "ServedASR", "SpeechModelSpec", "WhisperASR", "check_spec", "make_asr", "make_tts"]
