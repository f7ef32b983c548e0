"""Segments: one stretch of one side's speech on a duplex conversation's clock, the row of the
``segments`` table, and the Audacity label track that lays a conversation's segments over its
stereo recording.

A segment is what one side said without a break, with one kind: ``speech`` (a turn, or part of
one), ``backchannel`` ("mm-hmm" while the other talks), ``vocal_tic`` (a cough, "um") or
``out_of_turn`` (speech not meant for the other side: "hold on, honey"). Times are seconds on the
conversation's simulated clock, held at audio-frame resolution (20 ms, :data:`FRAME_S`: a time off
the frame grid is snapped to the nearest frame) and never rounded to the clock's tick, so a
segment may start or stop on any frame.
A side says one thing at a time, so two segments of one side never overlap (they may touch).

What the timeline says about overlap (how much of a segment the other side spoke over, whether it
began over the other side, whether the other side began over it) is derived, not declared:
:func:`timeline` computes it, so every producer gets the same answer. What only the speaker knows
(it stopped short, and when it was told to) the producer declares in ``cut_at_s``.

The label track is Audacity's label file format (the manual's "Importing and Exporting Labels"):
one label per line, start seconds, end seconds and the label text separated by tabs; a point
label has start equal to end. Audacity writes six decimals; lines of its extended format that
start with a backslash carry a label's frequency range and are skipped when reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from tauray.results.tables.records.columns import Side
from tauray.results.tables.records.segment import (
    FRAME_S,
    SEGMENT_KINDS,
    Segment,
    SegmentKind,
    from_frames,
    on_frame,
    to_frame,
)

if TYPE_CHECKING:
    from tauray.actors.voice.duplex.metrics import InteractionEvent

__all__ = [
    "FRAME_S",
    "SEGMENT_KINDS",
    "Segment",
    "SegmentKind",
    "TrackLabel",
    "from_frames",
    "label_track",
    "on_frame",
    "parse_label_track",
    "timeline",
    "to_frame",
]


def _order(segment: Segment) -> tuple[float, float, str]:
    return segment.start_s, segment.end_s, segment.side


def timeline(segments: Iterable[Segment]) -> list[Segment]:
    """A conversation's segments in timeline order, numbered, with their overlap columns computed
    from the timeline (``overlap_s``, ``started_over_other``, ``interrupted``).

    Raises ValueError when two segments of one side overlap (a side says one thing at a time) or
    the segments come from more than one conversation (run, unit and attempt differ)."""
    ordered = sorted(segments, key=_order)
    keys = {(s.run_id, s.unit_id, s.attempt) for s in ordered}
    if len(keys) > 1:
        raise ValueError(f"segments of {len(keys)} conversations in one timeline: {sorted(keys)}")
    by_side: dict[str, list[Segment]] = {"agent": [], "user": []}
    for segment in ordered:
        mine = by_side[segment.side]
        if mine and mine[-1].frames[1] > segment.frames[0]:
            prev = mine[-1]
            raise ValueError(f"two {segment.side} segments overlap: [{prev.start_s}, {prev.end_s}] s "
                             f"({prev.kind}) and [{segment.start_s}, {segment.end_s}] s ({segment.kind})")
        mine.append(segment)
    out = []
    for index, segment in enumerate(ordered):
        start, end = segment.frames
        other = [s.frames for s in by_side["user" if segment.side == "agent" else "agent"]]
        overlap = sum(max(0, min(end, o_end) - max(start, o_start)) for o_start, o_end in other)
        out.append(segment.model_copy(update={
            "index": index,
            "overlap_s": from_frames(overlap),
            # Strictly inside: two sides starting on the same frame is a collision, not one
            # speaking over the other.
            "started_over_other": any(o_start < start < o_end for o_start, o_end in other),
            "interrupted": any(start < o_start < end for o_start, _ in other),
        }))
    return out


# ---------------------------------------------------------------------------------------------
# The Audacity label track
# ---------------------------------------------------------------------------------------------

_SEGMENT_LABEL = re.compile(r"^(agent|user) (speech|backchannel|vocal_tic|out_of_turn)(?: \[([^\]]*)\])?:(?: (.*))?$",
                            re.DOTALL)
_EVENT_LABEL = re.compile(r"^event ([a-z_]+): ([a-z_]+)(?: (\d+\.\d+) s)?$")
_CUT_FLAG = re.compile(r"^cut@(\d+\.\d+)$")


class TrackLabel(BaseModel):
    """One label read back from a label track: its times and text, and what the text says (a
    segment's side, kind, flags and words, or an interaction event)."""

    model_config = ConfigDict(frozen=True)

    start_s: float = Field(description="Start, seconds.")
    end_s: float = Field(description="End, seconds (equal to start_s for a point label).")
    label: str = Field(description="The label's text as written.")
    side: Side | None = Field(None, description="Side of a segment label; None for other labels.")
    kind: SegmentKind | None = Field(None, description="Kind of a segment label.")
    started_over_other: bool = Field(False, description="A segment label flagged 'over'.")
    interrupted: bool = Field(False, description="A segment label flagged 'interrupted'.")
    cut_at_s: float | None = Field(None, description="A segment label's 'cut@' time.")
    text: str = Field("", description="A segment label's words.")
    event: str | None = Field(None, description="Category of an event label (response, yield, ...).")
    outcome: str | None = Field(None, description="Outcome of an event label (response, no_yield, error, ...).")
    latency_s: float | None = Field(None, description="Latency an event label carries, seconds.")


def _one_line(text: str) -> str:
    # A label is the rest of one line: tabs and line breaks inside it would start new fields/labels.
    return " ".join(text.replace("\t", " ").splitlines())


def _segment_label(segment: Segment) -> str:
    flags = [flag for flag, on in (("over", segment.started_over_other), ("interrupted", segment.interrupted)) if on]
    if segment.cut_at_s is not None:
        flags.append(f"cut@{segment.cut_at_s:.2f}")
    tag = f" [{', '.join(flags)}]" if flags else ""
    text = _one_line(segment.text)
    return f"{segment.side} {segment.kind}{tag}:" + (f" {text}" if text else "")


def _event_label(event: InteractionEvent) -> str:
    latency = f" {event.latency_s:.2f} s" if event.latency_s is not None else ""
    return f"event {event.category}: {event.outcome}{latency}"


def label_track(segments: Iterable[Segment], events: Sequence[InteractionEvent] = (), *,
                side: Side | None = None) -> str:
    """Audacity's label file for a conversation: one region label per segment ("user backchannel:
    mm-hmm", "agent speech [interrupted, cut@3.40]: Let me check"), and a point label per
    interaction event when ``events`` are given ("event yield: yield 0.60 s"); only one side's
    segments when ``side`` is given. Import it into Audacity over the recording (File > Import >
    Labels)."""
    rows: list[tuple[float, int, float, str]] = []
    for segment in timeline(segments):
        if side is None or segment.side == side:
            rows.append((segment.start_s, 0, segment.end_s, _segment_label(segment)))
    for event in events:
        rows.append((event.at_s, 1, event.at_s, _event_label(event)))
    rows.sort(key=lambda row: row[:3])
    return "".join(f"{start:.6f}\t{end:.6f}\t{label}\n" for start, _, end, label in rows)


def _parse_label(start: float, end: float, label: str) -> TrackLabel:
    if match := _EVENT_LABEL.match(label):
        category, outcome, latency = match.groups()
        return TrackLabel(start_s=start, end_s=end, label=label, event=category, outcome=outcome,
                          latency_s=float(latency) if latency else None)
    if match := _SEGMENT_LABEL.match(label):
        side, kind, flags, text = match.groups()
        found = {"over": False, "interrupted": False}
        cut = None
        for flag in (f.strip() for f in (flags or "").split(",") if f.strip()):
            if cut_match := _CUT_FLAG.match(flag):
                cut = float(cut_match.group(1))
            elif flag in found:
                found[flag] = True
            else:
                raise ValueError(f"unknown segment flag {flag!r} in label {label!r}")
        return TrackLabel(start_s=start, end_s=end, label=label, side=side, kind=kind,
                          started_over_other=found["over"], interrupted=found["interrupted"], cut_at_s=cut,
                          text=text or "")
    return TrackLabel(start_s=start, end_s=end, label=label)


def parse_label_track(text: str) -> list[TrackLabel]:
    """Labels of an Audacity label file, in file order: segment and event labels as
    :func:`label_track` writes them are read back into their parts; any other label keeps its
    text only. Frequency lines (a leading backslash) and blank lines are skipped.

    Raises ValueError on a line that is not start, tab, end (tab, label)."""
    labels = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("\\"):
            continue
        fields = line.split("\t", 2)
        try:
            start, end = float(fields[0]), float(fields[1])
        except (IndexError, ValueError):
            raise ValueError(f"label line {number} is not 'start<TAB>end<TAB>label': {line[:80]!r}") from None
        labels.append(_parse_label(start, end, fields[2] if len(fields) > 2 else ""))
    return labels
