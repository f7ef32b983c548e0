"""One duplex conversation's loop: the half-duplex loop's sides, tools and sync, driven by the
duplex engine's clock (:func:`~tauray.actors.voice.duplex.session.run_duplex`) instead of turn by
turn.

The engine runs once per conversation, on a worker thread of the coordinator's process (its
speech, VAD and recognition are CPU work that must not stall the coordinator's event loop); it
calls back into the loop only when a side's model must act, never once per tick:

* the caller's policy is the user-simulator host's step (its phone tools and their syncs run as
  in half duplex), on what the caller heard of the agent since its last turn;
* the agent is the agent host's step with one policy reply (``max_rounds=1``): a reply that runs
  tools hands its calls to the engine, whose ``tools`` callable returns the results the host
  already computed; the write's sync ran on the coordinator before the step returned, so
  actions, syncs and predicate verdicts land exactly as in half duplex, and the results reach
  the agent at the next tick;
* an ending the half-duplex loop would raise (the agent ends or transfers, a budget is spent, the
  caller says a stop token) is kept and the caller hangs up at its next turn, so the call leaves
  its timeline; a failure of a side (a model error) still ends the conversation as a failure.

Speech engines are the cell's (``tts``/``asr`` of its voice settings), made once per process and
used one call at a time; the voices are drawn per task and unit seed as the channel draws them.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, NamedTuple

import numpy as np

from tauray.actors.hosts import StepRequest
from tauray.actors.records import Termination
from tauray.actors.session import StepResult
from tauray.actors.voice.duplex import AgentReply, DuplexResult, Message, ToolCall, run_duplex_sync
from tauray.actors.voice.profiles import Effects, draw_voice
from tauray.scenarios.conventions import STOP_TOKENS

__all__ = ["ENDED", "CallerSide", "DuplexCall", "bridge", "caller_side", "duplex_engines", "run_duplex_call",
           "use_engines"]

_USER_STOPS = dict(zip(STOP_TOKENS, (Termination.USER_STOP, Termination.USER_TRANSFER, Termination.USER_OUT_OF_SCOPE)))
ENDED = {"caller_hung_up": Termination.USER_STOP, "caller_hung_up_on_silence": Termination.CALLER_HUNG_UP,
          "max_duration": Termination.MAX_DURATION}


class _OneAtATime:
    """An engine used by one thread at a time (conversations run on several worker threads)."""

    def __init__(self, engine: Any, lock: threading.Lock) -> None:
        self._engine, self._lock = engine, lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._engine, name)
        if name not in ("synth", "transcribe"):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)
        return call


_ENGINES: dict[str, tuple[Any, Any]] = {}


def use_engines(tts_spec: Any, asr_spec: Any, tts: Any, asr: Any) -> None:
    """Run the duplex calls of cells with these specs on these engines in this process (the bench's
    tone voice, which has no spec of its own)."""
    _ENGINES[f"{tts_spec.model_dump_json()}|{asr_spec.model_dump_json()}"] = (tts, asr)


def duplex_engines(tts: Any, asr: Any) -> tuple[Any, Any]:
    """The cell's synthesiser and recogniser, made once per process (by their specs)."""
    from tauray.actors.voice.engines import make_asr, make_tts  # lazy: loads the speech packages

    key = f"{tts.model_dump_json()}|{asr.model_dump_json()}"
    if key not in _ENGINES:
        _ENGINES[key] = (_OneAtATime(make_tts(tts), threading.Lock()), _OneAtATime(make_asr(asr), threading.Lock()))
    return _ENGINES[key]


_CHANNELS: dict[tuple[str, int, int], Any] = {}


def source_effects(profile: Any, tts: Any, asr: Any, voice: Any) -> Any:
    """The profile's source effects for a duplex caller's speech (``SourceEffects``), as the
    half-duplex channel puts them on the caller's utterances; None for a profile without any.
    The channel that applies them is made once per process for a profile and engine pair."""
    if profile.effects == Effects():
        return None
    key = (profile.model_dump_json(), id(tts), id(asr))
    if key not in _CHANNELS:
        from tauray.actors.voice.channel import SpeechChannel  # lazy: the speech channel loads the voice extra

        _CHANNELS[key] = SpeechChannel(profile, tts=tts, asr=asr)
    channel = _CHANNELS[key]

    def effects(audio: Any, rate: int, seed: int) -> Any:
        return channel.source_effects(audio, rate, voice, np.random.default_rng(seed), {})
    return effects


class DuplexCall:
    """The coordinator's side of one duplex call: the engine's callables, run on the loop."""

    def __init__(self, conv: Any) -> None:  # a Conversation (actors/conversation.py)
        self.conv = conv
        self.ended: Termination | None = None  # an ending the half-duplex loop would have raised
        self.agent_seen = 0  # engine history entries of the agent already handed to its host
        self.caller_heard = 0  # agent messages of the caller's history already handed to its host
        self.results: list[str] = []  # results of the tool calls last handed to the engine
        self.rounds: list[list[str]] = []  # per reply handed to the engine, its messages' words as the host has them
        self.truncated: set[int] = set()  # replies whose cut the host already has

    def _request(self, incoming: str | None, rounds: int,
                 truncate: tuple[tuple[str, str], ...] = ()) -> StepRequest:
        c, u = self.conv, self.conv.unit
        return StepRequest(conversation_id=c.id, incoming=incoming, max_rounds=rounds,
                           max_errors=u.max_errors - c.errors, turn=c.turn, seq=len(c.messages), clock_s=c.clock_s,
                           truncate=truncate)

    def _cuts(self, history: tuple[Message, ...]) -> tuple[tuple[str, str], ...]:
        """The agent's replies cut since it last stepped (the engine marks them ``truncated``), as
        (words the host has, words said) per message of the reply: the said words go to the
        reply's messages in order, so a reply of two messages cut in the second keeps the first."""
        cuts: list[tuple[str, str]] = []
        replies = [m for m in history if m.role == "assistant"]
        for number, message in enumerate(replies[:len(self.rounds)]):
            if not message.truncated or number in self.truncated:
                continue
            self.truncated.add(number)
            said = message.content.split()
            for words in self.rounds[number]:
                n = len(words.split())
                kept, said = " ".join(said[:n]), said[n:]
                if kept != words:
                    cuts.append((words, kept))
        return tuple(cuts)

    async def _step(self, side: str, incoming: str | None, rounds: int,
                    truncate: tuple[tuple[str, str], ...] = ()) -> StepResult:
        """One host step, recorded and synced as the half-duplex loop does; a failure raises (the
        conversation's loop classifies it)."""
        c = self.conv
        result = await c.client(side).step(self._request(incoming, rounds, truncate))
        c.record_step(result)
        c.take_view(side, result.sync_view)
        if result.wrote:
            await c.sync(f"{side}:{result.rounds[-1].events[-1].outcome.name}")
        self.ended = self.ending(result) or self.ended
        return result

    def ending(self, result: StepResult) -> Termination | None:
        """How the half-duplex loop would end after ``result`` (the agent ended or transferred, a
        budget is spent); None: it goes on."""
        c = self.conv
        if result.kind == "end":
            return Termination.AGENT_END
        if result.kind == "transfer":
            return Termination.AGENT_TRANSFER
        if c.errors >= c.unit.max_errors:
            return Termination.TOO_MANY_ERRORS
        if c.steps >= c.unit.max_steps:
            return Termination.MAX_STEPS
        return None

    async def agent(self, history: tuple[Message, ...]) -> AgentReply:
        """One model step of the agent on what it heard since its last step."""
        if self.ended is not None:
            self.rounds.append([])  # the engine still adds the (empty) reply to its history
            return AgentReply()
        heard = [m.content for m in history[self.agent_seen:] if m.role == "user" and m.content]
        self.agent_seen = len(history)
        self.conv.turn += 1
        result = await self._step("agent", " ".join(heard) or None, 1, self._cuts(history))
        texts = [r.message.content for r in result.rounds if r.message is not None and r.message.content]
        self.rounds.append(texts)
        said = " ".join(texts)
        self.conv.agent_texts.extend([said] if said else [])
        events = [e for r in result.rounds for e in r.events if not e.truncated]
        if self.ended is not None or not events or result.kind == "text":
            return AgentReply(text=said)
        self.results = [e.outcome.result for e in events]
        calls = tuple(ToolCall(id=e.message.tool_call_id or str(i), name=e.outcome.name, arguments=e.outcome.arguments)
                      for i, e in enumerate(events))
        return AgentReply(text=said, tool_calls=calls)

    async def tools(self, calls: Any) -> list[str]:
        """The results of the calls the agent's last step ran (run, and synced, by then)."""
        results, self.results = self.results, []
        return results[:len(calls)] + [""] * (len(calls) - len(results))

    async def caller(self, history: tuple[Message, ...]) -> str | None:
        """The caller's next turn on what it heard of the agent; None hangs up."""
        if self.ended is not None:
            return None
        replies = [m.content for m in history if m.role == "assistant"]
        heard = " ".join(r for r in replies[self.caller_heard:] if r)
        self.caller_heard = len(replies)
        self.conv.turn += 1
        incoming: str | None = heard or None
        while self.ended is None:
            result = await self._step("user", incoming, max(1, self.conv.unit.max_steps - self.conv.steps))
            incoming = None
            if result.kind == "budget":
                self.ended = Termination.MAX_STEPS
            if result.kind == "text" and self.ended is None:
                said = (result.rounds[-1].message.content or "") if result.rounds else ""
                self.ended = next((reason for token, reason in _USER_STOPS.items() if token in said), None)
                return said
        return None


def bridge(method: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """``method`` (a coroutine function of the loop's thread) callable from the engine's thread."""
    async def call(arg: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(method(arg), loop))
    return call


class CallerSide(NamedTuple):
    """The caller of a duplex cell's conversation: the cell's engines, its voice (drawn per task
    and unit seed, as the channel draws it) and the profile's source effects on its speech."""

    tts: Any
    asr: Any
    voice: Any
    effects: Any


def caller_side(conv: Any) -> CallerSide:
    """The caller of ``conv`` (a duplex cell's conversation), for the simulated clock and a live call alike."""
    voice, unit = conv.voice, conv.unit
    tts, asr = duplex_engines(voice.tts, voice.asr)
    profile = voice.profile
    drawn = draw_voice(profile, conv.scenario.name, unit.seed, side="user", voices=tts.voices(profile.persona.speaker))
    return CallerSide(tts, asr, drawn, source_effects(profile, tts, asr, drawn))


async def run_duplex_call(conv: Any) -> Termination:
    """Run ``conv`` (a duplex cell's) on the engine's clock; its result stays on ``conv.duplex``.
    Returns why it ended; a side's failure raises as in half duplex."""
    await conv.initialise()
    voice, unit, scenario = conv.voice, conv.unit, conv.scenario
    settings = voice.duplex
    caller = caller_side(conv)
    profile = voice.profile
    agent_voice = draw_voice(profile, scenario.name, unit.seed, side="agent",
                             voices=caller.tts.voices(profile.agent_persona.speaker))
    call, loop = DuplexCall(conv), asyncio.get_running_loop()
    result: DuplexResult = await asyncio.to_thread(
        run_duplex_sync, caller_policy=bridge(call.caller, loop), agent=bridge(call.agent, loop),
        tools=bridge(call.tools, loop), tts=caller.tts, asr=caller.asr, rules=settings.rules,
        pipeline=settings.pipeline, clock=settings.clock, caller_voice=caller.voice, agent_voice=agent_voice,
        unit_id=unit.unit_id, attempt=unit.attempt, seed=unit.seed, caller_effects=caller.effects)
    conv.duplex = result
    conv.clock_s = result.duration_s
    return call.ended or ENDED.get(result.ended, Termination.CALLER_HUNG_UP)
