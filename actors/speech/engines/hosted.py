"""Hosted speech engines through litellm's ``speech`` (text to speech) and ``transcription``
(speech to text) calls: a ``tts`` or ``asr`` model spec whose model is a litellm model string
(``openai/tts-1``, ``openai/whisper-1``, ...). The key is read from the spec's environment
variable when the call is made, never stored."""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from tauray.actors.speech.errors import SpeechConfigError


def _key(env: str | None) -> str | None:
    return os.environ.get(env) if env else None


class HostedTTS:
    """litellm ``speech``: returns float32 mono audio at :attr:`sample_rate` (asks for PCM/WAV)."""

    def __init__(self, model: str, *, voice: str = "alloy", api_base: str | None = None,
                 api_key_env: str | None = None, timeout: float = 60.0) -> None:
        if "/" not in model:
            raise SpeechConfigError(f"tts model {model!r}: expected a litellm model string like 'openai/tts-1'")
        self.name, self.voice, self.api_base, self.api_key_env, self.timeout = model, voice, api_base, api_key_env, timeout
        self.sample_rate = 24000

    def check_voice(self, voice: str) -> None:
        if not voice:
            raise SpeechConfigError("tts voice is empty")

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        import litellm  # lazy: the slowest import of the stack
        import soundfile  # lazy: optional extra tauray[voice]

        response: Any = litellm.speech(model=self.name, input=text, voice=voice or self.voice, response_format="wav",
                                       speed=max(0.25, min(4.0, rate_wpm / 170)), api_base=self.api_base,
                                       api_key=_key(self.api_key_env), timeout=self.timeout)
        audio, rate = soundfile.read(io.BytesIO(response.content), dtype="float32", always_2d=True)
        self.sample_rate = int(rate)
        return audio.mean(axis=1)


class HostedASR:
    """litellm ``transcription`` on 16 kHz audio sent as a WAV file."""

    english_only = False

    def __init__(self, model: str, *, api_base: str | None = None, api_key_env: str | None = None,
                 timeout: float = 60.0) -> None:
        if "/" not in model:
            raise SpeechConfigError(f"asr model {model!r}: expected a litellm model string like 'openai/whisper-1'")
        self.name, self.api_base, self.api_key_env, self.timeout = model, api_base, api_key_env, timeout

    def transcribe(self, audio: np.ndarray) -> str:
        import litellm  # lazy: the slowest import of the stack
        import soundfile  # lazy: optional extra tauray[voice]

        buffer = io.BytesIO()
        soundfile.write(buffer, audio, 16000, format="WAV", subtype="PCM_16")
        buffer.name = "utterance.wav"
        buffer.seek(0)
        response: Any = litellm.transcription(model=self.name, file=buffer, language="en", api_base=self.api_base,
                                              api_key=_key(self.api_key_env), timeout=self.timeout)
        return str(getattr(response, "text", "") or "").strip()
