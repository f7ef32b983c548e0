"""τ-Voice's interaction metrics over a duplex conversation's timeline of segments, each with the
count of events behind it.

The panel (τ-Voice's symbols): response latency L_R and response rate R_R (did the agent answer a
caller's turn before the caller had to speak again, and how fast), yield latency L_Y and yield rate
R_Y (did the agent stop when the caller spoke over it, within 2 s), agent interruption rate I_A
(agent onsets over a caller's turn, per response-eligible turn), and selectivity for backchannels
S_BC, vocal tics S_VT and non-directed (out-of-turn) speech S_ND (the share the agent correctly
did not treat as a turn). docs/duplex-metrics.md gives every definition, where it comes from
(τ-Voice's paper and tau2-bench's ``voice_interaction_metrics.py``) and where tauray departs from
it and why. The implementation is ours.

Everything is counted in 20 ms audio frames (``segments.FRAME_S``), never in ticks: a window
of 1 s is 50 frames, and a latency is a whole number of frames. A value computed from no events
is None with count 0; a value over fewer than :data:`MIN_EVENTS` events is kept but displayed as
such (:meth:`Measure.display`). Pure functions: tests call them on hand-built timelines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.voice.duplex.segments import Segment, SegmentKind, from_frames, on_frame, timeline, to_frame

__all__ = [
    "DEFAULT_WINDOWS",
    "METRICS_VERSION",
    "MIN_EVENTS",
    "PANEL",
    "EventCategory",
    "EventOutcome",
    "InteractionEvent",
    "InteractionMetrics",
    "InteractionWindows",
    "Measure",
    "interaction_events",
    "interaction_metrics",
    "pool",
    "summarize",
]

METRICS_VERSION: Final = "1"  # bump when a definition below changes (stored numbers then differ)
MIN_EVENTS: Final = 10  # τ-Voice's leaderboard hides a rate behind fewer events; we show it, marked

EventCategory = Literal["response", "yield", "agent_interruption", "backchannel", "vocal_tic", "non_directed"]
EventOutcome = Literal["response", "no_response", "yield", "no_yield", "interruption", "correct", "error"]

# A caller segment that is not a turn, and the selectivity category it is scored under.
_SELECTIVITY: Final[dict[SegmentKind, EventCategory]] = {
    "backchannel": "backchannel", "vocal_tic": "vocal_tic", "out_of_turn": "non_directed"}


class InteractionWindows(BaseModel):
    """Detection windows, seconds (τ-Voice's defaults; snapped to 20 ms frames)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    no_yield_s: float = Field(2.0, gt=0.0, description="An agent that stops less than this after a caller's turn "
                              "began over it yielded; one that talks on this long did not.")
    backchannel_yield_s: float = Field(1.0, gt=0.0, description="An agent that stops less than this after a "
                                       "backchannel began yielded to it (an error).")
    vocal_tic_yield_s: float = Field(1.0, gt=0.0, description="Likewise after a vocal tic over the agent's speech.")
    non_directed_yield_s: float = Field(1.0, gt=0.0, description="Likewise after out-of-turn speech over the "
                                        "agent's speech.")
    vocal_tic_response_s: float = Field(2.0, gt=0.0, description="An agent that starts speaking no later than this "
                                        "after a vocal tic in silence ended responded to it (an error).")
    non_directed_response_s: float = Field(2.0, gt=0.0, description="Likewise after out-of-turn speech in silence.")

    @field_validator("*")
    @classmethod
    def _snap_to_frame(cls, value: float) -> float:
        return on_frame(value)

    def yield_frames(self, category: EventCategory) -> int:
        """The yield window of a selectivity category, frames."""
        seconds = {"backchannel": self.backchannel_yield_s, "vocal_tic": self.vocal_tic_yield_s,
                   "non_directed": self.non_directed_yield_s}[category]
        return to_frame(seconds)

    def response_frames(self, category: EventCategory) -> int:
        """The response window of a selectivity category heard in silence, frames."""
        seconds = {"vocal_tic": self.vocal_tic_response_s, "non_directed": self.non_directed_response_s}[category]
        return to_frame(seconds)


DEFAULT_WINDOWS: Final = InteractionWindows()


class InteractionEvent(BaseModel):
    """One scored opportunity on the timeline, and what the agent did with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: EventCategory = Field(description="Which metric the event counts towards.")
    outcome: EventOutcome = Field(description="response/no_response, yield/no_yield, interruption (an agent onset "
                                  "over a caller turn), correct/error (selectivity).")
    at_s: float = Field(description="When: the caller turn's end (response), the caller's onset (yield, "
                        "selectivity), the agent's onset (agent_interruption), seconds.")
    latency_s: float | None = Field(None, description="Response latency (turn end to agent onset) or yield "
                                    "latency (caller onset to the agent's audio stopping); None otherwise.")
    segment: int = Field(ge=0, description="Timeline index of the segment behind the event (a turn's first "
                         "segment; for agent_interruption, the agent's segment).")


class Measure(BaseModel):
    """One metric: its value (None when no event backs it) and the count of events behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float | None = Field(description="The metric; None when n is 0.")
    n: int = Field(ge=0, description="Events behind the value (the denominator of a rate; the latencies averaged).")

    def shown(self, min_events: int = MIN_EVENTS) -> bool:
        """Whether the value stands on enough events to be read without a caveat."""
        return self.value is not None and self.n >= min_events

    def display(self, unit: str = "", digits: int = 2, min_events: int = MIN_EVENTS) -> str:
        """'0.83 (n=12)', '0.50 (n=4 < 10)' for a value over too few events, 'n/a (n=0)'."""
        if self.value is None:
            return f"n/a (n={self.n})"
        count = f"n={self.n}" + (f" < {min_events}" if self.n < min_events else "")
        return f"{self.value:.{digits}f}{unit} ({count})"


# The panel in τ-Voice's order: field, symbol, unit, whether higher is better.
PANEL: Final[tuple[tuple[str, str, str, bool], ...]] = (
    ("response_latency_s", "L_R", " s", False),
    ("yield_latency_s", "L_Y", " s", False),
    ("response_rate", "R_R", "", True),
    ("yield_rate", "R_Y", "", True),
    ("agent_interruption_rate", "I_A", "", False),
    ("selectivity_backchannel", "S_BC", "", True),
    ("selectivity_vocal_tic", "S_VT", "", True),
    ("selectivity_non_directed", "S_ND", "", True),
)


def _count_column(name: str) -> str:
    return f"{name.removesuffix('_s')}_n"


class InteractionMetrics(BaseModel):
    """τ-Voice's interaction panel for one conversation (or pooled over many), each metric with the
    count of events behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response_latency_s: Measure = Field(description="L_R: mean seconds from a caller turn's end to the agent's "
                                        "next onset, over the turns answered (n = responses).")
    yield_latency_s: Measure = Field(description="L_Y: mean seconds from a caller's onset over the agent to the "
                                     "agent's audio stopping, over the yields (n = yields).")
    response_rate: Measure = Field(description="R_R: share of response-eligible caller turns the agent answered "
                                   "before the caller spoke again (n = eligible turns that had a sequel).")
    yield_rate: Measure = Field(description="R_Y: share of caller turns begun over the agent after which the agent "
                                "stopped within the no-yield window (n = such turns).")
    agent_interruption_rate: Measure = Field(description="I_A: agent onsets over a caller turn per "
                                             "response-eligible turn (n = the turns, as R_R); may exceed 1.")
    agent_interruptions: int = Field(ge=0, description="Agent onsets over a caller turn (I_A's numerator).")
    selectivity_backchannel: Measure = Field(description="S_BC: share of backchannels over the agent's speech that "
                                             "the agent talked through (n = such backchannels).")
    selectivity_vocal_tic: Measure = Field(description="S_VT: share of vocal tics the agent neither yielded nor "
                                           "responded to (n = tics scored).")
    selectivity_non_directed: Measure = Field(description="S_ND: share of out-of-turn speech the agent neither "
                                              "yielded nor responded to (n = events scored).")

    def selectivity(self, min_events: int = MIN_EVENTS) -> float | None:
        """τ-Voice's Selectivity column: the unweighted mean of S_BC, S_VT and S_ND, only when all
        three stand on at least ``min_events`` events (a partial mean would not compare)."""
        parts = (self.selectivity_backchannel, self.selectivity_vocal_tic, self.selectivity_non_directed)
        if not all(part.shown(min_events) for part in parts):
            return None
        return sum(part.value for part in parts if part.value is not None) / 3

    def panel(self, min_events: int = MIN_EVENTS) -> dict[str, str]:
        """The panel as display strings keyed by τ-Voice's symbols ('L_R': '0.80 s (n=3 < 10)')."""
        return {symbol: getattr(self, name).display(unit, min_events=min_events) for name, symbol, unit, _ in PANEL}

    def columns(self, prefix: str = "") -> dict[str, float | int | None]:
        """Flat columns for a table row: each metric's value under its name and its count under
        ``<name>_n`` (``response_latency_s`` / ``response_latency_n``), and ``agent_interruptions``."""
        out: dict[str, float | int | None] = {}
        for name, *_ in PANEL:
            measure: Measure = getattr(self, name)
            out[prefix + name] = measure.value
            out[prefix + _count_column(name)] = measure.n
        out[prefix + "agent_interruptions"] = self.agent_interruptions
        return out

    @classmethod
    def from_columns(cls, row: Mapping[str, Any], prefix: str = "") -> InteractionMetrics:
        """The metrics back from :meth:`columns` (a table row, a dict)."""
        def value(key: str) -> Any:
            got = row[prefix + key]
            return None if got is None or math.isnan(got) else got  # NaN (pandas' missing float) -> None

        fields: dict[str, Any] = {name: Measure(value=value(name), n=int(row[prefix + _count_column(name)]))
                                  for name, *_ in PANEL}
        return cls(**fields, agent_interruptions=int(row[prefix + "agent_interruptions"]))


# ---------------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Span:
    """A stretch on the timeline in frames (end exclusive), and the index of its first segment."""

    start: int
    end: int
    index: int


def _agent_speech(segments: Sequence[Segment]) -> list[_Span]:
    # The agent speaking, as listened to: segments that touch are one stretch of speech (the
    # agent did not stop between them), so stopping means a frame of silence.
    spans: list[_Span] = []
    for segment in segments:
        start, end = segment.frames
        if spans and spans[-1].end == start:
            spans[-1] = _Span(spans[-1].start, end, spans[-1].index)
        else:
            spans.append(_Span(start, end, segment.index))
    return spans


def _caller_turns(segments: Sequence[Segment]) -> tuple[list[_Span], list[Segment]]:
    """The caller's turns, and the caller's segments that are not part of a turn.

    A turn is a run of caller speech and vocal-tic segments each starting where the previous
    ended, with at least one speech segment in it: a tic said inside or at the edge of a turn is
    part of the turn (the agent reacts to the turn's words). Backchannels, out-of-turn speech and
    tics standing apart are not turns; they are scored for selectivity."""
    turns: list[_Span] = []
    apart: list[Segment] = []
    run: list[Segment] = []

    def close() -> None:
        if any(s.kind == "speech" for s in run):
            turns.append(_Span(run[0].frames[0], run[-1].frames[1], run[0].index))
        else:
            apart.extend(run)
        run.clear()

    for segment in segments:
        if segment.kind in ("speech", "vocal_tic"):
            if run and run[-1].frames[1] != segment.frames[0]:
                close()
            run.append(segment)
        else:
            close()
            apart.append(segment)
    close()
    apart.sort(key=lambda s: s.index)
    return turns, apart


def _speaking(spans: Sequence[_Span], frame: int) -> _Span | None:
    return next((span for span in spans if span.start <= frame < span.end), None)


def _next_onset(spans: Sequence[_Span], frame: int) -> _Span | None:
    return next((span for span in spans if span.start >= frame), None)


def _turn_begins(turns: Sequence[_Span], after: int, before: int) -> bool:
    # A caller turn began strictly between two instants: what the agent did at `before` is then
    # taken as its reaction to that turn, not to an earlier backchannel, tic or aside.
    return any(after < turn.start < before for turn in turns)


def interaction_events(segments: Iterable[Segment],
                       windows: InteractionWindows = DEFAULT_WINDOWS) -> list[InteractionEvent]:
    """Every scored opportunity on a conversation's timeline (docs/duplex-metrics.md), in time
    order: responses, yields, agent interruptions and selectivity events.

    Raises ValueError on an inconsistent timeline (see :func:`~.segments.timeline`)."""
    ordered = timeline(segments)
    agent = _agent_speech([s for s in ordered if s.side == "agent"])
    turns, apart = _caller_turns([s for s in ordered if s.side == "user"])
    events: list[InteractionEvent] = []

    def add(category: EventCategory, outcome: EventOutcome, at: int, index: int, latency: int | None = None) -> None:
        events.append(InteractionEvent(category=category, outcome=outcome, at_s=from_frames(at), segment=index,
                                       latency_s=None if latency is None else from_frames(latency)))

    # Responses: a turn the agent was not still talking over when it ended is owed an answer; it
    # got one when the agent's next onset comes no later than the caller's next such turn.
    eligible = [turn for turn in turns if not any(a.start < turn.end < a.end for a in agent)]
    for i, turn in enumerate(eligible):
        onset = _next_onset(agent, turn.end)
        again = next((later for later in eligible[i + 1:] if later.start >= turn.end), None)
        if onset is not None and (again is None or onset.start <= again.start):
            add("response", "response", turn.end, turn.index, onset.start - turn.end)
        elif again is not None:
            add("response", "no_response", turn.end, turn.index)
        # else: the call ended after this turn with nothing more said; not scored.

    # Yields: a caller turn begun over the agent's speech (the agent started strictly earlier:
    # equal onsets are a collision, neither side's interruption).
    for turn in turns:
        over = next((a for a in agent if a.start < turn.start < a.end), None)
        if over is not None:
            took = over.end - turn.start
            if took < to_frame(windows.no_yield_s):
                add("yield", "yield", turn.start, turn.index, took)
            else:
                add("yield", "no_yield", turn.start, turn.index)

    # Agent interruptions: an agent onset strictly inside a caller turn.
    for span in agent:
        if any(turn.start < span.start < turn.end for turn in turns):
            add("agent_interruption", "interruption", span.start, span.index)

    # Selectivity: what the agent did with a caller sound that is not a turn.
    for segment in apart:
        category = _SELECTIVITY[segment.kind]
        start, end = segment.frames
        over = _speaking(agent, start)
        if over is not None:
            stopped = over.end - start < windows.yield_frames(category)
            error = stopped and not _turn_begins(turns, start, over.end)
        elif category == "backchannel":
            continue  # a backchannel into silence: τ-Voice scores backchannels over speech only
        else:
            onset = _next_onset(agent, start)
            responded = onset is not None and onset.start <= end + windows.response_frames(category)
            error = responded and onset is not None and not _turn_begins(turns, start, onset.start)
        add(category, "error" if error else "correct", start, segment.index)

    order = {category: i for i, category in enumerate(("response", "yield", "agent_interruption", "backchannel",
                                                       "vocal_tic", "non_directed"))}
    events.sort(key=lambda e: (e.at_s, order[e.category], e.segment))
    return events


# ---------------------------------------------------------------------------------------------
# The panel
# ---------------------------------------------------------------------------------------------

def _mean_latency(events: Sequence[InteractionEvent]) -> Measure:
    frames = [to_frame(e.latency_s) for e in events if e.latency_s is not None]
    return Measure(value=from_frames(sum(frames)) / len(frames) if frames else None, n=len(frames))


def _rate(hits: int, total: int) -> Measure:
    return Measure(value=hits / total if total else None, n=total)


def summarize(events: Iterable[InteractionEvent]) -> InteractionMetrics:
    """The panel from events, of one conversation or pooled over many (τ-Voice pools the events of
    every conversation of an experiment, then takes rates and means)."""
    events = list(events)

    def of(category: EventCategory, outcome: EventOutcome | None = None) -> list[InteractionEvent]:
        return [e for e in events if e.category == category and (outcome is None or e.outcome == outcome)]

    responses, yields = of("response"), of("yield")
    answered, yielded = of("response", "response"), of("yield", "yield")
    interruptions = len(of("agent_interruption"))

    def selectivity(category: EventCategory) -> Measure:
        return _rate(len(of(category, "correct")), len(of(category)))

    return InteractionMetrics(
        response_latency_s=_mean_latency(answered),
        yield_latency_s=_mean_latency(yielded),
        response_rate=_rate(len(answered), len(responses)),
        yield_rate=_rate(len(yielded), len(yields)),
        agent_interruption_rate=Measure(value=interruptions / len(responses) if responses else None,
                                        n=len(responses)),
        agent_interruptions=interruptions,
        selectivity_backchannel=selectivity("backchannel"),
        selectivity_vocal_tic=selectivity("vocal_tic"),
        selectivity_non_directed=selectivity("non_directed"),
    )


def interaction_metrics(segments: Iterable[Segment],
                        windows: InteractionWindows = DEFAULT_WINDOWS) -> InteractionMetrics:
    """The interaction panel of one conversation's timeline."""
    return summarize(interaction_events(segments, windows))


def pool(panels: Iterable[InteractionMetrics]) -> InteractionMetrics:
    """Panels of several conversations pooled as if their events had been summarized together
    (what a cell's panel is): counts add, and each value is recovered as numerator over count
    (a rate's hits, a latency's sum of whole frames), so pooling stored rows loses nothing."""
    panels = list(panels)

    def hits(measure: Measure) -> int:
        return round(measure.value * measure.n) if measure.value is not None else 0

    def frames(measure: Measure) -> int:
        return to_frame(measure.value * measure.n) if measure.value is not None else 0

    def pooled_rate(name: str) -> Measure:
        return _rate(sum(hits(getattr(p, name)) for p in panels), sum(getattr(p, name).n for p in panels))

    def pooled_latency(name: str) -> Measure:
        n = sum(getattr(p, name).n for p in panels)
        total = sum(frames(getattr(p, name)) for p in panels)
        return Measure(value=from_frames(total) / n if n else None, n=n)

    turns = sum(p.agent_interruption_rate.n for p in panels)
    interruptions = sum(p.agent_interruptions for p in panels)
    return InteractionMetrics(
        response_latency_s=pooled_latency("response_latency_s"),
        yield_latency_s=pooled_latency("yield_latency_s"),
        response_rate=pooled_rate("response_rate"),
        yield_rate=pooled_rate("yield_rate"),
        agent_interruption_rate=Measure(value=interruptions / turns if turns else None, n=turns),
        agent_interruptions=interruptions,
        selectivity_backchannel=pooled_rate("selectivity_backchannel"),
        selectivity_vocal_tic=pooled_rate("selectivity_vocal_tic"),
        selectivity_non_directed=pooled_rate("selectivity_non_directed"),
    )
