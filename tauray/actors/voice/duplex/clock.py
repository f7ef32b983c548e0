"""The duplex clock: both sides advance in ticks, each hearing the other's line audio of the
previous tick, and the loop steps from event to event instead of from tick to tick.

Time is counted in 20 ms audio frames (:data:`~.segments.FRAME_S`), the one resolution of every
time on a duplex timeline. A tick is a whole number of frames (200 ms, τ-Voice's, by default;
20 to 1000 ms allowed). A side decides only at a tick boundary ``t`` and only from the other
side's audio before ``t``, but what it decides may start or stop its own audio on any frame at
or after ``t`` (an answer that starts 0.46 s after the tick because its model's first token
comes then), so events are timed to the frame, never rounded to the tick.

Event stepping: each side says the earliest frame at which it could act differently
(``next_wake``), and the clock jumps to the first tick boundary at or after the earliest of
them. A silent stretch, or a side's own speech with nothing to react to, costs one step, not one
per tick. The timeline is the same as stepping every tick (tests/voice/test_duplex_session.py
runs both and compares). The clock is simulated: nothing here reads the wall clock, so a
timeline depends on seeds and model outputs only; :class:`ComputeLedger` records the compute
each step spent, apart.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.voice.duplex.segments import FRAME_S

__all__ = ["FRAME_MS", "MAX_TICK_MS", "MIN_TICK_MS", "NEVER", "Clock", "ClockSettings", "ComputeLedger", "frames_of"]

FRAME_MS: Final = round(FRAME_S * 1000)  # 20
MIN_TICK_MS: Final = 20
MAX_TICK_MS: Final = 1000
NEVER: Final = math.inf  # a side with nothing to do until the other side acts


def frames_of(ms: float) -> int:
    """Milliseconds as whole frames, rounded up (a declared 150 ms delay takes 8 frames, 160 ms:
    an event never happens before its declared time)."""
    return max(0, math.ceil(round(ms / FRAME_MS, 9)))


class ClockSettings(BaseModel):
    """The duplex clock: the tick and the longest a conversation may run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tick_ms: int = Field(200, description="Tick length, ms: both sides decide once a tick, on what the other "
                         "said up to it (τ-Voice: 200). 20-1000, a whole number of 20 ms frames.")
    max_duration_s: float = Field(600.0, gt=0.0, le=7200.0, description="The call ends here if nobody hung up, "
                                  "seconds of simulated time.")

    @field_validator("tick_ms")
    @classmethod
    def _tick_in_range(cls, value: int) -> int:
        if not MIN_TICK_MS <= value <= MAX_TICK_MS:
            raise ValueError(f"tick must be {MIN_TICK_MS}-{MAX_TICK_MS} ms")
        if value % FRAME_MS:
            raise ValueError(f"tick must be a whole number of {FRAME_MS} ms audio frames")
        return value

    @property
    def tick_frames(self) -> int:
        return self.tick_ms // FRAME_MS

    @property
    def max_frames(self) -> int:
        return round(self.max_duration_s / FRAME_S)


class Clock:
    """The simulated clock of one conversation: where it is (a frame on the tick grid), and how
    many steps it took against how many ticks it covered."""

    def __init__(self, settings: ClockSettings) -> None:
        self.settings = settings
        self.tick = settings.tick_frames
        self.now = 0
        self.steps = 0  # tick boundaries the loop visited
        self.stepped_every_tick = False

    def boundary_at_or_after(self, frame: float) -> int:
        """The first tick boundary at or after ``frame``, never before the next tick."""
        if frame == NEVER:
            return self.settings.max_frames
        target = max(self.now + self.tick, math.ceil(frame / self.tick) * self.tick)
        return min(target, self.settings.max_frames)

    def advance(self, wake: float, *, every_tick: bool = False) -> int:
        """Move to the next boundary a side may act at (``wake``: the earliest frame any side could
        act differently); with ``every_tick``, to the next tick whatever ``wake`` says (the
        reference the event stepping is tested against)."""
        self.now = min(self.now + self.tick, self.settings.max_frames) if every_tick \
            else self.boundary_at_or_after(wake)
        self.steps += 1
        return self.now

    @property
    def ticks(self) -> int:
        """Ticks the conversation has covered so far."""
        return self.now // self.tick


class ComputeLedger:
    """Compute time spent per component (synthesis, recognition, VAD, the models), wall-clock
    seconds, kept apart from the simulated timeline: it says what the run cost, never when
    anything happened in the conversation."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    @contextmanager
    def timed(self, component: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[component] = self.seconds.get(component, 0.0) + time.perf_counter() - started
            self.calls[component] = self.calls.get(component, 0) + 1

    def total(self) -> float:
        return sum(self.seconds.values())
