"""τ²'s mock domain as scenarios: registered, gold-replayed and at parity with upstream (its
perturbed sequences included), tasks that open on a message history too; and the reference
policies play it end to end."""

from __future__ import annotations

import asyncio

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.session import history_view
from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.gold import fresh_state
from tauray.scenarios.validate import validate
from tests.units import make_units

HISTORY = "tau2_mock__update_task_with_message_history"


def test_every_mock_task_is_a_scenario():
    entries = select_scenarios(domain="mock")
    assert len(entries) == 9 and all(e.name.startswith("tau2_mock__") for e in entries)
    assert {e.policy_variant for e in entries} == {"default"} and all("base" in e.splits for e in entries)
    assert len(select_scenarios(domain="mock", split="base")) == 9


def test_gold_and_parity_with_upstream_including_perturbations():
    report = validate(select_scenarios(domain="mock"), compare_upstream=True)
    assert report.gold_pass == report.scenarios == 9
    assert report.parity_checked == 9 and report.parity_mismatches == 0, report.parity_examples
    assert report.parity_sequences > 9  # gold plus dropped / extra-call sequences


def test_message_history_is_replayed_on_the_state_and_seeds_each_sides_view():
    scenario = get_scenario(HISTORY)
    assert [m.role for m in scenario.message_history] == ["user", "assistant", "tool", "assistant"]
    tasks = fresh_state(scenario).agent.db.tasks
    assert "task_2" in tasks and tasks["task_2"].title == "Project Review"  # created by the history's call
    agent = history_view(scenario, "agent")
    assert [m["role"] for m in agent] == ["user", "assistant", "tool", "assistant"]
    assert agent[1]["tool_calls"][0]["id"] == agent[2]["tool_call_id"] == "call_1"
    user = history_view(scenario, "user")  # the customer sees words only, roles flipped
    assert [m["role"] for m in user] == ["assistant", "user"] and "tool_calls" not in user[1]


def test_reference_policies_play_the_mock_domain():
    names = [e.name for e in select_scenarios(domain="mock")]
    units = make_units("t", names, 1, {"model": "oracle"}, {"model": "scripted"})

    async def main():
        return await asyncio.gather(*(run_conversation(u, AgentHost(), UserSimHost()) for u in units))

    rows = {r.conversation.scenario: r for r in asyncio.run(main())}
    assert all(r.conversation.error_kind is None for r in rows.values())
    failed = {n for n, r in rows.items() if not r.conversation.success}
    # Upstream's data leaves two tasks out of a reference agent's reach: prose as COMMUNICATE
    # facts, and an assertion with no reference action to satisfy it. τ²'s own evaluator fails both
    # on the same component (tests/results/test_tau2_interop.py; docs/tau2.md, "Known differences").
    assert failed == {"tau2_mock__update_task_with_initialization_data",
                      "tau2_mock__update_task_with_history_and_env_assertions"}
    history = rows[HISTORY]
    first = history.messages[0]
    assert first.role == "user" and first.content.startswith("I need to create a task")  # no greeting
    assert history.conversation.success and history.conversation.action_match
