"""One duplex conversation: a caller (a text policy, turn-taking rules, a voice) and a cascaded
agent pipeline on one simulated clock, and what it leaves: the segments (the ``segments``
table's rows), a stereo recording (caller left, agent right, the line's 8 kHz audio, lossless
FLAC, named by the sha256 of its bytes), the Audacity label track, and τ-Voice's interaction
metrics with their counts.

The loop (clock.py): at each visited tick both sides act on the other's audio before it, in
either order (neither can change what the other already heard); then the clock jumps to the
tick where either could next act. Tool calls of the agent run in the tick where its model
finished them and their results arrive at the next tick (the ``tools`` callable is where the
coordinator plugs in its tool execution and sync).

After the call, each segment's ``heard_text`` is what the listener's recogniser makes of that
segment's audio alone (the agent's for the caller's segments, the caller's for the agent's).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.voice.duplex.caller import CallerRules, DecisionHook, DuplexCaller, SourceEffects
from tauray.actors.voice.duplex.clock import Clock, ClockSettings, ComputeLedger
from tauray.actors.voice.duplex.errors import load_settings
from tauray.actors.voice.duplex.metrics import InteractionEvent, InteractionMetrics, interaction_events, summarize
from tauray.actors.voice.duplex.pipeline import AgentTurn, CascadedAgent, PipelineSettings
from tauray.actors.voice.duplex.segments import Segment, from_frames, label_track, timeline
from tauray.actors.voice.duplex.stream import Chunk, Stream, to_float
from tauray.actors.voice.duplex.talk import CallerPolicy, Message, TextAgent, ToolRunner
from tauray.actors.voice.duplex.vad import VAD, make_vad
from tauray.actors.voice.line import LINE_RATE
from tauray.actors.voice.profiles import DrawnVoice

__all__ = ["Concluded", "DuplexResult", "EndReason", "Remembered", "caller_end_reason", "conclude", "default_voice",
           "recording_flac", "run_duplex", "run_duplex_sync", "segments_sha256"]

EndReason = Literal["caller_hung_up", "caller_hung_up_on_silence", "max_duration"]


class DuplexResult(BaseModel):
    """What one duplex conversation leaves."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    unit_id: str = Field(description="The conversation's work unit.")
    attempt: int = Field(0, description="Attempt number.")
    pipeline_id: str = Field(description="The agent pipeline's identity (PipelineSettings.identity()).")
    pipeline: PipelineSettings = Field(description="The agent pipeline's knobs.")
    rules: CallerRules = Field(description="The caller's turn-taking rules.")
    clock: ClockSettings = Field(description="The clock's settings.")
    timing: Literal["declared", "measured"] = Field(description="Whether the model's timing was declared "
                                                    "(reproducible) or measured.")
    segments: tuple[Segment, ...] = Field(description="The timeline (segments table rows).")
    segments_sha256: str = Field(description="sha256 of the segments' canonical JSON (the timeline's content hash).")
    events: tuple[InteractionEvent, ...] = Field(description="Every scored interaction event.")
    metrics: InteractionMetrics = Field(description="τ-Voice's interaction panel with counts.")
    labels: str = Field(description="The Audacity label track (segments and events).")
    recording_sha256: str = Field(description="sha256 of the recording's FLAC bytes: its content address.")
    recording: bytes = Field(repr=False, description="Stereo 16-bit FLAC at 8 kHz: caller left, agent right.")
    duration_s: float = Field(description="Length of the call on the simulated clock, seconds.")
    ended: EndReason = Field(description="Why the call ended.")
    ticks: int = Field(description="Ticks the call covered.")
    steps: int = Field(description="Ticks the loop visited (event stepping skips the others).")
    agent_turns: tuple[AgentTurn, ...] = Field(description="What the agent heard and did, in order.")
    agent_history: tuple[Message, ...] = Field(description="The agent's history at the end (cut replies truncated).")
    caller_history: tuple[Message, ...] = Field(description="The caller's history at the end (what it heard).")
    caller_counts: dict[str, int] = Field(description="What the caller did: turns, yields, interruptions, "
                                          "backchannels, tics, out-of-turn lines, check-ins.")
    compute_s: dict[str, float] = Field(description="Wall-clock compute per component (not simulated time).")
    compute_calls: dict[str, int] = Field(description="Calls per component.")


def recording_flac(caller: np.ndarray, agent: np.ndarray) -> bytes:
    """The two lines as stereo 16-bit FLAC at 8 kHz (caller left, agent right)."""
    import soundfile  # lazy: optional extra tauray[voice]

    buf = io.BytesIO()
    soundfile.write(buf, np.stack([caller, agent], axis=1), LINE_RATE, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def segments_sha256(segments: Sequence[Segment]) -> str:
    """The timeline's content hash: sha256 of the segments' JSON, one per line."""
    text = "\n".join(s.model_dump_json() for s in segments)
    return hashlib.sha256(text.encode()).hexdigest()


def _groups(chunks: Sequence[Chunk]) -> list[list[Chunk]]:
    """Chunks of one reply (or turn) that touch are one segment; a tic or aside stands alone."""
    groups: list[list[Chunk]] = []
    for chunk in chunks:
        if chunk.end <= chunk.start:
            continue
        last = groups[-1][-1] if groups else None
        if last and last.reply == chunk.reply >= 0 and last.kind == chunk.kind and last.end == chunk.start:
            groups[-1].append(chunk)
        else:
            groups.append([chunk])
    return groups


def _segments(stream: Stream, listener_asr: Any | None, *, unit_id: str, attempt: int, words_meant: dict[int, int],
              ledger: ComputeLedger) -> list[Segment]:
    out = []
    groups = _groups(stream.chunks)
    last_of_reply = {g[-1].reply: i for i, g in enumerate(groups)}
    for i, group in enumerate(groups):
        first, last = group[0], group[-1]
        spoken = sum(c.said() for c in group)
        meant = sum(len(c.words) for c in group)
        if first.reply >= 0 and last_of_reply.get(first.reply) == i and first.reply in words_meant:
            meant = max(meant, words_meant[first.reply] - sum(c.said() for g in groups[:i] if g[0].reply == first.reply
                                                              for c in g))
        heard = ""
        if listener_asr is not None:
            audio = np.concatenate([c.audio() for c in group])
            with ledger.timed("asr"):
                heard = listener_asr.transcribe(to_float(audio, 16000))
        cut = next((c.cut_at for c in group if c.cut_at is not None), None)
        out.append(Segment(unit_id=unit_id, attempt=attempt, side=stream.side, kind=first.kind,
                           start_s=from_frames(first.start), end_s=from_frames(last.end),
                           cut_at_s=None if cut is None else from_frames(cut), words_spoken=spoken,
                           words_cut=max(0, meant - spoken), text=" ".join(c.said_text() for c in group).strip(),
                           heard_text=heard))
    return out


@dataclass(frozen=True)
class Concluded:
    """What a finished call's two streams leave: the timeline, its panel and its recording."""

    segments: tuple[Segment, ...]
    segments_sha256: str
    events: tuple[InteractionEvent, ...]
    metrics: InteractionMetrics
    labels: str
    recording: bytes
    recording_sha256: str


def conclude(caller: Stream, agent: Stream, end: int, *, caller_asr: Any, agent_asr: Any | None, unit_id: str,
             attempt: int, words_meant: dict[int, int], ledger: ComputeLedger,
             lines: tuple[np.ndarray, np.ndarray] | None = None) -> Concluded:
    """Both streams cut at frame ``end``, their segments (each heard by the other side's
    recogniser: ``caller_asr`` hears the agent, ``agent_asr`` the caller; None: not known), the
    interaction panel, the label track and the stereo recording (of ``lines``, the caller's and the
    agent's line samples, when given; else of the streams). Shared by the simulated clock and a
    live call."""
    for stream in (caller, agent):
        stream.stop(end, end)
    rows = _segments(caller, agent_asr, unit_id=unit_id, attempt=attempt, words_meant={}, ledger=ledger)
    rows += _segments(agent, caller_asr, unit_id=unit_id, attempt=attempt, words_meant=words_meant, ledger=ledger)
    segments = timeline(rows)
    with ledger.timed("metrics"):
        events = interaction_events(segments)
        metrics = summarize(events)
    left, right = lines if lines is not None else (caller.samples(end), agent.samples(end))
    flac = recording_flac(left, right)
    return Concluded(segments=tuple(segments), segments_sha256=segments_sha256(segments), events=tuple(events),
                     metrics=metrics, labels=label_track(segments, events), recording=flac,
                     recording_sha256=hashlib.sha256(flac).hexdigest())


def caller_end_reason(caller: DuplexCaller) -> EndReason:
    """How a caller that hung up did: after its last words (a goodbye) or on a long silence."""
    last = caller.stream.chunks[-1] if caller.stream.chunks else None
    return "caller_hung_up" if last is not None and last.meta.get("final") else "caller_hung_up_on_silence"


class Remembered:
    """A recogniser that remembers what it made of each audio it heard (by content): the same
    stretch heard again (a reply by the caller during the call, then as its segment's
    ``heard_text``) is recognised once. Deterministic recognisers only, which every local one is."""

    def __init__(self, asr: Any) -> None:
        self.asr = asr
        self.name = getattr(asr, "name", "asr")
        self._seen: dict[str, str] = {}

    def transcribe(self, audio: np.ndarray) -> str:
        key = hashlib.sha256(np.ascontiguousarray(audio, dtype=np.float32).tobytes()).hexdigest()
        if key not in self._seen:
            self._seen[key] = self.asr.transcribe(audio)
        return self._seen[key]


def default_voice(tts: Any, kind: str) -> DrawnVoice:
    voices = tts.voices(kind) if hasattr(tts, "voices") else ("default",)
    return DrawnVoice(voice=voices[0], rate_wpm=170, pitch=50, noise_kind=None, seed=0)


async def run_duplex(*, caller_policy: CallerPolicy, agent: TextAgent, tts: Any, asr: Any,
                     vad: VAD | None = None, caller_asr: Any = None, caller_tts: Any = None,
                     rules: CallerRules | dict[str, Any] | None = None,
                     pipeline: PipelineSettings | dict[str, Any] | None = None,
                     clock: ClockSettings | dict[str, Any] | None = None, tools: ToolRunner | None = None,
                     decide: DecisionHook | None = None, caller_voice: DrawnVoice | None = None,
                     agent_voice: DrawnVoice | None = None, unit_id: str = "unit", attempt: int = 0, seed: int = 0,
                     every_tick: bool = False, caller_effects: SourceEffects | None = None) -> DuplexResult:
    """Run one duplex conversation to its end on the simulated clock.

    ``tts``/``asr`` are the agent's engines (and the caller's unless ``caller_tts``/``caller_asr``
    are given): tauray's engines (:func:`~tauray.actors.voice.engines.make_tts`, ``make_asr``) or
    any object with their ``synth``/``transcribe``. ``vad`` defaults to the pipeline's named one.
    ``every_tick`` visits every tick (the reference event stepping is tested against).
    ``caller_effects`` puts the speech profile's source effects on the caller's speech. Bad
    settings raise :class:`~.errors.DuplexConfigError` (one line) before anything runs."""
    rules = CallerRules.parse(rules)
    pipeline = PipelineSettings.parse(pipeline)
    clock_settings = load_settings(ClockSettings, clock, "clock")
    vad = vad or make_vad(pipeline.vad, pipeline.vad_threshold)
    ledger = ComputeLedger()
    agent_asr = Remembered(asr)
    caller_asr = agent_asr if caller_asr is None or caller_asr is asr else Remembered(caller_asr)
    the_clock = Clock(clock_settings)
    caller_tts = caller_tts or tts
    caller = DuplexCaller(caller_policy, rules, tts=caller_tts, voice=caller_voice or default_voice(caller_tts, "clear"),
                          asr=caller_asr, ledger=ledger, seed=seed, unit_id=unit_id,
                          max_frames=clock_settings.max_frames, decide=decide, effects=caller_effects)
    bot = CascadedAgent(agent, pipeline, tts=tts, voice=agent_voice or default_voice(tts, "agent"), asr=agent_asr,
                        vad=vad,
                        tick=the_clock.tick, ledger=ledger, tools=tools)
    if rules.opening == "agent":
        await bot.start()
    t, end, ended = 0, clock_settings.max_frames, "max_duration"
    while t < end:
        await caller.on_tick(t, bot.stream)
        await bot.on_tick(t, caller.stream)
        if caller.hangup is not None:
            end = max(t, caller.hangup)
            ended = caller_end_reason(caller)
            if end > clock_settings.max_frames:  # a goodbye running past the longest call is cut there
                end, ended = clock_settings.max_frames, "max_duration"
            if t >= end:
                break
        wake = min(caller.next_wake(t, bot.stream), bot.next_wake(t, caller.stream), end)
        t = the_clock.advance(wake, every_tick=every_tick)
    end = min(end, max(t, 1))
    meant = {r.number: len(r.text.split()) for r in bot.replies}
    done = conclude(caller.stream, bot.stream, end, caller_asr=caller_asr, agent_asr=agent_asr, unit_id=unit_id,
                    attempt=attempt, words_meant=meant, ledger=ledger)
    return DuplexResult(
        unit_id=unit_id, attempt=attempt, pipeline_id=pipeline.identity(), pipeline=pipeline, rules=rules,
        clock=clock_settings, timing=pipeline.timing, segments=done.segments,
        segments_sha256=done.segments_sha256, events=done.events, metrics=done.metrics,
        labels=done.labels, recording_sha256=done.recording_sha256, recording=done.recording,
        duration_s=from_frames(end), ended=ended, ticks=-(-end // the_clock.tick), steps=the_clock.steps,
        agent_turns=tuple(bot.turns), agent_history=tuple(bot.history), caller_history=tuple(caller.history),
        caller_counts=dict(caller.counts), compute_s=dict(ledger.seconds), compute_calls=dict(ledger.calls))


def run_duplex_sync(**kwargs: Any) -> DuplexResult:
    """:func:`run_duplex` from synchronous code (a script, a test, a worker thread)."""
    return asyncio.run(run_duplex(**kwargs))
