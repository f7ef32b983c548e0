"""The agent under test in duplex: a cascaded pipeline that turns any text agent into a duplex
voice agent, with its knobs declared so a run is exactly reproducible.

VAD on the caller's line audio (vad.py) → end of turn after ``end_of_turn_ms`` of silence →
recognition of the turn (a tauray ASR engine; ``recognition_ms`` declared) → the text agent
(its time to first token ``ttft_ms`` and ``tokens_per_s`` declared, so the timeline does not
depend on how fast this machine ran the model; ``timing='measured'`` uses the call's wall time
instead, and the record says which) → speech synthesised sentence by sentence and streamed onto
the line as each sentence's text is complete (``synthesis_ms`` declared).

Barge-in: when the caller has spoken over the agent for ``barge_in_ms``, the pipeline hears what
was said; words that are all backchannels (``backchannels``: "mm-hmm", "okay", ...) keep it
talking, anything else stops it (audio stops at the tick it learns of it, or after the declared
recognition time, whichever is later). What it had not said is cut from its history (realtime
APIs truncate the same way). Caller speech that starts before a planned answer is audible
cancels the answer; the next end of turn hears both stretches as one turn.

The knobs are :class:`PipelineSettings`; its canonical JSON and hash (:meth:`identity`) are the
pipeline's identity, so pipelines compare as a sweep axis.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.voice.duplex.clock import NEVER, ComputeLedger, frames_of
from tauray.actors.voice.duplex.errors import load_settings
from tauray.actors.voice.duplex.segments import from_frames
from tauray.actors.voice.duplex.stream import Chunk, Stream, line_samples, split_words, to_float, trim, word_ends
from tauray.actors.voice.duplex.talk import AgentReply, Message, TextAgent, ToolCall, ToolRunner, resolve
from tauray.actors.voice.duplex.vad import VAD, VadKind
from tauray.actors.voice.profiles import DrawnVoice

__all__ = ["DEFAULT_BACKCHANNELS", "AgentTurn", "CascadedAgent", "PipelineSettings", "VadTracker", "normal_words"]

DEFAULT_BACKCHANNELS: Final = ("mm-hmm", "mhm", "mm", "uh-huh", "okay", "ok", "yeah", "right")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def normal_words(text: str) -> list[str]:
    """Words as compared with the backchannel list: lower case, outer punctuation dropped."""
    return [w for w in (w.strip(".,!?;:\"'()").lower() for w in text.split()) if w]


class PipelineSettings(BaseModel):
    """A cascaded duplex agent's knobs: its identity (canonical JSON, :meth:`identity`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vad: VadKind = Field("silero", description="Voice-activity detector on the incoming line: 'silero' (the "
                         "weights faster-whisper ships), 'energy' (a level threshold) or 'webrtc' (needs "
                         "webrtcvad).")
    vad_threshold: float | None = Field(None, description="The VAD's threshold: speech probability for silero "
                                        "(0.5), dBFS for energy (-40), aggressiveness 0-3 for webrtc (2); None: "
                                        "the default.")
    min_speech_ms: int = Field(100, ge=20, le=2000, description="Speech must last this long before the "
                               "pipeline takes it as the caller speaking, ms.")
    end_of_turn_ms: int = Field(600, ge=20, le=10000, description="Silence after the caller's speech that ends "
                                "the turn, ms.")
    barge_in_ms: int = Field(400, ge=20, le=10000, description="Caller speech over the agent for this long stops "
                             "the agent (unless it is all backchannels), ms.")
    backchannels: tuple[str, ...] = Field(DEFAULT_BACKCHANNELS, description="Words that never stop the agent nor "
                                          "make a turn when said over it; () turns the filter off (and with it "
                                          "the recognition it waits for).")
    recognition_ms: int = Field(150, ge=0, le=10000, description="Declared time the recogniser takes on a turn "
                                "or a barge-in, ms of simulated time.")
    ttft_ms: int = Field(500, ge=0, le=60000, description="Declared time to the model's first token, ms.")
    tokens_per_s: float = Field(50.0, gt=0.0, le=100000.0, description="Declared token rate of the model after "
                                "its first token.")
    synthesis_ms: int = Field(100, ge=0, le=10000, description="Declared time from a sentence's text being "
                              "complete to its first audio, ms.")
    timing: Literal["declared", "measured"] = Field("declared", description="'declared': the model's timing "
                                                    "above (reproducible); 'measured': the model call's wall "
                                                    "time as its time to its whole reply (not reproducible).")

    @field_validator("backchannels")
    @classmethod
    def _lower(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(w.lower() for w in value)

    @classmethod
    def parse(cls, data: Any) -> PipelineSettings:
        """From a sweep file's mapping; one line naming the field on a bad or unknown one."""
        return load_settings(cls, data, "pipeline")

    def canonical(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def identity(self) -> str:
        """The pipeline's identity: sha256 of its canonical JSON, 16 hex digits."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:16]

    def label(self) -> str:
        """The settings that differ from the defaults, in words for an arm's label
        ('end_of_turn_ms=300, vad=energy'); 'default pipeline' when none does."""
        default = type(self)().model_dump(mode="json")
        changed = [f"{k}={v}" for k, v in self.model_dump(mode="json").items() if v != default[k]]
        return ", ".join(changed) or "default pipeline"


class AgentTurn(BaseModel):
    """One thing the agent heard and what it did about it (a turn answered, a barge-in, a
    backchannel talked through, speech ignored)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["answered", "greeted", "after_tools", "barge_in", "talked_through", "ignored", "cancelled"] = \
        Field(description="What the pipeline did.")
    at_s: float = Field(description="When it acted (the tick it learned of it), seconds.")
    heard_from_s: float | None = Field(None, description="Start of the caller audio it heard for it, seconds.")
    heard_to_s: float | None = Field(None, description="End of that audio, seconds.")
    heard: str = Field("", description="What its recogniser made of it.")
    reply: str = Field("", description="The full reply the model gave (answers only).")
    first_audio_s: float | None = Field(None, description="When the reply's audio began (None: never).")
    tool_calls: int = Field(0, ge=0, description="Tool calls in the reply.")


@dataclass
class VadTracker:
    """The pipeline's reading of the VAD flags, frame by frame: when the caller starts (speech
    held ``min_speech`` frames), when it has spoken over the agent long enough to barge in, and
    when its turn ends (``eot`` frames of silence). A copy runs ahead over planned audio to say
    when the next event will be (the clock's wake)."""

    min_speech: int
    eot: int
    barge: int
    in_burst: bool = False
    burst_start: int = 0
    run: int = 0
    silence: int = 0
    last_end: int = 0
    checks: int = 0

    def step(self, frame: int, speech: bool, agent: Stream) -> tuple[str, int, int, int] | None:
        """One frame; an event (kind, the instant it is known, burst start, last speech end) or None."""
        event = None
        if speech:
            self.run += 1
            self.silence = 0
            self.last_end = frame + 1
            if not self.in_burst and self.run >= self.min_speech:
                self.in_burst, self.burst_start, self.checks = True, frame - self.run + 1, 0
                event = ("onset", frame + 1, self.burst_start, self.last_end)
            if self.in_burst:
                stretch = agent.stretch(frame)
                if stretch is None:
                    self.checks = 0
                else:
                    over = max(self.burst_start, stretch[0])
                    if frame + 1 - over >= self.barge * (self.checks + 1):
                        self.checks += 1
                        event = event or ("barge", frame + 1, self.burst_start, self.last_end)
        else:
            self.run = 0
            if self.in_burst:
                self.silence += 1
                if self.silence >= self.eot:
                    self.in_burst = False
                    event = ("eot", frame + 1, self.burst_start, self.last_end)
        return event


@dataclass
class _Reply:
    number: int
    message: int  # its index in the history
    text: str
    chunks: list[Chunk] = field(default_factory=list)
    tool_calls: tuple[ToolCall, ...] = ()


class CascadedAgent:
    """A text agent behind the pipeline, on the clock: :meth:`on_tick` hears the caller's line
    audio up to the tick and acts; :meth:`next_wake` says when it could next act."""

    def __init__(self, agent: TextAgent, settings: PipelineSettings, *, tts: Any, voice: DrawnVoice, asr: Any,
                 vad: VAD, tick: int, ledger: ComputeLedger, tools: ToolRunner | None = None) -> None:
        self.agent, self.settings, self.tts, self.voice, self.asr, self.vad = agent, settings, tts, voice, asr, vad
        self.tick, self.ledger, self.tools = tick, ledger, tools
        self.stream = Stream("agent")
        self.history: list[Message] = []
        self.turns: list[AgentTurn] = []
        self.replies: list[_Reply] = []
        self.tracker = VadTracker(frames_of(settings.min_speech_ms), frames_of(settings.end_of_turn_ms),
                                  frames_of(settings.barge_in_ms))
        self.processed = 0
        self.turn_start: int | None = None
        self.over_agent = False  # the burst under way began while the agent spoke
        self.tool_wake: int | None = None
        self.pending_calls: tuple[ToolCall, ...] = ()

    # --- hearing -------------------------------------------------------------------------------

    def _flags(self, caller: Stream, start: int, end: int) -> np.ndarray:
        flags = np.zeros(max(0, end - start), dtype=bool)
        for chunk in caller.chunks:
            lo, hi = max(start, chunk.start), min(end, chunk.end)
            if lo < hi:
                with self.ledger.timed("vad"):
                    speech = chunk.speech(self.vad)
                flags[lo - start:hi - start] = speech[lo - chunk.start:hi - chunk.start]
        return flags

    def _hear(self, caller: Stream, start: int, end: int) -> str:
        with self.ledger.timed("asr"):
            return self.asr.transcribe(to_float(caller.window(start, end), 16000))

    def _backchannel_only(self, text: str) -> bool:
        words = normal_words(text)
        return all(w in self.settings.backchannels for w in words)

    # --- speaking ------------------------------------------------------------------------------

    def _synth(self, text: str) -> tuple[np.ndarray, tuple[int, ...]]:
        with self.ledger.timed("tts"):
            raw = self.tts.synth(text, self.voice.voice, self.voice.rate_for(text), self.voice.pitch,
                                 self.voice.seed)  # slower where it spells an identifier
            rate = self.tts.sample_rate
            loud = np.flatnonzero(np.abs(raw) >= 0.01)
            offset = loud[0] / rate if loud.size else 0.0
            samples = line_samples(trim(raw), rate)
        spans = self.tts.word_spans(text) if hasattr(self.tts, "word_spans") else None
        return samples, word_ends(split_words(text), samples.size // 160, spans, offset)

    async def _answer(self, t: int, ready: int, action: str, heard: tuple[int, int, str] | None = None) -> None:
        """Ask the model at frame ``ready`` and put its reply on the line as it streams."""
        started = time.perf_counter()
        with self.ledger.timed("agent_model"):
            got = await resolve(self.agent(tuple(self.history)))
        spent = time.perf_counter() - started
        reply = got if isinstance(got, AgentReply) else AgentReply(text=str(got or ""))
        if self.settings.timing == "measured":
            first, per_token = ready + frames_of(1000 * spent), 0.0
        else:
            first, per_token = ready + frames_of(self.settings.ttft_ms), 1000.0 / self.settings.tokens_per_s
        number = len(self.replies)
        self.history.append(Message(role="assistant", content=reply.text, tool_calls=reply.tool_calls,
                                    at_s=from_frames(t)))
        record = _Reply(number, len(self.history) - 1, reply.text, tool_calls=reply.tool_calls)
        self.replies.append(record)
        tokens, at = 0, max(first, t, self.stream.chunks[-1].end if self.stream.chunks else 0)
        for sentence in (s for s in _SENTENCE.split(reply.text.strip()) if s):
            tokens += len(_TOKEN.findall(sentence))
            complete = first + frames_of(max(0, tokens - 1) * per_token)
            samples, ends = self._synth(sentence)
            at = max(at, complete + frames_of(self.settings.synthesis_ms))
            chunk = Chunk("agent", "speech", at, samples, sentence, ends, reply=number)
            record.chunks.append(self.stream.add(chunk))
            at = chunk.end
        if reply.tool_calls:
            call_tokens = sum(len(_TOKEN.findall(json.dumps([c.name, c.arguments]))) for c in reply.tool_calls)
            done = first + frames_of(max(0, tokens + call_tokens - 1) * per_token)
            self.tool_wake = (done // self.tick + 1) * self.tick  # the calls run in that tick; results next
            self.pending_calls = reply.tool_calls
        lo, hi, text = heard if heard else (None, None, "")
        self.turns.append(AgentTurn(action=action, at_s=from_frames(t), heard=text, reply=reply.text,
                                    heard_from_s=None if lo is None else from_frames(lo),
                                    heard_to_s=None if hi is None else from_frames(hi),
                                    first_audio_s=from_frames(record.chunks[0].start) if record.chunks else None,
                                    tool_calls=len(reply.tool_calls)))

    def _stop(self, decided: int, stop: int) -> None:
        """Stop talking at ``stop``; what was not said is cut from the history."""
        touched = self.stream.stop(decided, stop)
        for number in sorted({c.reply for c in touched}):
            reply = self.replies[number]
            spoken = " ".join(c.said_text() for c in reply.chunks if c.end > c.start).strip()
            old = self.history[reply.message]
            self.history[reply.message] = old.model_copy(update={"content": spoken, "truncated": True})

    def _unstarted(self, frame: int) -> bool:
        """A reply is planned whose audio has not begun by ``frame``."""
        return any(c.start > frame for c in self.stream.later(frame))

    async def start(self) -> None:
        """Open the call: the agent greets (the model on an empty history)."""
        await self._answer(0, 0, "greeted")

    # --- the tick ------------------------------------------------------------------------------

    async def on_tick(self, t: int, caller: Stream) -> None:
        flags = self._flags(caller, self.processed, t)
        for i, speech in enumerate(flags):
            event = self.tracker.step(self.processed + i, bool(speech), self.stream)
            if event is not None:
                await self._on_event(t, caller, *event)
        self.processed = t
        if self.tool_wake is not None and t >= self.tool_wake:
            calls, self.tool_wake, self.pending_calls = self.pending_calls, None, ()
            results: Sequence[str] = ["" for _ in calls]
            if self.tools is not None:
                with self.ledger.timed("tools"):
                    results = await resolve(self.tools(calls))
            for call, result in zip(calls, results, strict=True):
                self.history.append(Message(role="tool", content=str(result), tool_call_id=call.id,
                                            at_s=from_frames(t)))
            await self._answer(t, t, "after_tools")

    async def _on_event(self, t: int, caller: Stream, kind: str, at: int, start: int, last: int) -> None:
        s = self.settings
        if kind == "onset":
            self.over_agent = self.stream.speaking(start)
            if self.turn_start is None:
                self.turn_start = start
            if not self.over_agent and self._unstarted(start) and not self.pending_calls:
                # The caller went on before the answer was heard: drop it, hear the whole turn later.
                self._stop(at, t)
                self.turns.append(AgentTurn(action="cancelled", at_s=from_frames(t), heard_from_s=from_frames(start)))
        elif kind == "barge":
            heard = self._hear(caller, start, at) if s.backchannels else ""
            if s.backchannels and self._backchannel_only(heard):
                self.turns.append(AgentTurn(action="talked_through", at_s=from_frames(t), heard=heard,
                                            heard_from_s=from_frames(start), heard_to_s=from_frames(at)))
                return
            stop = max(t, at + (frames_of(s.recognition_ms) if s.backchannels else 0))
            self._stop(at, stop)
            self.turns.append(AgentTurn(action="barge_in", at_s=from_frames(t), heard=heard,
                                        heard_from_s=from_frames(start), heard_to_s=from_frames(at)))
        elif kind == "eot":
            begin = self.turn_start if self.turn_start is not None else start
            self.turn_start = None
            heard = self._hear(caller, begin, last)
            ignore = not normal_words(heard) or self.stream.speaking(at - 1) or (
                self.over_agent and self._backchannel_only(heard))
            if ignore:
                self.turns.append(AgentTurn(action="ignored", at_s=from_frames(t), heard=heard,
                                            heard_from_s=from_frames(begin), heard_to_s=from_frames(last)))
                return
            if self._unstarted(t):
                self._stop(at, t)
            self.history.append(Message(role="user", content=heard, at_s=from_frames(t)))
            await self._answer(t, t + frames_of(s.recognition_ms), "answered", (begin, last, heard))

    def next_wake(self, t: int, caller: Stream) -> float:
        """The earliest frame at which :meth:`on_tick` could act: the next VAD event over the
        caller's planned audio, or the tool results' tick."""
        wake: float = NEVER if self.tool_wake is None else self.tool_wake
        ahead = [c for c in caller.chunks if c.end > self.processed]
        horizon = max([c.end for c in ahead], default=self.processed)
        if self.tracker.in_burst:
            horizon = max(horizon, self.processed) + self.tracker.eot + 1
        if horizon <= self.processed:
            return wake
        probe = replace(self.tracker)
        for i, speech in enumerate(self._flags(caller, self.processed, horizon)):
            event = probe.step(self.processed + i, bool(speech), self.stream)
            if event is not None:
                return min(wake, event[1])
        return wake
