"""What a customer says instead of doing or reporting (issue 38): a step claimed done in its own
words, a refusal for a reason its task never gave, a new problem its task never had. Our own
phrasings, not the evaluation set's."""

from __future__ import annotations

import pytest

from tauray.actors.audit.attribution import attribute
from tauray.actors.audit.counterfactual import corrected_calls, recorded_calls
from tauray.actors.audit.finding import detect_all
from tauray.actors.audit.user_faults import USER_DETECTORS
from tests.audit.helpers import ask, build, opening


def _found(reply: str, tool: str = "toggle_data", success: bool = False) -> list:
    t = build(opening() + [(2, "agent", "assistant", ask(tool)), (3, "user", "user", reply)], success=success)
    return [f for f in detect_all(t, USER_DETECTORS)]


@pytest.mark.parametrize("reply", [
    "Sorted, I switched it like you said.", "Took care of it just now.", "I have change the data like you say.",
    "Right, I've flipped that switch, what now?", "Yes, I pressed it. Next?", "Completed."])
def test_an_asked_step_claimed_done_in_other_words_without_a_call(reply: str) -> None:
    """done_without_call v2 read "done", "did it", "I've toggled..."; these it missed."""
    assert [f.fault_class for f in _found(reply)] == ["done_without_call"]


@pytest.mark.parametrize("reply", ["I haven't done it yet, sorry.", "Did I need to do that now?",
                                   "I'll do that in a minute.", "Not done yet, give me a second."])
def test_not_having_done_it_or_asking_about_it_claims_nothing_done(reply: str) -> None:
    assert "done_without_call" not in {f.fault_class for f in _found(reply)}


@pytest.mark.parametrize("reply", [
    "I can't turn that off, my employer manages this phone.",
    "No, I'm not allowed to touch the data settings, the contract says so.",
    "I'd rather not switch it, my banking app stops working when I do.",
    "That has to stay as it is: my daughter set it up and told me never to change it."])
def test_a_refusal_for_a_reason_the_task_never_gave_is_an_invented_constraint(reply: str) -> None:
    """Nothing found these before (invented constraint 0/37, all blamed on the agent)."""
    found = _found(reply)
    assert [f.fault_class for f in found] == ["invented_constraint"]
    assert found[0].effect == "outcome" and found[0].tier == "rule"


@pytest.mark.parametrize("reply", [
    "I'd rather not do that right now. Is there another way to fix this?",  # the house's refusal negatives
    "I'm not comfortable changing that setting. Can we try something else?",
    "Hmm, I don't want to do that. Any other option?", "My phone doesn't seem to have that option.",
    "I can't find that option anywhere on my phone.", "Sorry, where on my phone do I toggle mobile data?"])
def test_a_bare_refusal_or_not_finding_the_option_invents_nothing(reply: str) -> None:
    assert "invented_constraint" not in {f.fault_class for f in _found(reply)}


def test_an_invented_constraint_that_fails_the_task_is_the_simulators() -> None:
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode")),
                           (3, "user", "user", "I can't switch that, my employer locked the setting.")], success=False)
    found = [f for f in detect_all(t, USER_DETECTORS) if f.fault_class == "invented_constraint"]
    assert [c[1] for c in corrected_calls(t, found[0]) or []] == [*[c[1] for c in recorded_calls(t)],
                                                                   "toggle_airplane_mode"]
    assert attribute(False, None, found).attribution == "simulator"


@pytest.mark.parametrize("reply", [
    "Also, the fingerprint sensor stopped working yesterday.",
    "By the way my phone gets really hot when I charge it.",
    "Oh and my earbuds keep disconnecting, can you look at that too?",
    "Another thing: the alarm didn't go off this morning."])
def test_a_new_problem_the_task_never_gave_is_found(reply: str) -> None:
    """Nothing found a new, unrelated problem before (0/74)."""
    t = build(opening() + [(2, "agent", "assistant", "I see. Can you tell me more about it?"),
                           (3, "user", "user", reply)])
    assert [f.fault_class for f in detect_all(t, USER_DETECTORS)] == ["new_problem"]


@pytest.mark.parametrize("reply", [
    "Hello, my phone isn't behaving the way it should and I'd like some help with it.",
    "The battery is at 80% by the way.", "My mobile data still doesn't work.",
    "It still doesn't work, I'm getting frustrated.", "I'm worried I'll lose my photos if I restart."])
def test_the_tasks_own_problem_or_a_remark_is_no_new_problem(reply: str) -> None:
    t = build(opening() + [(2, "agent", "assistant", "I see. Can you tell me more about it?"),
                           (3, "user", "user", reply)])
    assert "new_problem" not in {f.fault_class for f in detect_all(t, USER_DETECTORS)}


def _said(reply: str, agent: str = "I see. Can you tell me more about it?") -> set[str]:
    t = build(opening() + [(2, "agent", "assistant", agent), (3, "user", "user", reply)])
    return {f.fault_class for f in detect_all(t, USER_DETECTORS)}


def test_a_stated_state_is_not_also_a_suspected_cause_nor_wifi_calling_wifi_access() -> None:
    """Second findings on the evaluation customers' stated states: fault_named_early v3 read "I think
    the data saver is on" as a suspected cause, constraint_broken v1 read "calling over wifi" as
    having Wi-Fi (this task has none)."""
    assert _said("Um, I think the data saver is on right now.") == {"state_without_tool"}
    assert _said("I think calling over wifi is on at the moment.") == {"state_without_tool"}


def test_a_step_claimed_done_in_a_learners_words_is_no_permission_state() -> None:
    found = _found("Finish. I have change the app permissions like you say.", tool="grant_app_permission")
    assert [f.fault_class for f in found] == ["done_without_call"]


@pytest.mark.parametrize("reply", ["Turned it off.", "Switched it, what's next?", "Went ahead and changed it.",
                                   "Okay, that's done and dusted."])
def test_a_step_claimed_done_without_a_subject(reply: str) -> None:
    assert [f.fault_class for f in _found(reply)] == ["done_without_call"]


@pytest.mark.parametrize("reply", [
    "That's not something I can change, it's a company phone and the settings are locked down.",
    "I'd prefer to leave it the way it is, the last time I touched it the phone stopped ringing."])
def test_a_refusal_in_other_words_with_its_reason(reply: str) -> None:
    assert [f.fault_class for f in _found(reply)] == ["invented_constraint"]


@pytest.mark.parametrize("reply", ["Also, my apps keep crashing since the update.",
                                   "And all my contacts are gone, I don't know what happened."])
def test_apps_crashing_or_data_lost_is_a_new_problem(reply: str) -> None:
    assert _said(reply) == {"new_problem"}


@pytest.mark.parametrize(("said", "setting", "value"), [
    ("The roaming box is ticked.", "roaming", "on"), ("Data saver is unticked.", "data_saver", "off"),
    ("The signal bars are all empty.", "signal", "none"), ("The virtual private network is connected.", "vpn", "on")])
def test_more_words_for_settings_and_values(said: str, setting: str, value: str) -> None:
    from tauray.actors.audit import claims
    assert claims.claims(said).get(setting) == value


@pytest.mark.parametrize("reply", ["Everything seems okay now, thanks. Bye! ###STOP###",
                                   "Looks fine now, I'll let you go. ###STOP###"])
def test_a_fix_claimed_in_other_words_after_the_write_then_a_hang_up(reply: str) -> None:
    """premature_stop v2 read "fixed", "works", "all good"; not "seems okay now", "looks fine now"."""
    from tests.audit.helpers import performed
    t = build(opening() + [(2, "agent", "assistant", ask("toggle_airplane_mode"))]
              + performed(2, "toggle_airplane_mode", "Airplane Mode is now OFF.\nStatus Bar: 📵 No Signal | 🔋 80%",
                          reply), success=False)
    assert "premature_stop" in {f.fault_class for f in detect_all(t, USER_DETECTORS)}
