"""Telecom sync at the data-limit boundary, against upstream τ²'s own sync (the oracle).

Random walks and parity sequences never land exactly on "used == limit + refuelled";
upstream's ``sync_tools`` counts that as exceeded (``>=``). Failed on the mutants
``>=`` -> ``>`` and on a dropped refuel term in ``compute_sync`` (issue 27)."""

from __future__ import annotations

import pytest

from tauray.scenarios import default_registry, fresh_state
from tauray.scenarios.parity import upstream_environment, upstream_task

SCENARIO = default_registry().get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")


def _set_usage(db, phone: str, refuel: float, over: float) -> None:
    line = next(line for line in db.lines if line.phone_number == phone)
    plan = next(plan for plan in db.plans if plan.plan_id == line.plan_id)
    line.data_refueling_gb = refuel
    line.data_used_gb = plan.data_limit_gb + refuel + over


def _exceeded_after_sync(refuel: float, over: float, flag_before: bool) -> tuple[bool, bool]:
    ours = fresh_state(SCENARIO)
    phone = ours.user.db.surroundings.phone_number
    ours.user.db.surroundings.mobile_data_usage_exceeded = flag_before
    _set_usage(ours.agent.db, phone, refuel, over)
    ours.sync("test")

    env = upstream_environment(SCENARIO)
    init = upstream_task(SCENARIO).initial_state
    env.set_state(initialization_data=init.initialization_data if init else None,
                  initialization_actions=init.initialization_actions if init else None,
                  message_history=list(init.message_history or []) if init else [])
    env.user_tools.db.surroundings.mobile_data_usage_exceeded = flag_before
    _set_usage(env.tools.db, phone, refuel, over)
    env.sync_tools()
    return (ours.user.db.surroundings.mobile_data_usage_exceeded,
            env.user_tools.db.surroundings.mobile_data_usage_exceeded)


@pytest.mark.parametrize(("refuel", "over", "exceeded"), [
    (2.0, 0.0, True),    # exactly at limit + refuel: exceeded, as upstream's >= says
    (0.0, 0.0, True),    # exactly at the plan limit, nothing refuelled
    (2.0, -0.5, False),  # under limit + refuel, though over the plan limit alone
    (2.0, 0.5, True),
])
@pytest.mark.parametrize("flag_before", [False, True])
def test_data_usage_at_the_limit_plus_refuel_matches_upstream(refuel, over, exceeded, flag_before):
    ours, theirs = _exceeded_after_sync(refuel, over, flag_before)
    assert theirs is exceeded  # the oracle says what the boundary means
    assert ours is theirs
