"""The reference policies of a voice cell carry no marker: the oracle says its phone
request in words, and the scripted user acts on what it recognised, or asks again."""

from __future__ import annotations

import asyncio
import json

from tauray.actors.voice.policies import (
    GO_ON,
    NOT_CAUGHT,
    VoiceOracleAgent,
    VoiceScriptedUser,
    recognise_action,
    spoken_request,
)
from tauray.actors.voice.rules import MISHEARD_MARK
from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.conventions import parse_phone_request


def _telecom():
    return get_scenario(select_scenarios(None, domain="telecom", split="base")[0].name)


def _tools(scenario):
    return [t.openai() for t in scenario.tools_by_side["user"]]


def test_the_oracle_speaks_no_marker_and_the_user_recognises_the_words() -> None:
    s = _telecom()
    tools = _tools(s)
    for action in (a for a in s.reference_actions if a.side == "user"):
        said = spoken_request(action)
        assert parse_phone_request(said) is None and "{" not in said
        assert recognise_action(said, tools) == (action.name, action.arguments)


def test_recognition_reads_a_recognisers_spelling() -> None:
    tools = _tools(_telecom())
    assert recognise_action("Could you please set network mode preference on your phone, with mode: "
                            "four G, five G preferred?", tools) == ("set_network_mode_preference",
                                                                    {"mode": "4g_5g_preferred"})
    assert recognise_action("So please toggle data saver mode on your phone.", tools) == \
        ("toggle_data_saver_mode", {})
    assert recognise_action("Could you please toggle the error plane mode?", tools) is None


def test_a_setting_is_read_after_the_actions_name_that_holds_the_same_word() -> None:
    """"grant app permission ..., permission: storage": the setting is the word after its own
    name, not after the same word inside the action's name (it was read as "on")."""
    tools = _tools(_telecom())
    request = next(a for e in select_scenarios(None, domain="telecom", variant="manual")
                   for a in get_scenario(e.name).reference_actions if a.name == "grant_app_permission")
    assert recognise_action(spoken_request(request), tools) == (request.name, request.arguments)
    assert recognise_action("Please grant app permission on your phone: app name messaging, permission sms.",
                            tools) == ("grant_app_permission", {"app_name": "messaging", "permission": "sms"})


def test_a_misheard_request_is_asked_again_and_repeated() -> None:
    s = _telecom()
    user, oracle = VoiceScriptedUser(s), VoiceOracleAgent(s)
    tools = _tools(s)
    opening = asyncio.run(user.reply([{"role": "system", "content": ""}], tools, 0))
    assert opening.content and not opening.tool_calls
    view = [{"role": "system", "content": ""}, {"role": "assistant", "content": opening.content},
            {"role": "user", "content": "Could you please toggle the error plane mode on your phone?"}]
    asked = asyncio.run(user.reply(view, tools, 0))
    assert asked.content == NOT_CAUGHT and not asked.tool_calls
    first = asyncio.run(oracle.reply([{"role": "user", "content": opening.content}], [], 0))
    again = asyncio.run(oracle.reply([{"role": "user", "content": opening.content},
                                      {"role": "assistant", "content": first.content or ""},
                                      {"role": "user", "content": NOT_CAUGHT}], [], 0))
    if first.content:  # the scenario's first reference action is the caller's: put another way each time
        action = next(a for a in s.reference_actions if a.side == "user")
        assert again.content == spoken_request(action, 1) != first.content
        third = asyncio.run(oracle.reply([{"role": "user", "content": opening.content},
                                          {"role": "assistant", "content": again.content or ""},
                                          {"role": "user", "content": NOT_CAUGHT}], [], 0))
        assert third.content == spoken_request(action, 2) not in (first.content, again.content)
        for said in (again.content, third.content):  # each wording, heard as said, is the same action
            done = asyncio.run(user.reply(view[:2] + [{"role": "user", "content": said}], tools, 0))
            assert [(c.name, json.loads(c.arguments)) for c in done.tool_calls] == [(action.name, action.arguments)]
    else:
        assert json.loads(first.tool_calls[0].arguments) is not None


# --- the oracle acts on the identifiers it heard ------------------------------------------

_REFUEL = "tau2_telecom__mobile_data_issue__data_usage_exceeded__user_abroad_roaming_enabled_off__persona_easy"


def _agent_tools(scenario):
    return [t.openai() for t in scenario.tools_by_side["agent"]]


def _say(policy, view, tools):
    return asyncio.run(policy.reply(view, tools, 0))


def _identify(heard_number: str):
    """The oracle asks the caller for the phone number, and looks up what it heard."""
    s = get_scenario(_REFUEL)
    user, oracle = VoiceScriptedUser(s), VoiceOracleAgent(s)
    opening = _say(user, [{"role": "system", "content": ""}], _tools(s)).content
    view = [{"role": "system", "content": ""}, {"role": "user", "content": opening}]
    asked = _say(oracle, view, _agent_tools(s))
    assert asked.content and "phone number" in asked.content and not asked.tool_calls
    answer = _say(user, [{"role": "system", "content": ""}, {"role": "assistant", "content": opening},
                         {"role": "user", "content": asked.content}], _tools(s))
    assert answer.content and "5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2" in answer.content  # spelled, as told
    view += [{"role": "assistant", "content": asked.content}, {"role": "user", "content": heard_number}]
    lookup = _say(oracle, view, _agent_tools(s))
    assert [c.name for c in lookup.tool_calls] == ["get_customer_by_phone"]
    return s, oracle, view, lookup


def test_the_oracle_looks_up_the_number_it_heard_and_fails_on_a_misheard_one() -> None:
    s, oracle, view, lookup = _identify("Five, five, five, dash, one, two, three, dash, two, zero, one, two.")
    assert json.loads(lookup.tool_calls[0].arguments) == {"phone_number": "555-123-2012"}  # heard, not the gold
    view += [{"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "get_customer_by_phone", "arguments": lookup.tool_calls[0].arguments}}]},
             {"role": "tool", "tool_call_id": "1", "content": "Error: Customer with phone number 555-123-2012 not found"}]
    # no account under what it heard: it reads the number back and asks again, at most twice
    for attempt in range(2):
        again = _say(oracle, view, _agent_tools(s))
        assert not again.tool_calls and "5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 1, 2" in again.content
        assert "again" in again.content and "phone number" in again.content
        view += [{"role": "assistant", "content": again.content},
                 {"role": "user", "content": "Five, five, five, dash, one, two, three, dash, two, zero, one, two."}]
        retry = _say(oracle, view, _agent_tools(s))
        assert [c.name for c in retry.tool_calls] == ["get_customer_by_phone"]
        view += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"r{attempt}", "type": "function",
                  "function": {"name": "get_customer_by_phone", "arguments": retry.tool_calls[0].arguments}}]},
                 {"role": "tool", "tool_call_id": f"r{attempt}",
                  "content": "Error: Customer with phone number 555-123-2012 not found"}]
    end = _say(oracle, view, _agent_tools(s))
    assert [c.name for c in end.tool_calls] == ["end_conversation"]
    reason = json.loads(end.tool_calls[0].arguments)["reason"]
    assert MISHEARD_MARK in reason and reason.count("555-123-2012") == 3  # recorded with the call's end


def test_the_oracle_finds_the_account_when_the_number_is_heard_right_the_second_time() -> None:
    s, oracle, view, lookup = _identify("Five, five, five, dash, one, two, three, dash, two, zero, one, two.")
    view += [{"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "get_customer_by_phone", "arguments": lookup.tool_calls[0].arguments}}]},
             {"role": "tool", "tool_call_id": "1", "content": "Error: Customer with phone number 555-123-2012 not found"}]
    again = _say(oracle, view, _agent_tools(s))
    view += [{"role": "assistant", "content": again.content}, {"role": "user", "content": "5, 5, 5, 1, 2, 3, 2, 0, 0, 2."}]
    retry = _say(oracle, view, _agent_tools(s))
    assert json.loads(retry.tool_calls[0].arguments) == {"phone_number": "555-123-2002"}
    view += [{"role": "assistant", "content": None, "tool_calls": [{"id": "2", "type": "function", "function": {
        "name": "get_customer_by_phone", "arguments": retry.tool_calls[0].arguments}}]},
             {"role": "tool", "tool_call_id": "2", "content": '{"customer_id": "C1001", "full_name": "John Smith"}'}]
    nxt = _say(oracle, view, _agent_tools(s))
    gold = next(a for a in s.reference_actions if a.side == "agent")
    assert [(c.name, json.loads(c.arguments)) for c in nxt.tool_calls] == [(gold.name, gold.arguments)]


def test_the_oracle_goes_on_when_it_heard_the_number_right() -> None:
    s, oracle, view, lookup = _identify("5, 5, 5, 1, 2, 3, 2, 0, 0, 2.")
    assert json.loads(lookup.tool_calls[0].arguments) == {"phone_number": "555-123-2002"}
    view += [{"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "get_customer_by_phone", "arguments": lookup.tool_calls[0].arguments}}]},
             {"role": "tool", "tool_call_id": "1", "content": '{"customer_id": "C1001", "full_name": "John Smith"}'}]
    nxt = _say(oracle, view, _agent_tools(s))
    gold = next(a for a in s.reference_actions if a.side == "agent")
    assert [(c.name, json.loads(c.arguments)) for c in nxt.tool_calls] == [(gold.name, gold.arguments)]


def test_the_oracle_uses_the_user_id_it_heard_in_the_opening() -> None:
    s = get_scenario(select_scenarios("tau2_mock__create_task_1")[0].name)
    oracle = VoiceOracleAgent(s)
    tools = _agent_tools(s)
    heard = "Create a new task called Important Meeting for U, S, E, R, underscore, 7."
    call = _say(oracle, [{"role": "user", "content": heard}], tools)
    assert [(c.name, json.loads(c.arguments)["user_id"]) for c in call.tool_calls] == [("create_task", "user_7")]
    again = _say(VoiceOracleAgent(s), [{"role": "user", "content": heard.replace("7", "1")}], tools)
    assert json.loads(again.tool_calls[0].arguments)["user_id"] == "user_1"  # heard right: the task's own value


def test_the_callers_i_after_a_spelled_identifier_is_not_part_of_it() -> None:
    """A caller speaking in the first person says "I" right after an identifier it spelled; the
    oracle still hears the identifier alone (not "YAX4DRI"), and a spelled letter I stays."""
    s = get_scenario("tau2_airline__task_12")
    tools = _agent_tools(s)
    for heard, expected in (("My flight is under reservation ID Y, A, X, 4, D, R. I want to change it.", "YAX4DR"),
                            # a recogniser's hyphens between spelled characters are read both ways
                            ("It is Y-A-X-4-D-R. I'm flying soon.", "YAX4DR"),
                            ("It is Y, A, X, 4, I, R. Thanks.", "YAX4IR")):
        call = _say(VoiceOracleAgent(s), [{"role": "user", "content": heard}], tools)
        assert [(c.name, json.loads(c.arguments)) for c in call.tool_calls] == \
            [("get_reservation_details", {"reservation_id": expected})], heard


def test_spelled_identifiers_are_read_back_from_recognised_text() -> None:
    from tauray.actors.voice.identifiers import heard_runs

    assert heard_runs("for U, S, E, R, underscore, 1.") == ["USER_1"]
    assert heard_runs("it is 5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2.") == ["555-123-2002"]
    assert heard_runs("my line is L, one, zero, zero, two and user underscore seven") == ["L1002", "user_7"]
    assert heard_runs("for U.S.E.R. Undercar 1.") == []  # abbreviation dots are no spoken symbol


def test_a_letter_heard_as_its_name_is_the_letter_inside_a_spelled_run() -> None:
    # the neural caller's "u" comes back as the word "you" (every mock failure of the 2026-12-07
    # voice sweep: the oracle looked up "ser_1"); a listener takes a letter's name inside a run of
    # spelled characters as the letter, and the same word in a sentence as the word
    from tauray.actors.voice.identifiers import heard_runs

    assert heard_runs("It's you, s, e, r, underscore, 1.") == ["user_1"]
    assert heard_runs("customer see, 1, 0, 0, 3") == ["c1003"]
    assert heard_runs("my line is el, 1, 0, 0, 2, thank you") == ["l1002"]
    assert heard_runs("Thank you. Are you there? I see. Line 1 is fine.") == []
    # the recogniser's hyphens between spelled letters ("for you. S-E-R, underscore 1."): the reading
    # without them is heard too, beside the one with them
    assert heard_runs("for you. S-E-R, underscore 1.") == ["uS-E-R_1", "uSER_1"]
    assert heard_runs("it is 5, 5, 5, dash, 1, 2, 3") == ["555-123"]  # a dash between digits stays one


def test_the_caller_understands_a_request_for_its_number_the_recogniser_garbled() -> None:
    """Heard through the line, "the phone number on your account" came out as "the phone and we're on
    your account" in every profile; a person still knows what is asked, and so does the scripted user.
    A phone action request that names no number or account is not taken for one."""
    s = get_scenario(_REFUEL)
    user = VoiceScriptedUser(s)
    _say(user, [{"role": "system", "content": ""}], _tools(s))  # its opening
    heard = "Before we go on, can you tell me the phone and we're on your account? One big attempt at time."
    answer = _say(user, [{"role": "system", "content": ""}, {"role": "user", "content": heard}], _tools(s))
    assert answer.content and "5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2" in answer.content
    request = "Could you please toggle airplane mode on your phone and tell me what it shows?"
    acted = _say(user, [{"role": "system", "content": ""}, {"role": "user", "content": request}], _tools(s))
    assert [c.name for c in acted.tool_calls] == ["toggle_airplane_mode"]


def test_the_scripted_caller_does_not_hang_up_on_words_the_agent_is_still_saying() -> None:
    # A duplex sweep (2026-12-07): a caller who spoke up 2 s into "Before we go on, could you tell
    # me the phone number on your account ..." had heard "Before we go on, could you", found no
    # request in it, and said goodbye with its stop token: 17 of the failed duplex calls.
    from tauray.scenarios.conventions import STOP

    user = VoiceScriptedUser(_telecom())
    user.opened = True
    said = asyncio.run(user.reply([{"role": "user", "content": "Before we go on, could you"}], [], 0))
    assert said.content == GO_ON and STOP not in said.content
    done = asyncio.run(user.reply([{"role": "user", "content": "Your line is active again. Goodbye."}], [], 0))
    assert STOP in done.content  # a whole reply that asks nothing: the call is over for the caller
