"""hibari: one American voice distilled from a Kokoro-82M voice into a small ONNX model, with
its own text-to-phoneme rules (a lexicon and a small network for unknown words, no espeak-ng),
all inside the ``hibari-tts`` package (Apache-2.0; docs/voice.md has the provenance).

Only the voice inside the package is offered (``heart``, an American woman, 24 kHz): hibari's
other voices are fetched from a model hub on first use, which tauray never does at run time.
The voice samples a noise component from a generator hibari takes a seed for, so the same text,
voice, rate and seed are the same audio. It is the cheapest neural voice here (about 0.01 s of
compute per second of speech on one core), which makes it the agent's voice.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import numpy as np

from tauray.actors.voice.engines.piper import NATURAL_WPM
from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError

SAMPLE_RATE = 24000


def packaged_voices() -> tuple[str, ...]:
    """The hibari voices whose weights are inside the installed package (none: not installed)."""
    if importlib.util.find_spec("hibari") is None:
        return ()
    from hibari.voices import VOICES  # lazy: optional extra tauray[voice]

    return tuple(name for name, v in VOICES.items() if v.get("bundled"))


class HibariTTS:
    """hibari's packaged voices: ``synth(text, voice, rate_wpm, pitch, seed)`` returns float32
    mono audio at 24 kHz; ``pitch`` changes nothing."""

    name = "local/hibari"
    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call
    sample_rate = SAMPLE_RATE
    deterministic = True
    packages = ("hibari-tts", "onnxruntime")

    def __init__(self) -> None:
        self._voices: dict[str, Any] = {}
        self._lock = threading.Lock()

    def voices(self, kind: str) -> tuple[str, ...]:
        """The packaged voices (clear American: for every kind of speaker)."""
        return packaged_voices()

    def check_voice(self, voice: str) -> None:
        if importlib.util.find_spec("hibari") is None or importlib.util.find_spec("onnxruntime") is None:
            raise SpeechConfigError(f"hibari voice {voice!r} needs hibari-tts: {INSTALL_HINT}")
        if voice not in packaged_voices():
            raise SpeechConfigError(f"voice {voice!r}: hibari has no packaged voice {voice!r} (packaged: "
                                    f"{', '.join(packaged_voices())}; the others are downloads, never made at run time)")

    def _load(self, voice: str) -> Any:
        with self._lock:
            if voice not in self._voices:
                self.check_voice(voice)
                from hibari import Hibari  # lazy: optional extra tauray[voice]
                from hibari.voices import voice_path  # lazy: optional extra tauray[voice]

                self._voices[voice] = Hibari(voice, model=voice_path(voice, download_missing=False), threads=1)
            return self._voices[voice]

    def synth(self, text: str, voice: str, rate_wpm: int = NATURAL_WPM, pitch: int = 50, seed: int = 0) -> np.ndarray:
        model = self._load(voice)
        if not text.strip():
            return np.zeros(0, dtype=np.float32)
        speed = min(2.0, max(0.5, rate_wpm / NATURAL_WPM))
        return np.clip(np.asarray(model(text, speed=speed, seed=seed), dtype=np.float32), -1.0, 1.0)


__all__ = ["HibariTTS", "SAMPLE_RATE", "packaged_voices"]
