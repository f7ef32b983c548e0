"""The faulty endpoint customers: one fault, once, at a seeded point; split phrasings; pure."""

from __future__ import annotations

import re

import pytest

from tauray.endpoint.behaviours import BehaviourError
from tauray.endpoint.writers import scripted_user_writes
from tauray.scenarios.registry import get_scenario
from tests.audit.helpers import GREETING, SCENARIO, ask
from tests.test_helpers.faulty import BEHAVIOURS
from tests.test_helpers.faulty_user import (
    _ASKING_STOP,
    FAULT_CLASSES,
    HARD_NEGATIVES,
    _phrasings,
    faulty_user,
    flipped,
)


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


# --- the later classes: a stop after a failing check, no end after the resolved one, the task's
# constraints broken, text with a call; and their hard negatives ----------------------------------

POOR = "Speed Test Result: 1.20 Mbps (Poor). Connection is slow."
EXCELLENT = "Speed Test Result: 250.00 Mbps (Excellent). Connection is very fast."
CLOSING = "That was the last step on my side; everything should work now. Is there anything else I can do?"
NEW = ("stop_after_failure", "no_end_after_resolved", "constraint_broken", "bundled_turn", "ignored_request")


def _reply(model, history, seed=0, scenario=SCENARIO):
    s = get_scenario(scenario)
    body = {"model": model, "seed": seed, "tools": [t.openai() for t in s.user_tools],
            "messages": [{"role": "system", "content": s.user_prompt}, *history]}
    return faulty_user(body, None).message, scripted_user_writes(body, None).message


def _after_write():
    """Opening, the agent's request, the customer's call and its result (before the report)."""
    return [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, my phone is broken."},
            {"role": "user", "content": ask("toggle_airplane_mode")},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "phone_1", "type": "function", "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "phone_1", "content": "Airplane Mode is now OFF."}]


def _check(history, call_id, result, tool="run_speed_test"):
    return [*history, {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": result}]


def test_the_later_classes_and_negatives_are_registered_with_split_phrasings():
    assert set(NEW) <= set(FAULT_CLASSES)
    assert {"reports_check", "keeps_constraint", "asks_first", "cannot_find"} <= set(HARD_NEGATIVES)


def test_stop_after_failure_checks_then_stops_only_on_a_failing_result():
    got, clean = _reply("faulty-user:stop_after_failure", _after_write())
    assert [c["function"]["name"] for c in got.get("tool_calls") or []] == ["run_speed_test"] and got != clean
    call_id = got["tool_calls"][0]["id"]
    failed, _ = _reply("faulty-user:stop_after_failure", _check(_after_write(), call_id, POOR))
    assert "###STOP###" in failed["content"] and not failed.get("tool_calls")
    fine, clean = _reply("faulty-user:stop_after_failure", _check(_after_write(), call_id, EXCELLENT))
    assert fine == clean  # the check showed it resolved: no fault, the customer reports it


def test_no_end_after_resolved_checks_at_the_closing_and_goes_on_only_when_resolved():
    history = [*_after_write(), {"role": "assistant", "content": "Done."}, {"role": "user", "content": CLOSING}]
    got, clean = _reply("faulty-user:no_end_after_resolved", history)
    assert "###STOP###" in clean["content"]
    assert [c["function"]["name"] for c in got["tool_calls"]] == ["run_speed_test"]
    call_id = got["tool_calls"][0]["id"]
    went_on, _ = _reply("faulty-user:no_end_after_resolved", _check(history, call_id, EXCELLENT))
    assert went_on["content"] and "###STOP###" not in went_on["content"]
    failed, clean = _reply("faulty-user:no_end_after_resolved", _check(history, call_id, POOR))
    assert failed == clean


def test_stop_after_success_stops_only_after_the_resolved_result():
    history = [*_after_write(), {"role": "assistant", "content": "Done."}, {"role": "user", "content": CLOSING}]
    got, _ = _reply("faulty-user:stop_after_success", history)
    call_id = got["tool_calls"][0]["id"]
    ok, _ = _reply("faulty-user:stop_after_success", _check(history, call_id, EXCELLENT))
    assert "###STOP###" in ok["content"]
    failed, clean = _reply("faulty-user:stop_after_success", _check(history, call_id, POOR))
    assert failed == clean and "###STOP###" not in failed["content"]  # reports the failure, as the clean one does


def test_constraint_broken_in_words_or_by_refusing_the_accepted_payment():
    opening, clean = _reply("faulty-user:constraint_broken", [{"role": "user", "content": GREETING}])
    assert opening != clean and opening["content"].startswith(clean["content"])
    assert re.search(r"plan|GB|Wi-Fi", opening["content"])
    paying = "tau2_telecom__service_issue__airplane_mode_on__overdue_bill_suspension"
    history = [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, no service."},
               {"role": "user", "content": ask("make_payment")}]
    refused, clean = _reply("faulty-user:constraint_broken", history, scenario=paying)
    assert clean.get("tool_calls") and not refused.get("tool_calls") and refused["content"]


def test_a_refusal_never_refuses_the_payment_its_task_accepts():
    paying = "tau2_telecom__service_issue__airplane_mode_on__overdue_bill_suspension"
    history = [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, no service."},
               {"role": "user", "content": ask("make_payment")}]
    for seed in (0, 1):
        got, clean = _reply("faulty-user:refusal", history, seed=seed, scenario=paying)
        assert got == clean


def test_bundled_turn_sends_text_with_the_asked_call():
    history = [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, my phone is broken."},
               {"role": "user", "content": ask("toggle_roaming")}]
    got, clean = _reply("faulty-user:bundled_turn", history)
    assert got["content"] and [c["function"]["name"] for c in got["tool_calls"]] == ["toggle_roaming"]
    assert not clean["content"]


@pytest.mark.parametrize("name", [*NEW, "reports_check", "keeps_constraint", "asks_first", "cannot_find"])
def test_phrasing_halves_are_disjoint_and_cover_the_class(name):
    from tests.test_helpers.faulty_user import PHRASINGS

    options = PHRASINGS[name]
    tune, held = _phrasings(options, "tune"), _phrasings(options, "heldout")
    assert len(options) >= 4 and set(tune).isdisjoint(held) and set(tune) | set(held) == set(options)
    if name in ("ignored_request", "asks_first", "cannot_find"):
        assert len(tune) % 2 == 0 and len(held) % 2 == 0  # an even count in each half


def _calibrated(tmp_path, endpoint, name: str, scenarios: list[str]):
    """The faulty customer ``name`` (tune half) against the writing agent, 2 trials per
    scenario, stored and measured by the calibration."""
    import asyncio

    from dev.calibration.measure import calibrate_path
    from tauray.actors.conversation import run_conversation
    from tauray.actors.hosts import AgentHost, UserSimHost
    from tauray.results.tables.writer import TableWriter
    from tests.units import make_units

    agent = {"model": "openai/scripted-agent-writes", "api_base": endpoint.base_url, "reference_steps": True}
    user = {"model": f"openai/faulty-user:{name}:tune", "api_base": endpoint.base_url}
    units = make_units("r", scenarios, 2, agent, user)

    async def go():
        a, u = AgentHost(), UserSimHost()
        return await asyncio.gather(*(run_conversation(x, a, u) for x in units))

    with TableWriter(tmp_path, "r") as writer:
        for result in asyncio.run(go()):
            writer.add(result)
    return calibrate_path(tmp_path)


@pytest.mark.parametrize("name", NEW)
def test_each_later_fault_is_found_at_its_replayed_turn(tmp_path, endpoint, name):
    """End to end: the faulty customer against the writing agent, stored, replayed, audited."""
    c = _calibrated(tmp_path, endpoint, name, [
        "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
        "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card",
        "tau2_telecom__service_issue__airplane_mode_on__overdue_bill_suspension"])
    assert c.replay_mismatches == 0
    figures = c.classes[name]
    assert figures.recall.n >= 2 and figures.recall.k == figures.recall.n


def test_the_calibration_sweep_can_run_only_some_classes():
    from dev.calibration.sweep import sweep_config, user_models
    from tauray.pipeline.config import SweepConfig

    every = user_models("heldout")
    assert set(NEW) | {"reports_check", "keeps_constraint"} <= {k.removeprefix("u-") for k in every}
    some = user_models("heldout", classes=("stop_after_failure", "refusal"))
    assert some == {"u-stop_after_failure": "faulty-user:stop_after_failure:heldout",
                    "u-refusal": "faulty-user:refusal:heldout", "u-clean": "scripted-user-writes"}
    sweep = sweep_config("x", "http://127.0.0.1:1/v1", classes=("stop_after_failure",))
    assert "u-bundled_turn" not in sweep["models"] and SweepConfig.model_validate(sweep).users == [
        "u-stop_after_failure", "u-clean"]
    with pytest.raises(ValueError, match="no_such"):
        user_models("heldout", classes=("no_such",))


def _recorded(result, reply, seed=0):
    """A stored conversation of the stop_after_failure customer: asked write, its own check, then ``reply``."""
    from dataclasses import replace

    from tests.audit.helpers import build

    opening = "Hi, something is wrong with my phone and I need help fixing it."
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", opening),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", "Airplane Mode is now OFF."),
               (3, "user", "user", None, ["run_speed_test"]), (3, "user", "tool", result), (3, "user", "user", reply)],
              success=None)
    ids = {3: "phone_0", 5: "phone_o5"}
    messages = tuple(replace(m, tool_calls=tuple({**c, "id": ids[m.seq]} for c in m.tool_calls),
                             tool_call_id=ids.get(m.seq - 1) if m.role == "tool" else m.tool_call_id)
                     for m in t.messages)
    t = replace(t, messages=messages)
    t.row.update(seed=seed, user_model="openai/faulty-user:stop_after_failure:tune")
    return t


def test_the_replay_does_not_count_a_check_run_only_to_decide_on_the_fault():
    from dev.calibration.truth import replay

    resolved = replay(_recorded(EXCELLENT, f"Done. My phone now shows: {EXCELLENT}"))
    assert resolved.mismatch is None and not resolved.committed  # it checked, saw it fixed, and reported it
    failed = replay(_recorded(POOR, "Nothing changed, so I'm ending the call. ###STOP###"))
    assert failed.mismatch is None and failed.committed and failed.turn == 3


def _asked_roaming():
    return [{"role": "user", "content": GREETING}, {"role": "assistant", "content": "Hi, my phone is broken."},
            {"role": "user", "content": ask("toggle_roaming")}]


@pytest.mark.parametrize("split", ["tune", "heldout"])
def test_ignored_request_talks_past_the_asked_action_without_doing_refusing_or_stopping(split):
    from tests.test_helpers.faulty_user import PHRASINGS

    said = set()
    for seed in range(0, 16, 2):  # even seeds draw the first request
        got, clean = _reply(f"faulty-user:ignored_request:{split}", _asked_roaming(), seed=seed)
        assert clean.get("tool_calls") and not got.get("tool_calls")
        assert "###" not in got["content"] and "roaming" not in got["content"].lower()
        said.add(got["content"])
    assert said <= set(_phrasings(PHRASINGS["ignored_request"], split)) and len(said) >= 2


def test_asks_first_asks_about_the_asked_action_and_cannot_find_says_it_cannot():
    asked, _ = _reply("faulty-user:asks_first", _asked_roaming())
    assert not asked.get("tool_calls") and "toggle roaming" in asked["content"] and "?" in asked["content"]
    cannot, _ = _reply("faulty-user:cannot_find", _asked_roaming())
    assert not cannot.get("tool_calls") and re.search(r"can't|not able|doesn't|don't", cannot["content"])


@pytest.mark.parametrize("name", ["asks_first", "cannot_find"])
def test_the_ignored_request_near_misses_raise_no_finding_end_to_end(tmp_path, endpoint, name):
    """A question about the asked action, or a "cannot", answers it: no detector fires."""
    c = _calibrated(tmp_path, endpoint, name, [
        "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
        "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card"])
    assert c.replay_mismatches == 0 and c.hard_negatives == {name: 4}
    assert c.false_positive_rate.k == 0


@pytest.mark.slow  # a child interpreter sees what the product ships
def test_the_faulty_behaviours_are_test_ground_truth_the_endpoint_loads_by_name():
    """They are not in the product's registry; ``load_behaviours`` (``--behaviours``) adds
    them, and refuses a module that would redefine a registered name."""
    import subprocess
    import sys

    from tauray.endpoint import behaviours

    shipped = subprocess.run([sys.executable, "-c", "from tauray.endpoint.behaviours import BEHAVIOURS as B; "
                              "print(sorted(n for n in B if n.startswith(('faulty-', 'judge-coin'))))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert shipped == "[]"
    added = behaviours.load_behaviours("tests.test_helpers.faulty")
    assert {"faulty-user", "faulty-agent", "judge-coin"} <= set(added) <= set(behaviours.BEHAVIOURS)
    assert behaviours.load_behaviours("tests.test_helpers.faulty") == added  # loading twice is harmless
    with pytest.raises(ValueError, match="no BEHAVIOURS"):
        behaviours.load_behaviours("tests.test_helpers")
    with pytest.raises(ValueError, match="cannot load"):
        behaviours.load_behaviours("tests.test_helpers.no_such_module")
