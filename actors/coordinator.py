"""The conversation loop and the coordinator actor that runs many at once.

Per conversation: open both sides, initialise them (initialization data and
actions, each followed by sync), let the agent greet first, then alternate
turns. After every write on either side the coordinator pulls the other
side's DB, computes the domain's sync (a pure function) and pushes each side
its updates. The agent never sees the user's tool calls or results and vice
versa: each side's host keeps its own view. The loop stops on a user stop
token, the agent's ``end_conversation`` or ``transfer_to_human_agents``, max
steps, too many tool errors, or a model failure after retries; then the final
state is scored (pure) and the result records are built. Whatever happens, one
``ConversationResult`` comes back: a failure is a row that says why.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
import traceback
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from tauray.actors.failures import classify
from tauray.actors.policies import GREETING, STOP_TOKENS
from tauray.actors.session import StepResult, seed_applied
from tauray.results.records import (
    ActionRecord,
    ConversationRecord,
    ConversationResult,
    MessageRecord,
    PredicateRecord,
)
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.conventions import is_reference
from tauray.scenarios.gold import fresh_state
from tauray.scenarios.model import Scenario
from tauray.scenarios.registry import default_registry
from tauray.scenarios.scoring import ExecutedCall, matched_reference, score
from tauray.scenarios.state import DualState, SideState
from tauray.scenarios.upstream import upstream_version

from tauray import __version__


class Termination(str, Enum):
    USER_STOP = "user_stop"
    USER_TRANSFER = "user_transfer"
    USER_OUT_OF_SCOPE = "user_out_of_scope"
    AGENT_END = "agent_end"
    AGENT_TRANSFER = "agent_transfer"
    MAX_STEPS = "max_steps"
    TOO_MANY_ERRORS = "too_many_errors"
    INFRA_ERROR = "infra_error"
    MODEL_ERROR = "model_error"
    INTERNAL_ERROR = "internal_error"


_USER_STOPS = dict(zip(STOP_TOKENS, (Termination.USER_STOP, Termination.USER_TRANSFER, Termination.USER_OUT_OF_SCOPE)))


class SideClient:
    """Calls a host's methods the same way whether it is a Ray actor or a local object."""

    def __init__(self, host: Any):
        self.host = host
        self.remote = hasattr(getattr(host, "step", None), "remote")

    async def __call__(self, method: str, *args: Any) -> Any:
        fn = getattr(self.host, method)
        if self.remote:
            return await fn.remote(*args)
        result = fn(*args)
        return await result if inspect.isawaitable(result) else result


class _Stop(Exception):
    def __init__(self, reason: Termination, kind: str | None = None, message: str | None = None):
        self.reason, self.kind, self.message = reason, kind, message


_REASONS = {"infra": Termination.INFRA_ERROR, "model": Termination.MODEL_ERROR}


def _failure(exc: BaseException) -> _Stop:
    """The stop an exception means (classified in one place, ``tauray.actors.failures``)."""
    failure = classify(exc)
    return _Stop(_REASONS.get(failure.kind, Termination.INTERNAL_ERROR), failure.kind, failure.message)


class Conversation:
    """One conversation's bookkeeping, while it runs."""

    def __init__(self, unit: dict[str, Any], scenario: Scenario, agent: SideClient, user: SideClient):
        self.unit = unit
        self.id = unit["unit_id"]
        self.scenario = scenario
        self.domain = domain_spec(scenario.domain)
        self.agent, self.user = agent, user
        self.messages: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self.calls: list[ExecutedCall] = []
        self.agent_texts: list[str] = []
        self.turn = 0
        self.steps = 0
        self.errors = 0
        self.sync_events = 0

    def client(self, side: str) -> SideClient:
        return self.agent if side == "agent" else self.user

    # --- records while running -----------------------------------------------------------
    def _message(self, side: str, role: str, content: str | None, tool_calls: list[dict] | None = None,
                 tool_call_id: str | None = None, retries: int | None = None) -> None:
        self.messages.append(dict(side=side, role=role, content=content, tool_calls=tool_calls,
                                  tool_call_id=tool_call_id, turn=self.turn, retries=retries,
                                  created_at=datetime.now(timezone.utc)))

    def record_step(self, result: StepResult) -> None:
        role = "assistant" if result.side == "agent" else "user"
        for round_ in result.rounds:
            reply = round_.reply
            if reply is not None:
                self.steps += 1
                calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls] or None
                self._message(result.side, role, reply.content, calls,
                              retries=reply.retries if reply.llm_call else None)
                if result.side == "agent" and reply.content:
                    self.agent_texts.append(reply.content)
            for event in round_.events:
                o = event.outcome
                self._message(result.side, "tool", o.result, tool_call_id=event.call_id)
                call = ExecutedCall(side=o.side, name=o.name, arguments=o.arguments)
                self.calls.append(call)
                self.errors += o.error
                self.actions.append(dict(turn=self.turn, side=o.side, kind="tool_call", tool=o.name,
                                         arguments=o.arguments, result=o.result, error=o.error,
                                         is_write=o.is_write, matched_action_id=matched_reference(self.scenario, call),
                                         sync_agent=None, sync_user=None))

    # --- sync ----------------------------------------------------------------------------
    async def sync(self, trigger: str, wrote: StepResult | None = None) -> None:
        if self.domain.sync is None:
            return
        agent_db = wrote.db if wrote is not None and wrote.side == "agent" else await self.agent("get_db", self.id)
        user_db = wrote.db if wrote is not None and wrote.side == "user" else await self.user("get_db", self.id)
        updates = self.domain.sync(agent_db, user_db)
        if updates.empty:
            return
        for side in ("agent", "user"):
            part = updates.for_side(side)
            if part:
                await self.client(side)("apply_sync", self.id, part, self.scenario.domain)
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
        and actions, each followed by sync), computed here once per task and pushed
        to each side with its ``open``; the agent greets first."""
        s = self.scenario
        dbs, events = initial_state(s)
        for event in events:
            self._sync_row("init", event.agent, event.user)
        greeting = None if s.message_history else GREETING  # a task's own opening replaces the greeting
        await asyncio.gather(
            self.agent("open", self.id, s.name, self.unit["agent"], self.unit["seed"], dbs["agent"], greeting),
            self.user("open", self.id, s.name, self.unit["user"], self.unit["seed"], dbs["user"], None),
        )
        for m in s.message_history or ():
            calls = [{"id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)} for c in m.tool_calls] or None
            self._message(m.side, m.role, m.content, calls, tool_call_id=m.tool_call_id)
            if m.side == "agent" and m.role == "assistant" and m.content:
                self.agent_texts.append(m.content)
        if greeting:
            self._message("agent", "assistant", GREETING)
            self.agent_texts.append(GREETING)

    async def side_turn(self, side: str, incoming: str | None) -> str:
        """Run one side until it says something to the other side; return that text."""
        self.turn += 1
        client = self.client(side)
        while True:
            budget = self.unit["max_steps"] - self.steps
            if budget <= 0:
                raise _Stop(Termination.MAX_STEPS)
            try:
                result: StepResult = await client("step", self.id, incoming, budget,
                                                  self.unit["max_errors"] - self.errors)
            except Exception as exc:
                raise _failure(exc) from exc
            incoming = None
            self.record_step(result)
            if result.wrote:
                await self.sync(f"{side}:{result.rounds[-1].events[-1].outcome.name}", result)
            if result.kind == "end":
                raise _Stop(Termination.AGENT_END)
            if result.kind == "transfer":
                raise _Stop(Termination.AGENT_TRANSFER)
            if result.kind == "budget":
                raise _Stop(Termination.MAX_STEPS)
            if self.errors >= self.unit["max_errors"]:
                raise _Stop(Termination.TOO_MANY_ERRORS)
            if result.kind == "text":
                return (result.rounds[-1].reply.content or "") if result.rounds else ""

    async def run(self) -> Termination:
        await self.initialise()
        to_user: str | None = GREETING
        history = [m for m in self.scenario.message_history or () if m.role != "tool"]
        if history:  # both sides already hold the opening; whoever did not speak last goes on
            to_user = None if history[-1].side == "agent" else await self.side_turn("agent", None)
        while True:
            said = await self.side_turn("user", to_user)
            for token, reason in _USER_STOPS.items():
                if token in said:
                    raise _Stop(reason)
            to_user = await self.side_turn("agent", said)


# About 44 KB per telecom task: a coordinator that meets every one of the 2285 tasks would
# otherwise hold ~100 MB for the rest of its life. Units come trial-major with the cells of a
# sweep side by side, so the tasks in use at once are about the units in flight.
INITIAL_CACHE_TASKS = 256


class _Task:
    """Cache key of a scenario's initial state: its task (policy variants share it)."""

    __slots__ = ("scenario", "key")

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.key = (scenario.domain, scenario.upstream_id)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Task) and other.key == self.key


@functools.lru_cache(maxsize=INITIAL_CACHE_TASKS)
def _initial(task: _Task) -> tuple[dict[str, Any], list[Any]]:
    state = fresh_state(task.scenario)
    dbs = {"agent": state.agent.db.model_dump(), "user": state.user.db.model_dump() if state.user else None}
    return dbs, list(state.sync_events)


def initial_state(scenario: Scenario) -> tuple[dict[str, Any], list[Any]]:
    """Both sides' DBs (as dumps) after initialization, and the syncs it took; per task,
    the last ``INITIAL_CACHE_TASKS`` tasks kept (least recently used first out)."""
    return _initial(_Task(scenario))


def initial_cache_size() -> int:
    return _initial.cache_info().currsize


def clear_initial_cache() -> None:
    _initial.cache_clear()


async def run_conversation(unit: dict[str, Any], agent_host: Any, user_host: Any) -> ConversationResult:
    """Run one work unit to a ``ConversationResult``; never raises."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    agent, user = SideClient(agent_host), SideClient(user_host)
    scenario = default_registry().get(unit["scenario"])
    conv = Conversation(unit, scenario, agent, user)
    reason, error_kind, error_message = Termination.INTERNAL_ERROR, None, None
    try:
        await conv.run()
    except _Stop as stop:
        reason, error_kind, error_message = stop.reason, stop.kind, stop.message
    except Exception as exc:  # a bug of ours must still become a row
        stop = _failure(exc)
        reason, error_kind, error_message = stop.reason, stop.kind, stop.message
        if error_kind == "internal":
            error_message = f"{error_message}\n{traceback.format_exc(limit=6)}"
    finals = {}
    for side, client in (("agent", agent), ("user", user)):
        try:
            finals[side] = await client("close", conv.id)
        except Exception as exc:
            finals[side] = None
            if error_kind is None:
                stop = _failure(exc)
                reason, error_kind, error_message = stop.reason, stop.kind, stop.message
    if error_kind == "config":  # the same for every unit: the driver stops the run with it
        from tauray.actors.llm import ModelConfigError

        raise ModelConfigError(f"{error_message.removeprefix('ModelConfigError: ')} (on a worker, where the "
                               "conversation ran: its environment lacks what the driver has; set key variables "
                               "on every node or in the cluster's runtime_env env_vars)")
    return build_result(conv, reason, error_kind, error_message, finals, started, time.perf_counter() - t0)


def build_result(conv: Conversation, reason: Termination, error_kind: str | None, error_message: str | None,
                 finals: dict[str, Any], started: datetime, duration: float) -> ConversationResult:
    unit, scenario = conv.unit, conv.scenario
    run_id = unit["run_id"]
    common = dict(run_id=run_id, conversation_id=conv.id, scenario=scenario.name)
    scored = None
    if error_kind is None and finals.get("agent") is not None:
        try:
            scored = _score(conv, finals)
        except Exception as exc:
            error_kind, error_message = "internal", f"scoring failed: {type(exc).__name__}: {exc}"
            reason = Termination.INTERNAL_ERROR
    counters = {side: (finals.get(side) or {}).get("counters") for side in ("agent", "user")}

    def count(side: str, name: str, default: Any = 0) -> Any:
        c = counters[side]
        return getattr(c, name) if c is not None else default

    verdict = scored.verdict if scored else None
    signals = verdict.signals if verdict else {}
    conversation = ConversationRecord(
        **common, sweep_id=unit.get("sweep_id"), cell_id=unit.get("cell_id"),
        domain=scenario.domain, upstream_id=scenario.upstream_id, policy_variant=scenario.policy_variant,
        issue_type=scenario.issue_type, persona=scenario.persona,
        agent_model=unit["agent"]["model"], agent_kind=_kind(unit["agent"]["model"]),
        user_model=unit["user"]["model"], user_kind=_kind(unit["user"]["model"]),
        judge_model=unit.get("judge_model"), trial=unit["trial"], seed=unit["seed"],
        seed_applied=seed_applied(count("agent", "seed_applied", None), count("user", "seed_applied", None)),
        termination_reason=reason.value,
        success=verdict.success if verdict else None,
        success_reason=verdict.reason if verdict else f"not scored: {reason.value}",
        gating_signals=list(verdict.gating) if verdict else [s.value for s in scenario.success_signals.gating],
        excluded_signals=list(verdict.excluded) if verdict else [
            s.value for s in scenario.success_signals.informational],
        signal_db_state_assertion=signals.get("DB_STATE_ASSERTION"),
        signal_nl_assertion=signals.get("NL_ASSERTION"),
        signal_db_state_match=signals.get("DB_STATE_MATCH"),
        signal_action_match=signals.get("ACTION_MATCH"),
        signal_communicate=signals.get("COMMUNICATE"),
        signal_judge_passed=signals.get("JUDGE_PASSED"),
        db_state_match=scored.db_state_match if scored else None,
        action_match=scored.action_match if scored else None,
        predicates_total=len(scored.predicates) if scored else 0,
        predicates_met=sum(p.met for p in scored.predicates) if scored else 0,
        turns=conv.turn,
        agent_tool_calls=sum(1 for c in conv.calls if c.side == "agent"),
        user_tool_calls=sum(1 for c in conv.calls if c.side == "user"),
        tool_errors=conv.errors,
        malformed_tool_calls=count("agent", "malformed_tool_calls") + count("user", "malformed_tool_calls"),
        empty_replies=count("agent", "empty_replies") + count("user", "empty_replies"),
        sync_events=conv.sync_events,
        agent_llm_calls=count("agent", "llm_calls"), user_llm_calls=count("user", "llm_calls"),
        agent_llm_retries=count("agent", "llm_retries"), user_llm_retries=count("user", "llm_retries"),
        agent_prompt_tokens=count("agent", "prompt_tokens"),
        agent_completion_tokens=count("agent", "completion_tokens"),
        agent_cost_usd=count("agent", "cost_usd", None),
        user_prompt_tokens=count("user", "prompt_tokens"),
        user_completion_tokens=count("user", "completion_tokens"),
        user_cost_usd=count("user", "cost_usd", None),
        judge_prompt_tokens=0, judge_completion_tokens=0, judge_cost_usd=None,
        started_at=started, duration_s=max(duration, 0.0),
        error_kind=error_kind, error_message=error_message,
        agent_db_hash=scored.agent_hash if scored else None,
        user_db_hash=scored.user_hash if scored else None,
        gold_agent_db_hash=scored.gold_agent_hash if scored else None,
        gold_user_db_hash=scored.gold_user_hash if scored else None,
        tauray_version=__version__, upstream_version=upstream_version(),
    )
    predicates = [PredicateRecord(**common, index=p.index, side=p.side, function=p.function,
                                  arguments=p.arguments, expected=p.expected, actual=p.actual, met=p.met,
                                  error=p.error)
                  for p in (scored.predicates if scored else ())]
    actions = [ActionRecord(**common, seq=i, **a) for i, a in enumerate(conv.actions)]
    messages = [MessageRecord(**common, seq=i, **m) for i, m in enumerate(conv.messages)]
    return ConversationResult(conversation=conversation, predicates=predicates, actions=actions, messages=messages)


def _kind(model: str) -> str:
    return "reference" if is_reference(model) else "llm"


def _score(conv: Conversation, finals: dict[str, Any]):
    dom = conv.domain
    agent = SideState("agent", dom.toolkit("agent", finals["agent"]["db"]), dom.tool_kinds("agent"))
    user = None
    if dom.has_user_state and finals.get("user") and finals["user"]["db"] is not None:
        user = SideState("user", dom.toolkit("user", finals["user"]["db"]), dom.tool_kinds("user"))
    return score(conv.scenario, DualState(agent, user, None), conv.calls, agent_texts=conv.agent_texts)


class CoordinatorHost:
    """Runs many conversations concurrently on one asyncio loop; judges them when the
    unit names judge configs (on the given judge actors, else on an in-process judge)."""

    def __init__(self, agent_hosts: list[Any], user_hosts: list[Any], judge_hosts: list[Any] | None = None):
        from tauray.scenarios.upstream import silence_upstream_logging

        silence_upstream_logging()
        self.agent_hosts, self.user_hosts = agent_hosts, user_hosts
        self.judge_hosts = list(judge_hosts or [])
        self.in_flight = 0
        self.done = 0

    def _pick(self, hosts: list[Any], unit_id: str) -> Any:
        return hosts[hash(unit_id) % len(hosts)]

    def _judge(self, unit_id: str) -> Any:
        if not self.judge_hosts:
            from tauray.actors.judge import JudgeHost

            self.judge_hosts = [JudgeHost()]
        return self._pick(self.judge_hosts, unit_id)

    async def run(self, unit: dict[str, Any]) -> ConversationResult:
        self.in_flight += 1
        try:
            uid = unit["unit_id"]
            result = await run_conversation(unit, self._pick(self.agent_hosts, uid), self._pick(self.user_hosts, uid))
            if unit.get("judge_configs"):
                result = await self._judged(unit, result)
            return result
        finally:
            self.in_flight -= 1
            self.done += 1

    async def _judged(self, unit: dict[str, Any], result: ConversationResult) -> ConversationResult:
        from tauray.actors.judge import conversation_signals, judge_result, with_judge_verdict

        scenario = default_registry().get(unit["scenario"])
        gates = bool(unit.get("judge_gates"))
        try:
            return await judge_result(result, scenario, unit["judge_configs"], self._judge(unit["unit_id"]),
                                      judge_gates=gates)
        except Exception as exc:  # the conversation stands; `tauray judge` retries its judging
            c = result.conversation
            if c.error_kind is not None:
                return result
            failure = classify(exc)
            kind = failure.kind if failure.kind in ("infra", "model") else "internal"
            updated = with_judge_verdict(c, scenario, conversation_signals(c), gates, failure.message,
                                         failure_kind=kind)
            return result.model_copy(update={"conversation": updated})

    async def stats(self) -> dict[str, Any]:
        return {"in_flight": self.in_flight, "done": self.done}

    async def ping(self) -> str:
        import os
        import socket

        return f"{socket.gethostname()}:{os.getpid()}"


def coordinator_class() -> Any:
    import ray

    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=4096)(CoordinatorHost)


def result_summary(result: ConversationResult) -> str:
    c = result.conversation
    return json.dumps({"scenario": c.scenario, "success": c.success, "termination": c.termination_reason})


def failed_result(unit: dict[str, Any], kind: str, message: str) -> ConversationResult:
    """The row of a unit whose conversation could not run at all (e.g. its coordinator died)."""
    scenario = default_registry().get(unit["scenario"])
    conv = Conversation(unit, scenario, SideClient(None), SideClient(None))
    return build_result(conv, _REASONS.get(kind, Termination.INTERNAL_ERROR), kind, message, {},
                        datetime.now(timezone.utc), 0.0)
