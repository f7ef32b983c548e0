"""Issue 51, third pass: classes of caller talk read wrongly after the second pass, found on the
`talk2` set (its faithful conversations' findings were read, so `talk2` is a tuning set from here
on; `talk3` is the test set). Every sentence here was written for these tests, none is taken from
an evaluation set; each class has sentences that failed on the rules before this pass and, where
the change could overreach, sentences it must keep reading."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.user_reasons import refusal_reason
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


# --- refusals with a reason, in the forms the second pass did not read ----------------------------

ASKED = "Could you switch off data roaming on your phone, then tell me what the status bar shows?"


@pytest.mark.parametrize("said", [
    # a consequence, then a refusal that concludes the sentence
    "If I switch roaming off, my maps app stops working, so no.",
    "If I fiddle with roaming my alarm clock app breaks, so I won't.",
    "Roaming changes always mess up my calendar, so I'll leave it thanks.",
    # a prohibition on the caller
    "The terms of my work phone forbid me from changing roaming.",
    "I'm not in a position to change settings on a phone the school owns.",
    # another's anger at the action
    "My dad would go mad if I switched roaming off.",
    # an inability that is a refusal of the action now
    "I can't risk roaming, my sister needs to reach me.",
    "I'm cooking dinner, I can't be doing roaming right now.",
    # a deferral or a "never again" with its reason
    "The cat is on my lap, roaming will just have to wait.",
    "The last time I touched roaming the phone froze all night. Not again.",
    "Can't. The phone belongs to my office and roaming is locked.",
])
def test_a_refusal_with_a_reason_in_other_forms_gives_its_reason(said) -> None:
    assert refusal_reason(said, ASKED)


@pytest.mark.parametrize("said", [
    "I can't find roaming anywhere, so no luck yet.",
    "Okay, switching it now, so no worries.",
    "My husband set the phone up, so I'm not sure where things are. Let me look.",
    "It's off now, so no more roaming charges I hope.",
])
def test_not_finding_it_or_doing_it_is_no_refusal(said) -> None:
    assert refusal_reason(said, ASKED) is None


@pytest.mark.parametrize(("said", "expected"), [
    # a confident bet is a claim, not a supposition
    ("I'd wager the VPN is running.", {"vpn": "on"}),
    ("I'd put my money on roaming being switched off.", {"roaming": "off"}),
    ("I'd feel daft if roaming was on the whole time.", {}),  # what would be, still no claim
    # an idiom for the best signal
    ("Signal couldn't be better today.", {"signal": "excellent"}),
    # another's word of the caller's phone is its claim, relayed; of their own phone it is not
    ("My nephew told me data saver is switched on.", {"data_saver": "on"}),
    ("My nephew says his data saver is switched on.", {}),
    ("My neighbour reckons their roaming is off.", {}),
])
def test_a_bet_an_idiom_and_a_relayed_word_read_as_meant(said, expected) -> None:
    assert claims.claims(said) == expected
