"""Sync, gold replay, scoring and parity with upstream τ² (the oracle)."""

from __future__ import annotations

import random

import pytest

from tauray.scenarios import ExecutedCall, default_registry, fresh_state, gold_replay, replay, score, select_scenarios
from tauray.scenarios.model import Predicate
from tauray.scenarios.parity import compare, run_tauray, run_upstream, sequences, upstream_environment, upstream_task
from tauray.scenarios.scoring import evaluate_predicate
from tauray.scenarios.telecom_sync import compute_sync

REG = default_registry()
SMALL = [REG.get(e.name) for e in select_scenarios(domain="telecom", split="small", variant="manual")]


def test_sync_is_pure_and_matches_upstream_on_random_walks():
    """Random tool walks on both sides; after each write our state equals what
    upstream's own environment reaches with its built-in sync."""
    rng = random.Random(7)
    scenario = REG.get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")
    user_writes = [t.name for t in scenario.user_tools if t.is_write and not t.parameters.get("required")]
    agent_calls = [
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}),
        ("suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "walk"}),
        ("resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
        ("enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        ("disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"}),
    ]
    task = upstream_task(scenario)
    checked = 0
    for _ in range(30):
        calls = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                calls.append(("user", rng.choice(user_writes + ["make_payment"]), {}))
            else:
                name, args = rng.choice(agent_calls)
                calls.append(("agent", name, dict(args)))
        ours, _ = replay(scenario, calls)
        before = ours.hashes()
        updates = compute_sync(ours.agent.db, ours.user.db)
        assert updates.empty and ours.hashes() == before  # state is synced, and computing sync changes nothing
        theirs = run_upstream(scenario, task, calls)
        assert (before["agent"], before["user"]) == (theirs.agent_hash, theirs.user_hash)
        checked += 1
    assert checked == 30


def test_paid_request_marks_bill_paid_and_a_new_request_appears():
    scenario = REG.get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")
    state = fresh_state(scenario)
    env = upstream_environment(scenario)
    state.execute("agent", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"})
    request = state.user.db.surroundings.payment_request
    outcome, event = state.execute("user", "make_payment", {})
    if request is not None and not outcome.error:
        assert event is not None and request.bill_id in event.agent.get("bills_paid", [])
        assert {b.bill_id: b.status.value for b in state.agent.db.bills}[request.bill_id] == "Paid"
    assert env is not None


@pytest.mark.parametrize("scenario", SMALL, ids=lambda s: s.name)
def test_gold_passes_and_matches_upstream_on_gold_and_perturbed_sequences(scenario):
    state, outcomes = replay(scenario)
    result = score(scenario, state, [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes])
    assert result.verdict.success is True, result.verdict.reason
    assert result.db_state_match and result.action_match
    task = upstream_task(scenario)
    parity = [compare(scenario, label, run_tauray(scenario, calls), run_upstream(scenario, task, calls))
              for label, calls in sequences(scenario).items()]
    assert {p.sequence for p in parity} >= {"gold", "drop", "extras"} or not scenario.reference_actions
    assert all(p.match for p in parity), [p for p in parity if not p.match]


def test_dropping_a_reference_action_fails_the_verdict_but_keeps_a_row():
    scenario = next(s for s in SMALL if len(s.reference_actions) >= 2)
    calls = [(a.side, a.name, dict(a.arguments)) for a in scenario.reference_actions[1:]]
    state, outcomes = replay(scenario, calls)
    result = score(scenario, state, [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes])
    assert result.verdict.success is False
    assert not result.action_match and result.actions[0].matched_call is None
    assert "DB_STATE_ASSERTION" in result.verdict.reason


def test_predicate_that_raises_is_a_failed_verdict_with_the_error():
    scenario = SMALL[0]
    state, _ = replay(scenario)
    bad = Predicate(index=0, side="agent", func_name="assert_line_status",
                    arguments={"customer_id": "NOPE", "line_id": "NOPE", "expected_status": "Active"})
    verdict = evaluate_predicate(state, bad)
    assert verdict.met is False and verdict.error and "NOPE" in verdict.error
    missing = Predicate(index=1, side="user", func_name="no_such_function", arguments={})
    verdict = evaluate_predicate(state, missing)
    assert verdict.met is False and "no_such_function" in verdict.error


def test_gold_hash_is_reproducible_for_airline_and_retail():
    for name in ("tau2_airline__task_1", "tau2_retail__task_1"):
        scenario = REG.get(name)
        first = gold_replay(scenario)
        state, _ = replay(scenario)
        assert state.hashes()["agent"] == first.agent_hash
        assert first.user_hash is None


def test_tool_results_read_as_upstream_renders_them():
    """τ²'s evaluator replays a trajectory and compares each recorded tool result with its own
    rendering (Environment.to_json_str): plain numbers and booleans become strings, records keep
    their dump. tauray's text must be the same, or an exported run fails τ²'s evaluation."""
    import datetime

    from pydantic import BaseModel
    from tau2.environment.environment import Environment

    from tauray.scenarios.state import render_result

    class Bill(BaseModel):
        amount: float
        due: datetime.date
        lines: list[int]

    bill = Bill(amount=12.5, due=datetime.date(2025, 1, 31), lines=[1, 2])
    values = ["plain text", 3, 2.0, True, None, {"charge": 4.0, "ok": True, "note": None}, [1, 2.5, "x"],
              ("a", 1), bill, [bill], {"bill": bill}, datetime.date(2025, 2, 1)]
    for value in values:
        assert render_result(value) == Environment.to_json_str(value), value
