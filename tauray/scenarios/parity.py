"""Upstream τ² as the parity oracle.

The same action sequence is run through tauray's dual state and through
upstream's own environment (fresh ``get_environment()``, ``set_state`` for the
initialization, ``get_response`` per call, which syncs, then
``run_env_assertion``); final DB hashes of both sides, every predicate verdict
and every call's error flag must agree. Sequences are the gold one and
perturbations of it: a reference action dropped, and extra phone and agent
calls inserted.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from pydantic import Field

from tauray.scenarios import gold as gold_mod
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.model import Frozen, Scenario
from tauray.scenarios.scoring import evaluate_predicate
from tauray.scenarios.upstream import read_json, upstream_attr

Call = tuple[str, str, dict[str, Any]]  # (side, tool, arguments)


class SequenceOutcome(Frozen):
    agent_hash: str
    user_hash: str | None
    predicates: tuple[bool, ...]
    call_errors: tuple[bool, ...]


class ParityResult(Frozen):
    scenario: str = Field(description="Scenario name.")
    sequence: str = Field(description="gold, drop, extras or extras_writes.")
    match: bool
    differences: tuple[str, ...] = Field(description="What differed, empty when equal.")


# --- sequences --------------------------------------------------------------------


def _rng(scenario: Scenario, label: str) -> random.Random:
    seed = hashlib.sha256(f"{scenario.upstream_id}|{label}".encode()).hexdigest()
    return random.Random(int(seed[:16], 16))


def _telecom_context(scenario: Scenario) -> dict[str, Any]:
    """Identifiers of this task's customer, to build plausible extra calls."""
    state = gold_mod.fresh_state(scenario)
    ctx: dict[str, Any] = {"phone": state.user.db.surroundings.phone_number if state.user else None}
    for action in scenario.reference_actions:
        for key in ("customer_id", "line_id", "bill_id"):
            if key in action.arguments:
                ctx.setdefault(key, action.arguments[key])
    db = state.agent.db
    if ctx["phone"]:
        for customer in db.customers:
            for line in db.lines:
                if line.line_id in customer.line_ids and line.phone_number == ctx["phone"]:
                    ctx.setdefault("customer_id", customer.customer_id)
                    ctx.setdefault("line_id", line.line_id)
                    if customer.bill_ids:
                        ctx.setdefault("bill_id", customer.bill_ids[0])
    return ctx


def _extra_pool(scenario: Scenario, writes_only: bool) -> tuple[list[Call], list[Call]]:
    spec = domain_spec(scenario.domain)
    if scenario.domain == "telecom":
        c = _telecom_context(scenario)
        cid, lid = c.get("customer_id", "C1001"), c.get("line_id", "L1001")
        agent = [
            ("agent", "get_customer_by_phone", {"phone_number": c.get("phone") or "555-000-0000"}),
            ("agent", "get_details_by_id", {"id": lid}),
            ("agent", "get_data_usage", {"customer_id": cid, "line_id": lid}),
            ("agent", "suspend_line", {"customer_id": cid, "line_id": lid, "reason": "parity check"}),
            ("agent", "resume_line", {"customer_id": cid, "line_id": lid}),
            ("agent", "enable_roaming", {"customer_id": cid, "line_id": lid}),
            ("agent", "disable_roaming", {"customer_id": cid, "line_id": lid}),
            ("agent", "refuel_data", {"customer_id": cid, "line_id": lid, "gb_amount": 1.5}),
            ("agent", "send_payment_request", {"customer_id": cid, "bill_id": c.get("bill_id", "B1001")}),
        ]
        user = [("user", t.name, {}) for t in spec.tool_specs("user")
                if not t.parameters.get("required")]
        user += [
            ("user", "set_network_mode_preference", {"mode": "2g_only"}),
            ("user", "grant_app_permission", {"app_name": "messaging", "permission": "storage"}),
        ]
        if writes_only:
            kinds = {**spec.tool_kinds("agent"), **spec.tool_kinds("user")}
            agent = [a for a in agent if kinds[a[1]] == "write"]
            user = [u for u in user if kinds[u[1]] == "write"]
        return agent, user
    agent = [("agent", a.name, dict(a.arguments)) for a in scenario.reference_actions if a.side == "agent"]
    if scenario.domain == "mock":  # reads and writes on another user's and an existing task
        agent += [("agent", "get_users", {}), ("agent", "create_task", {"user_id": "user_2", "title": "Parity"}),
                  ("agent", "update_task_status", {"task_id": "task_1", "status": "completed"})]
        if writes_only:
            agent = [a for a in agent if spec.tool_kinds("agent").get(a[1]) == "write"]
    return agent or [], []


def sequences(scenario: Scenario) -> dict[str, list[Call]]:
    """The gold sequence and its perturbations, deterministic per task."""
    gold: list[Call] = [(a.side, a.name, dict(a.arguments)) for a in scenario.reference_actions]
    out = {"gold": gold}
    if gold:
        rng = _rng(scenario, "drop")
        drop = rng.randrange(len(gold))
        out["drop"] = gold[:drop] + gold[drop + 1:]
    for label, writes_only, count in (("extras", False, 1), ("extras_writes", True, 2)):
        agent_pool, user_pool = _extra_pool(scenario, writes_only)
        if not agent_pool and not user_pool:
            continue
        rng = _rng(scenario, label)
        seq = list(gold)
        for pool in (agent_pool, user_pool):
            for _ in range(count if pool else 0):
                seq.insert(rng.randrange(len(seq) + 1), rng.choice(pool))
        out[label] = seq
    return out


# --- running a sequence on each implementation --------------------------------------


def run_tauray(scenario: Scenario, calls: list[Call]) -> SequenceOutcome:
    state, outcomes = gold_mod.replay(scenario, calls)
    hashes = state.hashes()
    predicates = tuple(evaluate_predicate(state, p).met for p in scenario.db_state_assertions or ())
    return SequenceOutcome(agent_hash=hashes["agent"], user_hash=hashes["user"], predicates=predicates,
                           call_errors=tuple(o.error for o in outcomes))


def upstream_task(scenario: Scenario) -> Any:
    raw = _raw_by_id(scenario.domain)[scenario.upstream_id]
    return upstream_attr("data_model.tasks", "Task").model_validate(raw)


_RAW: dict[str, dict[str, Any]] = {}


def _raw_by_id(domain: str) -> dict[str, Any]:
    if domain not in _RAW:
        spec = domain_spec(domain)
        _RAW[domain] = {str(t["id"]): t for t in read_json(domain, spec.tasks_file)}
    return _RAW[domain]


def upstream_environment(scenario: Scenario) -> Any:
    module = upstream_attr(f"domains.{scenario.domain}.environment", "get_environment")
    if scenario.domain == "telecom":
        return module(policy_type=scenario.policy_variant)
    return module()


def run_upstream(scenario: Scenario, task: Any, calls: list[Call]) -> SequenceOutcome:
    tool_call = upstream_attr("data_model.message", "ToolCall")
    env = upstream_environment(scenario)
    init = task.initial_state
    env.set_state(
        initialization_data=init.initialization_data if init else None,
        initialization_actions=init.initialization_actions if init else None,
        message_history=list(init.message_history or []) if init else [],
    )
    errors = []
    for i, (side, name, args) in enumerate(calls):
        requestor = "assistant" if side == "agent" else "user"
        reply = env.get_response(tool_call(id=f"c{i}", name=name, arguments=dict(args), requestor=requestor))
        errors.append(bool(reply.error))
    agent_hash, user_hash = env.get_db_hash(), env.get_user_db_hash()
    predicates = []
    for assertion in (task.evaluation_criteria.env_assertions or []):
        try:
            predicates.append(bool(env.run_env_assertion(assertion, raise_assertion_error=False)))
        except Exception:
            predicates.append(False)
    return SequenceOutcome(agent_hash=agent_hash, user_hash=user_hash, predicates=tuple(predicates),
                           call_errors=tuple(errors))


def compare(scenario: Scenario, label: str, ours: SequenceOutcome, theirs: SequenceOutcome) -> ParityResult:
    diffs = []
    if ours.agent_hash != theirs.agent_hash:
        diffs.append("agent DB differs")
    if ours.user_hash != theirs.user_hash:
        diffs.append("user DB differs")
    for i, (a, b) in enumerate(zip(ours.predicates, theirs.predicates)):
        if a != b:
            diffs.append(f"predicate {i}: tauray met={a}, upstream met={b}")
    if len(ours.predicates) != len(theirs.predicates):
        diffs.append("different number of predicates")
    for i, (a, b) in enumerate(zip(ours.call_errors, theirs.call_errors)):
        if a != b:
            diffs.append(f"call {i}: tauray error={a}, upstream error={b}")
    return ParityResult(scenario=scenario.name, sequence=label, match=not diffs, differences=tuple(diffs))
