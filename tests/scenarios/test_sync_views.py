"""Sync over the sides' sync views, the initial state each process builds for itself, and
scoring from per-side checks (what lets the hosts keep their DBs)."""

from __future__ import annotations

import json
import pickle
import random

from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.gold import fresh_state, replay
from tauray.scenarios.initial import initial_db, initial_state
from tauray.scenarios.scoring import evaluate_predicate, score
from tauray.scenarios.state import DualState
from tauray.scenarios.telecom_sync import agent_view, compute_sync, sync_views, user_view

TELECOM = domain_spec("telecom")


def _telecom(n: int, seed: int = 0) -> list:
    entries = select_scenarios(domain="telecom", split="base", variant="manual")
    return [get_scenario(e.name) for e in random.Random(seed).sample(entries, n)]


def test_views_are_plain_data_that_the_sync_reads_back_into_step():
    """A synced state stays synced over its views; put out of step (the phone's idea of the
    line), the sync over the views, after they crossed as plain data, puts it back."""
    rng = random.Random(7)
    user_writes = [t.name for t in TELECOM.tool_specs("user") if t.kind == "write"]
    checked = 0
    for scenario in _telecom(12):
        calls = [(a.side, a.name, dict(a.arguments)) for a in scenario.reference_actions]
        calls += [("user", rng.choice(user_writes), {}) for _ in range(3)]
        state, _ = replay(scenario, calls[:rng.randint(0, len(calls))])
        assert sync_views(agent_view(state.agent.db), user_view(state.user.db)).empty
        phone = state.user.db.surroundings
        if phone.phone_number is None:
            continue
        phone.line_active = not phone.line_active
        views = {"agent": agent_view(state.agent.db), "user": user_view(state.user.db)}
        for view in views.values():  # what crosses between actors: no upstream object inside
            assert json.loads(json.dumps(view)) == view
        crossed = pickle.loads(pickle.dumps(views))
        updates = sync_views(crossed["agent"], crossed["user"])
        line = next(ln for ln in state.agent.db.lines if ln.phone_number == phone.phone_number)
        assert updates.surroundings == {"line_active": getattr(line.status, "value", line.status) == "Active"}
        assert updates == compute_sync(state.agent.db, state.user.db)
        checked += 1
    assert checked >= 10


def test_each_process_builds_the_same_initial_state_and_tasks_that_start_alike_share_it():
    airline = [get_scenario(e.name) for e in select_scenarios(domain="airline")]
    plain = [s for s in airline if not s.initialization_data and not s.initialization_actions
             and not any(m.tool_calls for m in s.message_history or ())]
    assert len(plain) >= 2 and initial_state(plain[0]) is initial_state(plain[1])
    for scenario in _telecom(5, seed=3):
        expected = fresh_state(scenario)
        init = initial_state(scenario)
        for side in ("agent", "user"):
            copy = initial_db(scenario, side)
            assert copy is not initial_db(scenario, side)  # a fresh copy per conversation
            assert TELECOM.side_from_db(side, copy).db_hash() == expected.side(side).db_hash()
            assert init.views[side] == TELECOM.sync_view[side](expected.side(side).db)
        assert [e.model_dump() for e in init.events] == [e.model_dump() for e in expected.sync_events]


def test_an_assertion_on_a_side_without_state_fails_as_asking_that_side_does():
    scenario = next(s for s in _telecom(40, seed=5)
                    if any(p.side == "user" for p in s.db_state_assertions or ()))
    state, outcomes = replay(scenario)
    agent_only = DualState(state.agent, None, None)
    scored = score(scenario, agent_only, [])
    direct = [evaluate_predicate(agent_only, p) for p in scenario.db_state_assertions]
    assert list(scored.predicates) == direct
    assert any(p.error == "ValueError: this scenario has no user-side state" for p in scored.predicates)
    assert scored.user_hash is None
