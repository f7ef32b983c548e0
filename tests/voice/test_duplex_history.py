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
