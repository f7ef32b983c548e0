"""Speech engines bound to the sweep's ``tts`` and ``asr`` roles: a :class:`SpeechModelSpec`
names one, :func:`make_tts` and :func:`make_asr` build it.

Offline engines are ``local/...`` names (``local/espeak-ng``; ``local/whisper-base``,
``local/whisper-tiny.en``); any other model string is a hosted engine reached through litellm's
``speech``/``transcription`` calls. :func:`check_spec` validates a spec without loading a model.
"""

from __future__ import annotations

import importlib.util
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.speech.engines.espeak import EspeakTTS
from tauray.actors.speech.engines.hosted import HostedASR, HostedTTS
from tauray.actors.speech.engines.whisper import PACKAGED, SAMPLE_RATE, WhisperASR
from tauray.actors.speech.errors import INSTALL_HINT, SpeechConfigError

ESPEAK = "local/espeak-ng"
DEFAULT_TTS = ESPEAK
DEFAULT_ASR = "local/whisper-tiny.en"  # the packaged recogniser that heard best through the line (docs/voice.md)


class TTS(Protocol):
    """Speech synthesis: text in a voice to float32 mono audio at ``sample_rate``."""

    name: str
    sample_rate: int

    def check_voice(self, voice: str) -> None: ...
    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray: ...


class ASR(Protocol):
    """Speech recognition: float32 mono audio at 16 kHz to text."""

    name: str

    def transcribe(self, audio: np.ndarray) -> str: ...


class SpeechModelSpec(BaseModel):
    """A speech model bound to the ``tts`` or ``asr`` role; safe to log (names a key's variable)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)
    role: Literal["tts", "asr"] = Field(description="'tts' (speech synthesis) or 'asr' (recognition).")
    model: str = Field(min_length=1, description="'local/espeak-ng', 'local/whisper-base', 'local/whisper-tiny.en', "
                       "or a litellm model string for a hosted engine ('openai/tts-1', 'openai/whisper-1').")
    voice: str | None = Field(None, description="Hosted TTS only: the provider's voice (local voices come from the profile).")
    api_base: str | None = Field(None, description="Base URL of a hosted engine.")
    api_key_env: str | None = Field(None, description="NAME of the environment variable holding the key (never the key).")
    rpm: int | None = Field(None, gt=0, description="Hosted engines: the provider's requests-per-minute quota.")
    device: Literal["cpu", "cuda"] = Field("cpu", description="Local recogniser: where it runs.")
    beam_size: int = Field(1, ge=1, le=10, description="Local recogniser: beam width (1 = greedy).")

    @property
    def local(self) -> bool:
        return self.model.startswith("local/")


def check_spec(spec: SpeechModelSpec) -> None:
    """A one-line error, before any model call, for an unknown local engine or a missing package."""
    if not spec.local:
        if "/" not in spec.model:
            raise SpeechConfigError(f"{spec.role} model {spec.model!r}: expected 'local/...' or a litellm model "
                                    "string like 'openai/whisper-1'")
        return
    if spec.role == "tts":
        if spec.model != ESPEAK:
            raise SpeechConfigError(f"tts model {spec.model!r} is unknown; local: {ESPEAK}")
        if importlib.util.find_spec("espeakng_loader") is None:
            raise SpeechConfigError(f"tts model {spec.model!r} needs espeakng-loader: {INSTALL_HINT}")
        return
    if spec.model not in PACKAGED:
        raise SpeechConfigError(f"asr model {spec.model!r} is unknown; local: {', '.join(PACKAGED)}")
    model = PACKAGED[spec.model]
    missing = [p for imp, p in zip(model.packages, model.pip_names, strict=True) if importlib.util.find_spec(imp) is None]
    if importlib.util.find_spec("faster_whisper") is None:
        missing.insert(0, "faster-whisper")
    if missing:
        raise SpeechConfigError(f"asr model {spec.model!r} needs {', '.join(missing)}: {INSTALL_HINT}")


def _spec(value: SpeechModelSpec | str | None, role: Literal["tts", "asr"]) -> SpeechModelSpec:
    if isinstance(value, SpeechModelSpec):
        if value.role != role:
            raise SpeechConfigError(f"a {value.role} spec was given where a {role} spec belongs")
        return value
    return SpeechModelSpec(role=role, model=value or (DEFAULT_TTS if role == "tts" else DEFAULT_ASR))


def make_tts(value: SpeechModelSpec | str | None = None) -> TTS:
    """The speech synthesiser a spec (or model string) names; the default is espeak-ng."""
    spec = _spec(value, "tts")
    check_spec(spec)
    if spec.local:
        return EspeakTTS()
    return HostedTTS(spec.model, voice=spec.voice or "alloy", api_base=spec.api_base, api_key_env=spec.api_key_env)


def make_asr(value: SpeechModelSpec | str | None = None, *, cpu_threads: int = 1) -> ASR:
    """The recogniser a spec (or model string) names; the default is the best packaged Whisper."""
    spec = _spec(value, "asr")
    check_spec(spec)
    if spec.local:
        return WhisperASR(spec.model, device=spec.device, beam_size=spec.beam_size, cpu_threads=cpu_threads)
    return HostedASR(spec.model, api_base=spec.api_base, api_key_env=spec.api_key_env)


__all__ = ["ASR", "DEFAULT_ASR", "DEFAULT_TTS", "ESPEAK", "PACKAGED", "SAMPLE_RATE", "TTS", "EspeakTTS", "HostedASR",
           "HostedTTS", "SpeechModelSpec", "WhisperASR", "check_spec", "make_asr", "make_tts"]
