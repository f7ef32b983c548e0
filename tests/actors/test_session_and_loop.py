"""The side session and the conversation loop, in-process (no Ray, no model)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tauray.actors.conversation import Conversation, SideClient, _Stop, run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.llm.replies import ModelReply, RawToolCall
from tauray.actors.policies import parse_phone_request, phone_request
from tauray.actors.session import SideSession
from tauray.scenarios import domain_spec, get_scenario, select_scenarios
from tests.units import make_units

SCENARIO = "tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy"


class Scripted:
    """A fixed sequence of replies, standing in for a policy in unit tests of the session."""

    def __init__(self, replies):
        self.replies = list(replies)

    async def reply(self, view, tools, seed):
        return self.replies.pop(0)


def _session(side, replies, scenario=SCENARIO):
    s = get_scenario(scenario)
    return SideSession(s, side, domain_spec("telecom").fresh_side(side), Scripted(replies), seed=1, run_id="r",
                       conversation_id="c")


def _reply(content=None, tool_calls=()):
    return ModelReply(content=content, tool_calls=list(tool_calls), model="openai/m")


def _call(name, args, cid="c1"):
    return RawToolCall(id=cid, name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def test_malformed_calls_are_answered_and_counted():
    session = _session("agent", [
        _reply(tool_calls=(_call("get_customer_by_phone", "{not json", "a"), _call("toggle_data", {}, "b"),
                                _call("get_customer_by_phone", "[1, 2]", "c"))),
        _reply(content="Sorry about that."),
    ])
    result = asyncio.run(session.step("hi", max_rounds=5, max_errors=10))
    assert result.kind == "text"
    events = result.rounds[0].events
    assert [e.malformed for e in events] == [True, True, True]
    assert "not valid JSON" in events[0].outcome.result
    assert "no tool named 'toggle_data'" in events[1].outcome.result  # a phone tool is not the agent's
    assert session.counters["malformed_tool_calls"] == 3
    tool_msgs = [m for m in session.view if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["a", "b", "c"]


def test_step_returns_after_each_write_so_the_coordinator_can_sync():
    session = _session("user", [
        _reply(tool_calls=(_call("toggle_airplane_mode", {}, "a"), _call("check_status_bar", {}, "b"),
                                _call("toggle_data", {}, "c"))),
        _reply(content="Done."),
    ])
    first = asyncio.run(session.step("please", max_rounds=5, max_errors=10))
    assert first.kind == "tools" and first.wrote
    assert [e.outcome.name for r in first.rounds for e in r.events] == ["toggle_airplane_mode"]
    second = asyncio.run(session.step(None, max_rounds=5, max_errors=10))
    assert [e.outcome.name for r in second.rounds for e in r.events] == ["check_status_bar", "toggle_data"]
    assert second.wrote and second.rounds[0].message is None  # finishing the earlier reply's calls
    third = asyncio.run(session.step(None, max_rounds=5, max_errors=10))
    assert third.kind == "text" and third.rounds[-1].message.content == "Done."


def test_read_only_rounds_continue_without_the_coordinator_until_the_budget():
    replies = [_reply(tool_calls=(_call("get_customer_by_phone", {"phone_number": "555-123-2002"}, f"r{i}"),))
               for i in range(3)]
    session = _session("agent", replies)
    result = asyncio.run(session.step("hello", max_rounds=2, max_errors=10))
    assert result.kind == "budget" and len(result.rounds) == 2 and not result.wrote


def test_phone_request_round_trip():
    action = get_scenario(SCENARIO).reference_actions[0]
    text = phone_request(action)
    assert "on your phone" in text
    assert parse_phone_request(text) == (action.name, json.dumps(action.arguments))
    assert parse_phone_request("no request here") is None


def test_reference_policies_pass_every_predicate_on_the_small_split():
    names = [e.name for e in select_scenarios(domain="telecom", split="small")]
    units = make_units("t", names, 1, {"model": "oracle"}, {"model": "scripted"})
    agent, user = AgentHost(), UserSimHost()

    async def main():
        return await asyncio.gather(*(run_conversation(u, agent, user) for u in units))

    results = asyncio.run(main())
    assert len(results) == 40
    assert all(r.conversation.success for r in results), [r.conversation.success_reason for r in results]
    assert all(r.conversation.action_match and r.conversation.db_state_match for r in results)
    assert {r.conversation.agent_kind for r in results} == {"reference"}
    assert not agent.sessions and not user.sessions  # every session closed


def test_each_side_sees_only_its_own_tools():
    name = next(e.name for e in select_scenarios(domain="telecom", split="small")
                if {a.side for a in get_scenario(e.name).reference_actions} == {"agent", "user"})
    unit = make_units("t", [name], 1, {"model": "oracle"}, {"model": "scripted"})[0]
    agent, user = AgentHost(), UserSimHost()
    conv = Conversation(unit, get_scenario(name), SideClient(agent), SideClient(user))

    async def main():
        with pytest.raises(_Stop):
            await conv.run()

    asyncio.run(main())
    scenario = get_scenario(name)
    phone_tools = {t.name for t in scenario.user_tools}
    agent_tools = {t.name for t in scenario.agent_tools}

    def called(view):
        return {c["function"]["name"] for m in view for c in m.get("tool_calls") or ()}

    agent_view, user_view = agent.sessions[conv.id].view, user.sessions[conv.id].view
    assert called(agent_view) <= agent_tools and called(agent_view)
    assert called(user_view) <= phone_tools and called(user_view)
    # the tool results of one side never appear in the other side's view
    agent_results = {m["content"] for m in agent_view if m["role"] == "tool"}
    assert not agent_results & {m["content"] for m in user_view}
