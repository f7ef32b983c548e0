"""The segment record: one stretch of one side's speech on a duplex conversation's simulated clock,
one row of the ``segments`` table (``tauray/actors/voice/duplex`` builds it: session.py and
segments.py ``timeline``), and the frame resolution every time on that clock is held at."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauray.results.tables.records.columns import ATTEMPT_DOC, UNIT_ID_DOC, Attempt, Count, Side, UnitId

__all__ = ["FRAME_S", "SEGMENT_KINDS", "Segment", "SegmentKind", "from_frames", "on_frame", "to_frame"]

FRAME_S: Final = 0.02  # one audio frame (20 ms): the resolution of every time on the clock
SegmentKind = Literal["speech", "backchannel", "vocal_tic", "out_of_turn"]
SEGMENT_KINDS: Final[tuple[SegmentKind, ...]] = ("speech", "backchannel", "vocal_tic", "out_of_turn")


def to_frame(seconds: float) -> int:
    """The audio frame nearest ``seconds`` (frame 0 starts the call)."""
    return round(seconds / FRAME_S)


def from_frames(frames: int) -> float:
    """Seconds at the start of frame ``frames``, written the one way every time is written
    (two decimals), so equal instants compare equal as floats."""
    return round(frames * FRAME_S, 2)


def on_frame(seconds: float) -> float:
    """``seconds`` snapped to the nearest audio frame."""
    return from_frames(to_frame(seconds))


class Segment(BaseModel):
    """One stretch of one side's speech on a duplex conversation's clock: when, what kind, how it
    overlapped the other side, whether it was cut short, and what was said and heard."""

    # The row config of the result tables (frozen, no unknown columns).
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field("", description="Run the segment belongs to (stamped when the conversation's rows are "
                        "built; the readers join on it).")
    unit_id: UnitId = Field(description=UNIT_ID_DOC)
    attempt: Attempt = Field(default=0, description=ATTEMPT_DOC)
    index: Count = Field(0, description="Position on the conversation's timeline (segments ordered by start, then "
                         "end, then side; numbered by tauray/actors/voice/duplex/segments.py timeline()).")
    side: Side = Field(description="Who spoke: 'agent' or 'user' (the caller).")
    kind: SegmentKind = Field(description="'speech' (a turn or part of one), 'backchannel' (\"mm-hmm\" while the "
                              "other side talks), 'vocal_tic' (a cough, \"um\") or 'out_of_turn' (speech not meant "
                              "for the other side, \"hold on\").")
    start_s: float = Field(ge=0.0, description="Start on the conversation's simulated clock, seconds, at 20 ms "
                           "(audio-frame) resolution, never rounded to the tick.")
    end_s: float = Field(ge=0.0, description="End on the simulated clock (when the side's audio stopped), seconds, "
                         "20 ms resolution; after start_s.")
    cut_at_s: float | None = Field(None, description="When the speaker was cut short: the agent's barge-in "
                                   "triggered, or the caller chose to yield; its audio stops at end_s, later by "
                                   "whatever was already on its way. Null when the segment ran to its end.")
    overlap_s: float = Field(0.0, ge=0.0, description="Seconds of the segment during which the other side also "
                             "spoke (any kind).")
    started_over_other: bool = Field(False, description="It began while the other side was already speaking (a "
                                     "barge-in, a backchannel, a tic over the other's speech).")
    interrupted: bool = Field(False, description="The other side began speaking while it was under way (whatever "
                              "the other side said: a turn, a backchannel, a tic).")
    words_spoken: Count = Field(0, description="Words actually said (up to the cut, when cut).")
    words_cut: Count = Field(0, description="Words the speaker meant to say in this segment but did not (cut off).")
    text: str = Field("", description="What the speaker said (up to the cut); for a vocal tic its transcription "
                      "('<cough>', 'um').")
    heard_text: str = Field("", description="What the other side's recogniser made of it: the text the listener "
                            "got ('' when nothing was recognised).")

    @field_validator("start_s", "end_s", "cut_at_s", "overlap_s")
    @classmethod
    def _snap_to_frame(cls, value: float | None) -> float | None:
        # One resolution for every time, so the metrics count frames, never compare floats.
        return None if value is None else on_frame(value)

    @model_validator(mode="after")
    def _times_in_order(self) -> Segment:
        if self.end_s <= self.start_s:
            raise ValueError(f"{self.side} segment ends at {self.end_s} s, not after its start {self.start_s} s")
        if self.cut_at_s is not None and not self.start_s <= self.cut_at_s <= self.end_s:
            raise ValueError(f"cut_at_s {self.cut_at_s} s is outside its segment [{self.start_s}, {self.end_s}] s")
        if self.overlap_s > round(self.end_s - self.start_s, 2):
            raise ValueError(f"overlap_s {self.overlap_s} s is longer than the segment")
        return self

    @property
    def yielded(self) -> bool:
        """The speaker stopped before finishing what it meant to say."""
        return self.cut_at_s is not None

    @property
    def frames(self) -> tuple[int, int]:
        """Start and end as audio frames (end exclusive)."""
        return to_frame(self.start_s), to_frame(self.end_s)
