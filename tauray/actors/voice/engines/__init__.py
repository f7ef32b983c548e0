"""Speech engines bound to the sweep's ``tts`` and ``asr`` roles: a :class:`SpeechModelSpec`
names one, :func:`make_tts` and :func:`make_asr` build it.

Offline engines are ``local/...`` names (``local/espeak-ng``; ``local/whisper-base``,
``local/whisper-tiny.en``); any other model string is a hosted engine reached through litellm's
``speech``/``transcription`` calls. :func:`check_spec` validates a spec without loading a model.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tauray.actors.voice.engines.espeak import EspeakTTS
from tauray.actors.voice.engines.hosted import HostedASR, HostedTTS
from tauray.actors.voice.engines.served import ServedASR
from tauray.actors.voice.engines.whisper import SAMPLE_RATE, WhisperASR
from tauray.actors.voice.spec import (
    DEFAULT_ASR,
    DEFAULT_TTS,
    ESPEAK,
    PACKAGED,
    SpeechModelSpec,
    as_spec,
    check_spec,
)


class TTS(Protocol):
    """Speech synthesis: text in a voice to float32 mono audio at ``sample_rate``. ``price`` is
    how a call is priced (:func:`~tauray.actors.voice.spec.speech_price`; None: unknown)."""

    name: str
    sample_rate: int
    price: tuple[str, float] | None

    def check_voice(self, voice: str) -> None: ...
    def speaks_as(self, persona_voice: str) -> str: ...
    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray: ...


class ASR(Protocol):
    """Speech recognition: float32 mono audio at 16 kHz to text."""

    name: str
    price: tuple[str, float] | None

    def transcribe(self, audio: np.ndarray) -> str: ...


def make_tts(value: SpeechModelSpec | str | None = None) -> TTS:
    """The speech synthesiser a spec (or model string) names; the default is espeak-ng."""
    spec = as_spec(value, "tts")
    check_spec(spec)
    return EspeakTTS() if spec.local else HostedTTS(spec)


def make_asr(value: SpeechModelSpec | str | None = None, *, cpu_threads: int = 1) -> ASR:
    """The recogniser a spec (or model string) names; the default is the best packaged Whisper."""
    spec = as_spec(value, "asr")
    check_spec(spec)
    if spec.serve is not None:  # the run's Serve application hears it (engines/served.py)
        return ServedASR(spec)
    if spec.local:
        return WhisperASR(spec.model, device=spec.device, beam_size=spec.beam_size, cpu_threads=cpu_threads,
                          hotwords=spec.hotwords)
    return HostedASR(spec)


__all__ = ["ASR", "DEFAULT_ASR", "DEFAULT_TTS", "ESPEAK", "PACKAGED", "SAMPLE_RATE", "TTS", "EspeakTTS", "HostedASR",
           "HostedTTS", "ServedASR", "SpeechModelSpec", "WhisperASR", "check_spec", "make_asr", "make_tts"]
