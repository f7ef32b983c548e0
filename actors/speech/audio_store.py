"""Content-addressed audio files inside a run folder, kept by policy.

The line audio of an utterance is 8 kHz μ-law WAV (the line's own coding, so lossless with
respect to what the recogniser heard, 8 KB per second); its name is the sha256 of its bytes,
so the same audio is stored once however many utterances share it. A sweep keeps ``none``,
the audio of ``failed`` conversations only, or ``all``: with ``failed``, utterances wait in
memory until their conversation's verdict says whether to write them (:meth:`finish`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final, Literal

import io

import numpy as np

from tauray.actors.speech.errors import SpeechConfigError

KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: Final = ("none", "failed", "all")
AUDIO_DIR: Final = "audio"


def audio_hash(wav: bytes) -> str:
    """The content address of audio bytes."""
    return hashlib.sha256(wav).hexdigest()


def flac(samples: np.ndarray, rate: int) -> bytes:
    """Audio as 16-bit FLAC bytes (lossless, about half of PCM; every browser plays it)."""
    import soundfile  # lazy: optional extra tauray[voice]

    buf = io.BytesIO()
    soundfile.write(buf, np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0), rate, format="FLAC",
                    subtype="PCM_16")
    return buf.getvalue()


def line_flac(wav: bytes) -> bytes:
    """The line's μ-law WAV as FLAC of its decoded 16-bit samples at 8 kHz: exactly what the line
    delivered (μ-law decodes to 16-bit values, so nothing is lost) in a format browsers play."""
    import soundfile  # lazy: optional extra tauray[voice]

    samples, rate = soundfile.read(io.BytesIO(wav), dtype="int16")
    buf = io.BytesIO()
    soundfile.write(buf, samples, rate, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


class HeldAudio:
    """Audio files of the conversations in flight, held until each one's verdict (the staging
    place of the keep policy): :meth:`hold` names a file by its content, :meth:`take` hands a
    conversation's files over, once, so nothing is written for a policy that drops them."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, bytes]] = {}

    def hold(self, conversation: str, data: bytes) -> str:
        ref = audio_hash(data)
        self._held.setdefault(conversation, {})[ref] = data
        return ref

    def take(self, conversation: str) -> dict[str, bytes]:
        return self._held.pop(conversation, {})


def kept(keep: str, *, failed: bool) -> bool:
    """Whether a conversation's audio is kept under policy ``keep`` once its verdict is known."""
    if keep not in KEEP_POLICIES:
        raise SpeechConfigError(f"audio keep policy {keep!r} is unknown; known: {', '.join(KEEP_POLICIES)}")
    return keep == "all" or (keep == "failed" and failed)


class AudioStore:
    """Writes audio under ``<run_dir>/audio/<hash[:2]>/<hash>.wav`` per the keep policy."""

    def __init__(self, run_dir: Path | str, keep: KeepPolicy = "failed") -> None:
        if keep not in KEEP_POLICIES:
            raise SpeechConfigError(f"audio keep policy {keep!r} is unknown; known: {', '.join(KEEP_POLICIES)}")
        self.root = Path(run_dir) / AUDIO_DIR
        self.keep: KeepPolicy = keep
        self._pending: dict[str, dict[str, bytes]] = {}

    def path_of(self, ref: str) -> Path:
        return self.root / ref[:2] / f"{ref}.wav"

    def _write(self, ref: str, wav: bytes) -> None:
        path = self.path_of(ref)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(wav)
        tmp.replace(path)  # atomic: a reader never sees half a file

    def put(self, conversation: str, wav: bytes) -> str | None:
        """Store (or hold) one utterance's audio; its reference, or None under ``none``."""
        if self.keep == "none":
            return None
        ref = audio_hash(wav)
        if self.keep == "all":
            self._write(ref, wav)
        else:
            self._pending.setdefault(conversation, {})[ref] = wav
        return ref

    def finish(self, conversation: str, *, failed: bool) -> int:
        """A conversation's verdict is in: under ``failed``, write its held audio if it failed and
        drop it otherwise. Returns the files written."""
        held = self._pending.pop(conversation, {})
        if self.keep != "failed" or not failed:
            return 0
        for ref, wav in held.items():
            self._write(ref, wav)
        return len(held)

    def read(self, ref: str) -> bytes:
        return self.path_of(ref).read_bytes()
