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

from tauray.actors.speech.errors import SpeechConfigError

KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: Final = ("none", "failed", "all")
AUDIO_DIR: Final = "audio"


def audio_hash(wav: bytes) -> str:
    """The content address of audio bytes."""
    return hashlib.sha256(wav).hexdigest()


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
