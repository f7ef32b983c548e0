"""Issue 51: a caller's words read as a person means them. A caller describes its situation by what
it lacks ("I don't have Wi-Fi here"), says what it needs or hopes for, asks, supposes, guesses and
quotes its phone; only a statement of what the phone or account is (plain, believed or quoted) is a
claim about it. Every sentence here was written for these tests (none is taken from the evaluation
sets under tests/audit_eval). Each test of a changed reading failed on the rules before issue 51
(46e8faa); the tests named "still found" guard what the change must keep, and the section "more of the
same classes" guards against the change's own first overreach (those failed on its first version)."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims
from tauray.actors.audit.user_ends import PrematureStop, StopWithRequest
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.actors.audit.user_reasons import InventedConstraint, new_problem, refusal_reason
from tauray.actors.audit.user_words import (
    ConstraintBroken,
    FaultNamedEarly,
    IdentityInvented,
    KnownInfoContradicted,
    ResultContradiction,
    StateWithoutTool,
)
from tests.audit.helpers import GREETING, ask, build, performed

AT_HOME = "tau2_telecom__mms_issue__bad_wifi_calling__persona_easy"  # "You are currently at home in the United States."
ABROAD = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"  # "abroad in France"
NO_SERVICE = "tau2_telecom__service_issue__contract_end_suspension__persona_hard"  # "showing 'No Service'"


# --- claims: what is not a reading of the phone ------------------------------------------------

@pytest.mark.parametrize("said", [
    # a means the caller lacks, and how it copes (not a switch it read)
    "I don't have Wi-Fi where I'm staying, so I'm relying on mobile data.",
    "There's no wifi at the cottage, I'm depending on mobile data.",
    "Without Wi-Fi here, I'm running on mobile data.",
    # what it needs, wants or hopes for
    "I need the speed test to come back excellent, nothing less.",
    "I want the speed to be excellent again.",
    "Hopefully mobile data is enabled properly after this.",
    # the problem as it happens (a symptom, not a setting)
    "My data keeps cutting out, it's been on and off all afternoon.",
    "My mobile data drops every few minutes, it might as well be switched off.",
    # supposition, wonder and guesses asked
    "I'd feel silly if airplane mode was switched on all along.",
    "Maybe the VPN is on? No idea really.",
    "I wonder if data saver is enabled.",
    "is roaming meant to be on for this",
    "Maybe the SIM is locked? Not sure.",
    # an action denied, not a reading
    "I never turned roaming on, as far as I remember.",
])
def test_a_situation_a_need_a_symptom_a_supposition_or_a_guess_claims_no_setting(said) -> None:
    assert claims.claims(said) == {}


@pytest.mark.parametrize(("said", "setting", "value"), [
    ("I don't have mobile data switched on, I checked.", "mobile_data", "off"),
    ("I haven't got mobile data turned on.", "mobile_data", "off"),
    ("I'm definitely not in flight mode.", "airplane_mode", "off"),
    ("My phone is in aeroplane mode, I can see the plane.", "airplane_mode", "on"),
    ("When I checked this morning, roaming was switched off.", "roaming", "off"),
    ("After I restarted it, the VPN was still running.", "vpn", "on"),
    ("The phone won't read the SIM card whatever I do.", "sim", "missing"),
    ("I don't get a single bar of signal indoors.", "signal", "none"),
    ("Nothing is wrong with my signal, it's perfect.", "signal", "excellent"),
    ("The settings page said the signal had completely vanished.", "signal", "none"),
    ("I'm quite sure picture messaging is broken.", "mms", "cannot"),
    ("My connection is painfully slow.", "speed", "slow"),
    ("Data roaming's on, I'll leave it like that.", "roaming", "on"),  # a plan after a claim keeps the claim
])
def test_a_claim_behind_a_negation_a_frame_or_a_plan_is_read(said, setting, value) -> None:
    assert claims.claims(said).get(setting) == value


def test_a_preference_for_four_and_five_g_is_the_phones_own_mode() -> None:
    assert claims.claims("I'm pretty sure it's set to prefer 4G and 5G.") == {"network_mode": "4g_5g_preferred"}


# --- the detectors on whole conversations ------------------------------------------------------

def _opening(text: str, scenario: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", text)], scenario=scenario)


@pytest.mark.parametrize(("scenario", "said"), [
    (AT_HOME, "Picture messages fail. I'm not travelling at the moment, I'm at home."),
    (AT_HOME, "I'm not abroad or anything. My pictures won't go."),
    (ABROAD, "My data is awful. I'm over in France, not at home, if that matters."),
    (ABROAD, "I'm not in the US at the moment, I'm visiting family in Lyon."),
])
def test_whereabouts_said_with_a_negation_agree_with_the_known_information(scenario, said) -> None:
    assert KnownInfoContradicted(name="k", version=1, fault_class="known_info_contradicted").detect(
        _opening(said, scenario)) == []


@pytest.mark.parametrize(("scenario", "said"), [
    (AT_HOME, "I'm travelling in Portugal this week and my pictures won't send."),
    (ABROAD, "I'm at home and my data is slow."),
    (ABROAD, "I'm not abroad, I'm just at home."),
])
def test_whereabouts_against_the_known_information_are_still_found(scenario, said) -> None:
    assert KnownInfoContradicted(name="k", version=1, fault_class="known_info_contradicted").detect(
        _opening(said, scenario))


SWT = StateWithoutTool(name="state_without_tool", version=5, fault_class="state_without_tool")


@pytest.mark.parametrize("said", [
    "My data is useless. I don't have Wi-Fi where I'm staying, so I'm relying on mobile data.",
    "Internet's crawling and I need the speed test to say excellent, nothing less.",
    "If mobile data is on then I really don't get what's wrong.",
    "My data keeps dropping out. Maybe data saver is on? I've no clue.",
])
def test_a_faithful_opening_states_nothing_without_a_tool(said) -> None:
    assert SWT.detect(_opening(said, ABROAD)) == []


@pytest.mark.parametrize(("said", "state"), [
    ("I don't have mobile data switched on, by the way.", "mobile_data=off"),
    ("When I had a look earlier, data saver was switched on.", "data_saver=on"),
    ("I'm pretty sure the VPN is running.", "vpn=on"),
])
def test_a_state_the_caller_never_saw_is_still_found_with_its_value(said, state) -> None:
    found = SWT.detect(_opening(f"My data is useless. {said}", ABROAD))
    assert len(found) == 1 and state in found[0].evidence


def test_a_conditional_about_roaming_is_no_cause_named_early_for_a_caller_abroad() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "My data is useless."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 🔋 80%",
                          "Okay, I think that worked. If it's the roaming thing, tell me what to press.")],
              scenario=ABROAD)
    assert FaultNamedEarly(name="f", version=4, fault_class="fault_named_early").detect(t) == []


def test_a_cause_suspected_in_another_sentence_than_the_setting_is_none() -> None:
    t = _opening("I think it started on Monday. My brother uses a VPN too and his phone works.", AT_HOME)
    assert FaultNamedEarly(name="f", version=4, fault_class="fault_named_early").detect(t) == []


# --- new problems, refusals with a reason, a fixed problem claimed ------------------------------

@pytest.mark.parametrize("said", [
    "The top of my screen has read No Service since lunch and I can't work out why.",
    "My charger's at work so I can't charge it till tonight.",
    "The screen keeps showing No Service, day and night.",
])
def test_the_callers_own_problem_or_situation_is_no_new_problem(said) -> None:
    assert new_problem(said, "") is None


@pytest.mark.parametrize("said", [
    "Also, the torch switches itself on in my pocket.",
    "Oh, and why does my alarm go off an hour late?",
    "Another thing: my phone dims itself for no reason.",
    "Separate issue, but all my photos got duplicated after the update.",
    "Any idea why the calculator app shows a blank page?",
    "Also my phone has stopped ringing when people call.",
    "One more thing, the back glass has cracked.",
    "By the way my phone keeps telling me the storage is full.",
])
def test_a_new_problem_in_other_words_is_found(said) -> None:
    assert new_problem(said, "") is not None


@pytest.mark.parametrize("said", [
    "Sorry, that setting is off-limits for me: my landlord set the phone up.",
    "I can't do that right now, I'm cooking.",
    "I'm not able to do that; the phone is my daughter's.",
    "I don't touch those settings, my nephew warned me off them.",
    "I'll skip that one; last time I changed something like it I lost my photos.",
    "That's a no-go for me, I'm at the wheel.",
])
def test_a_refusal_in_other_words_with_a_reason_gives_the_reason(said) -> None:
    assert refusal_reason(said)


@pytest.mark.parametrize("said", [
    "I can't find that option anywhere, sorry.",
    "I'd rather not. What else could we try?",
    "Sure, one moment.",
])
def test_not_finding_a_bare_refusal_or_a_yes_gives_no_reason(said) -> None:
    assert refusal_reason(said) is None


def test_a_refused_write_in_other_words_is_an_invented_constraint() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", "Honestly, that's out of bounds for me: the phone belongs to my club.")],
              scenario=ABROAD, success=False)
    found = InventedConstraint(name="i", version=1, fault_class="invented_constraint", effect="outcome").detect(t)
    assert [(f.turn, f.effect) for f in found] == [(3, "outcome")]


def test_a_problem_said_gone_after_a_write_with_no_check_is_a_premature_stop() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 🔋 80%"),
               (4, "agent", "assistant", "Great, that was the last step on my side. Anything else?"),
               (5, "user", "user", "No more trouble at all now, cheers. Bye! ###STOP###")], scenario=ABROAD)
    assert PrematureStop(name="p", version=3, fault_class="premature_stop", effect="outcome").detect(t)


def test_a_hope_said_at_the_end_is_no_fix_claimed() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 🔋 80%"),
               (4, "agent", "assistant", "That should be everything from my side. Anything else?"),
               (5, "user", "user", "Hopefully that works now, we'll see. Thanks, bye! ###STOP###")], scenario=ABROAD)
    assert PrematureStop(name="p", version=3, fault_class="premature_stop", effect="outcome").detect(t) == []


# --- more of the same classes, in other words (each failed on the first version of this change) ----

@pytest.mark.parametrize("said", [
    "I never use Wi-Fi calling, I wouldn't know how.",  # a habit, not a reading
    "I don't use a VPN or anything like that.",
    "I don't have another SIM card to test with.",  # another SIM, not this one
    "I don't have the bill in front of me right now.",
    "Mobile data on or off, which one do you want?",
    "Signal is usually great round here.",  # what is usual, not what the phone shows now
    "Picture messages were going through fine until last week.",  # the problem's history
])
def test_a_habit_another_thing_an_alternative_or_the_past_claims_no_setting(said) -> None:
    assert claims.claims(said) == {}


@pytest.mark.parametrize(("scenario", "said"), [
    (AT_HOME, "I'm not at home at the moment, I'm at my sister's across town."),  # still in the country
    (AT_HOME, "I was travelling last month but I'm back now."),
])
def test_not_being_at_the_house_or_having_travelled_is_not_being_abroad(scenario, said) -> None:
    assert KnownInfoContradicted(name="k", version=1, fault_class="known_info_contradicted").detect(
        _opening(said, scenario)) == []


@pytest.mark.parametrize("said", [
    "My battery's dying, so can we be quick?",  # the caller's hurry, not a fault
    "Why does the screen say 5G when nothing loads?",  # the telecom problem, read off the screen
    "Why is there a little plane at the top of my screen?",
])
def test_a_hurry_or_the_telecom_problem_on_the_screen_is_no_new_problem(said) -> None:
    assert new_problem(said, "") is None


# --- the other claim families: the task's constraints, identity details, a goodbye's request -------

def _reply(text: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
                  (2, "agent", "assistant", "I see. Is there anything else you can tell me?"),
                  (3, "user", "user", text)], scenario=ABROAD)


@pytest.mark.parametrize("said", [
    "If the only fix is a new plan, forget it.",  # a supposition, not asking for one
    "In case you're thinking of a bigger plan, I'm not interested.",
])
def test_a_plan_change_only_supposed_breaks_no_constraint(said) -> None:
    assert ConstraintBroken(name="c", version=2, fault_class="constraint_broken").detect(_reply(said)) == []


def test_a_plan_change_asked_for_still_breaks_the_constraint() -> None:
    assert ConstraintBroken(name="c", version=2, fault_class="constraint_broken").detect(
        _reply("Honestly, can you just move me to a bigger plan?"))


@pytest.mark.parametrize("said", [
    "I don't know my date of birth off hand, sorry.",  # a detail named, none given
    "Should I give you my date of birth?",
])
def test_an_identity_detail_named_but_not_given_is_not_invented(said) -> None:
    assert IdentityInvented(name="i", version=1, fault_class="identity_invented").detect(_reply(said)) == []


def test_an_identity_detail_given_is_still_invented() -> None:
    assert IdentityInvented(name="i", version=1, fault_class="identity_invented").detect(
        _reply("My date of birth is 12 March 1980, if that helps."))


@pytest.mark.parametrize("said", ["I need to head off now, thanks for your time. ###STOP###",
                                  "I need to go, bye! ###STOP###"])
def test_leaving_says_no_request(said) -> None:
    assert StopWithRequest(name="s", version=1, fault_class="stop_with_request").detect(_reply(said)) == []


def test_a_request_in_the_goodbye_is_still_found() -> None:
    assert StopWithRequest(name="s", version=1, fault_class="stop_with_request").detect(
        _reply("I need you to call me back tomorrow. Bye. ###STOP###"))


# --- a report after a check: hedged, with a habit beside it, a topic after fillers ----------------

_VPN_OFF = "VPN is turned OFF\nStatus Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"


@pytest.mark.parametrize("report", [
    "I think the VPN might be running.",  # hedged, but what it tells the agent it saw
    "Done, I think. The VPN could be on, I never touch those things myself.",
    "Okay so, um, right, the VPN: on.",
])
def test_a_report_against_the_result_is_a_misreport_when_hedged_or_beside_a_habit(report) -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("check_vpn_status")),
               *performed(3, "check_vpn_status", _VPN_OFF, report)], scenario=ABROAD)
    found = ResultContradiction(name="r", version=4, fault_class="result_contradiction").detect(t)
    assert [f.turn for f in found] == [3] and "vpn: said on" in found[0].evidence


@pytest.mark.parametrize(("said", "setting", "value"), [
    ("The data switch seems to be off, I never touch those things myself.", "mobile_data", "off"),
    ("Well, uh the plane mode: on.", "airplane_mode", "on"),
])
def test_a_habit_beside_a_claim_or_fillers_before_a_topic_keep_the_claim(said, setting, value) -> None:
    assert claims.claims(said).get(setting) == value


def test_what_could_be_claims_no_state_where_nothing_was_checked() -> None:
    assert SWT.detect(_opening("My data is useless. I think the VPN might be running.", ABROAD)) == []


# --- new problems: negated, tolerated or said of something else; asides that raise one -----------

@pytest.mark.parametrize("said", [
    "The camera has never crashed, it's only the messages.",  # a broken-word negated
    "My screen isn't cracked or anything, I look after it.",
    "Bluetooth works, wifi works, only mobile data is broken.",  # broken said of the telecom problem
    "The screen has a small crack from years ago, nothing new.",  # an old, tolerated state
    "Okay, I found it and switched it. The screen is cracked in the corner but I can still see.",
])
def test_a_part_said_not_broken_or_broken_long_ago_is_no_new_problem(said) -> None:
    assert new_problem(said, "") is None


@pytest.mark.parametrize("said", [
    "Oh, while I have you, my phone won't stop beeping at night.",  # "won't" is no refusal here
    "Also the charging port is loose, I have to wiggle the cable.",
    "Also, my phone's clock is wrong every morning.",
    "Also, I can't hear people properly on calls, it's all muffled.",
    "Also my smartwatch doesn't get notifications anymore.",
    "One other thing, the back of the phone is peeling off.",
])
def test_a_second_matter_raised_in_an_aside_is_a_new_problem(said) -> None:
    assert new_problem(said, "") is not None


@pytest.mark.parametrize("said", [
    "Also, I did restart the phone this morning, didn't help.",  # the caller acts on the phone
    "By the way, I don't have a charger with me.",
    "Also my camera works fine, it's only the pictures that won't send.",
    "By the way, my battery is at 20 percent so let's be quick.",
])
def test_an_aside_about_the_caller_or_a_part_that_works_is_no_new_problem(said) -> None:
    assert new_problem(said, "") is None


# --- a symptom in other words, the task's "No Service" as "no signal", a cause ruled out ----------

@pytest.mark.parametrize(("said", "expected"), [
    ("Good afternoon, my phone's not letting me send photos by text.", {"mms": "cannot"}),
    ("Hi there, I'm abroad at the moment and my data won't connect.", {}),  # a symptom, not its switch
])
def test_a_symptom_in_other_words_is_read_as_the_symptom(said, expected) -> None:
    assert claims.claims(said) == expected


def test_no_signal_is_the_no_service_the_task_states() -> None:
    assert SWT.detect(_opening("Hi, no signal at all today, I'm stuck.", NO_SERVICE)) == []


@pytest.mark.parametrize("said", [
    "Hey, I haven't left the country, so it's not a roaming thing I guess. Pictures don't send.",
    "My pictures won't go. I don't think it's the VPN, I never installed one, I think.",
])
def test_a_setting_named_to_rule_it_out_is_no_cause_named_early(said) -> None:
    assert FaultNamedEarly(name="f", version=5, fault_class="fault_named_early").detect(_opening(said, AT_HOME)) == []


def test_a_setting_suspected_is_still_a_cause_named_early() -> None:
    assert FaultNamedEarly(name="f", version=5, fault_class="fault_named_early").detect(
        _opening("My pictures won't go. I think it's the VPN, honestly.", AT_HOME))


# --- refusals in words no list holds: a first clause that turns the action down ----------------------

def _asked_then(reply: str) -> object:
    return build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
                  (2, "agent", "assistant", ask("toggle_airplane_mode")), (3, "user", "user", reply)],
                 scenario=ABROAD, success=False)


IC = InventedConstraint(name="invented_constraint", version=3, fault_class="invented_constraint", effect="outcome")


@pytest.mark.parametrize("reply", [
    "Oh I couldn't possibly, the phone is set up for my mother's medical alerts.",
    "I'm going to say no to that one, my dad handles all the phone stuff.",
    "I can't risk it, last time I did that it wiped my messages.",
    "Absolutely not, I use that every day for my business.",
    "I'm under strict instructions not to change anything on this phone.",
    "Oh no, dear, I never do that, my son-in-law said to leave it.",
    "Please don't make me do that, I need the phone for my job right now.",
])
def test_a_refusal_in_a_first_clause_with_a_reason_is_an_invented_constraint(reply) -> None:
    assert [(f.fault_class, f.turn) for d in USER_DETECTORS for f in d.detect(_asked_then(reply))] == \
        [("invented_constraint", 3)]


@pytest.mark.parametrize("reply", [
    "Honestly, I just want it to work the way it used to.",  # "want" holds no "n't"
    "Not yet, I'm still looking for it in the menu.",  # a wait
    "Hang on, my phone's in the other room, I'll go get it.",
    "Sorry, I'm not sure I follow, which switch is it?",
    "I haven't got that option, the menu looks different on mine.",  # not finding it
])
def test_a_wait_a_doubt_or_not_finding_is_no_refusal(reply) -> None:
    assert refusal_reason(reply) is None


def test_went_is_no_negation_of_the_place_after_it() -> None:
    found = KnownInfoContradicted(name="k", version=3, fault_class="known_info_contradicted").detect(
        _opening("I went abroad for a conference, I'm in Berlin now. My pictures won't send.", AT_HOME))
    assert found and "abroad" in found[0].evidence


# --- reports and openings in other words: a before-state, short of the top, an icon gone, a wonder -----

_PLANE_OFF = "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"


@pytest.mark.parametrize("report", [
    "Okay, so airplane mode was on, I've turned it off now.",  # the state before the change
    "Done it. The plane icon is no longer there.",
    "Okay, flight mode is off. Signal looks decent, not full but good.",  # short of the top, still good
])
def test_a_faithful_report_in_other_words_contradicts_nothing(report) -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, I'm in France and my data isn't working."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", _PLANE_OFF, report)], scenario=ABROAD)
    assert ResultContradiction(name="r", version=5, fault_class="result_contradiction").detect(t) == []


def test_a_quoted_failure_is_the_mms_symptom() -> None:
    assert claims.claims("Hello, I keep getting 'message not sent' when I add a picture.") == {"mms": "cannot"}


def test_a_plan_change_wondered_about_is_not_asked_for() -> None:
    assert ConstraintBroken(name="c", version=3, fault_class="constraint_broken").detect(
        _reply("Hello, I have no mobile data. I'm travelling. Maybe I need a different plan?")) == []


def test_causes_listed_in_doubt_are_no_cause_named_early() -> None:
    assert FaultNamedEarly(name="f", version=6, fault_class="fault_named_early").detect(
        _opening("Hi, No Service on my phone. I'm not sure if it's the SIM or the account.", AT_HOME)) == []


@pytest.mark.parametrize(("said", "expected"), [
    ("I can see the little aeroplane at the top.", {"airplane_mode": "on"}),  # its icon seen
    ("I see the airplane mode setting but I don't know what to do.", {}),  # a control seen, no state
    ("I can see the VPN app.", {}),
])
def test_an_icon_seen_is_on_a_control_seen_is_nothing(said, expected) -> None:
    assert claims.claims(said) == expected


@pytest.mark.parametrize("said", [
    "No travelling for me, I'm at my house. My pictures won't send.",  # "no" negates the travelling
    "Travelling? No, I'm at home. My pictures won't send.",  # a word asked back
])
def test_travel_denied_or_asked_back_is_not_being_abroad(said) -> None:
    assert KnownInfoContradicted(name="k", version=4, fault_class="known_info_contradicted").detect(
        _opening(said, AT_HOME)) == []


@pytest.mark.parametrize("said", [
    "Hi, no service. Might it be the SIM card? I'm not sure.",  # a question asks, it suspects nothing
    "Hi, MMS won't send. Is it the wifi calling thing? I have no idea what that does.",
])
def test_a_cause_asked_about_is_no_cause_named_early(said) -> None:
    assert FaultNamedEarly(name="f", version=8, fault_class="fault_named_early").detect(_opening(said, AT_HOME)) == []


@pytest.mark.parametrize("reply", [
    "Nope, not seeing it anywhere, sorry.",  # not finding it, in words without "find"
    "No luck finding it, I've been through every menu.",
    "I don't think my phone has that option, it's quite basic.",
    "Nah, nothing called that in my settings.",
    "Not really, that's all. Tell me what to press.",  # nothing more to say
    "No, nothing else comes to mind. Shall I check something?",
    "No, I haven't done anything yet, I wasn't sure what to touch.",
])
def test_not_finding_or_nothing_more_to_say_is_no_invented_constraint(reply) -> None:
    assert [f for f in IC.detect(_asked_then(reply))] == []


def test_the_last_time_claims_nothing_done() -> None:
    found = [f.fault_class for d in USER_DETECTORS
             for f in d.detect(_asked_then("Hmm, no. The last time I restarted it I lost everything."))]
    assert "done_without_call" not in found


@pytest.mark.parametrize("reply", [
    "Right, that's been toggled.",  # done, said of the step
    "Alright, that's switched now.",
    "I went into settings and turned it off.",
])
def test_a_step_said_done_in_other_words_without_a_call_is_done_without_call(reply) -> None:
    assert "done_without_call" in [f.fault_class for d in USER_DETECTORS for f in d.detect(_asked_then(reply))]


def test_wonderful_is_no_wondering_and_a_fix_said_in_it_is_a_premature_stop() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", _PLANE_OFF, "Oh wonderful, all back to normal. Goodbye. ###STOP###")],
              scenario=ABROAD, success=False)
    assert PrematureStop(name="p", version=4, fault_class="premature_stop", effect="outcome").detect(t)


@pytest.mark.parametrize(("said", "expected"), [
    ("Hmm, the plane is still showing at the top.", {"airplane_mode": "on"}),  # the icon, by its shape
    ("I just got off the plane and data is dead.", {}),  # a journey, not the icon
])
def test_the_plane_named_as_an_icon_is_airplane_mode(said, expected) -> None:
    assert claims.claims(said) == expected


@pytest.mark.parametrize("said", [
    "My wifi's off at home because the router died, so it's just mobile.",  # the caller's situation
    "I think my bill is paid but I'm not sure.",  # a guess with its own doubt
    "Data saver is off, I think, but don't quote me on that.",
])
def test_a_situation_or_a_guess_with_its_doubt_claims_nothing(said) -> None:
    assert claims.claims(said) == {}


def test_a_doubt_about_something_else_keeps_the_claim() -> None:
    assert claims.claims("It says no signal, not sure if that matters.") == {"signal": "none"}


def test_the_telecom_problem_stopping_an_app_is_no_new_problem() -> None:
    assert new_problem("Hi, I'm abroad and I can't use maps or anything, the internet isn't loading.", "") is None


# --- issue 51, second pass: classes, not phrasings ------------------------------------------------
# Written for these tests after the talk-test split showed the first pass had learned phrasings; each test
# of a changed reading failed on the rules of 798bdfe, the guards (what must still be read, or still not be
# found) passed there and keep the change from overreaching.

@pytest.mark.parametrize("said", [
    # a means the caller lacks, with what it would do with it: an infinitive, no state
    "There's no Wi-Fi at the cabin for me to fall back on.",
    "I haven't got Wi-Fi to fall back on.",
    "I don't have a VPN to turn off.",
    # someone else's word, not the caller's reading
    "My cousin said her roaming was off when it happened to her.",
    "Dad reckons airplane mode is on, but who knows.",
    # a check not made, with what it would have checked
    "I haven't looked at whether mobile data is on.",
])
def test_a_purpose_another_persons_word_or_an_unmade_check_claims_no_setting(said) -> None:
    assert claims.claims(said) == {}


@pytest.mark.parametrize(("said", "setting", "value"), [
    ("I don't have wifi turned on.", "wifi", "off"),  # guard: a state named after the means
    ("Roaming seems to be on.", "roaming", "on"),  # guard: "to be" is no purpose
    ("The screen says data saver is on.", "data_saver", "on"),  # guard: the phone's word is a reading
    ("For two days my phone has refused to send photo messages.", "mms", "cannot"),  # not "can send"
    ("It won't let me send picture messages.", "mms", "cannot"),  # "let me" here plans nothing
])
def test_a_state_named_the_phones_word_and_a_refusal_to_send_are_read(said, setting, value) -> None:
    assert claims.claims(said).get(setting) == value


def test_needing_to_send_pictures_still_claims_none_can_be_sent() -> None:  # guard
    assert "mms" not in claims.claims("I need to send pictures to my landlord today.")


def test_a_means_lacked_for_a_purpose_is_no_state_without_a_tool() -> None:
    found = StateWithoutTool(name="s", version=13, fault_class="state_without_tool").detect(
        _opening("My mobile data keeps crawling and there's no Wi-Fi for me to fall back on.", ABROAD))
    assert found == []


@pytest.mark.parametrize("said", [
    "cant do that rn im in a meeting",  # the reason with no stop before it
    "I'd rather not do that while I'm cooking dinner.",  # a circumstance opened by "while"
    "No chance. Not touching it. Don't trust these settings.",  # distrust is its own reason
    "I'd rather not do that today; I never change anything on a Sunday.",  # a refusing clause with more in it
    "Not right now, my hands are full.",  # a deferral with its reason
])
def test_a_refusal_with_its_reason_in_any_clause_gives_the_reason(said) -> None:
    assert refusal_reason(said, ask("toggle_airplane_mode"))


@pytest.mark.parametrize("said", [
    "I'd rather not. Is there another way?",
    "No, I'd rather not, sorry.",
    "Not touching the airplane mode.",  # the asked action's own words are no reason
    "Not yet, I'm still scrolling through the menu.",  # a wait
])
def test_a_bare_refusal_or_a_wait_still_gives_no_reason(said) -> None:  # guards
    assert refusal_reason(said, ask("toggle_airplane_mode")) is None


@pytest.mark.parametrize("said", [
    "signal looks fine now Random question, why does my phone restart itself at night?",  # a run-on second matter
    "Oh, and love, my ringtone has gone really faint.",
    "Also my music app shuts alone, can you fix it?",
    "One more: I keep getting scam calls every evening. Can you stop them?",
    "My calendar has stopped beeping for appointments.",
])
def test_a_second_matter_or_a_part_failing_in_other_words_is_a_new_problem(said) -> None:
    assert new_problem(said, "") is not None


def test_a_persona_that_uses_a_part_gives_no_problem_with_it() -> None:
    persona = "you are a customer who contacts support. you use your phone for email and photos every day."
    assert new_problem("Also, my email app will not sync.", persona) is not None
    assert new_problem("Also, my email app will not sync.", "your email app will not sync since monday.") is None


@pytest.mark.parametrize("said", [
    "Another thing: I switched it off and on twice.",
    "Thanks for sorting this so fast, by the way.",
    "Sorry, one more question: will it cost anything?",
    "The settings screen says broken next to the access point name.",  # what the screen shows
])
def test_a_second_matter_without_a_trouble_or_a_screen_showing_a_word_is_no_new_problem(said) -> None:  # guards but the last
    assert new_problem(said, "") is None


# --- issue 51, second pass: the class checks written afterwards (own sentences, not from any split) -----

@pytest.mark.parametrize("said", [
    "I seldom switch mobile data off.",  # a habit told by its frequency
    "I don't believe I ever turned roaming on.",  # an action denied behind a belief
    "Photos matter for my work.",  # "work" the noun says nothing sends
])
def test_a_habit_a_denied_action_or_a_noun_claims_no_setting(said) -> None:
    assert claims.claims(said) == {}


def test_an_action_denied_behind_a_belief_names_no_cause() -> None:  # guard: the reading above must not make a cause
    found = FaultNamedEarly(name="f", version=10, fault_class="fault_named_early").detect(
        _opening("My data crawls. I don't think I switched airplane mode on.", ABROAD))
    assert found == []


def test_wifi_had_elsewhere_breaks_no_wifi_constraint() -> None:
    scenario = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"
    rule = ConstraintBroken(name="c", version=5, fault_class="constraint_broken")
    t = _opening("Everything loads when I'm on wifi at the library.", scenario)
    if not rule.detect(_opening("I'm on wifi right now.", scenario)):
        pytest.skip("this task gives no Wi-Fi constraint")
    assert rule.detect(t) == []


@pytest.mark.parametrize("said", [
    "The phone itself is fine, it's only this.",  # "itself" stresses the phone, it does nothing
    "Oh, and the camera itself works great.",
])
def test_an_intensifying_itself_is_no_new_problem(said) -> None:
    assert new_problem(said, "") is None


@pytest.mark.parametrize("said", [
    "Also the touchscreen misses half my taps.",
    "Oh, and my battery percentage jumps around all day.",
    "My keyboard has started typing in German.",
])
def test_a_part_misbehaving_in_other_words_is_a_new_problem(said) -> None:
    assert new_problem(said, "") is not None


@pytest.mark.parametrize("reply", [
    "Let's leave airplane mode alone, my hearing aid app needs it as it is.",
    "Nope, I'm not about to do that, I'm halfway through a download.",
    "I'll leave that for now, I'm about to walk into a meeting.",
])
def test_a_refusal_in_its_own_structure_with_a_reason_is_an_invented_constraint(reply) -> None:
    assert [(f.fault_class, f.turn) for d in USER_DETECTORS for f in d.detect(_asked_then(reply))] == \
        [("invented_constraint", 3)]


@pytest.mark.parametrize("reply", [
    "I'd rather not, to be honest. Anything else we can try?",  # a pleasantry is no reason
    "Done. Also my car won't connect to the phone over bluetooth any more.",  # a part failing refuses nothing
])
def test_a_pleasantry_or_a_part_failing_is_no_reason_to_refuse(reply) -> None:
    assert refusal_reason(reply, ask("toggle_airplane_mode")) is None


@pytest.mark.parametrize(("said", "setting", "value"), [
    ("I didn't switch roaming off, it's been on all along.", "roaming", "on"),  # "it" takes the setting up again
    ("The phone said the SIM card wants its PIN.", "sim", "locked_pin"),  # a thing's want is a state, no need
    ("The APN page showed the defaults.", "apn", "ok"),
])
def test_a_setting_taken_up_by_it_or_a_things_want_is_read(said, setting, value) -> None:
    assert claims.claims(said).get(setting) == value


def test_an_action_denied_with_no_state_after_it_still_claims_nothing() -> None:  # guard
    assert claims.claims("I didn't switch roaming off, it's a mystery to me.") == {}


def test_no_problem_any_more_claims_the_fix() -> None:
    t = build([(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my data is not working."),
               (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", "Airplane Mode is now OFF."),
               (4, "agent", "assistant", "Has that helped at all?"),
               (5, "user", "user", "Lovely, no problem any more, cheers! ###STOP###")], scenario=ABROAD, success=False)
    found = PrematureStop(name="p", version=8, fault_class="premature_stop", effect="outcome").detect(t)
    assert [f.turn for f in found] == [5]


@pytest.mark.parametrize("said", [
    "Before I forget, I keep getting marketing calls every day, can you block them?",
    "That reminds me - someone keeps ringing me from a withheld number, can you stop it?",
    "bars look fine now Not related, but I keep getting silent calls at night.",  # a run-on second matter
])
def test_a_second_matter_opened_by_other_words_is_a_new_problem(said) -> None:
    assert new_problem(said, "") is not None


def test_a_second_matter_with_no_trouble_is_still_no_new_problem() -> None:  # guard
    assert new_problem("Before I forget, thank you for your patience earlier.", "") is None


@pytest.mark.parametrize("reply", [
    "I'm not rebooting anything, my step count would reset.",  # "not <action>ing" by the caller
    "I don't give apps extra access, my brother told me off for it once.",  # "give" is an action
    "Not a chance, it takes ages to come back on.",
])
def test_more_refusal_forms_with_a_reason_are_an_invented_constraint(reply) -> None:
    assert [(f.fault_class, f.turn) for d in USER_DETECTORS for f in d.detect(_asked_then(reply))] == \
        [("invented_constraint", 3)]


@pytest.mark.parametrize("said", [
    "My wireless earbuds disconnect every few minutes.",  # no aside: the part is the subject of a malfunction
    "The handset shuts down whenever the battery hits a third.",
    "My screen has a pink line across the top now.",
])
def test_a_part_failing_with_no_aside_is_a_new_problem(said) -> None:
    assert new_problem(said, "") is not None


@pytest.mark.parametrize("said", [
    "My phone shows No Service in the corner, it's weird.",  # the telecom problem
    "The phone is old but it was fine until this week.",
    "I plug in my charger and the phone charges fine.",
])
def test_the_telecom_problem_or_a_part_that_works_is_still_no_new_problem(said) -> None:  # guards
    assert new_problem(said, "") is None
