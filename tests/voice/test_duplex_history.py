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


def test_the_voice_oracle_does_not_ask_again_what_was_cut_only_at_its_tail() -> None:
    # A duplex call (2026-12-07): the caller spoke over the last words of "Could you please toggle
    # airplane mode on your phone and tell me what it shows?", toggled it, and reported; the oracle
    # said the request again, the caller toggled it back, and the task failed on the phone's state.
    from tauray.actors.voice.policies import VoiceOracleAgent
    from tauray.scenarios import get_scenario

    oracle = VoiceOracleAgent(get_scenario("tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded"))
    request = "Could you please toggle airplane mode on your phone and tell me what it shows?"
    cut = "Could you please toggle airplane mode on your phone and tell me what i"
    view = [{"role": "system", "content": ""}, {"role": "assistant", "content": cut},
            {"role": "user", "content": "Done. Airplane mode is now off."}]
    oracle.said = request
    assert asyncio.run(oracle.reply(view, [], 0)).content != request  # heard: the call moves on
    oracle.said = request
    view[1] = {"role": "assistant", "content": "Could you please toggle"}  # cut early: said again
    assert asyncio.run(oracle.reply(view, [], 0)).content == request


def test_the_voice_oracle_waits_for_a_caller_who_asks_it_to_and_believes_a_report() -> None:
    # Two duplex calls (2026-12-07): the caller's aside "just a sec", a turn of its own, was taken
    # for its report and the call ended before the caller did the step; and a request cut early by
    # an aside was acted on and reported, then said again, so the caller toggled it back.
    from tauray.actors.voice.policies import TAKE_YOUR_TIME, VoiceOracleAgent, spoken_request
    from tauray.scenarios import get_scenario

    oracle = VoiceOracleAgent(get_scenario("tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded"))
    oracle.stage = "done"
    first = asyncio.run(oracle.reply([{"role": "user", "content": "Hi."}], [], 0))
    action = oracle.last_action
    assert action is not None and first.content == spoken_request(action) and oracle.cursor == 1
    view = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": first.content}]
    for aside in ("Just a sec.", "Hold on a second.", "Sorry, one moment."):
        waited = asyncio.run(oracle.reply(view + [{"role": "user", "content": aside}], [], 0))
        assert waited.content == TAKE_YOUR_TIME and oracle.cursor == 1, aside
    # cut after four words, but the caller reports the step: it is not asked again
    oracle.said = first.content
    cut = " ".join(first.content.split()[:6])
    subject = " ".join(w for w in action.name.split("_") if w != "toggle")
    view = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": cut},
            {"role": "user", "content": f"Done. {subject.title()} is now off."}]
    assert asyncio.run(oracle.reply(view, [], 0)).content != first.content
    # the same cut with a reply that does not name the step: said again
    oracle.said, oracle.last_action = first.content, action
    view[-1] = {"role": "user", "content": "Sorry?"}
    assert asyncio.run(oracle.reply(view, [], 0)).content == first.content
