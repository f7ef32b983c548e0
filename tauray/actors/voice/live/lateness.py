"""The harness's own lateness on the wall clock. A live call sends a frame every 20 ms; frame k is
due k × 20 ms after the call's first frame. What is recorded per conversation is how late each
frame went out (p50, p99, the worst) and the longest gap between two frames sent, so that a
conversation in which the harness fell behind past a declared limit is told apart (an
infrastructure row, rerun) from one in which the bot was slow."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Lateness", "LatenessLimit", "LatenessMeter"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LatenessLimit(_Frozen):
    """How far behind the harness may fall before a conversation is an infrastructure row."""

    p99_ms: float = Field(default=40.0, gt=0, description="Frame-send lateness at the 99th percentile.")
    longest_gap_ms: float = Field(default=200.0, gt=0, description="Longest time between two frames sent.")


class Lateness(_Frozen):
    """One call's frame-send lateness (ms, measured on the monotonic clock)."""

    frames: int = Field(description="Frames sent.")
    p50_ms: float = Field(description="Median lateness of a frame against its due time.")
    p99_ms: float = Field(description="99th-percentile lateness.")
    max_ms: float = Field(description="The latest frame's lateness.")
    longest_gap_ms: float = Field(description="Longest time between two consecutive frames (20 ms when on time).")

    @classmethod
    def empty(cls) -> Lateness:
        return cls(frames=0, p50_ms=0.0, p99_ms=0.0, max_ms=0.0, longest_gap_ms=0.0)

    def breach(self, limit: LatenessLimit) -> str | None:
        """Why the harness fell behind past the limit (one line), or None when it kept up."""
        if self.p99_ms > limit.p99_ms:
            return f"the harness fell behind: frame-send lateness p99 {self.p99_ms:.0f} ms (limit {limit.p99_ms:.0f} ms)"
        if self.longest_gap_ms > limit.longest_gap_ms:
            return (f"the harness fell behind: longest gap between frames {self.longest_gap_ms:.0f} ms "
                    f"(limit {limit.longest_gap_ms:.0f} ms)")
        return None


class LatenessMeter:
    """Records when each frame went out, relative to the first frame's due time."""

    def __init__(self, frame_s: float = 0.02):
        self.frame_s = frame_s
        self._late: list[float] = []
        self._longest_gap = 0.0
        self._last: float | None = None

    def sent(self, at_s: float) -> None:
        """Frame number ``len(self)`` went out at ``at_s`` seconds after the first frame's due time."""
        self._late.append(max(0.0, at_s - len(self._late) * self.frame_s))
        if self._last is not None:
            self._longest_gap = max(self._longest_gap, at_s - self._last)
        self._last = at_s

    def __len__(self) -> int:
        return len(self._late)

    def summary(self) -> Lateness:
        if not self._late:
            return Lateness.empty()
        late = np.asarray(self._late) * 1000.0
        p50, p99 = np.percentile(late, [50, 99])
        return Lateness(frames=len(late), p50_ms=round(float(p50), 3), p99_ms=round(float(p99), 3),
                        max_ms=round(float(late.max()), 3), longest_gap_ms=round(self._longest_gap * 1000.0, 3))
