"""The synthesis cache: what a voice said once is not computed again, across the profiles of a
run, the runs of a sweep and later runs on the same machine.

A speaker's voice is drawn per task and side, apart from the profile (:func:`~tauray.actors.voice.
profiles.draw_voice`), so a task's caller says the same words in the same voice in every
profile; synthesis is the same audio each time, and only the effects and the line differ.
:class:`CachedTTS` wraps an engine: a key is the engine's fingerprint (its name, the
versions of the packages its voices come from and a digest of tauray's code that feeds them), the voice, the rate, the pitch, the seed and the
text. Each process keeps recent audio in memory; a deterministic local engine's audio is also
written to the cache folder (``$TAURAY_CACHE/speech``, default ``~/.cache/tauray/speech``; a
temp name, then a rename, so the speech workers of a node share it safely), as 16-bit FLAC.
Audio is rounded to 16-bit PCM on the way out whether it came from the cache or not, so a
cached utterance is the same audio as a computed one, bit for bit. ``TAURAY_SPEECH_CACHE=off``
keeps the cache in memory only; a hosted engine's audio is never written (each call is a
provider's answer, not a function of its input).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import threading
from collections import OrderedDict
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

MEMORY_ITEMS = 512


def cache_root() -> Path:
    """tauray's cache folder: ``$TAURAY_CACHE``, else ``~/.cache/tauray``."""
    return Path(os.environ.get("TAURAY_CACHE", Path.home() / ".cache" / "tauray"))


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def _code(engine: Any) -> str:
    """A digest of the source files of the engine's class and of its parts (``parts``): tauray's
    own code that turns text into the model's input, which may change between two commits of
    one version."""
    digest = hashlib.sha256()
    for cls in sorted({type(engine), *(type(p) for p in getattr(engine, "parts", ()))}, key=lambda c: c.__module__):
        source = getattr(sys.modules.get(cls.__module__), "__file__", None)
        digest.update(Path(source).read_bytes() if source else cls.__module__.encode())
    return digest.hexdigest()[:16]


def fingerprint(name: str, packages: tuple[str, ...], code: str = "") -> str:
    """An engine's cache identity: its name, its packages' installed versions and its code's digest."""
    return "|".join([name, *(f"{p}=={_version(p)}" for p in packages), code])


def pcm16(audio: np.ndarray) -> np.ndarray:
    """Audio rounded to 16-bit PCM (as float32 in [-1, 1]): what every synthesis returns."""
    return (np.round(np.clip(audio, -1.0, 1.0) * 32767.0) / 32767.0).astype(np.float32)


class CachedTTS:
    """An engine (:class:`~tauray.actors.voice.engines.TTS`) with the synthesis cache in front.
    ``synth_cached`` says whether the audio was computed; ``synth`` is the engine's call."""

    def __init__(self, engine: Any, *, memory_items: int = MEMORY_ITEMS) -> None:
        self.engine = engine
        self.name: str = engine.name
        self.price = engine.price
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_items = memory_items
        self._lock = threading.Lock()
        self._fingerprint = fingerprint(engine.name, tuple(getattr(engine, "packages", ())), _code(engine))
        disk = os.environ.get("TAURAY_SPEECH_CACHE", "on").lower() not in ("off", "0", "no", "false")
        self._folder = cache_root() / "speech" if disk and getattr(engine, "deterministic", False) else None
        self.hits = self.misses = 0

    @property
    def sample_rate(self) -> int:
        return int(self.engine.sample_rate)

    def voices(self, kind: str) -> tuple[str, ...]:
        return tuple(self.engine.voices(kind))

    def check_voice(self, voice: str) -> None:
        self.engine.check_voice(voice)

    def _key(self, text: str, voice: str, rate_wpm: int, pitch: int, seed: int) -> str:
        blob = json.dumps([self._fingerprint, voice, int(rate_wpm), int(pitch), int(seed), text], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path | None:
        return None if self._folder is None else self._folder / key[:2] / f"{key}.flac"

    def _read(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        import soundfile  # lazy: optional extra tauray[voice]

        try:
            audio, _ = soundfile.read(path, dtype="int16")
        except (OSError, RuntimeError):  # a damaged file: computed again and rewritten
            return None
        return (audio.astype(np.float32) / 32767.0).astype(np.float32)

    def _write(self, key: str, audio: np.ndarray) -> None:
        path = self._path(key)
        if path is None:
            return
        import soundfile  # lazy: optional extra tauray[voice]

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            buffer = io.BytesIO()
            soundfile.write(buffer, np.round(audio * 32767.0).astype(np.int16), self.sample_rate, format="FLAC")
            partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            partial.write_bytes(buffer.getvalue())
            partial.replace(path)
        except OSError:  # a full or read-only disk costs only the cache
            return

    def _remember(self, key: str, audio: np.ndarray) -> None:
        with self._lock:
            self._memory[key] = audio
            self._memory.move_to_end(key)
            while len(self._memory) > self._memory_items:
                self._memory.popitem(last=False)

    def synth_cached(self, text: str, voice: str, rate_wpm: int, pitch: int, seed: int) -> tuple[np.ndarray, bool]:
        """(the audio, whether it was computed now rather than found in the cache)."""
        key = self._key(text, voice, rate_wpm, pitch, seed)
        with self._lock:
            found = self._memory.get(key)
        if found is None and (found := self._read(key)) is not None:
            self._remember(key, found)
        if found is not None:
            self.hits += 1
            return found, False
        audio = pcm16(self.engine.synth(text, voice, rate_wpm, pitch, seed))
        self.misses += 1
        self._remember(key, audio)
        self._write(key, audio)
        return audio, True

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        return self.synth_cached(text, voice, rate_wpm, pitch, seed)[0]


__all__ = ["CachedTTS", "MEMORY_ITEMS", "cache_root", "fingerprint", "pcm16"]
