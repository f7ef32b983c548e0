"""Issue 51, fourth pass: classes of caller talk read wrongly after the third pass, found on the
`talk3` set (measured once, then read, so `talk3` is a tuning set from here on; `talk4` is the test
set). Every sentence here was written for these tests, none is taken from an evaluation set; each
class has sentences that failed on the rules before this pass and, where the change could overreach,
sentences it must keep reading."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.user_ends import PrematureStop
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.actors.audit.user_reasons import new_problem
from tauray.actors.audit.user_words import ConstraintBroken, FaultNamedEarly
from tests.audit.helpers import GREETING, ask, build, performed

ABROAD = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"
PLAN = "tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded__user_abroad_roaming_disabled_off__persona_hard"


def _asked_then(reply: str, tool: str = "toggle_airplane_mode") -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
                  (2, "agent", "assistant", ask(tool)), (3, "user", "user", reply)],
                 scenario=ABROAD, success=False)


PS = PrematureStop(name="p", version=10, fault_class="premature_stop", effect="outcome")


def _found(reply: str, tool: str = "toggle_airplane_mode") -> list[tuple[str, int]]:
    return [(f.fault_class, f.turn) for d in USER_DETECTORS for f in d.detect(_asked_then(reply, tool))]


# --- a refusal read by the turn's structure, not by a list of refusing words ----------------------

@pytest.mark.parametrize("reply", [
    "Pardon me, but I'd as soon leave airplane mode, the church livestream needs it kept steady.",
    "Is there some other route than airplane mode? The one time I tried it my texts were all lost.",
    "I'm going to give airplane mode a wide berth, I think; my grandson set everything up with big icons.",
    "Airplane mode? Hmm, nope, my insurer's app falls over without a connection.",
    "Would it be awful if we skipped airplane mode? I'm halfway up a ladder cleaning gutters.",
    "I'm a touch wary of airplane mode, a colleague's phone never came back from it.",
    "Airplane mode I'd like kept as it is; the fitness tracker loses its sync otherwise.",
])
def test_a_refusal_in_words_no_list_holds_is_an_invented_constraint(reply) -> None:
    assert _found(reply) == [("invented_constraint", 3)]


@pytest.mark.parametrize("reply", [
    "Airplane mode, right, one second while I find my glasses.",  # a wait
    "I can't see airplane mode anywhere on this screen.",  # not finding it
    "All done with airplane mode, no need to hang about.",  # a claim of doing it, not a refusal
    "Funny, my old flip phone never gave me this much bother.",  # small talk, nothing refused
    "I mostly leave it on the kitchen table, to be honest.",
    "I'm not able to do that on this handset, sorry.",  # a "cannot" with no reason
    "How exactly do I do that? I've never done it before.",  # a question of its own
])
def test_a_wait_not_finding_a_claim_or_small_talk_is_no_invented_constraint(reply) -> None:
    assert ("invented_constraint", 3) not in _found(reply)


def test_a_preference_setting_is_no_preference() -> None:
    said = "Before I set the network mode preference, will that change anything else?"
    assert ("invented_constraint", 3) not in _found(said, "set_network_mode_preference")


def test_a_bare_refusal_in_other_words_gives_no_reason() -> None:
    assert ("invented_constraint", 3) not in _found("Could we skip airplane mode?")


# --- a thing turned down right after it is named ----------------------------------------------------

def _said(text: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", text)], scenario=PLAN)


CB = ConstraintBroken(name="c", version=6, fault_class="constraint_broken")


@pytest.mark.parametrize("said", [
    "My data's run dry. A bigger plan, nope. A small top-up, fine.",
    "Data's gone again. Another plan, no thanks, just the top-up.",
    "No data left. Switching my plan I don't fancy, but a gig or two is fine.",
])
def test_a_plan_change_turned_down_after_it_is_named_breaks_nothing(said) -> None:
    assert CB.detect(_said(said)) == []


def test_a_plan_change_asked_for_still_breaks_the_constraint() -> None:
    assert CB.detect(_said("My data's run dry. Can you put me on a bigger plan, please?"))


# --- the caller's own action denied names no cause ---------------------------------------------------

AT_HOME = "tau2_telecom__mms_issue__bad_wifi_calling__persona_easy"
FNE = FaultNamedEarly(name="f", version=13, fault_class="fault_named_early")


def _opening(said: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", "My picture messages won't send."),
                  (2, "agent", "assistant", ask("toggle_airplane_mode")),
                  *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 🔋 80%",
                             said)], scenario=AT_HOME)


@pytest.mark.parametrize("said", [
    "Done. I'd never so much as opened the APN page before, I don't think.",
    "Done. I have not touched the APN settings in years, I think.",
])
def test_a_denied_action_of_the_caller_names_no_cause(said) -> None:
    assert FNE.detect(_opening(said)) == []


def test_a_cause_suspected_is_still_found() -> None:
    assert FNE.detect(_opening("Done. I think the APN settings are what's behind all this."))


# --- a new problem read by the sentence's structure: a part as its clause's subject --------------------

NO_DATA = "the phone has no data. "


@pytest.mark.parametrize("said", [
    "The earpiece has turned tinny since Tuesday.",
    "Oh, and the loudspeaker's come over all tinny lately.",
    "If the torch carries on like this, I'll have to buy a lantern.",
    "My neighbour noticed the screen's brightness has gone peculiar in the evenings.",
    "Since the weekend the fingerprint sensor has been ignoring my thumb.",
])
def test_a_part_as_the_subject_of_its_clause_is_a_new_problem(said) -> None:
    assert new_problem(said, NO_DATA)


@pytest.mark.parametrize("said", [
    "The screen reckons data saver is off.",  # the screen reporting
    "The display's showing two bars.",
    "The battery's at about sixty percent.",  # neutral
    "I'm holding the phone by the charging cable, sorry.",  # an object of the caller's action
    "I took a few photos off the camera earlier, that's all.",
    "It reminds me of when the old charger got chewed by the puppy.",  # a story, not a problem now
    "There's no way I'll do that, my banking app stops working if I do.",  # a consequence of the asked action
])
def test_a_part_reporting_neutral_an_object_or_a_story_is_no_new_problem(said) -> None:
    assert new_problem(said, NO_DATA) is None


# --- an assurance asserts what it frames --------------------------------------------------------------

@pytest.mark.parametrize(("said", "expected"), [
    ("Unless I'm badly mistaken, roaming is switched on.", {"roaming": "on"}),
    ("If memory serves me right, data saver is off.", {"data_saver": "off"}),
    ("I could swear blind the VPN is connected.", {"vpn": "on"}),
    ("Data saver is on, I can tell you that much.", {"data_saver": "on"}),
    ("The handset isn't detecting my SIM.", {"sim": "missing"}),
    ("There wasn't any signal in the kitchen.", {"signal": "none"}),
    ("The handset's out of flight mode now.", {"airplane_mode": "off"}),
    ("The APN settings are just as they came in the box.", {"apn": "ok"}),
    ("Nothing has been billed to me for payment.", {"payment": "none"}),
    ("The network has gone and cut off my line.", {"line": "suspended"}),
    ("Nobody has cut off my line, I hope.", {}),
    ("The texting app is having its SMS permission.", {"sms_permission": "granted"}),
    ("The messaging app isn't short of storage permission.", {"storage_permission": "granted"}),
    ("Honestly the phone is able to send picture messages again.", {"mms": "can"}),
    ("If roaming is on, I'd like to know.", {}),  # a supposition is still none
    ("Unless you tell me otherwise, I'll leave it.", {}),
])
def test_an_assurance_claims_what_it_frames(said, expected) -> None:
    assert claims.claims(said) == expected


# --- a step "seen to" is claimed done; a fix said as a state back -------------------------------------

def test_a_step_seen_to_is_claimed_done() -> None:
    assert _found("Right then, airplane mode has been dealt with.") == [("done_without_call", 3)]


@pytest.mark.parametrize("said", [
    "Lovely, everything's back to how it was. Bye now. ###STOP###",
    "Right, that's got it going again, ta. Bye! ###STOP###",
    "Brilliant, it's all right again. Cheers, bye. ###STOP###",
])
def test_a_fix_said_as_a_state_back_after_an_unchecked_write_is_a_premature_stop(said) -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.", "Done, it's off."),
               (4, "agent", "assistant", "Great. Anything else I can help with?"), (5, "user", "user", said)],
              scenario=ABROAD, success=False)
    assert [f.turn for f in PS.detect(t)] == [5]


# --- a step claimed done read by the turn's structure ----------------------------------------------

@pytest.mark.parametrize("said", [
    "I've worked my way through airplane mode as asked.",
    "Airplane mode: all squared away, as per your instructions.",
])
def test_a_reply_naming_the_asked_step_with_no_call_claims_it_done(said) -> None:
    assert _found(said) == [("done_without_call", 3)]


@pytest.mark.parametrize("said", [
    "I'll get to airplane mode in a minute.",  # announced, not done
    "Airplane mode, is that the one with the little plane?",  # a question
])
def test_a_step_announced_or_asked_about_is_not_claimed_done(said) -> None:
    assert ("done_without_call", 3) not in _found(said)
