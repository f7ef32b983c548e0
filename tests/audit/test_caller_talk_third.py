"""Issue 51, third pass: classes of caller talk read wrongly after the second pass, found on the
`talk2` set (its faithful conversations' findings were read, so `talk2` is a tuning set from here
on; `talk3` is the test set). Every sentence here was written for these tests, none is taken from
an evaluation set; each class has sentences that failed on the rules before this pass and, where
the change could overreach, sentences it must keep reading."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.user_words import FaultNamedEarly
from tests.audit.helpers import GREETING, ask, build, performed

AT_HOME = "tau2_telecom__mms_issue__bad_wifi_calling__persona_easy"


@pytest.mark.parametrize(("said", "expected"), [
    # a negative quantifier as the subject denies what follows of every one
    ("No picture message I send goes out.", {"mms": "cannot"}),
    ("Nothing I attach a picture to gets delivered.", {"mms": "cannot"}),
    ("Not one picture I've sent today has gone through.", {"mms": "cannot"}),  # its own "not", counted once
    ("My photo went through fine.", {"mms": "can"}),
    # a self-correction takes back what came before it
    ("Mobile data's on - no wait, sorry, it's the roaming that's on.", {"roaming": "on"}),
    ("Roaming is off, scratch that, I haven't looked at it.", {}),
    ("The VPN is on, or rather the VPN app is open.", {"vpn": "on"}),
    # "showing" followed by its value
    ("Roaming's showing off.", {"roaming": "off"}),
    ("Airplane mode: showing off, not on.", {"airplane_mode": "off"}),
    ("The VPN is showing on the top bar.", {"vpn": "on"}),
    # a purpose or the caller's ability between a setting and its value word
    ("I've no wireless to connect to in this flat.", {}),
    ("There's no Wi-Fi I can get on around here.", {}),
    ("Airplane mode is set to on.", {"airplane_mode": "on"}),
    # a counterfactual, a thought about a topic, a demand
    ("I wouldn't have thought of the VPN app's permissions at all.", {}),
    ("I hadn't thought about data saver.", {}),
    ("I won't settle for a slow speed.", {}),
    ("I'm not putting up with slow speed any more.", {}),
])
def test_the_third_pass_classes_read_as_meant(said, expected) -> None:
    assert claims.claims(said) == expected


def _opening(said: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", "My picture messages won't send."),
                  (2, "agent", "assistant", ask("toggle_airplane_mode")),
                  *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 🔋 80%",
                             said)], scenario=AT_HOME)


FNE = FaultNamedEarly(name="f", version=12, fault_class="fault_named_early")


def test_a_cause_guessed_with_the_callers_own_doubt_is_none() -> None:
    assert FNE.detect(_opening("Done. Perhaps the APN is behind it, but don't quote me on that.")) == []
    assert FNE.detect(_opening("Done. It might be the APN settings, though I could be wrong.")) == []


def test_a_cause_suspected_without_doubt_is_still_found() -> None:
    (found,) = FNE.detect(_opening("Done. I reckon it's probably the APN settings."))
    assert "apn" in found.evidence.lower()
