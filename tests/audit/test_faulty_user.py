"""The faulty endpoint customers: one fault, once, at a seeded point; split phrasings; pure."""

from __future__ import annotations

import pytest
from tauray.actors.endpoint.behaviours import BEHAVIOURS, BehaviourError
from tauray.actors.endpoint.faulty_user import (
    _ASKING_STOP,
    _phrasings,
    faulty_user,
    flipped,
)
from tauray.actors.endpoint.writers import scripted_user_writes
from tauray.scenarios.registry import get_scenario

from tests.audit.helpers import GREETING, SCENARIO, ask


def _body(model, history, seed=4):
    s = get_scenario(SCENARIO)
    return {"model": model, "seed": seed, "tools": [t.openai() for t in s.user_tools],
            "messages": [{"role": "system", "content": s.user_prompt}, *history]}


def _history_to_request(n_requests):
    """Greeting, opening, then ``n_requests`` phone requests each performed and reported."""
    h = [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, my phone is broken."}]
    tools = ["toggle_airplane_mode", "toggle_roaming", "toggle_data"]
    for i in range(n_requests):
        h.append({"role": "user", "content": ask(tools[i])})
        h.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"p{i}", "type": "function", "function": {"name": tools[i], "arguments": "{}"}}]})
        h.append({"role": "tool", "tool_call_id": f"p{i}", "content": f"{tools[i]} is now ON."})
        h.append({"role": "assistant", "content": f"Done. My phone now shows: {tools[i]} is now ON."})
    return h


def test_registered_and_refuses_an_unknown_class():
    assert "faulty-user" in BEHAVIOURS
    with pytest.raises(BehaviourError, match="premature_stop"):
        faulty_user(_body("faulty-user:no_such_fault", _history_to_request(0)), None)
    with pytest.raises(BehaviourError, match="split"):
        faulty_user(_body("faulty-user:premature_stop:half", _history_to_request(0)), None)


@pytest.mark.parametrize("seed", [0, 1])
def test_premature_stop_is_committed_once_at_the_drawn_request(seed):
    said = []
    for n in range(3):
        history = _history_to_request(n) + [{"role": "user", "content": ask(["toggle_wifi", "toggle_wifi_calling",
                                                                                "reboot_device"][n])}]
        said.append(str(faulty_user(_body("faulty-user:premature_stop", history, seed), None).message.get("content")))
    stops = [i for i, text in enumerate(said) if "###STOP###" in text]
    assert stops == [seed % 2]  # the seed draws the first or the second request; only there


def test_the_clean_customer_is_played_outside_the_fault():
    history = _history_to_request(0) + [{"role": "user", "content": ask("toggle_roaming")}]
    body = _body("faulty-user:result_contradiction", history)
    assert faulty_user(body, None) == scripted_user_writes(body, None)  # nothing to contradict yet


def test_tune_and_heldout_phrasings_are_disjoint_halves():
    tune, held = _phrasings(_ASKING_STOP, "tune"), _phrasings(_ASKING_STOP, "heldout")
    assert set(tune).isdisjoint(held) and set(tune) | set(held) == set(_ASKING_STOP)


def test_flipped_turns_a_state_word_into_its_opposite():
    assert flipped("Airplane Mode is now OFF.\nStatus Bar: x") == "Airplane Mode is now ON.\nStatus Bar: x"
    assert flipped("Your messaging app can send MMS messages.") == "Your messaging app cannot send MMS messages."
    assert flipped("SIM card re-seated successfully.") is None


def test_a_fault_that_falls_back_to_the_closing_is_not_committed_twice():
    model = "faulty-user:identity_invented"
    opening = faulty_user(_body(model, [{"role": "user", "content": GREETING}], seed=0), None).message["content"]
    assert "Hi, something is wrong" in opening and opening != scripted_user_writes(
        _body(model, [{"role": "user", "content": GREETING}], seed=0), None).message["content"]
    closing = [{"role": "user", "content": GREETING}, {"role": "assistant", "content": opening},
               {"role": "user", "content": "That was the last step on my side. Is there anything else I can do?"}]
    body = _body(model, closing, seed=0)
    assert faulty_user(body, None) == scripted_user_writes(body, None)  # committed at the opening: clean now
    body_late = _body(model, [*closing[:1], {"role": "assistant", "content": "Hi, my phone is broken."},
                              *closing[2:]], seed=1)
    assert "###STOP###" in faulty_user(body_late, None).message["content"]
    assert faulty_user(body_late, None) != scripted_user_writes(body_late, None)  # the second point, drawn by seed 1
