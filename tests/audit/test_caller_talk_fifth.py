"""Issue 51, fifth pass: classes of caller talk read wrongly after the fourth pass, found on the
`talk4` set (measured once, then read, so `talk4` is a tuning set from here on; `talk5` is the test
set). Every sentence here was written for these tests, none is taken from an evaluation set; each
class has sentences that failed on the rules before this pass and, where the change could overreach,
sentences it must keep reading."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.actors.audit.user_reasons import new_problem
from tauray.actors.audit.user_words import ConstraintBroken
from tests.audit.helpers import GREETING, ask, build

ABROAD = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"
PLAN = "tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded__user_abroad_roaming_disabled_off__persona_hard"
NO_DATA = "the phone has no data. "

# --- a plan change that is the subject of a negated verb breaks nothing ------------------------------

CB = ConstraintBroken(name="c", version=7, fault_class="constraint_broken")


def _said(text: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", text)], scenario=PLAN)


@pytest.mark.parametrize("said", [
    "My data's stopped. So you know, a new plan is not on the cards.",
    "Data's dried up. An upgraded plan ain't something I'm after, mind.",  # read before too
    "No internet at all. A bigger plan won't be happening, thanks.",
])
def test_a_plan_change_as_the_subject_of_a_negated_verb_breaks_nothing(said) -> None:
    assert CB.detect(_said(said)) == []


def test_a_plan_change_wanted_is_still_asked_for() -> None:
    assert CB.detect(_said("My data's stopped. A bigger plan is what I'm after, sort me out."))


# --- an expectation, a means not at hand and a dialect's negation claim no state ------------------------

@pytest.mark.parametrize("said", [
    "For the record, the internet has to be excellent speed, nothing less.",
    "The speed must be excellent, not middling.",
    "For video calls only excellent speed would do.",
    "Honestly, nothing short of excellent speed will do for my work calls.",
    "Wi-Fi-wise, there's nothing we can get on out on the farm.",
    "There's no Wi-Fi round here for us to join.",  # kept
])
def test_an_expectation_or_a_means_not_at_hand_claims_no_state(said) -> None:
    assert claims.claims(said) == {}


@pytest.mark.parametrize(("said", "expected"), [
    ("The pictures just willnae send, not since yesterday.", {"mms": "cannot"}),
    ("Ma picture messages cannae go oot.", {"mms": "cannot"}),
    ("Roaming's no on, I checked it.", {"roaming": "off"}),
    ("Mobile data is off.", {"mobile_data": "off"}),  # kept
    ("There's no signal at all.", {"signal": "none"}),  # kept: "no" before a value word only
])
def test_a_dialects_negation_negates_the_value(said, expected) -> None:
    assert claims.claims(said) == expected


# --- a new problem: a screen quoting, a consequence of the telecom problem, a verb ----------------------

NO_SERVICE = "your phone shows no service. "


@pytest.mark.parametrize(("said", "task"), [
    ("The screen's frozen on 'No Service', has been since lunch.", NO_DATA),
    ("The display has been stuck on 'No Service' since breakfast.", NO_DATA),  # kept
    ("The wee screen is warning me the line's been barred.", NO_SERVICE),
    ("I was using the weather app and it kept freezing because the data dropped out.", NO_DATA),
    ("Honestly mi nuh touch nothing on it.", NO_DATA),
    ("I haven't touched anything yet, I wanted to ring first.", NO_DATA),  # kept
    ("I reckon the bank app works fine, it's just the internet.", NO_DATA),
    ("The messaging app just says the send failed.", "picture messages do not send. "),
])
def test_a_screen_quoting_a_consequence_or_a_verb_is_no_new_problem(said, task) -> None:
    assert new_problem(said, task) is None


@pytest.mark.parametrize("said", [
    "I think the headphone jack might be on its way out as well.",
    "My niece says the recipe app keeps kicking me out.",
    "By the way, the dark mode switches itself on at midday.",
    "Also the caller ID has started showing the wrong names.",
    "My bird-watching app stopped loading the maps this week.",  # kept
    "The camera's been stuck on 'Loading' and it's not the signal.",  # a part's own trouble, quoted
])
def test_a_part_after_a_verb_of_thinking_or_an_app_of_any_name_is_a_new_problem(said) -> None:
    assert new_problem(said, NO_DATA)


@pytest.mark.parametrize("said", [
    "Oh, and my earbuds' right side drops out every few minutes.",  # the part's own side, its verb further on
    "I meant to ask about the torch, it won't come on at night.",  # the part taken up by a pronoun
    "Also the keyboard, when I type, it jumps to the wrong letters.",
    "And ever since Sunday the battery barely lasts the morning.",  # an adverb before the verb
    "also netflix keeps crashing on me, weirdly.",  # an app of any name crashing
])
def test_a_part_taken_up_owned_or_with_an_adverb_is_a_new_problem(said) -> None:
    assert new_problem(said, NO_DATA)


@pytest.mark.parametrize("said", [
    "The screen, it says No Service.",
    "I asked about the camera, it said to ring you.",
    "The photos, they don't go out.",
    "My aunt reckons app permission settings are easy once you've found them.",  # no app of that name
    "I tried the shop's app and it keeps freezing because the data drops.",
])
def test_a_screen_taken_up_reporting_or_a_telecom_consequence_is_no_new_problem(said) -> None:
    assert new_problem(said, NO_DATA) is None


# --- a refusal: the asked action as the subject of a turning-away -------------------------------------

def _asked_then(reply: str) -> list[tuple[str, int]]:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")), (3, "user", "user", reply)],
              scenario=ABROAD, success=False)
    return [(f.fault_class, f.turn) for d in USER_DETECTORS for f in d.detect(t)]


@pytest.mark.parametrize("reply", [
    "With a parcel due any minute, airplane mode is off the table today.",
    "Because the bank is ringing me back any minute, airplane mode is out of the question.",
    "While the landlord's inspection is on, airplane mode can't be done, sorry.",  # read before too
])
def test_the_asked_action_as_the_subject_of_a_turning_away_is_an_invented_constraint(reply) -> None:
    found = _asked_then(reply)
    assert ("invented_constraint", 3) in found and ("state_without_tool", 3) not in found


def test_a_setting_said_off_is_still_a_state() -> None:
    assert claims.claims("Airplane mode is off, I looked.") == {"airplane_mode": "off"}
