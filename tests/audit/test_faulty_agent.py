"""The faulty reference agents: the writing agent's reference steps with one fault of the
class, at a seeded step, once; the clean agent everywhere else; pure functions of the request."""

from __future__ import annotations

import json

import pytest

from tauray.actors.policies import parse_phone_request
from tauray.endpoint.behaviours import BehaviourError
from tauray.endpoint.writers import CLOSING, scripted_agent_writes
from tauray.scenarios.prompts import reference_steps_prompt
from tauray.scenarios.registry import get_scenario
from tests.test_helpers.faulty import BEHAVIOURS
from tests.test_helpers.faulty_agent import (
    AGENT_FAULT_CLASSES,
    faulty_agent,
    plan_for,
)

# refuel_data, enable_roaming (agent writes), toggle_data, toggle_roaming (customer)
FOUR_STEPS = "tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded__user_abroad_roaming_disabled_off__persona_hard"
NO_AGENT_STEP = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"


def _body(model, scenario, history, seed):
    s = get_scenario(scenario)
    system = s.agent_prompt + "\n\n" + reference_steps_prompt(s.reference_actions)
    return {"model": model, "seed": seed, "tools": [t.openai() for t in s.agent_tools],
            "messages": [{"role": "system", "content": system}, {"role": "assistant", "content": "Hello"},
                         {"role": "user", "content": "Hi, my phone has no data."}, *history]}


def _play(behaviour, model, scenario, seed, limit=12):
    """The agent's replies over a whole conversation with a customer that does what it asks."""
    history, said = [], []
    for _ in range(limit):
        reply = behaviour(_body(model, scenario, history, seed), None).message
        calls = reply.get("tool_calls") or []
        said.append((reply.get("content"), tuple((c["function"]["name"], c["function"]["arguments"]) for c in calls)))
        history.append(reply)
        if calls:
            name = calls[0]["function"]["name"]
            if name in ("transfer_to_human_agents", "end_conversation"):
                break
            history.append({"role": "tool", "tool_call_id": calls[0]["id"], "content": "ok"})
        elif parse_phone_request(reply.get("content")):
            history.append({"role": "user", "content": "Done. My phone now shows: fine"})
        else:
            break
    return said


def test_registered_and_refuses_unknown_classes_and_splits():
    assert "faulty-agent" in BEHAVIOURS
    with pytest.raises(BehaviourError, match="skipped_write"):
        faulty_agent(_body("faulty-agent:nope", FOUR_STEPS, [], 1), None)
    with pytest.raises(BehaviourError, match="split"):
        faulty_agent(_body("faulty-agent:premature_end:half", FOUR_STEPS, [], 1), None)


@pytest.mark.parametrize("fault", AGENT_FAULT_CLASSES)
@pytest.mark.parametrize("seed", [0, 5, 10, 15])
def test_one_fault_then_the_plan_goes_on(fault, seed):
    clean = _play(lambda b, s: scripted_agent_writes(b, s), "scripted-agent-writes", FOUR_STEPS, seed)
    faulty = _play(faulty_agent, f"faulty-agent:{fault}", FOUR_STEPS, seed)
    first = next(i for i, (a, b) in enumerate(zip(clean, faulty)) if a != b)
    plan = plan_for(_body(f"faulty-agent:{fault}", FOUR_STEPS, [], seed), fault, None)
    assert plan.committed_at is not None
    assert first == plan.committed_at  # the fault is where the plan changed, never before
    if fault in ("skipped_write", "skipped_instruction"):
        assert len(faulty) == len(clean) - 1 and faulty[-1] == clean[-1] == (CLOSING, ())
    if fault == "wrong_arguments":
        name, args = faulty[first][1][0]
        assert name == clean[first][1][0][0] and json.loads(args) != json.loads(clean[first][1][0][1])
        assert faulty[first + 1:] == clean[first + 1:]
    if fault == "unrequested_agent_write":
        assert faulty[first][1][0][0] in ("suspend_line", "disable_roaming", "refuel_data")
        assert faulty[first + 1:] == clean[first:]
    if fault == "wrong_instruction":
        assert parse_phone_request(faulty[first][0]) != parse_phone_request(clean[first][0])
        assert faulty[first + 1:] == clean[first + 1:]
    if fault == "premature_transfer":
        assert faulty[-1][1][0][0] == "transfer_to_human_agents" and len(faulty) == first + 1
    if fault == "premature_end":
        assert len(faulty) == first + 1 and faulty[-1] != clean[first]


def test_the_seed_draws_the_step_and_a_scenario_without_one_plays_clean():
    drawn = {plan_for(_body("faulty-agent:premature_end", FOUR_STEPS, [], seed), "premature_end", None).committed_at
             for seed in range(0, 50, 5)}
    assert drawn == {0, 1, 2, 3}
    plan = plan_for(_body("faulty-agent:skipped_write", NO_AGENT_STEP, [], 3), "skipped_write", None)
    assert plan.committed_at is None
    assert _play(faulty_agent, "faulty-agent:skipped_write", NO_AGENT_STEP, 3) == _play(
        scripted_agent_writes, "scripted-agent-writes", NO_AGENT_STEP, 3)


def test_split_phrasings_are_disjoint():
    said = {split: {str(_play(faulty_agent, f"faulty-agent:premature_transfer:{split}", FOUR_STEPS, seed)[-1])
                    for seed in range(0, 200, 5)} for split in ("tune", "heldout")}
    assert said["tune"] and said["heldout"] and not said["tune"] & said["heldout"]
