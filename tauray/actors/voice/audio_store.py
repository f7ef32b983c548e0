"""An utterance's audio files, content-addressed, and the keep policy that decides which reach
the run folder.

Each utterance has two files, both 16-bit FLAC (lossless; every browser plays it): the spoken
side (synthesis and source effects, at the synthesiser's rate) and what the line delivered (the
decoded 8 kHz μ-law: μ-law decodes to 16-bit values exactly, so nothing is lost). A file's name
is the sha256 of its bytes, so the same audio is stored once however many utterances share it.
A speech client holds a conversation's files (:class:`HeldAudio`) until its verdict; the keep
policy (``none``, ``failed``, ``all``; :func:`kept`) decides whether they go with the result to
the driver's table writer, which writes them into ``<run>/audio/`` (``tauray/results/tables/layout.py``).
"""

from __future__ import annotations

import hashlib
import io
from typing import Final, Literal

import numpy as np

from tauray.actors.voice.errors import SpeechConfigError

KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: Final = ("none", "failed", "all")


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


def audio_files(line_wav: bytes, spoken: np.ndarray, rate: int) -> tuple[dict[str, str], dict[str, bytes]]:
    """One utterance's audio files: the line side (what the line delivered) and the spoken side
    (the source audio at ``rate``), each as FLAC named by its content. Returns the record's refs
    (``audio_ref``, ``spoken_audio_ref``) and the files (content hash -> bytes)."""
    line, said = line_flac(line_wav), flac(spoken, rate)
    refs = {"audio_ref": audio_hash(line), "spoken_audio_ref": audio_hash(said)}
    return refs, {refs["audio_ref"]: line, refs["spoken_audio_ref"]: said}


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

    def hold_all(self, conversation: str, files: dict[str, bytes]) -> None:
        self._held.setdefault(conversation, {}).update(files)

    def take(self, conversation: str) -> dict[str, bytes]:
        return self._held.pop(conversation, {})


def kept(keep: str, *, failed: bool) -> bool:
    """Whether a conversation's audio is kept under policy ``keep`` once its verdict is known."""
    if keep not in KEEP_POLICIES:
        raise SpeechConfigError(f"audio keep policy {keep!r} is unknown; known: {', '.join(KEEP_POLICIES)}")
    return keep == "all" or (keep == "failed" and failed)
