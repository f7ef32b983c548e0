"""Hosted speech engines through litellm's ``speech`` (text to speech) and ``transcription``
(speech to text) calls: a ``tts`` or ``asr`` model spec whose model is a litellm model string
(``openai/tts-1``, ``openai/whisper-1``, ...). The key is read from the spec's environment
variable when the call is made, never stored. Each call is admitted by the quota book against
the spec's ``rpm`` (:mod:`tauray.actors.voice.quota`) and priced per character spoken or per
second heard (:func:`~tauray.actors.voice.spec.speech_price`).

A hosted voice is the spec's ``voice`` (the provider's, default ``alloy``): a hosted
synthesiser speaks every speaker, clear, accented or the agent, in that one voice, at the
speaker's rate.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from tauray.actors.llm.ratelimit import is_rate_limit, retry_after_s
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.quota import SpeechQuota
from tauray.actors.voice.spec import SpeechModelSpec, speech_price

DEFAULT_VOICE = "alloy"


def _key(env: str | None) -> str | None:
    return os.environ.get(env) if env else None


def _rate_limited(exc: BaseException) -> float | None:
    """A 429's retry-after in seconds (0: none given), or None for any other error (read as the
    chat client reads them: ``retry-after`` or ``retry-after-ms``, seconds or an HTTP date)."""
    if not is_rate_limit(exc):
        return None
    return retry_after_s(exc) or 0.0


class HostedTTS:
    """litellm ``speech``: returns float32 mono audio at :attr:`sample_rate` (asks for WAV)."""

    def __init__(self, spec: SpeechModelSpec) -> None:
        if "/" not in spec.model:
            raise SpeechConfigError(f"tts model {spec.model!r}: expected a litellm model string like 'openai/tts-1'")
        self.spec = spec
        self.name, self.voice = spec.model, spec.voice or DEFAULT_VOICE
        self.sample_rate = 24000
        self.quota = SpeechQuota(spec)
        self.price = speech_price(spec)

    def check_voice(self, voice: str) -> None:
        if not voice:
            raise SpeechConfigError("tts voice is empty")

    def voices(self, kind: str) -> tuple[str, ...]:
        """The provider's one voice, for every kind of speaker (see the module docstring)."""
        return (self.voice,)

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        import litellm  # lazy: the slowest import of the stack
        import soundfile  # lazy: optional extra tauray[voice]

        def send() -> Any:
            return litellm.speech(model=self.name, input=text, voice=voice, response_format="wav",
                                  speed=max(0.25, min(4.0, rate_wpm / 170)), api_base=self.spec.api_base,
                                  api_key=_key(self.spec.api_key_env), timeout=self.spec.timeout)

        response = self.quota.call(send, is_rate_limit=_rate_limited)
        audio, rate = soundfile.read(io.BytesIO(response.content), dtype="float32", always_2d=True)
        self.sample_rate = int(rate)
        return audio.mean(axis=1)


class HostedASR:
    """litellm ``transcription`` on 16 kHz audio sent as a WAV file."""

    english_only = False
    decoding = ""  # the provider's

    def __init__(self, spec: SpeechModelSpec) -> None:
        if "/" not in spec.model:
            raise SpeechConfigError(f"asr model {spec.model!r}: expected a litellm model string like 'openai/whisper-1'")
        self.spec = spec
        self.name = spec.model
        self.quota = SpeechQuota(spec)
        self.price = speech_price(spec)

    def transcribe(self, audio: np.ndarray) -> str:
        import litellm  # lazy: the slowest import of the stack
        import soundfile  # lazy: optional extra tauray[voice]

        buffer = io.BytesIO()
        soundfile.write(buffer, audio, 16000, format="WAV", subtype="PCM_16")
        data = buffer.getvalue()

        def send() -> Any:
            file = io.BytesIO(data)
            file.name = "utterance.wav"
            return litellm.transcription(model=self.name, file=file, language="en", api_base=self.spec.api_base,
                                         api_key=_key(self.spec.api_key_env), timeout=self.spec.timeout)

        response = self.quota.call(send, is_rate_limit=_rate_limited)
        return str(getattr(response, "text", "") or "").strip()
