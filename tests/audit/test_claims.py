"""Claims, not phrasings (issue 38): a customer's statement read into (setting, value) and compared
with what its phone showed. The phrasings here are the issue's table and our own, never the
independent evaluation set's (tests/audit_eval)."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.finding import detect_all
from tauray.actors.audit.user_faults import USER_DETECTORS
from tests.audit.helpers import GREETING, ask, build, opening, performed

MMS = "tau2_telecom__mms_issue__bad_network_preference"
BAR = "Status Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%"


@pytest.mark.parametrize(("said", "claim"), [
    ("It's showing airplane mode on", ("airplane_mode", "on")),
    ("Airplane mode is still on though.", ("airplane_mode", "on")),
    ("Hmm, my network mode is set to 3G only.", ("network_mode", "3g_only")),
    ("There's no signal at all up top.", ("signal", "none")),
    ("The messaging app doesn't have the storage permission.", ("storage_permission", "missing")),
    ("I already paid the bill last week.", ("payment", "paid")),
    ("Roaming is turned off now", ("roaming", "off")),
    ("I switched off the mobile data", ("mobile_data", "off")),
    ("I still can't send picture messages.", ("mms", "cannot")),
])
def test_a_statement_is_read_into_its_claim(said: str, claim: tuple[str, str]) -> None:
    assert claims.claims(said)[claim[0]] == claim[1]


@pytest.mark.parametrize("said", ["Is Wi-Fi calling on?", "Okay, I'll turn on roaming.", "I'm on my home Wi-Fi right now."])
def test_a_question_a_plan_or_a_place_claims_no_setting(said: str) -> None:
    assert "wifi_calling" not in claims.claims(said) and "roaming" not in claims.claims(said)
    assert "wifi" not in claims.claims(said)


def test_a_tool_result_is_read_into_what_it_showed() -> None:
    seen = claims.shown(f"Airplane Mode is now OFF.\n{BAR}")
    assert seen["airplane_mode"] == "off" and seen["mobile_data"] == "on" and seen["signal"] == "good"


def _classes(t) -> list[tuple[str, int]]:
    return sorted({(f.fault_class, f.message_seq) for f in detect_all(t, USER_DETECTORS)})


@pytest.mark.parametrize("report", ["It's still showing airplane mode on.", "Airplane mode is still on though.",
                                    "Done, but there's no signal at all."])
def test_a_report_that_claims_other_than_the_result_is_a_contradiction(report: str) -> None:
    """v1 read only "X is on/off" (this fails on it for every phrasing here)."""
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", f"Airplane Mode is now OFF.\n{BAR}", report))
    assert ("result_contradiction", 5) in _classes(t)


def test_a_faithful_report_is_not_a_contradiction() -> None:
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", f"Airplane Mode is now OFF.\n{BAR}",
                          "Okay, airplane mode is off now and I have good signal with data enabled."))
    assert _classes(t) == []


def test_the_mms_customer_restating_its_own_symptom_states_nothing_unshown() -> None:
    """The MMS finding of issue 38: with a non-solving agent no tool runs, and the faithful customer
    says its task's symptom in its own words ("can't send MMS" for "unable to send MMS messages");
    state_without_tool v3 flagged it in every MMS conversation (this test fails on v3)."""
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, I can't send MMS messages from my phone."),
               (2, "agent", "assistant", "I see. Could you tell me more?"),
               (3, "user", "user", "Like I said, I still cannot send MMS, it has been a few hours.")], scenario=MMS)
    assert _classes(t) == []


def test_a_state_no_tool_showed_is_still_found() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, I can't send MMS messages."),
               (2, "agent", "assistant", "I see. Could you tell me more?"),
               (3, "user", "user", "My network mode is set to 2G only, by the way.")], scenario=MMS)
    assert ("state_without_tool", 3) in _classes(t)


def test_a_claimed_fix_without_the_check_then_a_hang_up_is_a_premature_stop() -> None:
    """Hang-up after a claimed fix (issue 38: 0/101 with v1 of the rule; this fails on v1)."""
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", f"Airplane Mode is now OFF.\n{BAR}", "Great, that fixed it, thanks! ###STOP###"),
              success=False)
    found = [f for f in detect_all(t, USER_DETECTORS) if f.fault_class == "premature_stop"]
    assert [f.message_seq for f in found] == [5]
    from tauray.actors.audit.attribution import attribute
    assert attribute(False, None, found).attribution == "simulator"


def test_a_stop_after_the_check_showed_it_resolved_is_no_premature_stop() -> None:
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", f"Airplane Mode is now OFF.\n{BAR}", "Okay, it's off.")
              + [(4, "agent", "assistant", ask("run_speed_test"))]
              + performed(4, "run_speed_test", "Speed Test Result: 250.0 Mbps (Excellent)", "It works now, thanks! ###STOP###"))
    assert "premature_stop" not in {f.fault_class for f in detect_all(t, USER_DETECTORS)}


def test_the_asked_tool_with_other_arguments_is_a_different_action() -> None:
    """Same tool, other arguments (issue 38: 0/59 with the rules before wrong_arguments)."""
    import dataclasses
    import json

    from tauray.actors.audit.trajectory import Message
    from tauray.actors.policies import phone_request
    from tauray.scenarios.model import ReferenceAction

    asked = phone_request(ReferenceAction(action_id="x", side="user", name="set_network_mode_preference",
                                          arguments={"mode": "4g_5g_preferred"}))
    t = build(opening() + [(2, "agent", "assistant", asked)])

    def call(mode: str) -> Message:
        return Message(seq=3, turn=2, side="user", role="user", content=None,
                       tool_calls=({"id": "c3-0", "name": "set_network_mode_preference",
                                    "arguments": json.dumps({"mode": mode})},))
    wrong, right = (dataclasses.replace(t, messages=(*t.messages, call(mode))) for mode in ("2g_only", "4g_5g_preferred"))
    assert ("different_action", 3) in _classes(wrong)
    assert "different_action" not in {c for c, _ in _classes(right)}


AIRPLANE_OFF = f"Airplane Mode is now OFF.\n{BAR}"


def test_a_report_about_a_setting_its_result_did_not_show_is_checked_against_the_user_db() -> None:
    """The user-side DB as a second source of truth (issue 38, 1): after toggling airplane mode the
    result shows nothing about roaming; the DB (task: roaming off) says the claim is false. v4 read
    no turn with a phone call, so this fails on it."""
    wrong = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
                  + performed(2, "toggle_airplane_mode", AIRPLANE_OFF, "Done, airplane mode is off and roaming is on."))
    found = [f for f in detect_all(wrong, USER_DETECTORS) if f.fault_class == "state_without_tool"]
    assert [f.message_seq for f in found] == [5] and "roaming=on (user DB: off)" in found[0].evidence
    right = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
                  + performed(2, "toggle_airplane_mode", AIRPLANE_OFF, "Done, airplane mode is off and roaming is off."))
    assert _classes(right) == []


def test_a_state_the_agent_told_the_customer_is_not_stated_without_a_tool() -> None:
    """The agent's words count as told (v4 counted only the task's, so this fails on it)."""
    t = build(opening() + [(2, "agent", "assistant", "I can see on my side that your mobile data is turned off."),
                           (3, "user", "user", "Oh, so my mobile data is off. I didn't know that.")])
    assert _classes(t) == []


def test_a_state_without_a_tool_carries_what_the_user_db_held() -> None:
    t = build(opening() + [(2, "agent", "assistant", "I see. Anything else you noticed?"),
                           (3, "user", "user", "Also my Wi-Fi calling is switched on.")])
    found = [f for f in detect_all(t, USER_DETECTORS) if f.fault_class == "state_without_tool"]
    assert len(found) == 1 and "wifi_calling=on (user DB: off)" in found[0].evidence


def test_the_user_db_is_read_through_the_phones_own_read_tools_after_the_recorded_calls() -> None:
    from tauray.actors.audit import user_db
    before = build(opening())
    after = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
                  + performed(2, "toggle_airplane_mode", AIRPLANE_OFF))
    assert user_db.db_shown(before, 1)["airplane_mode"] == "on"  # the task's airplane mode is on
    assert user_db.db_shown(after, 2)["airplane_mode"] == "off" and user_db.db_shown(after, 2)["line"] == "active"
    assert user_db.db_shown(build(opening(), scenario="tau2_airline__task_0"), 1) == {}  # no user-side state


def test_a_faithful_customer_paraphrasing_its_results_and_what_they_imply_is_not_flagged() -> None:
    """Reports in the customer's own words: what the result showed, and a setting it did not show
    but the phone really has (roaming still off, per the user-side DB)."""
    speed = "Speed Test Result: 12.00 Mbps (Fair). Connection is okay for web browsing."
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", AIRPLANE_OFF,
                          "Okay, the plane mode is off now, I've got three bars on 4G and mobile data shows enabled. "
                          "Roaming is still off, I think.")
              + [(4, "agent", "assistant", ask("run_speed_test"))]
              + performed(4, "run_speed_test", speed, "The speed test came back fair, around 12 megabits, still slowish."),
              success=False)
    assert _classes(t) == []
