"""One conversation whose agent is a live phone bot: the call held on the wall clock
(:func:`~tauray.actors.voice.live.call_loop.run_live`), beside :mod:`tauray.actors.duplex_call`,
which holds a simulated agent on the simulated clock.

* **The caller** is the user-simulator host, bridged as a duplex call's is (:class:`LiveCall` is a
  :class:`~tauray.actors.duplex_call.DuplexCall`): its steps, phone tools and syncs run as there.
* **The agent** is the bot on the line. The agent host's session still holds the agent DB, and its
  policy is never stepped. Each tool call the bot makes over MCP runs on that session with no
  model turn (:meth:`~tauray.actors.hosts.SideHost.run_tool`) and is recorded as a model's tool
  call is (``record_step``, the sync view, and a sync after a write), so it lands in ``actions``
  and ``messages``, and the predicates score the agent DB as for any agent. The bot's words are
  known only as the caller heard them: each reply the caller's recogniser heard is the agent's
  message in the transcript, and what the judge and the communicated-value check read. The caller's steps and
  the bot's tool calls take one lock, so the transcript numbers stay in order.
* **One tool server per coordinator process** (per event loop), started by the first live call
  and kept: it serves each conversation at its own URL, registered before dialling and
  unregistered after, so a call costs no server start and no port of its own. It runs on the
  coordinator's loop, where the calls it takes are recorded.
* **The call runs on a thread of its own**, with its own event loop: it paces frames on the wall
  clock, which the coordinator's loop must not do, and it may last minutes, which the loop's
  default executor (a few threads) must not be held for.
* **Rows.** A fault of the harness (``unreachable``, ``harness_late``, or lateness past the
  limit) is an infrastructure row, rerun by ``--retry-errors``; any other fault is the bot's: a
  ``fault`` row of kind ``model`` (a verdict on the agent under test) whose message is the
  fault's one line. A call that ends well is scored; the bot may end it (``bot_hung_up``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from tauray.actors.duplex_call import ENDED, DuplexCall, bridge, caller_side
from tauray.actors.hosts import RunToolRequest
from tauray.actors.quota.book import gate as quota_gate
from tauray.actors.quota.book import quota_key
from tauray.actors.quota.model import Limits, Settlement
from tauray.actors.records import Termination
from tauray.actors.session import StepResult
from tauray.actors.voice.live.agent import phone_agent
from tauray.actors.voice.live.call_loop import LiveResult, run_live_sync
from tauray.actors.voice.live.realtime_agent import realtime_agent
from tauray.actors.voice.live.realtime_call import RealtimeCall
from tauray.actors.voice.live.tool_server import ToolReply, ToolServer
from tauray.actors.voice.rules import voice_prompt
from tauray.results.tables.records import INFRA, MODEL

__all__ = ["LiveCall", "live_ending", "run_live_call", "tool_server"]


class LiveCall(DuplexCall):
    """The coordinator's side of one live call: the caller bridged as in a duplex call, and the
    bot's tool calls run on the agent host."""

    def __init__(self, conv: Any) -> None:  # a Conversation (actors/conversation.py)
        super().__init__(conv)
        self.lock = asyncio.Lock()  # the caller's steps and the bot's tool calls, one at a time
        self.tool_calls = 0
        self.closed = False
        self.failure: BaseException | None = None  # a host's failure in a tool call: the conversation's
        self.bot_heard = 0  # the bot's replies in the caller's history already in the transcript

    def hear_bot(self, history: tuple[Any, ...]) -> None:
        """The bot's replies the caller heard since the last call, into the transcript as the agent's
        messages: its words are known only as the caller's recogniser heard them, and that is what
        the judge, the NL assertions and the check that the agent communicated a value read."""
        replies = [m.content for m in history if m.role == "assistant"]
        for said in replies[self.bot_heard:]:
            if said:
                self.conv._message("agent", "assistant", said)
                self.conv.agent_texts.append(said)
        self.bot_heard = len(replies)

    async def caller(self, history: tuple[Any, ...]) -> str | None:
        self.hear_bot(history)
        return await super().caller(history)

    async def _step(self, side: str, incoming: str | None, rounds: int,
                    truncate: tuple[tuple[str, str], ...] = ()) -> StepResult:
        async with self.lock:
            return await super()._step(side, incoming, rounds, truncate)

    async def tool(self, name: str, arguments: dict[str, Any]) -> ToolReply:
        """One tool call of the bot (the tool server's callback), recorded as a model's call is."""
        async with self.lock:
            if self.closed:
                return ToolReply(text="Error: the call has ended", error=True)
            c = self.conv
            self.tool_calls += 1
            try:
                result = await c.agent.run_tool(RunToolRequest(
                    conversation_id=c.id, name=name, arguments=arguments, call_id=f"live-{self.tool_calls}",
                    turn=c.turn, seq=len(c.messages)))
                c.record_step(result)
                c.take_view("agent", result.sync_view)
                if result.wrote:
                    await c.sync(f"agent:{name}")
            except Exception as exc:  # the conversation fails as in half duplex; the caller hangs up
                self.failure = self.failure or exc
                self.ended = self.ended or Termination.INTERNAL_ERROR
                return ToolReply(text="Error: the tool could not be run", error=True)
            self.ended = self.ended or self.ending(result)
            outcome = result.rounds[-1].events[-1].outcome
            return ToolReply(text=outcome.result, error=outcome.error)

    async def close(self) -> None:
        """No tool call is recorded after this (one already running finishes first)."""
        async with self.lock:
            self.closed = True


_SERVERS: dict[asyncio.AbstractEventLoop, asyncio.Future[ToolServer]] = {}


async def tool_server() -> ToolServer:
    """This process's tool server on the running loop, started by the first call that asks."""
    loop = asyncio.get_running_loop()
    for gone in [held for held in _SERVERS if held.is_closed()]:
        del _SERVERS[gone]
    started = _SERVERS.get(loop)
    if started is not None and started.done() and (started.exception() is not None or not started.result().serving):
        started = None
    if started is None:
        started = _SERVERS[loop] = asyncio.ensure_future(_start())
    return await asyncio.shield(started)


async def _start() -> ToolServer:
    server = ToolServer()
    await server.start()
    return server


async def _on_own_thread(name: str, fn: Any, **kwargs: Any) -> Any:
    """``fn(**kwargs)`` on a new thread, awaited here."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if not done.done():
            done.set_exception(error) if error is not None else done.set_result(value)

    def target() -> None:
        try:
            value, error = fn(**kwargs), None
        except BaseException as exc:  # handed to the awaiting loop
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop is gone (its coordinator ended): nobody waits
            pass

    threading.Thread(target=target, name=name, daemon=True).start()
    return await done


def live_ending(result: LiveResult, ended: Termination | None) -> tuple[Termination, str | None, str | None]:
    """Why a live call ended, as a row says it: (termination, error kind, message)."""
    if result.infra:  # the harness's fault, not the bot's: rerun by --retry-errors
        side = "realtime" if result.protocol else "phone"
        return Termination.INFRA_ERROR, INFRA, result.fault or f"{side}: {result.late}"
    if result.fault is not None:  # the bot's: a verdict on the agent under test
        return Termination.FAULT, MODEL, result.fault
    if ended is not None:
        return ended, None, None
    if result.ended == "bot_hung_up":
        return Termination.BOT_HUNG_UP, None, None
    return ENDED.get(result.ended, Termination.CALLER_HUNG_UP), None, None


def _realtime_dial(conv: Any, call: LiveCall, loop: asyncio.AbstractEventLoop) -> tuple[Any, Any]:
    """A realtime model's session opener (run on the call's thread) and its spec: the scenario's agent
    prompt with the voice rules, as the text agent of a voice cell gets it, and its agent tools, run
    on the coordinator's loop as a bot's MCP calls are."""
    agent = realtime_agent(conv.unit.agent)
    instructions = conv.scenario.agent_prompt + "\n\n" + voice_prompt("agent").text
    tools = [{"name": t.name, "description": t.description, "parameters": t.parameters}
             for t in conv.scenario.agent_tools]
    run_tool = bridge(lambda args: call.tool(*args), loop)
    url, header = agent.url()

    async def dial() -> RealtimeCall:
        return await RealtimeCall.open(url, protocol=agent.protocol(instructions, tools), key_header=header,
                                       key=agent.key(), conversation_id=conv.unit.unit_id,
                                       run_tool=lambda name, arguments: run_tool((name, arguments)),
                                       settings=agent.call)
    return dial, agent


async def _admit(spec: Any, agent: Any) -> Any:
    """A realtime session admitted against the model's quota (its ``rpm``: sessions opened a minute;
    ``tpm``: tokens, audio and text, a session admitted with ``session_tokens`` and settled to its
    usage), waiting in the quota book as any call of the model does; None when it has no quota.
    Sessions in flight are bounded by the spec's ``concurrency``, as a model's conversations are."""
    limits = Limits(rpm=spec.rpm, tpm=spec.tpm)
    if not limits.any:
        return None
    return await quota_gate().acquire(quota_key(spec.model, spec.api_base), limits, 0, agent.quota.session_tokens)


async def run_live_call(conv: Any) -> tuple[Termination, str | None, str | None]:
    """Call ``conv``'s live agent (a duplex cell's conversation whose agent is a phone bot or a
    realtime model); the call's :class:`LiveResult` stays on ``conv.duplex`` (a realtime model's cost
    on ``conv.live_cost_usd``). Returns how it ended (see :func:`live_ending`); a host's failure
    raises as in half duplex."""
    await conv.initialise()
    unit, settings, caller = conv.unit, conv.voice.duplex, caller_side(conv)
    call, loop = LiveCall(conv), asyncio.get_running_loop()
    server = realtime = ticket = None
    if unit.agent.realtime is not None:  # the tools go through the protocol: no tool server
        dial, realtime = _realtime_dial(conv, call, loop)
        ticket = await _admit(unit.agent, realtime)
        if ticket is not None and ticket.stopped:
            return Termination.INFRA_ERROR, INFRA, ticket.stopped
        where = dict(url=realtime.url()[0], dial=dial, agent=realtime.line, phone=realtime.call)
    else:
        bot, server = phone_agent(unit.agent), await tool_server()
        where = dict(url=bot.url, tool_server_url=server.register(unit.unit_id, conv.scenario.agent_tools, call.tool),
                     agent=bot.line, phone=bot.call, parameters=bot.parameters)
    try:
        result: LiveResult = await _on_own_thread(
            f"live-call-{unit.unit_id[:8]}", run_live_sync, caller_policy=bridge(call.caller, loop),
            tts=caller.tts, asr=caller.asr, conversation_id=unit.unit_id, rules=settings.rules,
            clock=settings.clock, caller_voice=caller.voice, unit_id=unit.unit_id,
            attempt=unit.attempt, seed=unit.seed, caller_effects=caller.effects, **where)
    finally:
        if server is not None:
            server.unregister(unit.unit_id)
        await call.close()
    conv.live_cost_usd = realtime.cost(result.usage) if realtime is not None else None
    if ticket is not None:  # the session's real usage against the quota
        quota_gate().settle(ticket, Settlement(
            prompt_tokens=sum(result.usage.get(k, 0) for k in ("input_text_tokens", "input_audio_tokens")),
            completion_tokens=sum(result.usage.get(k, 0) for k in ("output_text_tokens", "output_audio_tokens")),
            replied=result.protocol is not None))
    call.hear_bot(result.caller_history)  # what the bot said after the caller's last turn
    conv.duplex = result
    conv.clock_s = result.duration_s
    if call.failure is not None:
        raise call.failure
    return live_ending(result, call.ended)
