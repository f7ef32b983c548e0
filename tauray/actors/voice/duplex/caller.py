"""The caller in duplex: it speaks its turns as a stream on the clock and, at each tick, keeps
talking, yields, starts after the agent's silence, interrupts, backchannels, lets out a vocal tic
or speech not meant for the agent, and checks in, then hangs up, after a long silence.

The rules are τ-Voice's by default (:class:`CallerRules`): a caller talked over yields after 1 s
of overlap when the agent started it, 5 s when the caller did; it answers once the agent has
been silent 1 s; every 2 s of the agent's speech it decides whether to interrupt or backchannel.
That decision comes from a :class:`DecisionHook` (a model asked with :data:`DECISION_PROMPT` at
the declared cadence) where one is given and answers, else from seeded rules
(:func:`seeded_decision`); tics and out-of-turn speech come from seeded Poisson schedules. Every
draw is keyed by (seed, unit, what, which) through :func:`~tauray.actors.voice.seeding.rng_for`,
never Python's salted ``hash``, so an offline run exercises every path and repeats bit for bit.

What the caller knows of the agent is what it heard: by default the agent's line audio through
its own recogniser (``hears='channel'``); ``hears='text'`` reads the agent's words, τ-Voice's way.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauray.actors.voice.duplex.clock import NEVER, ComputeLedger, frames_of
from tauray.actors.voice.duplex.errors import load_settings
from tauray.actors.voice.duplex.segments import FRAME_S, SegmentKind, from_frames
from tauray.actors.voice.duplex.stream import Chunk, Stream, line_samples, split_words, to_float, trim, word_ends
from tauray.actors.voice.duplex.talk import CallerPolicy, Message, resolve
from tauray.actors.voice.duplex.tones import cough
from tauray.actors.voice.profiles import DrawnVoice
from tauray.actors.voice.seeding import rng_for, stable_seed
from tauray.scenarios.conventions import STOP_TOKENS

__all__ = ["DECISION_PROMPT", "DECISION_PROMPT_SHA256", "DECISION_PROMPT_VERSION", "CallerRules", "Decision",
           "DecisionContext", "DecisionHook", "DuplexCaller", "SourceEffects", "render_decision_prompt",
           "seeded_decision"]

Decision = Literal["continue", "interrupt", "backchannel"]

DECISION_PROMPT_VERSION: Final = "1"
DECISION_PROMPT: Final = """You are the caller on a phone call with a customer-service agent. The agent is speaking now.
What you have heard of its current words: "{heard}"
It has been speaking for {speaking_s:.1f} s. Decide what you do in the next moment:
- "continue": keep listening in silence;
- "backchannel": a short "mm-hmm" or "okay" to show you follow, without taking the turn;
- "interrupt": take the turn now (it is wrong, repeats itself, or you already have what you need).
Answer with one word: continue, backchannel or interrupt."""
DECISION_PROMPT_SHA256: Final = hashlib.sha256(DECISION_PROMPT.encode()).hexdigest()


class CallerRules(BaseModel):
    """The caller's turn-taking in duplex: τ-Voice's thresholds and the seeded behaviour."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    yield_agent_started_s: float = Field(1.0, ge=0.0, le=30.0, description="Talked over by the agent, the caller "
                                         "yields after this much overlap (τ-Voice: 1 s).")
    yield_caller_started_s: float = Field(5.0, ge=0.0, le=60.0, description="Having started over the agent, the "
                                          "caller yields after this much overlap (τ-Voice: 5 s).")
    respond_after_silence_s: float = Field(1.0, ge=0.0, le=30.0, description="The caller answers once the agent "
                                           "has been silent this long (τ-Voice: 1 s).")
    decision_every_s: float = Field(2.0, gt=0.0, le=60.0, description="While the agent speaks, the caller decides "
                                    "this often whether to interrupt or backchannel (τ-Voice: 2 s).")
    interrupt_probability: float = Field(0.1, ge=0.0, le=1.0, description="Seeded fallback: chance a decision "
                                         "interrupts.")
    backchannel_probability: float = Field(0.3, ge=0.0, le=1.0, description="Seeded fallback: chance a decision "
                                           "backchannels.")
    vocal_tic_per_min: float = Field(0.5, ge=0.0, le=30.0, description="Vocal tics ('um', a cough) standing apart, "
                                     "per minute of the call.")
    tic_before_turn_probability: float = Field(0.1, ge=0.0, le=1.0, description="Chance a turn starts with a tic "
                                               "('um') that runs into its words.")
    out_of_turn_per_min: float = Field(0.3, ge=0.0, le=30.0, description="Speech not meant for the agent ('hold "
                                       "on a second'), per minute of the call.")
    checkin_after_s: float = Field(8.0, gt=0.0, le=600.0, description="Silence while waiting on the agent after "
                                   "which the caller checks in.")
    max_checkins: int = Field(1, ge=0, le=10, description="Check-ins before the caller hangs up on silence.")
    hangup_after_s: float = Field(8.0, gt=0.0, le=600.0, description="Silence after the last check-in after which "
                                  "the caller hangs up.")
    checkin_text: str = Field("Hello? Are you still there?", min_length=1, description="What a check-in says.")
    backchannel_words: tuple[str, ...] = Field(("mm-hmm", "uh-huh", "okay", "yeah"), min_length=1,
                                               description="What a backchannel says (one is drawn).")
    vocal_tics: tuple[str, ...] = Field(("um", "uh", "<cough>"), min_length=1, description="Vocal tics drawn "
                                        "from; '<cough>' is a cough.")
    out_of_turn: tuple[str, ...] = Field(("hold on a second", "sorry, one moment", "just a sec"), min_length=1,
                                         description="Out-of-turn lines drawn from.")
    hears: Literal["channel", "text"] = Field("channel", description="'channel': the caller hears the agent "
                                              "through the line and its recogniser; 'text': it reads the agent's "
                                              "words (τ-Voice's way).")
    opening: Literal["agent", "caller"] = Field("agent", description="Who speaks first.")

    @model_validator(mode="after")
    def _probabilities(self) -> CallerRules:
        if self.interrupt_probability + self.backchannel_probability > 1.0:
            raise ValueError("interrupt_probability + backchannel_probability is over 1")
        return self

    @classmethod
    def parse(cls, data: Any) -> CallerRules:
        """From a sweep file's mapping; one line naming the field on a bad or unknown one."""
        return load_settings(cls, data, "turn_taking")


class DecisionContext(BaseModel):
    """What a decision model is told at one decision point."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    at_s: float = Field(description="When, seconds.")
    speaking_s: float = Field(description="How long the agent has been speaking, seconds.")
    heard: str = Field(description="What the caller heard of the agent's current words.")
    history: tuple[Message, ...] = Field(description="The caller's history.")
    index: int = Field(description="The decision's number in the call.")


def render_decision_prompt(context: DecisionContext) -> str:
    """:data:`DECISION_PROMPT` filled in (version :data:`DECISION_PROMPT_VERSION`)."""
    return DECISION_PROMPT.format(heard=context.heard, speaking_s=context.speaking_s)


class DecisionHook(Protocol):
    """A model-driven caller's interrupt/backchannel decision; None falls back to the seeded rule."""

    def __call__(self, context: DecisionContext) -> Any: ...


class SourceEffects(Protocol):
    """The speech profile's effects at the caller's end of the line (noise, muffling, bursts,
    drops) on one utterance: audio at ``rate`` in, the same length out, drawn from ``seed``."""

    def __call__(self, audio: np.ndarray, rate: int, seed: int) -> np.ndarray: ...


def seeded_decision(rules: CallerRules, seed: int, unit_id: str, index: int) -> Decision:
    """The scripted caller's decision number ``index``, from its own keyed draw (so one decision
    never shifts another)."""
    u = float(rng_for("duplex-caller", seed, unit_id, "decision", index).random())
    if u < rules.interrupt_probability:
        return "interrupt"
    if u < rules.interrupt_probability + rules.backchannel_probability:
        return "backchannel"
    return "continue"


def _poisson_times(per_min: float, frames: int, *key: object) -> list[int]:
    if per_min <= 0:
        return []
    rng = rng_for(*key)
    out, at = [], 0.0
    while True:
        at += float(rng.exponential(60.0 / per_min))
        if at / FRAME_S >= frames:
            return out
        out.append(round(at / FRAME_S))


class DuplexCaller:
    """The caller on the clock: :meth:`on_tick` decides at a tick from the agent's audio before
    it; :meth:`next_wake` says when it could next act."""

    def __init__(self, policy: CallerPolicy, rules: CallerRules, *, tts: Any, voice: DrawnVoice, asr: Any,
                 ledger: ComputeLedger, seed: int, unit_id: str, max_frames: int,
                 decide: DecisionHook | None = None, effects: SourceEffects | None = None) -> None:
        self.policy, self.rules, self.tts, self.voice, self.asr = policy, rules, tts, voice, asr
        self.effects = effects
        self.ledger, self.seed, self.unit_id, self.decide = ledger, seed, unit_id, decide
        self.stream = Stream("user")
        self.history: list[Message] = []
        self.heard_replies: set[int] = set()
        self.last_turn_start: int | None = None
        self.turns = 0
        self.decisions = 0
        self.decided: dict[int, int] = {}  # agent stretch start -> decisions made in it
        self.checkins = 0
        self.hangup: int | None = None
        self.counts: dict[str, int] = {"turns": 0, "yields": 0, "interruptions": 0, "backchannels": 0,
                                       "vocal_tics": 0, "out_of_turn": 0, "checkins": 0, "model_decisions": 0}
        extras = [(f, "vocal_tic") for f in _poisson_times(rules.vocal_tic_per_min, max_frames, "duplex-caller",
                                                            seed, unit_id, "tics")]
        extras += [(f, "out_of_turn") for f in _poisson_times(rules.out_of_turn_per_min, max_frames,
                                                               "duplex-caller", seed, unit_id, "asides")]
        self.extras: list[tuple[int, str]] = sorted(extras)
        self.yield_frames = (frames_of(1000 * rules.yield_agent_started_s), frames_of(1000 * rules.yield_caller_started_s))
        self.respond_frames = frames_of(1000 * rules.respond_after_silence_s)
        self.cadence = max(1, frames_of(1000 * rules.decision_every_s))

    # --- saying --------------------------------------------------------------------------------

    def _say(self, text: str, kind: SegmentKind, at: int, number: int, seed_key: str) -> Chunk:
        seed = stable_seed("duplex-caller", self.seed, self.unit_id, seed_key)
        with self.ledger.timed("tts"):
            if text == "<cough>":
                rate = self.tts.sample_rate
                raw, spans = cough(rate, seed), [(0.0, 0.24)]
            else:
                raw = self.tts.synth(text, self.voice.voice, self.voice.rate_for(text), self.voice.pitch,
                                     self.voice.seed)  # slower where it spells an identifier
                spans = self.tts.word_spans(text) if hasattr(self.tts, "word_spans") else None
            rate = self.tts.sample_rate
            loud = np.flatnonzero(np.abs(raw) >= 0.01)
            said = trim(raw)
        if self.effects is not None:  # the profile's noise, muffling, bursts and drops at the caller's end
            with self.ledger.timed("effects"):
                said = self.effects(said, rate, seed)
        with self.ledger.timed("tts"):
            samples = line_samples(said, rate)
        ends = word_ends(split_words(text), samples.size // 160, spans, loud[0] / rate if loud.size else 0.0)
        return self.stream.add(Chunk("user", kind, at, samples, text, ends, reply=number))

    def _agent_words(self, agent: Stream, number: int, until: int) -> str:
        chunks = [c for c in agent.chunks if c.reply == number and c.start < until]
        if self.rules.hears == "text":
            return " ".join(c.said_text(until) for c in chunks).strip()
        # One recognition over the reply's audio as heard by ``until`` (gaps between sentences kept).
        start, stop = chunks[0].start, min(max(c.end for c in chunks), until)
        with self.ledger.timed("asr"):
            return self.asr.transcribe(to_float(agent.window(start, stop), 16000)).strip()

    def _catch_up(self, agent: Stream, t: int) -> str:
        """Add what the caller heard of the agent's replies so far to its history; returns the
        words of a reply still being said at ``t`` (not added yet: it is not over)."""
        under_way = ""
        for number in sorted({c.reply for c in agent.chunks if c.start < t} - self.heard_replies):
            chunks = [c for c in agent.chunks if c.reply == number and c.start < t]
            if any(c.start <= t - 1 < c.end for c in chunks):
                under_way = self._agent_words(agent, number, t)
                continue
            self.heard_replies.add(number)
            words = self._agent_words(agent, number, t)
            if words:
                self.history.append(Message(role="assistant", content=words, at_s=from_frames(chunks[0].start)))
        return under_way

    async def _turn(self, t: int, agent: Stream, kind: str) -> None:
        """Say the policy's next turn from frame ``t`` (maybe after a tic); a stop ends the call."""
        under_way = self._catch_up(agent, t)
        view = self.history + ([Message(role="assistant", content=under_way, at_s=from_frames(t))] if under_way else [])
        with self.ledger.timed("caller_model"):
            text = await resolve(self.policy(tuple(view)))
        stop = text is None or any(token in text for token in STOP_TOKENS)
        for token in STOP_TOKENS:
            text = (text or "").replace(token, "")
        text = text.strip()
        number = self.turns
        self.turns += 1
        if not text:
            self.hangup = t
            return
        at = t
        rng = rng_for("duplex-caller", self.seed, self.unit_id, "turn", number)
        if kind == "speech" and float(rng.random()) < self.rules.tic_before_turn_probability:
            tic = self.rules.vocal_tics[int(rng.integers(len(self.rules.vocal_tics)))]
            at = self._say(tic, "vocal_tic", t, number, f"turn-tic-{number}").end
        chunk = self._say(text, "speech", at, number, f"turn-{number}")
        chunk.meta["final"] = stop
        self.history.append(Message(role="user", content=text, at_s=from_frames(at)))
        self.last_turn_start = t
        self.counts["turns"] += 1
        if kind == "checkin":
            self.counts["checkins"] += 1
        if stop:
            self.hangup = chunk.end

    # --- the tick ------------------------------------------------------------------------------

    def _speaking_until(self, t: int) -> int:
        return max([c.end for c in self.stream.chunks if c.end > t], default=t)

    def _owed(self, agent: Stream, t: int) -> bool:
        """The agent has said something since the caller's last turn began (or opened the call)."""
        since = -1 if self.last_turn_start is None else self.last_turn_start
        spoke = any(c.kind == "speech" and since <= c.start < t for c in agent.chunks)
        return spoke or (self.last_turn_start is None and self.rules.opening == "caller")

    def _maybe_yield(self, t: int, agent: Stream) -> None:
        mine = self.stream.at(t)
        if mine is None or mine.kind != "speech" or mine.meta.get("final") or mine.start >= t:
            return
        stretch = agent.stretch(t - 1)
        if stretch is None or stretch[1] <= mine.start:
            return
        over = max(stretch[0], mine.start)
        limit = self.yield_frames[0] if stretch[0] >= mine.start else self.yield_frames[1]
        if t - over >= limit:
            self.stream.stop(over + limit, t)
            text = mine.said_text()
            for i in range(len(self.history) - 1, -1, -1):
                if self.history[i].role == "user":
                    self.history[i] = self.history[i].model_copy(update={"content": text, "truncated": True})
                    break
            self.counts["yields"] += 1

    async def on_tick(self, t: int, agent: Stream) -> None:
        if self.hangup is not None:
            return
        if self._speaking_until(t) > t:
            self._maybe_yield(t, agent)
            return
        stretch = agent.stretch(t - 1)
        if stretch is not None:
            await self._while_agent_speaks(t, agent, stretch)
            return
        if self._extra(t, agent):
            return
        heard_end = agent.last_end(t)
        # the caller is not speaking now (checked above): its last word ended at or before t,
        # also when that was this very frame
        mine = max((c.end for c in self.stream.chunks if c.end <= t), default=None)
        if self._owed(agent, t):
            if heard_end is not None and t - heard_end >= self.respond_frames or (
                    heard_end is None and self.rules.opening == "caller"):
                self.checkins = 0
                await self._turn(t, agent, "speech")
            return
        quiet_since = max(x for x in (heard_end, mine, 0) if x is not None)
        if self.checkins < self.rules.max_checkins:
            if t - quiet_since >= frames_of(1000 * self.rules.checkin_after_s):
                self.checkins += 1
                await self._checkin(t, agent)
        elif t - quiet_since >= frames_of(1000 * self.rules.hangup_after_s):
            self.hangup = t

    async def _checkin(self, t: int, agent: Stream) -> None:
        text = self.rules.checkin_text
        number = self.turns
        self.turns += 1
        self._say(text, "speech", t, number, f"checkin-{number}")
        self.history.append(Message(role="user", content=text, at_s=from_frames(t)))
        self.last_turn_start = t
        self.counts["checkins"] += 1

    def _extra(self, t: int, agent: Stream) -> bool:
        """A tic or an out-of-turn line that is due, said now (over the agent or into silence)."""
        if not self.extras or self.extras[0][0] > t:
            return False
        frame, kind = self.extras.pop(0)
        rng = rng_for("duplex-caller", self.seed, self.unit_id, kind, frame)
        pool = self.rules.vocal_tics if kind == "vocal_tic" else self.rules.out_of_turn
        self._say(pool[int(rng.integers(len(pool)))], kind, t, -1, f"{kind}-{frame}")  # type: ignore[arg-type]
        self.counts["vocal_tics" if kind == "vocal_tic" else "out_of_turn"] += 1
        return True

    def _first_decision(self, start: int) -> int:
        """The next decision due in the agent's stretch from ``start``: after the last one made,
        and none that fell while the caller itself was speaking (those are skipped, not late)."""
        mine = max([c.end for c in self.stream.chunks], default=0)
        return max(self.decided.get(start, 0) + 1, -(-(mine - start) // self.cadence))

    async def _while_agent_speaks(self, t: int, agent: Stream, stretch: tuple[int, int]) -> None:
        start = stretch[0]
        due = (t - 1 - start) // self.cadence
        first = self._first_decision(start)
        self.decided[start] = max(due, first - 1)
        for k in range(first, due + 1):
            index = self.decisions
            self.decisions += 1
            choice: Decision | None = None
            if self.decide is not None:
                heard = self._catch_up(agent, t)
                context = DecisionContext(at_s=from_frames(start + k * self.cadence), speaking_s=from_frames(
                    k * self.cadence), heard=heard, history=tuple(self.history), index=index)
                with self.ledger.timed("decision_model"):
                    choice = await resolve(self.decide(context))
                if choice is not None:
                    self.counts["model_decisions"] += 1
            choice = choice or seeded_decision(self.rules, self.seed, self.unit_id, index)
            if choice == "interrupt":
                self.counts["interruptions"] += 1
                await self._turn(t, agent, "speech")
                return
            if choice == "backchannel":
                rng = rng_for("duplex-caller", self.seed, self.unit_id, "backchannel", index)
                words = self.rules.backchannel_words
                self._say(words[int(rng.integers(len(words)))], "backchannel", t, -1, f"backchannel-{index}")
                self.counts["backchannels"] += 1
                return
        self._extra(t, agent)

    def next_wake(self, t: int, agent: Stream) -> float:
        """The earliest frame at which :meth:`on_tick` could act (the clock rounds it up to a tick)."""
        if self.hangup is not None:
            return NEVER
        wakes: list[float] = []
        until = self._speaking_until(t)
        if until > t:
            wakes.append(until)
            for mine in (c for c in self.stream.chunks if c.end > t and c.kind == "speech"):
                for s0, s1 in agent.stretches(mine.start):
                    if s0 >= mine.end:
                        break
                    over = max(s0, mine.start)
                    trigger = over + (self.yield_frames[0] if s0 >= mine.start else self.yield_frames[1])
                    if trigger < mine.end and trigger <= s1:
                        wakes.append(max(trigger, t + 1))
            return min(wakes)
        for s0, s1 in agent.stretches(t - 1):
            k = self._first_decision(s0)
            if s0 + k * self.cadence < s1:
                wakes.append(max(t + 1, s0 + k * self.cadence + 1))
            wakes.append(s1 + self.respond_frames)
            break
        if self.extras:
            wakes.append(self.extras[0][0])
        # Silence counted from what has been heard by now, and from the end of what is planned.
        for horizon in (t, None):
            agent_end = max([c.end for c in agent.chunks if horizon is None or c.end <= horizon], default=0)
            mine_end = max([c.end for c in self.stream.chunks if horizon is None or c.end <= horizon], default=0)
            quiet_since = max(agent_end, mine_end)
            wakes += [agent_end + self.respond_frames, quiet_since + frames_of(1000 * self.rules.checkin_after_s),
                      quiet_since + frames_of(1000 * self.rules.hangup_after_s)]
        later = [w for w in wakes if w > t]
        return min(later) if later else t + 1
