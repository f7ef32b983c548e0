"""One conversation's loop: open both sides, initialise them (initialization data and
actions, each followed by sync), let the agent greet first, then alternate turns.

Both sides build their DBs themselves from the scenario; no DB crosses between
actors. In a domain with sync the coordinator holds both sides' sync views (the
little of each DB the sync reads): it builds the initial ones itself, and a host
hands back its view whenever it changed (with a step, or with a sync's updates).
After every write on either side the domain's sync (a pure function of the two
views) is computed and each side pushed its updates. The agent never sees
the user's tool calls or results and vice versa: each side's host keeps its own
view. The loop stops on a user stop token, the agent's ``end_conversation`` or
``transfer_to_human_agents``, max steps, too many tool errors, or a model failure
after retries; then the final state is scored (pure) and the result records are
built (:mod:`tauray.actors.records`) from what each host checked of its final DB.
Whatever happens, one ``ConversationResult``
comes back: a failure is a row that says why.

The transcript is a list of :class:`~tauray.results.tables.records.MessageRecord`: each host
makes its side's messages (numbered from the ``seq`` and ``turn`` the step is given)
and they are kept here as they come, beside the few the loop makes itself (the task's
opening history, the greeting); the result carries them unchanged to the writer.
"""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from datetime import datetime, timezone
from typing import Any

from tauray.actors import heap
from tauray.actors.duplex_call import run_duplex_call
from tauray.actors.failures import CONFIG, Failure, classify
from tauray.actors.hosts import CloseRequest, OpenRequest, RunToolRequest, SideHost, StepRequest, SyncRequest
from tauray.actors.llm import ModelConfigError
from tauray.actors.policies import GREETING
from tauray.actors.records import REASONS, Termination, build_result
from tauray.actors.session import SideFinal, StepResult
from tauray.actors.unit import WorkUnit
from tauray.actors.voice.heard import deliver
from tauray.results.tables.records import INTERNAL, ConversationResult, MessageRecord
from tauray.scenarios.conventions import STOP_TOKENS
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.initial import initial_state
from tauray.scenarios.model import Scenario
from tauray.scenarios.registry import default_registry
from tauray.scenarios.scoring import ExecutedCall, matched_reference

_USER_STOPS = dict(zip(STOP_TOKENS, (Termination.USER_STOP, Termination.USER_TRANSFER, Termination.USER_OUT_OF_SCOPE)))


class SideClient:
    """One side's host as the loop calls it, the same way whether the host is a Ray actor or a
    local object (tests of the loop without Ray): typed calls, each one request record."""

    def __init__(self, host: SideHost | None):
        self.host = host
        self.remote = hasattr(getattr(host, "step", None), "remote")

    async def open(self, request: OpenRequest) -> None:
        return await (self.host.open.remote(request) if self.remote else self.host.open(request))

    async def step(self, request: StepRequest) -> StepResult:
        return await (self.host.step.remote(request) if self.remote else self.host.step(request))

    async def run_tool(self, request: RunToolRequest) -> StepResult:
        return await (self.host.run_tool.remote(request) if self.remote else self.host.run_tool(request))

    async def apply_sync(self, request: SyncRequest) -> dict[str, Any] | None:
        return await (self.host.apply_sync.remote(request) if self.remote else self.host.apply_sync(request))

    async def close(self, request: CloseRequest) -> SideFinal | None:
        return await (self.host.close.remote(request) if self.remote else self.host.close(request))


class _Stop(Exception):
    def __init__(self, reason: Termination, kind: str | None = None, message: str | None = None):
        self.reason, self.kind, self.message = reason, kind, message


def _failure(exc: BaseException | Failure) -> _Stop:
    """The stop an exception means (classified in one place, ``tauray.actors.failures``), or a
    failure a host classified already (a carry that failed in its step)."""
    failure = exc if isinstance(exc, Failure) else classify(exc)
    return _Stop(REASONS.get(failure.kind, Termination.INTERNAL_ERROR), failure.kind, failure.message)


class Conversation:
    """One conversation's bookkeeping, while it runs."""

    def __init__(self, unit: WorkUnit, scenario: Scenario, agent: SideClient, user: SideClient,
                 speech: Any = None):
        self.unit = unit
        self.voice = unit.voice  # None: a text conversation
        self.speech = speech  # voice cells: the speech client the speaking hosts carry utterances on
        self.carried: Any = None  # what the channel made of the last words a side said (its host carried them)
        self.utterances: list[Any] = []  # UtteranceRecords, in the order spoken
        self.audio: dict[str, bytes] = {}  # the utterances' audio files, from the hosts at close
        self.clock_s = 0.0  # the simulated clock: the end of the last utterance, seconds
        self.duplex: Any = None  # a duplex call's DuplexResult (segments, recording, metrics)
        self.id = unit.unit_id
        self.scenario = scenario
        self.domain = domain_spec(scenario.domain)
        self.agent, self.user = agent, user
        self.messages: list[MessageRecord] = []
        self.actions: list[dict[str, Any]] = []
        self.calls: list[ExecutedCall] = []
        self.agent_texts: list[str] = []
        self.turn = 0
        self.steps = 0
        self.errors = 0
        self.sync_events = 0
        self.views: dict[str, dict[str, Any]] | None = None  # both sides' sync views (domains with sync)

    def client(self, side: str) -> SideClient:
        return self.agent if side == "agent" else self.user

    # --- records while running -----------------------------------------------------------
    def _message(self, side: str, role: str, content: str | None, tool_calls: list[dict] | None = None,
                 tool_call_id: str | None = None) -> None:
        """A message no policy produced (the task's opening history, the greeting)."""
        self.messages.append(MessageRecord(
            run_id=self.unit.run_id, conversation_id=self.id, scenario=self.scenario.name, seq=len(self.messages),
            turn=self.turn, side=side, role=role, content=content, tool_calls=tool_calls,
            tool_call_id=tool_call_id, created_at=datetime.now(timezone.utc)))

    def record_step(self, result: StepResult) -> None:
        for round_ in result.rounds:
            message = round_.message
            if message is not None:
                self.steps += 1
                self.messages.append(message)
                if result.side == "agent" and message.content:
                    self.agent_texts.append(message.content)
            for event in round_.events:
                o = event.outcome
                self.messages.append(event.message)
                call = ExecutedCall(side=o.side, name=o.name, arguments=o.arguments)
                if not event.truncated:  # a cut call was never run: not among the calls made
                    self.calls.append(call)
                self.errors += o.error
                self.actions.append(dict(turn=self.turn, side=o.side, kind="tool_call", tool=o.name,
                                         arguments=o.arguments, result=o.result, error=o.error,
                                         is_write=o.is_write, matched_action_id=matched_reference(self.scenario, call),
                                         sync_agent=None, sync_user=None))

    # --- sync ----------------------------------------------------------------------------
    def take_view(self, side: str, view: dict[str, Any] | None) -> None:
        """A host's sync view, when it changed (None: the one held is current)."""
        if view is not None and self.views is not None:
            self.views[side] = view

    async def sync(self, trigger: str) -> None:
        if self.views is None:  # no sync in this domain
            return
        updates = self.domain.sync_views(self.views["agent"], self.views["user"])
        if updates.empty:
            return
        for side in ("agent", "user"):
            part = updates.for_side(side)
            if part:
                self.take_view(side, await self.client(side).apply_sync(
                    SyncRequest(conversation_id=self.id, updates=part, domain=self.scenario.domain)))
        self._sync_row(trigger, updates.for_side("agent"), updates.for_side("user"))

    def _sync_row(self, trigger: str, agent: dict[str, Any], user: dict[str, Any]) -> None:
        self.sync_events += 1
        self.actions.append(dict(turn=self.turn, side=trigger.split(":")[0] if ":" in trigger else "agent",
                                 kind="sync", tool=None, arguments=None, result=f"sync after {trigger}",
                                 error=False, is_write=True, matched_action_id=None,
                                 sync_agent=agent or None, sync_user=user or None))

    # --- the loop -----------------------------------------------------------------------
    async def initialise(self) -> None:
        """Both sides start from the scenario's initial dual state (initialization data
        and actions, each followed by sync), each host building its own side; here,
        in a domain with sync, the same state gives the syncs it took and both sides'
        sync views. The agent greets first."""
        s = self.scenario
        if self.domain.sync_views is not None and self.domain.has_user_state:
            init = initial_state(s)
            for event in init.events:
                self._sync_row("init", event.agent, event.user)
            self.views = dict(init.views)
        # a task's own opening replaces the greeting; on a call the caller speaks first
        greeting = None if s.message_history or self.voice else GREETING
        opened = await asyncio.gather(  # both opens end before a failure counts: `close` must not overtake one
            self.agent.open(self._open_request("agent", greeting)), self.user.open(self._open_request("user", None)),
            return_exceptions=True)
        for outcome in opened:
            if isinstance(outcome, BaseException):
                raise outcome
        for m in s.message_history or ():
            calls = [{"id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)} for c in m.tool_calls] or None
            self._message(m.side, m.role, m.content, calls, tool_call_id=m.tool_call_id)
            if m.side == "agent" and m.role == "assistant" and m.content:
                self.agent_texts.append(m.content)
        if greeting:
            self._message("agent", "assistant", GREETING)
            self.agent_texts.append(GREETING)

    def _open_request(self, side: str, greeting: str | None) -> OpenRequest:
        """How ``side``'s host opens this conversation. A voice cell's host gets the voice settings,
        and the speech client where the side speaks through the channel (the caller always; the
        agent where the caller hears it)."""
        u = self.unit
        speech = None
        if self.voice is not None and self.voice.duplex is None:  # a duplex call's speech is the engine's
            if self.speech is None:  # a bug of ours: a voice unit must never run as text
                raise RuntimeError("a voice cell's conversation was started without a speech client")
            speech = self.speech if side == "user" or self.voice.hear_agent else None
        return OpenRequest(conversation_id=self.id, run_id=u.run_id, scenario=self.scenario.name,
                           spec=u.agent if side == "agent" else u.user, seed=u.seed, greeting=greeting,
                           voice=self.voice, speech=speech, attempt=u.attempt)

    async def side_turn(self, side: str, incoming: str | None) -> str:
        """Run one side until it says something to the other side; return that text."""
        self.turn += 1
        client = self.client(side)
        while True:
            budget = self.unit.max_steps - self.steps
            if budget <= 0:
                raise _Stop(Termination.MAX_STEPS)
            try:
                result = await client.step(StepRequest(
                    conversation_id=self.id, incoming=incoming, max_rounds=budget,
                    max_errors=self.unit.max_errors - self.errors, turn=self.turn, seq=len(self.messages),
                    clock_s=self.clock_s))
            except Exception as exc:
                raise _failure(exc) from exc
            incoming = None
            self.record_step(result)
            self.take_view(side, result.sync_view)
            if result.wrote:
                await self.sync(f"{side}:{result.rounds[-1].events[-1].outcome.name}")
            if result.kind == "end":
                raise _Stop(Termination.AGENT_END)
            if result.kind == "transfer":
                raise _Stop(Termination.AGENT_TRANSFER)
            if result.kind == "budget":
                raise _Stop(Termination.MAX_STEPS)
            if self.errors >= self.unit.max_errors:
                raise _Stop(Termination.TOO_MANY_ERRORS)
            if result.kind == "text":
                self.carried = result.carried
                return (result.rounds[-1].message.content or "") if result.rounds else ""

    async def carry(self, side: str, text: str) -> str:
        """What the other side hears of ``text``: the text itself in a text cell; in a voice
        cell the recognised text, after one trip through the speech channel (carried by the
        speaker's host in the step that said it, never on this event loop), its utterance
        record kept. The simulated clock moves on by the utterance's length."""
        carried, self.carried = self.carried, None
        if self.voice is None or carried is None:  # a text cell, or nothing said aloud
            return text
        if isinstance(carried, Failure):  # the host's carry failed; its step is recorded already
            raise _failure(carried)
        try:
            record, heard = await deliver(self.voice, side, carried)  # text, or the audio to an audio-in agent
        except Exception as exc:
            raise _failure(exc) from exc
        self.utterances.append(record)
        self.clock_s = max(self.clock_s, record.end_s)
        return heard

    async def run(self) -> Termination:
        if self.voice is not None and self.voice.duplex is not None and self.unit.agent.is_live:  # a live call
            from tauray.actors.live_call import run_live_call  # lazy: the optional extra tauray[live] (websockets, mcp)

            raise _Stop(*await run_live_call(self))
        if self.voice is not None and self.voice.duplex is not None:  # both sides on one clock
            raise _Stop(await run_duplex_call(self))
        await self.initialise()
        to_user: str | None = None if self.voice else GREETING
        history = [m for m in self.scenario.message_history or () if m.role != "tool"]
        if history:  # both sides already hold the opening; whoever did not speak last goes on
            to_user = None if history[-1].side == "agent" else await self._agent_says(None)
        while True:
            said = await self.side_turn("user", to_user)
            for token, reason in _USER_STOPS.items():
                if token in said:
                    raise _Stop(reason)
            to_user = await self._agent_says(await self.carry("user", said))

    async def _agent_says(self, heard: str | None) -> str:
        """The agent's turn on what it heard; what the user simulator gets of its reply: the
        agent's own words, or in a cell that hears the agent, what the channel made of them."""
        said = await self.side_turn("agent", heard)
        if self.voice is not None and self.voice.hear_agent:
            return await self.carry("agent", said)
        return said


async def run_conversation(unit: WorkUnit, agent_host: SideHost, user_host: SideHost,
                           speech: Any = None) -> ConversationResult:
    """Run one work unit to a ``ConversationResult``; never raises. ``speech`` (the run's
    PoolRef, or a speech client) is what the speaking hosts carry a voice cell's utterances on."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    agent, user = SideClient(agent_host), SideClient(user_host)
    scenario = default_registry().get(unit.scenario)
    heap.loaded(f"domain:{scenario.domain}")  # the domain's scenarios stay for the process's life
    conv = Conversation(unit, scenario, agent, user, speech)
    reason, error_kind, error_message = Termination.INTERNAL_ERROR, None, None
    try:
        await conv.run()
    except _Stop as stop:
        reason, error_kind, error_message = stop.reason, stop.kind, stop.message
    except Exception as exc:  # a bug of ours must still become a row
        stop = _failure(exc)
        reason, error_kind, error_message = stop.reason, stop.kind, stop.message
        if error_kind == INTERNAL:
            error_message = f"{error_message}\n{traceback.format_exc(limit=6)}"
    finals: dict[str, SideFinal | None] = {}
    for side, client in (("agent", agent), ("user", user)):
        try:  # each host scores its own final DB, unless the conversation failed
            finals[side] = await client.close(CloseRequest(conversation_id=conv.id, check=error_kind is None))
            conv.audio.update(finals[side].audio if finals[side] is not None else {})
        except Exception as exc:
            finals[side] = None
            if error_kind is None:
                stop = _failure(exc)
                reason, error_kind, error_message = stop.reason, stop.kind, stop.message
    if error_kind == CONFIG:  # the same for every unit: the driver stops the run with it
        raise ModelConfigError(f"{error_message.removeprefix('ModelConfigError: ')} (on a worker, where the "
                               "conversation ran: its environment lacks what the driver has; set key variables "
                               "on every node or in the cluster's runtime_env env_vars)")
    return build_result(conv, reason, error_kind, error_message, finals, started, time.perf_counter() - t0)


def failed_result(unit: WorkUnit, kind: str, message: str) -> ConversationResult:
    """The row of a unit whose conversation could not run at all (e.g. its coordinator died)."""
    scenario = default_registry().get(unit.scenario)
    conv = Conversation(unit, scenario, SideClient(None), SideClient(None))
    return build_result(conv, REASONS.get(kind, Termination.INTERNAL_ERROR), kind, message, {},
                        datetime.now(timezone.utc), 0.0)
