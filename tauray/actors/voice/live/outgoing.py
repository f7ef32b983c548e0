"""The caller's audio waiting to go out on a live call, frame by frame.

Two ways to queue it: appended after what is queued (:meth:`OutgoingAudio.append`, the plain
``say``), or placed at an absolute frame of the call (:meth:`OutgoingAudio.place`, silence before
it), as the duplex loop does: its caller decides on a simulated frame index that is the call's
frame index. A frame that has already gone out cannot be changed, so audio placed at a frame
already taken starts at the next frame not yet taken (or after the audio still queued), and the
caller returns where it went so its timeline can match the line. :meth:`OutgoingAudio.cut` drops
what is queued from a frame on (the caller yields). Which bytes are speech and which are
placement's silence is kept byte by byte, so only speech counts as the caller's audio.
"""

from __future__ import annotations

from tauray.actors.voice.live.ulaw import FRAME_BYTES, SILENCE_BYTE

__all__ = ["OutgoingAudio"]

_SPEECH, _PAD = b"\x01", b"\x00"


class OutgoingAudio:
    """Raw μ-law queued for the line; :meth:`take` hands out one 20 ms frame at a time."""

    def __init__(self) -> None:
        self._bytes = bytearray()
        self._speech = bytearray()  # one flag a byte: speech (1) or placement's silence (0)
        self.next_frame = 0  # frames taken so far: the call's frame index of the queue's head

    @property
    def speaking(self) -> bool:
        """Whether speech (not only silence) is still queued."""
        return _SPEECH in self._speech

    @property
    def queued_frames(self) -> int:
        return -(-len(self._bytes) // FRAME_BYTES)

    def append(self, raw: bytes) -> None:
        """Speech after whatever is queued (bytes as given: no padding to whole frames)."""
        self._bytes += raw
        self._speech += _SPEECH * len(raw)

    def place(self, frame: int, raw: bytes) -> int:
        """Speech to start at the call's frame ``frame``, silence before it. A frame already taken,
        or covered by audio still queued, moves it to the first free frame. Returns where it starts."""
        at = max(frame, self.next_frame + self.queued_frames)
        self._pad((at - self.next_frame) * FRAME_BYTES - len(self._bytes))
        self.append(raw)
        self._pad(-len(raw) % FRAME_BYTES)
        return at

    def cut(self, frame: int) -> int:
        """Drop what is queued from frame ``frame`` on; frames already taken stay sent. Returns
        the frame from which the caller is silent."""
        at = max(frame, self.next_frame)
        keep = (at - self.next_frame) * FRAME_BYTES
        del self._bytes[keep:], self._speech[keep:]
        return at

    def take(self) -> tuple[bytes, int]:
        """The next frame (silence when nothing is queued) and how many of its bytes are speech."""
        frame, speech = bytes(self._bytes[:FRAME_BYTES]), self._speech[:FRAME_BYTES].count(_SPEECH)
        del self._bytes[:FRAME_BYTES], self._speech[:FRAME_BYTES]
        self.next_frame += 1
        return frame + bytes([SILENCE_BYTE]) * (FRAME_BYTES - len(frame)), speech

    def _pad(self, n: int) -> None:
        if n > 0:
            self._bytes += bytes([SILENCE_BYTE]) * n
            self._speech += _PAD * n
