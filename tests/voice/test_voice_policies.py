"""The reference policies of a voice cell carry no marker: the oracle says its phone
request in words, and the scripted user acts on what it recognised, or asks again."""

from __future__ import annotations

import asyncio
import json

from tauray.actors.voice_policies import NOT_CAUGHT, VoiceOracleAgent, VoiceScriptedUser, recognise_action, spoken_request
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
    if first.content:  # the scenario's first reference action is the caller's
        assert again.content == f"Of course. {first.content}"
    else:
        assert json.loads(first.tool_calls[0].arguments) is not None
