"""Gold replay details the mutation run found unpinned (issue 27): the opening message
history's tool calls, failed reference actions, and the per-task cache."""

from __future__ import annotations

from tauray.scenarios import default_registry, fresh_state, gold_replay, replay
from tauray.scenarios.gold import run_gold
from tauray.scenarios.model import ReferenceAction

REG = default_registry()
HISTORY = REG.get("tau2_mock__update_task_with_message_history")


def test_fresh_state_replays_the_tool_calls_of_the_opening_history():
    """The history creates task_2; the reference action then completes it."""
    tasks = fresh_state(HISTORY).agent.db.model_dump()["tasks"]
    assert tasks["task_2"]["title"] == "Project Review" and tasks["task_2"]["status"] == "pending"
    state, outcomes = replay(HISTORY)
    assert [o.error for o in outcomes] == [False]
    assert state.agent.db.model_dump()["tasks"]["task_2"]["status"] == "completed"
    # an explicit sequence replaces the reference actions
    state, outcomes = replay(HISTORY, [])
    assert outcomes == [] and state.hashes() == fresh_state(HISTORY).hashes()


def test_a_reference_action_that_errors_is_named_in_the_gold_result():
    broken = ReferenceAction(action_id="bad_1", side="agent", name="update_task_status",
                             arguments={"task_id": "task_404", "status": "completed"})
    scenario = HISTORY.model_copy(update={"upstream_id": "gaps-broken",
                                          "reference_actions": (broken, *HISTORY.reference_actions)})
    gold, state, outcomes = run_gold(scenario)
    assert [o.error for o in outcomes] == [True, False]
    assert gold.failed_actions == ("bad_1",)
    assert (gold.agent_hash, gold.user_hash) == (state.hashes()["agent"], None)
    assert (gold.domain, gold.upstream_id) == ("mock", "gaps-broken")
    assert run_gold(HISTORY)[0].failed_actions == ()


def test_gold_is_replayed_once_per_task_and_shared_by_its_policy_variants():
    manual = REG.get("tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
    workflow = REG.get("tau2_telecom_workflow__mobile_data_issue__user_abroad_roaming_enabled_off")
    first = gold_replay(manual)
    assert gold_replay(manual) is first and gold_replay(workflow) is first
    assert first.agent_hash == replay(manual)[0].hashes()["agent"] and first.user_hash is not None
