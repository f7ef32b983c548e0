"""Each rule detector fires on its fault and stays quiet on the look-alike that is not one."""

from __future__ import annotations

from tauray.actors.audit.finding import detect_all
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.scenarios.registry import get_scenario
from tests.audit.helpers import SCENARIO, ask, build, opening, performed

AIRPLANE_OFF = "Airplane Mode is now OFF.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
CLOSING = "That was the last step on my side; everything should work now. Is there anything else I can do?"


def classes(t):
    return [(f.fault_class, f.turn) for f in detect_all(t, USER_DETECTORS)]


def test_every_detector_is_versioned_and_named_once():
    names = [d.name for d in USER_DETECTORS]
    assert len(names) == len(set(names))
    assert all(d.version >= 1 and d.tier == "rule" and d.blamed_side == "user" for d in USER_DETECTORS)


def test_a_faithful_conversation_has_no_finding():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", AIRPLANE_OFF), (4, "agent", "assistant", CLOSING),
               (5, "user", "user", "Thanks, that is all I needed. ###STOP###")])
    assert classes(t) == []


def test_premature_stop_while_an_asked_action_is_undone():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", "Forget it, goodbye. ###STOP###")], success=False)
    assert classes(t) == [("premature_stop", 3)]


def test_a_stop_after_the_resolved_result_is_not_premature():
    speed = "Speed Test Result: 250.00 Mbps (Excellent). Connection is very fast."
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", AIRPLANE_OFF, "Done."),
               (4, "agent", "assistant", ask("toggle_roaming")),
               *performed(5, "run_speed_test", speed, "It works now."),
               (5, "user", "user", "Great, it is fixed. ###STOP###")])
    assert "premature_stop" not in [c for c, _ in classes(t)]


def test_stop_message_that_asks_for_something():
    t = build([*opening(), (2, "agent", "assistant", CLOSING),
               (3, "user", "user", "Bye. Would you call me back tomorrow? ###STOP###")])
    assert classes(t) == [("stop_with_request", 3)]


def test_transfer_token_without_the_agents_transfer():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_data")),
               (3, "user", "user", "Get me a supervisor. ###TRANSFER###")], success=False)
    assert ("transfer_without_agent", 3) in classes(t)
    handed = build([*opening(), (2, "agent", "assistant", None, ["transfer_to_human_agents"]),
                    (2, "agent", "tool", "Transfer successful"),
                    (3, "user", "user", "###TRANSFER###")], success=False)
    assert classes(handed) == []


def test_a_write_nobody_asked_for_and_a_different_action():
    extra = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                   (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
                   *performed(3, "reboot_device", "Restarting...")])
    assert classes(extra) == [("unrequested_write", 3)]
    other = build([*opening(), (2, "agent", "assistant", ask("toggle_data_saver_mode")),
                   *performed(3, "toggle_data", "Mobile Data is now OFF.")], success=False)
    assert classes(other) == [("different_action", 3)]


def test_a_repeated_status_check_is_not_an_unasked_write():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
               *performed(3, "check_status_bar", "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%")])
    assert classes(t) == []


def test_done_claimed_without_the_call_but_not_a_refusal():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
               (3, "user", "user", "Sure, it's done now.")], success=False)
    assert classes(t) == [("done_without_call", 3)]
    refusal = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
                     (3, "user", "user", "I'd rather not do that right now. Is there another way?")], success=False)
    assert classes(refusal) == []


def test_reported_result_contradicting_the_phone():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", AIRPLANE_OFF,
                          "It says: Airplane Mode is now ON.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled")])
    assert classes(t) == [("result_contradiction", 3)]


def test_known_information_contradicted_but_not_repeated():
    wrong = build([(0, "agent", "assistant", "Hello"),
                   (1, "user", "user", "My data is broken. I'm at home right now, by the way.")])
    assert classes(wrong) == [("known_info_contradicted", 1)]
    number = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", "My number is 555-123-2099.")])
    assert classes(number) == [("known_info_contradicted", 1)]
    right = build([(0, "agent", "assistant", "Hello"),
                   (1, "user", "user", "This is John Smith, my number is 555-123-2002, I'm abroad in France.")])
    assert classes(right) == []


def test_identity_detail_the_task_never_gave():
    t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", "My email is js@example.com.")])
    assert classes(t) == [("identity_invented", 1)]


def test_the_same_write_twice_in_one_turn():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
               (3, "user", "user", None, ["toggle_roaming"]), (3, "user", "tool", "Data Roaming is now ON."),
               *performed(3, "toggle_roaming", "Data Roaming is now OFF.")], success=False)
    assert classes(t) == [("repeated_write", 3)]
    next_turn = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
                       *performed(3, "toggle_roaming", "Data Roaming is now ON."),
                       (4, "agent", "assistant", ask("toggle_roaming")),
                       *performed(5, "toggle_roaming", "Data Roaming is now OFF.")])
    assert classes(next_turn) == []  # asked twice, done twice: no fault


def test_phone_state_no_tool_showed_but_not_a_restated_result():
    t = build([(0, "agent", "assistant", "Hello"),
               (1, "user", "user", "My data is broken. Also, Airplane Mode is now ON on my phone.")])
    assert classes(t) == [("state_without_tool", 1)]
    restated = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                      *performed(3, "toggle_airplane_mode", AIRPLANE_OFF), (4, "agent", "assistant", CLOSING),
                      (5, "user", "user", "Thanks. As I said, my phone showed: Airplane Mode is now OFF. ###STOP###")])
    assert classes(restated) == []


def test_a_setting_named_before_anything_showed_it():
    t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", "My data is broken. I suspect the VPN.")])
    assert classes(t) == [("fault_named_early", 1)]
    asked = build([*opening(), (2, "agent", "assistant", "Do you use a VPN? Please check it."),
                   (3, "user", "user", "Yes, I use a VPN.")])
    assert classes(asked) == []


def test_a_customer_opening_with_its_tasks_own_symptom_states_nothing_new():
    from tauray.scenarios.registry import get_scenario

    reason = get_scenario("tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off").user.reason_for_call
    assert "poor" in reason  # the task's words name speeds
    t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", reason)],
              scenario="tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
    assert classes(t) == []


def test_a_setting_named_for_another_reason_is_not_a_suspected_cause():
    t = build([*opening(), (2, "agent", "assistant", CLOSING),
               (3, "user", "user", "Thanks. Could you also look at my roaming charges?")])
    assert "fault_named_early" not in [c for c, _ in classes(t)]


def test_a_message_that_ends_the_call_claims_nothing_done():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
               (3, "user", "user", "I'm done with the bot, human please. ###TRANSFER###")], success=False)
    assert classes(t) == [("transfer_without_agent", 3)]


def test_a_stated_speed_the_task_named_in_other_words_is_still_unshown():
    t = build([(0, "agent", "assistant", "Hello"),
               (1, "user", "user", "Hi. Also the speed test said (Poor) earlier.")],
              scenario="tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
    assert classes(t) == [("state_without_tool", 1)]


def test_what_only_the_agents_tools_said_does_not_count_as_shown_to_the_customer():
    t = build([*opening(), (2, "agent", "assistant", None, ["enable_roaming"]),
               (2, "agent", "tool", "Roaming enabled successfully"), (2, "agent", "assistant", CLOSING),
               (3, "user", "user", "I suspect the roaming setting. Thanks. ###STOP###")],
              scenario="tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card")
    assert classes(t) == [("fault_named_early", 3)]


# --- stop after an observed failure, no end after the resolved result, the task's constraints, bundled turns ---

POOR = "Speed Test Result: 1.20 Mbps (Poor). Connection is slow. Web browsing may be sluggish, streaming difficult."
EXCELLENT = "Speed Test Result: 250.00 Mbps (Excellent). Connection is very fast."
MMS = "tau2_telecom__mms_issue__airplane_mode_on__break_app_both_permissions__persona_hard"
SERVICE = "tau2_telecom__service_issue__airplane_mode_on__unseat_sim_card"
PAYING = "tau2_telecom__service_issue__airplane_mode_on__overdue_bill_suspension"


def _checked(turn, write, write_result, check, check_result):
    """The customer does the asked write, then runs the family's check itself, in one turn."""
    return [(turn, "user", "user", None, [write]), (turn, "user", "tool", write_result),
            (turn, "user", "user", None, [check]), (turn, "user", "tool", check_result)]


def test_a_stop_right_after_a_failing_check():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", POOR),
               (3, "user", "user", "It still doesn't work. I give up. ###STOP###")], success=False)
    assert classes(t) == [("stop_after_failure", 3)]
    f = next(f for f in detect_all(t, USER_DETECTORS) if f.fault_class == "stop_after_failure")
    assert f.effect == "outcome" and f.blamed_side == "user"


def test_a_stop_right_after_no_signal_or_a_failed_mms_check():
    no_signal = "Airplane Mode is now OFF.\nStatus Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", no_signal),
               (3, "user", "user", "Not fixed. Goodbye. ###STOP###")], scenario=SERVICE, success=False)
    assert classes(t) == [("stop_after_failure", 3)]
    mms = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                 *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "can_send_mms",
                           "Your messaging app cannot send MMS messages."),
                 (3, "user", "user", "Same as before, forget it. ###STOP###")], scenario=MMS, success=False)
    assert classes(mms) == [("stop_after_failure", 3)]


def test_a_stop_right_after_the_resolved_result_or_a_reported_failure_is_not_one():
    ok = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
                (3, "user", "user", "It works now, thank you! ###STOP###")])
    assert classes(ok) == []
    reported = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                      *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", POOR),
                      (3, "user", "user", f"It still shows: {POOR} What should I try next?")], success=False)
    assert classes(reported) == []


def test_a_stop_with_the_asked_action_undone_is_premature_not_after_failure():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", None, ["run_speed_test"]), (3, "user", "tool", POOR),
               (3, "user", "user", "Forget it, goodbye. ###STOP###")], success=False)
    assert classes(t) == [("premature_stop", 3)]


def test_no_end_after_the_resolved_result():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
               (3, "user", "user", f"Done. My phone now shows: {EXCELLENT}"), (4, "agent", "assistant", CLOSING),
               (5, "user", "user", "Great, it works! While I have you, tell me about the new phones.")])
    assert classes(t) == [("no_end_after_resolved", 5)]
    f = next(f for f in detect_all(t, USER_DETECTORS) if f.fault_class == "no_end_after_resolved")
    assert f.effect == "talk"
    own = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                 *performed(3, "toggle_airplane_mode", AIRPLANE_OFF), (4, "agent", "assistant", CLOSING),
                 (5, "user", "user", None, ["run_speed_test"]), (5, "user", "tool", EXCELLENT),
                 (5, "user", "user", "Excellent speed now. Anything else you can check for me?")])
    assert classes(own) == [("no_end_after_resolved", 5)]


def test_going_on_after_the_resolved_result_is_fine_when_the_agent_asked_more_or_nothing_resolved_since():
    ended = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                   *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
                   (3, "user", "user", "It works."), (4, "agent", "assistant", CLOSING),
                   (5, "user", "user", "No, that's all, thanks. ###STOP###")])
    assert classes(ended) == []
    asked_more = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                        *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
                        (3, "user", "user", "It works."), (4, "agent", "assistant", ask("toggle_roaming")),
                        *performed(5, "toggle_roaming", "Data Roaming is now ON.")])
    assert classes(asked_more) == []
    question = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                      *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
                      (3, "user", "user", "It works."),
                      (4, "agent", "assistant", "Glad to hear it. Can you open a web page to confirm?"),
                      (5, "user", "user", "Yes, pages load fine.")])
    assert classes(question) == []
    undone = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                    *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "run_speed_test", EXCELLENT),
                    (3, "user", "user", "It works."), (4, "agent", "assistant", ask("toggle_data")),
                    *performed(5, "toggle_data", "Mobile Data is now OFF."), (6, "agent", "assistant", CLOSING),
                    (7, "user", "user", "Hmm, is it really fixed?")], success=False)
    assert classes(undone) == []  # the last write came after the resolved result


def test_the_tasks_constraints_broken_in_words():
    assert "do not want to change your mobile data plan" in get_scenario(SCENARIO).user_prompt
    for said in ("Actually, could you switch me to a bigger data plan?", "Please refuel 5 GB of data for me.",
                 "I'm on my home Wi-Fi right now anyway."):
        t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", f"My data is broken. {said}")])
        assert classes(t) == [("constraint_broken", 1)], said
        assert detect_all(t, USER_DETECTORS)[0].effect == "talk"
    agreed = build([*opening(), (2, "agent", "assistant", "Would you like to change your mobile data plan?"),
                    (3, "user", "user", "Yes, please do.")])
    assert classes(agreed) == [("constraint_broken", 3)]


def test_keeping_the_tasks_constraints_is_not_breaking_them():
    for said in ("Just so you know, I don't want to change my data plan.",
                 "A 2.0 GB refuel would be fine, but no plan change please.", "I don't have Wi-Fi here.",
                 "I have no access to Wi-Fi at the moment."):
        t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", f"My data is broken. {said}")])
        assert classes(t) == [], said
    declined = build([*opening(), (2, "agent", "assistant", "Would you like to change your mobile data plan?"),
                      (3, "user", "user", "No, I'd rather keep my plan.")])
    assert classes(declined) == []
    wifi_mms = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", "My picture messages fail. I'm on Wi-Fi.")],
                     scenario=MMS)
    assert classes(wifi_mms) == []  # this task says nothing about Wi-Fi


def test_refusing_the_payment_the_task_accepts_but_not_another_action():
    assert "If the agent asks you to pay a bill, you accept" in get_scenario(PAYING).user_prompt
    t = build([*opening(), (2, "agent", "assistant", ask("make_payment")),
               (3, "user", "user", "I don't want to pay that bill.")], scenario=PAYING, success=False)
    assert classes(t) == [("constraint_broken", 3)]
    assert detect_all(t, USER_DETECTORS)[0].effect == "outcome"
    other = build([*opening(), (2, "agent", "assistant", ask("reboot_device")),
                   (3, "user", "user", "I'd rather not do that right now. Is there another way?")],
                  scenario=PAYING, success=False)
    assert classes(other) == []
    paid = build([*opening(), (2, "agent", "assistant", ask("make_payment")),
                  *performed(3, "make_payment", "Payment of $100.00 made successfully.")], scenario=PAYING)
    assert classes(paid) == []


def test_text_and_a_call_in_one_message():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", "Sure, doing that now.", ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
               (3, "user", "user", f"Done. My phone now shows: {AIRPLANE_OFF}")])
    assert classes(t) == [("bundled_turn", 3)]
    assert detect_all(t, USER_DETECTORS)[0].effect == "talk"


def test_several_asked_writes_in_one_turn_but_not_a_repeat_an_unasked_one_or_a_read():
    both = ("Please turn off airplane mode and then toggle data roaming on your phone, and tell me what it shows.")
    t = build([*opening(), (2, "agent", "assistant", both),
               (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
               *performed(3, "toggle_roaming", "Data Roaming is now ON.")])
    assert classes(t) == [("bundled_turn", 3)]
    repeat = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
                    (3, "user", "user", None, ["toggle_roaming"]), (3, "user", "tool", "Data Roaming is now ON."),
                    *performed(3, "toggle_roaming", "Data Roaming is now OFF.")], success=False)
    assert classes(repeat) == [("repeated_write", 3)]
    unasked = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                     (3, "user", "user", None, ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
                     *performed(3, "reboot_device", "Restarting...")])
    assert classes(unasked) == [("unrequested_write", 3)]
    read = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
                  *_checked(3, "toggle_airplane_mode", AIRPLANE_OFF, "check_status_bar", "Status Bar: 📶⁴ Excellent"),
                  (3, "user", "user", "Done.")])
    assert classes(read) == []


def test_a_bundled_turn_counts_only_where_the_customers_rules_forbid_it():
    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               (3, "user", "user", "Sure.", ["toggle_airplane_mode"]), (3, "user", "tool", AIRPLANE_OFF),
               (3, "user", "user", "Done.")], scenario="no_such_scenario")
    assert "bundled_turn" not in [c for c, _ in classes(t)]


def test_a_negation_after_the_request_does_not_undo_it():
    t = build([(0, "agent", "assistant", "Hello"), (1, "user", "user", "Hi. I want a top-up of 4 GB, not less.")])
    assert classes(t) == [("constraint_broken", 1)]


def test_a_requested_action_neither_done_nor_refused():
    for reply in ("OK. By the way, how long have I been a customer with you?", "Okay."):
        t = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")),
                   (3, "user", "user", reply), (4, "agent", "assistant", ask("toggle_data")),
                   *performed(5, "toggle_data", "Mobile Data is now ON.")], success=False)
        assert classes(t) == [("ignored_request", 3)]
        found = detect_all(t, USER_DETECTORS)[0]
        assert found.effect == "outcome" and found.detector == "ignored_request" and found.flips_verdict is None


def test_a_refusal_a_cannot_or_a_question_about_the_request_is_not_ignoring_it():
    for reply in ("I'd rather not do that right now. Is there another way?",
                  "I'm not comfortable changing that setting. Can we try something else?",
                  "No, I won't touch that.", "I can't find a way to toggle roaming on my phone.",
                  "My phone doesn't seem to have that option.", "I don't see anything like that in my settings.",
                  "Sorry, where on my phone do I toggle roaming?", "How do I do that?"):
        t = build([*opening(), (2, "agent", "assistant", ask("toggle_roaming")), (3, "user", "user", reply)],
                  success=False)
        assert "ignored_request" not in [c for c, _ in classes(t)], reply


def test_an_ignored_request_is_not_counted_twice_with_the_stop_done_transfer_or_write_classes():
    def reply(*steps):
        return classes(build([*opening(), (2, "agent", "assistant", ask("toggle_data_saver_mode")), *steps],
                             success=False))

    assert reply((3, "user", "user", "Forget it, goodbye. ###STOP###")) == [("premature_stop", 3)]
    assert reply((3, "user", "user", "Sure, it's done now.")) == [("done_without_call", 3)]
    assert reply((3, "user", "user", "Get me a supervisor. ###TRANSFER###")) == [("transfer_without_agent", 3)]
    assert reply(*performed(3, "toggle_data", "Mobile Data is now OFF.", "OK.")) == [("different_action", 3)]
    assert reply((3, "user", "user", "My status bar shows 📵 No Signal.")) == [("state_without_tool", 3)]
    assert reply(*performed(3, "toggle_data_saver_mode", "Data Saver Mode is now OFF.", "OK.")) == []


def test_talk_after_a_message_that_asks_for_no_phone_action_ignores_nothing():
    t = build([*opening(), (2, "agent", "assistant", "I see. Let me look into your account."),
               (3, "user", "user", "OK. By the way, how long have I been a customer with you?")], success=False)
    assert classes(t) == []


def test_a_failure_with_an_ignored_request_is_the_simulators():
    from tauray.actors.audit.runner import audit_trajectory

    t = build([*opening(), (2, "agent", "assistant", ask("toggle_airplane_mode")),
               *performed(3, "toggle_airplane_mode", AIRPLANE_OFF), (4, "agent", "assistant", ask("toggle_roaming")),
               (5, "user", "user", "Okay."), (6, "agent", "assistant", CLOSING),
               (7, "user", "user", "Thanks, that is all I needed. ###STOP###")], success=False)
    audit = audit_trajectory(t)  # the agent asked every reference action; the customer skipped one
    assert audit.attribution == "simulator" and audit.decisive.fault_class == "ignored_request"
    assert audit.decisive.turn == 5


def test_an_offer_is_not_a_request_to_act():
    t = build([*opening(), (2, "agent", "assistant", "Would you like to change your mobile data plan?"),
               (3, "user", "user", "OK. By the way, how long have I been a customer with you?")], success=False)
    assert "ignored_request" not in [c for c, _ in classes(t)]
    asked = build([*opening(), (2, "agent", "assistant", "Could you please turn off airplane mode?"),
                   (3, "user", "user", "Alright. Is this call being recorded?")], success=False)
    assert classes(asked) == [("ignored_request", 3)]
