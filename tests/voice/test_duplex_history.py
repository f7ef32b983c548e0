"""A duplex agent's own history keeps only what the caller heard of its replies (issue 49): the
engine cuts a reply at a barge-in, and the agent's host, where the model's view lives, is told at
the agent's next step, as a realtime API truncates its audio item. Before this, the host kept the
whole reply: a request the caller spoke over was, to the model, a request made."""

from __future__ import annotations

import asyncio

from tauray.actors.duplex_call import DuplexCall
from tauray.actors.voice.duplex.talk import Message
from tests.actors.test_session_and_loop import _reply, _session


def test_the_calls_cut_replies_go_to_the_host_once_split_over_the_replys_messages() -> None:
    call = DuplexCall(conv=None)
    call.rounds = [["Hello, how can I help?"], ["Please toggle airplane mode.", "Then tell me what it shows."],
                   ["Thanks."]]
    history = (Message(role="user", content="hi"),
               Message(role="assistant", content="Hello, how can I help?"),
               Message(role="user", content="my data is off"),
               Message(role="assistant", content="Please toggle airplane mode. Then", truncated=True),
               Message(role="user", content="wait"),
               Message(role="assistant", content="", truncated=True))
    assert call._cuts(history) == (("Then tell me what it shows.", "Then"), ("Thanks.", ""))
    assert call._cuts(history) == ()  # told once


def test_the_host_view_keeps_only_the_words_said() -> None:
    session = _session("agent", [_reply("Please toggle airplane mode and tell me what it shows."),
                                     _reply("Sorry, go on.")])
    asyncio.run(session.step("hi", 1, 1))
    asyncio.run(session.step("and my data is off", 1, 1))
    assert [m["content"] for m in session.view if m["role"] == "assistant"] == [
        "Please toggle airplane mode and tell me what it shows.", "Sorry, go on."]
    session.truncate_reply("Please toggle airplane mode and tell me what it shows.", "Please toggle")
    session.truncate_reply("Sorry, go on.", "")  # nothing said, no tool calls: the reply leaves the view
    assert [m["content"] for m in session.view if m["role"] == "assistant"] == ["Please toggle"]
    assert [m["role"] for m in session.view if m["role"] != "system"] == ["user", "assistant", "user"]


def test_the_voice_oracle_says_again_what_the_caller_spoke_over() -> None:
    # In a duplex sweep the oracle's question was dropped each time the caller went on after a
    # pause; its own state had moved on ("asked"), so it said "Sorry, I did not catch your phone
    # number" to a caller who was never asked, and ended the call as misheard (2026-12-07).
    from tauray.actors.voice.policies import ASK_PHONE, VoiceOracleAgent
    from tauray.scenarios import get_scenario

    oracle = VoiceOracleAgent(get_scenario("tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded"))
    view = [{"role": "system", "content": ""}, {"role": "user", "content": "Hi, this is John Smith."}]
    first = asyncio.run(oracle.reply(view, [], 0))
    assert first.content == ASK_PHONE
    # the caller went on: the reply left the view unheard; then the rest of the opening
    view += [{"role": "user", "content": "My mobile data is not working."}]
    again = asyncio.run(oracle.reply(view, [], 0))
    assert again.content == ASK_PHONE and not again.tool_calls
    # cut halfway: said again in full; heard in full: the conversation moves on
    view += [{"role": "assistant", "content": "Before we go on, could you"}, {"role": "user", "content": "sorry"}]
    assert asyncio.run(oracle.reply(view, [], 0)).content == ASK_PHONE
    view += [{"role": "assistant", "content": ASK_PHONE}, {"role": "user", "content": "It is 5, 5, 5, 1, 2, 3, 2, 0, 0, 2."}]
    moved = asyncio.run(oracle.reply(view, [], 0))
    assert moved.content != ASK_PHONE
