"""One duplex conversation with a live phone bot as the agent, on the wall clock.

The caller is tauray's duplex caller (:class:`~tauray.actors.voice.duplex.caller.DuplexCaller`:
the same policy, rules, voice, engines and source effects as :func:`run_duplex`); the agent is a
bot reached with :meth:`PhoneCall.dial <.phone.PhoneCall.dial>`, read into a stream by
:class:`~.bot_stream.PhoneAgent`. The simulated frame index is the call's frame index, and the
loop visits every tick: tick ``t`` is acted on once the call has played the frames before it.

* **Off the pacing loop.** The caller's tick (its policy, synthesis, recognition) runs on a
  thread of its own with its own event loop; the call's frames keep going out meanwhile. An async
  policy therefore runs on that loop (bridge it to another loop as ``actors/duplex_call.py`` does).
* **The line matches the stream.** The caller's new chunks go out at the frames its stream
  says (:meth:`PhoneCall.place_ulaw <.phone.PhoneCall.place_ulaw>`). Compute is real time here:
  a chunk whose frame has already gone out (its synthesis took that long) starts at the next
  frame not yet sent, and its chunk moves there. A yield cuts the queued audio
  (:meth:`PhoneCall.cut_caller <.phone.PhoneCall.cut_caller>`); frames already sent stay in
  the stream. The result counts the moves and how late each tick was acted on.
* **Ending.** The caller hangs up by its own logic; the bot may hang up; a
  :class:`~.errors.CallFault` ends the call and is recorded (``infra`` for ``unreachable`` and
  ``harness_late``), as is a dial that fails. Every wait is bounded: a frame that does not come
  and a caller's tick over ``step_timeout_s`` are the harness's faults (``harness_late``).

After the call, the segments, panel and label track come from the two streams as for any
duplex call (:func:`~tauray.actors.voice.duplex.session.conclude`); the recording is the call's
own two lines (caller left, bot right). The bot's recogniser is not known: the caller's
segments have no ``heard_text``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.voice.duplex.caller import CallerRules, DecisionHook, DuplexCaller, SourceEffects
from tauray.actors.voice.duplex.clock import Clock, ClockSettings, ComputeLedger
from tauray.actors.voice.duplex.errors import DuplexConfigError, load_settings
from tauray.actors.voice.duplex.metrics import InteractionEvent, InteractionMetrics
from tauray.actors.voice.duplex.segments import Segment, from_frames, label_track
from tauray.actors.voice.duplex.session import (
    Concluded,
    Remembered,
    caller_end_reason,
    conclude,
    default_voice,
    segments_sha256,
)
from tauray.actors.voice.duplex.stream import Chunk, Stream, line_samples, to_float
from tauray.actors.voice.duplex.talk import CallerPolicy, Message
from tauray.actors.voice.line import LINE_RATE
from tauray.actors.voice.live.bot_stream import PhoneAgent, PhoneAgentSettings
from tauray.actors.voice.live.errors import INFRA_FAULTS, CallFault, FaultKind
from tauray.actors.voice.live.lateness import Lateness
from tauray.actors.voice.live.phone import CallRecord, PhoneCall, PhoneSettings, shown_url
from tauray.actors.voice.live.realtime_call import ProviderTranscript, place_transcripts
from tauray.actors.voice.live.ulaw import FRAME_BYTES, decode_samples, encode_samples
from tauray.actors.voice.profiles import DrawnVoice

__all__ = ["LiveEnd", "LiveResult", "run_live", "run_live_sync"]

LiveEnd = Literal["caller_hung_up", "caller_hung_up_on_silence", "max_duration", "bot_hung_up", "fault"]


class LiveResult(BaseModel):
    """What one duplex call to a live bot leaves: a duplex result's timeline, panel and
    recording (the same fields), and the call's own record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    unit_id: str = Field(description="The conversation's work unit.")
    attempt: int = Field(0, description="Attempt number.")
    conversation_id: str = Field(description="The id the bot was given in start's custom parameters.")
    url: str = Field(description="The bot's URL as shown (no query, no credentials).")
    rules: CallerRules = Field(description="The caller's turn-taking rules.")
    clock: ClockSettings = Field(description="The clock's settings (its tick; its longest call).")
    agent: PhoneAgentSettings = Field(description="How the bot's line was read into speech and replies.")
    segments: tuple[Segment, ...] = Field(description="The timeline (segments table rows).")
    segments_sha256: str = Field(description="sha256 of the segments' canonical JSON.")
    events: tuple[InteractionEvent, ...] = Field(description="Every scored interaction event.")
    metrics: InteractionMetrics = Field(description="τ-Voice's interaction panel with counts.")
    labels: str = Field(description="The Audacity label track (segments and events).")
    recording_sha256: str = Field(description="sha256 of the recording's FLAC bytes.")
    recording: bytes = Field(repr=False, description="Stereo 16-bit FLAC at 8 kHz of the call's lines: caller left, "
                             "bot right (no bytes when no call took place).")
    duration_s: float = Field(description="Length of the call, seconds (frames sent × 20 ms).")
    ended: LiveEnd = Field(description="Why the call ended.")
    ticks: int = Field(description="Ticks the call covered.")
    steps: int = Field(description="Ticks the loop visited (every one, on the wall clock).")
    agent_replies: int = Field(description="Replies of the bot found on its line.")
    caller_history: tuple[Message, ...] = Field(description="The caller's history at the end (what it heard).")
    caller_counts: dict[str, int] = Field(description="What the caller did: turns, yields, interruptions, ...")
    compute_s: dict[str, float] = Field(description="Wall-clock compute per component (real time on this clock).")
    compute_calls: dict[str, int] = Field(description="Calls per component.")
    ended_by: str = Field(description="'caller', 'bot', 'fault', or 'none' (the dial failed).")
    fault_kind: FaultKind | None = Field(None, description="Why the call failed, if it did.")
    fault: str | None = Field(None, description="The fault's one line, if the call failed.")
    infra: bool = Field(description="The harness, not the bot, is at fault: an infrastructure row (rerun).")
    lateness: Lateness = Field(description="The harness's frame-send lateness.")
    late: str | None = Field(None, description="Why the harness fell behind past its limit (an infra row).")
    marks_answered: tuple[str, ...] = Field((), description="The bot's marks answered, in order.")
    clears: int = Field(0, description="How many times the bot cleared its queued audio.")
    caller_moves: int = Field(0, description="Caller chunks that went out later than the caller decided (their "
                              "frame had gone by the time they were made).")
    caller_move_max_s: float = Field(0.0, description="The largest such move, seconds.")
    tick_lag_p50_s: float = Field(0.0, description="Median of how far the call had run past a tick when the "
                                  "caller's decision at that tick reached the line, seconds.")
    tick_lag_max_s: float = Field(0.0, description="The largest such lag, seconds.")
    protocol: str | None = Field(None, description="A realtime model's protocol ('openai-realtime'); None: a bot.")
    transcripts: tuple[ProviderTranscript, ...] = Field((), description="A realtime model's transcripts of the "
                                                        "caller and of itself, placed on the call.")
    usage: dict[str, int] = Field(default_factory=dict, description="A realtime model's tokens: input/output × "
                                  "text/audio, cached input.")
    provider_tool_calls: int = Field(0, description="Function calls a realtime model made.")
    truncations: int = Field(0, description="Times the caller cut a realtime model's audio (truncate sent).")


# --- the caller's stream onto the line -----------------------------------------------------------

@dataclass
class StreamChanges:
    """What one caller tick did to its stream: chunks it cut or dropped (with the end each had)
    and chunks it added (with their μ-law)."""

    cut: list[tuple[Chunk, int]]
    new: list[tuple[Chunk, bytes]]


def snapshot(stream: Stream) -> list[tuple[Chunk, int]]:
    return [(c, c.end) for c in stream.chunks]


def changes(stream: Stream, before: list[tuple[Chunk, int]]) -> StreamChanges:
    """The stream's changes since ``before`` (:func:`snapshot`); encodes the new chunks."""
    now, known = {id(c) for c in stream.chunks}, {id(c) for c, _ in before}
    cut = [(c, end) for c, end in before if id(c) not in now or c.end < end]
    new = [(c, encode_samples(c.samples)) for c in stream.chunks if id(c) not in known]
    return StreamChanges(cut, new)


def to_line(call: Any, stream: Stream, done: StreamChanges) -> list[tuple[Chunk, int]]:
    """Put a tick's changes on the line (``call``: :class:`~.phone.PhoneCall`) and move the
    stream where the line could not follow: a cut lands no earlier than the next frame not yet
    sent, a new chunk starts no earlier. Returns the chunks moved and by how many frames."""
    if done.cut:
        stop = min(c.end for c, _ in done.cut)
        silent_from = call.cut_caller(stop)
        for chunk, end in done.cut:
            if chunk.start < silent_from and chunk.end < min(end, silent_from):  # sent before the cut could land
                chunk.end = min(end, silent_from)
                if all(c is not chunk for c in stream.chunks):  # dropped: back in, with what was sent
                    stream.chunks.append(chunk)
                    stream.chunks.sort(key=lambda c: c.start)
    moved = []
    for chunk, raw in done.new:
        at = call.place_ulaw(chunk.start, raw)
        if at != chunk.start:
            moved.append((chunk, at - chunk.start))
            chunk.end += at - chunk.start
            chunk.start = at
    return moved


# --- the caller's thread ---------------------------------------------------------------------------

class _CallerThread:
    """A thread with its own event loop for the caller's ticks: compute off the pacing loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="live-caller", daemon=True)
        self.thread.start()

    async def run(self, coro: Coroutine[Any, Any, Any], timeout_s: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)  # a timeout cancels the task there

    def close(self, timeout_s: float = 5.0) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout_s)
        if not self.thread.is_alive():
            self.loop.close()


# --- the loop --------------------------------------------------------------------------------------

class _NoLine:
    """The line of a call that never started."""

    frames = 0

    def bot_audio(self, start_frame: int, end_frame: int | None = None) -> bytes:
        return b""


class _Live:
    def __init__(self, caller: DuplexCaller, settings: PhoneAgentSettings, clock: Clock, ledger: ComputeLedger,
                 caller_asr: Any, worker: _CallerThread, step_timeout_s: float, identity: dict[str, Any]) -> None:
        self.caller, self.settings, self.clock, self.ledger = caller, settings, clock, ledger
        self.caller_asr, self.worker, self.step_timeout_s, self.identity = caller_asr, worker, step_timeout_s, identity
        self.agent = PhoneAgent(_NoLine(), settings, ledger=ledger)
        self.ended: LiveEnd = "max_duration"
        self.fault: CallFault | None = None
        self.moves: list[int] = []
        self.lags: list[int] = []

    def attach(self, call: PhoneCall) -> None:
        self.agent = PhoneAgent(call, self.settings, ledger=self.ledger)

    async def _caller_tick(self, t: int) -> StreamChanges:
        before = snapshot(self.caller.stream)
        await self.caller.on_tick(t, self.agent.stream)
        return changes(self.caller.stream, before)

    async def run(self, call: PhoneCall) -> None:
        t, end, last = 0, self.clock.settings.max_frames, self.clock.settings.max_frames
        while True:
            wait_s = from_frames(max(0, t - call.frames)) + call.settings.send_timeout_s + 2.0
            if not await call.wait_frames(t, wait_s):
                self.fault = CallFault("harness_late", f"live call: the call's frames stopped before "
                                       f"{from_frames(t):.2f} s (waited {wait_s:.1f} s)")
                return
            if call.ended:
                self.ended = "bot_hung_up"
                return
            if t >= end:  # the line has played up to the caller's hang-up, or to the longest call
                return
            await self.agent.on_tick(t, self.caller.stream)
            try:
                done = await self.worker.run(self._caller_tick(t), self.step_timeout_s)
            except TimeoutError:
                self.fault = CallFault("harness_late", f"live call: the caller's tick at {from_frames(t):.2f} s "
                                       f"took over {self.step_timeout_s:g} s")
                return
            for chunk, by in to_line(call, self.caller.stream, done):
                self.moves.append(by)
                if self.caller.hangup == chunk.end - by:  # it hangs up after these words: later, as they went
                    self.caller.hangup = chunk.end
            self.lags.append(max(0, call.frames - t))
            if self.caller.hangup is not None:  # a goodbye running past the longest call is cut there
                end = min(max(t, self.caller.hangup), last)
                self.ended = caller_end_reason(self.caller) if max(t, self.caller.hangup) <= last else "max_duration"
                if t >= end:
                    return
            t = self.clock.advance(t, every_tick=True)

    async def finish(self, call: PhoneCall) -> CallRecord:
        """Hang up (or take the bot's ending), then read the rest of the bot's line."""
        if call.ended:
            try:
                record = await call.wait_ended(call.settings.close_timeout_s)
            except CallFault:
                record = call.record()
        else:
            record = await call.hang_up()
        if self.fault is not None or record.fault is not None:
            self.ended = "fault"
        await self.agent.on_tick(len(record.bot_line) // FRAME_BYTES, self.caller.stream)
        return record

    async def result(self, record: CallRecord | None, url: str, fault: CallFault | None = None) -> LiveResult:
        fault = fault or self.fault
        caller, agent = self.caller, self.agent
        lines = (record.caller_line, record.bot_line) if record is not None else (b"", b"")
        end = len(lines[0]) // FRAME_BYTES

        async def conclude_there() -> Concluded:  # the caller's recogniser hears each bot segment: off the pacing loop
            return conclude(caller.stream, agent.stream, end, caller_asr=self.caller_asr, agent_asr=None,
                            unit_id=self.identity["unit_id"], attempt=self.identity["attempt"], words_meant={},
                            ledger=self.ledger, lines=(decode_samples(lines[0]), decode_samples(lines[1])))

        done = await self.worker.run(conclude_there(), max(60.0, self.step_timeout_s))
        realtime = _realtime_fields(record)
        if realtime.get("transcripts"):  # the provider's words beside what the caller said and heard
            placed = place_transcripts(done.segments, realtime["transcripts"])
            done = replace(done, segments=placed, segments_sha256=segments_sha256(list(placed)),
                           labels=label_track(list(placed), list(done.events)))
        kind = fault.kind if fault is not None else record.fault_kind if record is not None else None
        late = record.late if record is not None else None
        lags = [from_frames(n) for n in self.lags] or [0.0]
        return LiveResult(
            **self.identity, url=url, segments=done.segments, segments_sha256=done.segments_sha256,
            events=done.events, metrics=done.metrics, labels=done.labels, recording_sha256=done.recording_sha256,
            recording=done.recording, duration_s=from_frames(end), ended="fault" if fault is not None else self.ended,
            ticks=-(-end // self.clock.tick), steps=self.clock.steps, agent_replies=agent.replies,
            caller_history=tuple(caller.history), caller_counts=dict(caller.counts),
            compute_s=dict(self.ledger.seconds), compute_calls=dict(self.ledger.calls),
            ended_by="none" if record is None else "fault" if fault is not None else record.ended_by,
            fault_kind=kind, fault=str(fault) if fault is not None else record.fault if record is not None else None,
            infra=kind in INFRA_FAULTS or late is not None, late=late,
            lateness=record.lateness if record is not None else Lateness.empty(),
            marks_answered=record.marks_answered if record is not None else (),
            clears=record.clears if record is not None else 0, caller_moves=len(self.moves),
            caller_move_max_s=from_frames(max(self.moves, default=0)), tick_lag_p50_s=float(np.median(lags)),
            tick_lag_max_s=max(lags), **realtime)


def _realtime_fields(record: CallRecord | None) -> dict[str, Any]:
    """What a realtime session's record adds to the result (nothing for a phone call's)."""
    if record is None or not hasattr(record, "transcripts"):
        return {}
    return dict(protocol=record.protocol, transcripts=record.transcripts, usage=dict(record.usage),
                provider_tool_calls=record.tool_calls, truncations=record.truncations)


async def _warm_up(asr: Any) -> None:
    """What a caller's first ticks would otherwise load on the call's clock (and, on the caller's
    thread, hold the interpreter while the pacing loop waits): the line's filters and codec, the
    resampler, the recogniser's model."""
    samples = line_samples(np.zeros(800, np.float32), LINE_RATE)
    decode_samples(encode_samples(samples))
    asr.transcribe(to_float(samples, 16000))


async def run_live(url: str, *, caller_policy: CallerPolicy, tts: Any, asr: Any, tool_server_url: str = "",
                   conversation_id: str | None = None, rules: CallerRules | dict[str, Any] | None = None,
                   clock: ClockSettings | dict[str, Any] | None = None,
                   agent: PhoneAgentSettings | dict[str, Any] | None = None, phone: PhoneSettings | None = None,
                   decide: DecisionHook | None = None, caller_voice: DrawnVoice | None = None, unit_id: str = "unit",
                   attempt: int = 0, seed: int = 0, caller_effects: SourceEffects | None = None,
                   parameters: dict[str, str] | None = None, step_timeout_s: float = 60.0,
                   dial: Callable[[], Awaitable[PhoneCall]] | None = None) -> LiveResult:
    """Call the bot at ``url`` and hold one duplex conversation with it on the wall clock.

    ``tts``/``asr`` are the caller's engines; ``tool_server_url`` (a :class:`~.tool_server.ToolServer`
    URL) and ``parameters`` go to the bot in start's custom parameters. ``dial``, when given, opens
    the call instead (a realtime session: :meth:`~.realtime_call.RealtimeCall.open`). Bad settings, and a caller
    that would read the bot's words (``hears='text'``: a live bot's words are not known), raise
    :class:`~tauray.actors.voice.duplex.errors.DuplexConfigError` (one line) before dialling."""
    rules = CallerRules.parse(rules)
    if rules.hears == "text":
        raise DuplexConfigError("turn_taking.hears: a live bot's words are not known, only its audio; its caller "
                                "hears it through the line (hears='channel', not 'text')")
    clock_settings = load_settings(ClockSettings, clock, "clock")
    settings = PhoneAgentSettings.parse(agent)
    ledger, caller_asr = ComputeLedger(), Remembered(asr)
    caller = DuplexCaller(caller_policy, rules, tts=tts, voice=caller_voice or default_voice(tts, "clear"),
                          asr=caller_asr, ledger=ledger, seed=seed, unit_id=unit_id,
                          max_frames=clock_settings.max_frames, decide=decide, effects=caller_effects)
    conversation_id = conversation_id or unit_id
    identity = dict(unit_id=unit_id, attempt=attempt, conversation_id=conversation_id, rules=rules,
                    clock=clock_settings, agent=settings)
    worker = _CallerThread()
    live = _Live(caller, settings, Clock(clock_settings), ledger, caller_asr, worker, step_timeout_s, identity)
    try:
        await worker.run(_warm_up(asr), max(60.0, step_timeout_s))
        try:
            call = await dial() if dial is not None else await PhoneCall.dial(
                url, conversation_id=conversation_id, tool_server_url=tool_server_url, parameters=parameters,
                settings=phone or PhoneSettings())
        except CallFault as fault:
            return await live.result(None, shown_url(url), fault)
        live.attach(call)
        try:
            await live.run(call)
        finally:
            record = await live.finish(call)
        return await live.result(record, call.url)
    finally:
        worker.close()


def run_live_sync(url: str, **kwargs: Any) -> LiveResult:
    """:func:`run_live` from synchronous code (a script, a test, a worker thread)."""
    return asyncio.run(run_live(url, **kwargs))
