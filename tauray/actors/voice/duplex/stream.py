"""What each side has put on the line: its chunks of audio on the clock, each with the words it
carries and when each word ends, so a cut says exactly which words were said and which were not.

A chunk is one utterance as the line carried it (8 kHz 16-bit samples after the telephone line,
:func:`tauray.actors.voice.line.telephone`), placed at a start frame. A side's future is planned
(its reply's sentences are scheduled when the reply is decided) and may be cut: :meth:`Chunk.cut`
shortens it and keeps when the cut was decided. The other side reads a stream only before the
current tick; the clock may peek further to know when to wake (clock.py).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from tauray.actors.voice.duplex.segments import FRAME_S, SegmentKind
from tauray.actors.voice.line import LINE_RATE, resample, telephone
from tauray.results.tables.records.columns import Side

__all__ = ["SAMPLES_PER_FRAME", "Chunk", "Stream", "line_samples", "split_words", "to_float", "word_ends"]

SAMPLES_PER_FRAME: Final = round(LINE_RATE * FRAME_S)  # 160
_WORD = re.compile(r"\S+")
SILENCE_LEVEL: Final = 0.01  # below this (float amplitude) a synthesiser's lead-in and tail are silence


def split_words(text: str) -> list[str]:
    return _WORD.findall(text)


def trim(audio: np.ndarray) -> np.ndarray:
    """Audio without the synthesiser's silent lead-in and tail (a segment is the speech)."""
    loud = np.flatnonzero(np.abs(audio) >= SILENCE_LEVEL)
    return audio[loud[0]:loud[-1] + 1] if loud.size else audio[:0]


def line_samples(audio: np.ndarray, rate: int) -> np.ndarray:
    """Source audio through the telephone line, as the far end gets it: 8 kHz int16 (μ-law
    decodes to 16-bit values exactly), padded with silence to whole 20 ms frames."""
    import soundfile  # lazy: optional extra tauray[voice]

    if audio.size == 0:
        return np.zeros(SAMPLES_PER_FRAME, dtype=np.int16)
    samples, got = soundfile.read(io.BytesIO(telephone(audio, rate)), dtype="int16")
    assert got == LINE_RATE, got
    pad = -samples.size % SAMPLES_PER_FRAME
    return np.concatenate([samples, np.zeros(pad, dtype=np.int16)]) if pad else samples


def to_float(samples: np.ndarray, rate_out: int = LINE_RATE) -> np.ndarray:
    """Line samples (int16, 8 kHz) as float32 at ``rate_out`` (16 kHz for a recogniser)."""
    audio = samples.astype(np.float32) / 32768.0
    return resample(audio, LINE_RATE, rate_out) if rate_out != LINE_RATE else audio


def word_ends(words: Sequence[str], frames: int, spans: Sequence[tuple[float, float]] | None = None,
              offset_s: float = 0.0) -> tuple[int, ...]:
    """The frame (relative to the chunk's start) at which each word has been said. With the
    synthesiser's own word times (``spans``, seconds from the untrimmed start; ``offset_s``: what
    trimming removed) they are exact; otherwise spread over the audio by characters, a word and
    its space counting one more (an estimate, said so in docs/duplex.md)."""
    if spans is not None and len(spans) == len(words):
        return tuple(min(frames, max(1, round((end - offset_s) / FRAME_S))) for _, end in spans)
    weights = np.cumsum([len(w) + 1 for w in words], dtype=float)
    if not weights.size:
        return ()
    total = weights[-1] - 1  # no space after the last word
    return tuple(min(frames, max(1, round(frames * min(1.0, w / total)))) for w in weights)


@dataclass
class Chunk:
    """One utterance on the line: where it starts, its samples, its words and where each ends,
    and (once cut) when the cut was decided and where its audio stops."""

    side: Side
    kind: SegmentKind
    start: int
    samples: np.ndarray
    text: str
    ends: tuple[int, ...]
    reply: int = -1  # the agent reply (or caller turn) it belongs to: touching chunks of one reply are one segment
    end: int = -1
    cut_at: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    _speech: np.ndarray | None = None  # the listener's VAD of this chunk, per frame (computed once)

    def __post_init__(self) -> None:
        if self.end < 0:
            self.end = self.start + self.samples.size // SAMPLES_PER_FRAME

    @property
    def full_end(self) -> int:
        return self.start + self.samples.size // SAMPLES_PER_FRAME

    @property
    def words(self) -> list[str]:
        return split_words(self.text)

    def said(self, until: int | None = None) -> int:
        """Words said by frame ``until`` (default: where the audio stops)."""
        stop = (self.end if until is None else min(until, self.end)) - self.start
        return sum(1 for e in self.ends if e <= stop)

    def said_text(self, until: int | None = None) -> str:
        return " ".join(self.words[:self.said(until)])

    def cut(self, decided: int, stop: int) -> None:
        """Stop the audio at frame ``stop`` (at least one frame in: a chunk that has not begun is
        dropped by its stream instead); ``decided`` is when the speaker was told to stop."""
        self.end = max(self.start + 1, min(self.end, stop))
        self.cut_at = max(self.start, min(decided, self.end))

    def speech(self, vad: Any) -> np.ndarray:
        """Per-frame speech flags of the whole planned chunk, as ``vad`` hears it."""
        if self._speech is None:
            self._speech = vad.frames(self.samples)
        return self._speech

    def audio(self) -> np.ndarray:
        """The samples on the line (up to where the audio stops)."""
        return self.samples[:(self.end - self.start) * SAMPLES_PER_FRAME]


class Stream:
    """One side's chunks in time order (a side says one thing at a time)."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self.chunks: list[Chunk] = []

    def add(self, chunk: Chunk) -> Chunk:
        if self.chunks and chunk.start < self.chunks[-1].end:
            raise AssertionError(f"{self.side} chunk at frame {chunk.start} overlaps one ending at "
                                 f"{self.chunks[-1].end}")
        self.chunks.append(chunk)
        return chunk

    def at(self, frame: int) -> Chunk | None:
        """The chunk whose audio covers ``frame``."""
        for chunk in reversed(self.chunks):
            if chunk.start <= frame < chunk.end:
                return chunk
            if chunk.end <= frame:
                return None
        return None

    def speaking(self, frame: int) -> bool:
        return self.at(frame) is not None

    def stretch(self, frame: int) -> tuple[int, int] | None:
        """The stretch of speech (touching chunks joined) that covers ``frame``: (start, end)."""
        if self.at(frame) is None:
            return None
        index = next(i for i, c in enumerate(self.chunks) if c.start <= frame < c.end)
        lo = hi = index
        while lo > 0 and self.chunks[lo - 1].end == self.chunks[lo].start:
            lo -= 1
        while hi + 1 < len(self.chunks) and self.chunks[hi + 1].start == self.chunks[hi].end:
            hi += 1
        return self.chunks[lo].start, self.chunks[hi].end

    def stretches(self, since: int = 0) -> list[tuple[int, int]]:
        """Every stretch of speech that ends after ``since``, in order (planned ones too)."""
        out: list[tuple[int, int]] = []
        for chunk in self.chunks:
            if out and out[-1][1] == chunk.start:
                out[-1] = (out[-1][0], chunk.end)
            else:
                out.append((chunk.start, chunk.end))
        return [s for s in out if s[1] > since]

    def last_end(self, before: int) -> int | None:
        """Where the side last stopped speaking at or before frame ``before`` (None: it has not
        spoken, or is speaking at ``before - 1``)."""
        ends = [c.end for c in self.chunks if c.end <= before]
        if not ends or self.speaking(before - 1):
            return None
        return max(ends)

    def later(self, frame: int) -> list[Chunk]:
        """Chunks that have not ended by ``frame``."""
        return [c for c in self.chunks if c.end > frame]

    def stop(self, decided: int, stop: int) -> list[Chunk]:
        """Cut the side short: the chunk under way at ``stop`` ends there, chunks not begun are
        dropped. Returns the chunks touched (cut or dropped)."""
        touched = []
        for chunk in list(self.chunks):
            if chunk.start >= stop:
                self.chunks.remove(chunk)
                chunk.end, chunk.cut_at = chunk.start, decided
                touched.append(chunk)
            elif chunk.end > stop:
                chunk.cut(decided, stop)
                touched.append(chunk)
        return touched

    def samples(self, frames: int) -> np.ndarray:
        """The side's line audio over the first ``frames`` frames (silence between chunks)."""
        out = np.zeros(frames * SAMPLES_PER_FRAME, dtype=np.int16)
        for chunk in self.chunks:
            if chunk.start >= frames:
                break
            audio = chunk.audio()[:(frames - chunk.start) * SAMPLES_PER_FRAME]
            out[chunk.start * SAMPLES_PER_FRAME:chunk.start * SAMPLES_PER_FRAME + audio.size] = audio
        return out

    def window(self, start: int, end: int) -> np.ndarray:
        """The side's line audio from frame ``start`` to ``end``."""
        out = np.zeros(max(0, end - start) * SAMPLES_PER_FRAME, dtype=np.int16)
        for chunk in self.chunks:
            lo, hi = max(start, chunk.start), min(end, chunk.end)
            if lo < hi:
                src = chunk.samples[(lo - chunk.start) * SAMPLES_PER_FRAME:(hi - chunk.start) * SAMPLES_PER_FRAME]
                out[(lo - start) * SAMPLES_PER_FRAME:(hi - start) * SAMPLES_PER_FRAME] = src
        return out
