"""Claims, not phrasings (issue 38): a customer's statement read into (setting, value) and compared
with what its phone showed. The phrasings here are the issue's table and our own, never the
independent evaluation set's (tests/audit_eval)."""

from __future__ import annotations

import pytest

from tauray.results.audit import claims
from tauray.results.audit.finding import detect_all
from tauray.results.audit.user_faults import USER_DETECTORS
from tests.audit.helpers import GREETING, ask, build, opening, performed

MMS = "tau2_telecom__mms_issue__bad_network_preference"
BAR = "Status Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%"


@pytest.mark.parametrize(("said", "claim"), [
    ("It's showing airplane mode on", ("airplane_mode", "on")),
    ("Airplane mode is still on though.", ("airplane_mode", "on")),
    ("Hmm, my network mode is set to 3G only.", ("network_mode", "3g")),
    ("There's no signal at all up top.", ("signal", "none")),
    ("The messaging app doesn't have the storage permission.", ("app_permission", "missing")),
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
