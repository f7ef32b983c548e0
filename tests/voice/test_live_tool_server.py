"""The tool server a phone bot calls: MCP over streamable HTTP on 127.0.0.1, one URL and one
session per conversation, serving exactly that scenario's agent tools (no harness tool), every
call going through the coordinator's callback; a session used for another conversation is
refused with one line."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

pytest.importorskip("mcp", reason="the optional extra tauray[live]")
from mcp import Client

from tauray.actors.voice.live.errors import ToolServerError
from tauray.actors.voice.live.tool_server import ToolReply, ToolServer, state_callback
from tauray.scenarios import default_registry, fresh_state, select_scenarios


def run(coro, timeout=20.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def _scenario(domain: str, **kw):
    return default_registry().get(select_scenarios(None, domain=domain, **kw)[0].name)


def test_a_conversation_sees_its_scenarios_agent_tools_and_calls_land_in_the_callback():
    scenario = _scenario("mock")
    state = fresh_state(scenario)
    outcomes: list = []

    async def main():
        async with ToolServer() as server:
            url = server.register("conv-1", scenario.agent_tools, state_callback(state, outcomes))
            assert url == f"{server.base_url}/mcp/conv-1" and url.startswith("http://127.0.0.1:")
            async with Client(url) as client:
                tools = (await client.list_tools()).tools
                users = await client.call_tool("get_users", {})
                bad = await client.call_tool("update_task_status", {"task_id": "nope", "status": "done"})
                harness = await client.call_tool("end_conversation", {})
            return tools, users, bad, harness

    tools, users, bad, harness = run(main())
    offered = {t.name for t in scenario.agent_tools if t.kind != "harness"}
    assert {t.name for t in tools} == offered and "end_conversation" not in offered
    schema = next(t for t in tools if t.name == "update_task_status").input_schema
    assert schema == next(t for t in scenario.agent_tools if t.name == "update_task_status").parameters
    assert not users.is_error and json.loads(users.content[0].text)  # the mock DB's users
    assert bad.is_error and bad.content[0].text.startswith("Error:")
    assert harness.is_error and "no tool 'end_conversation'" in harness.content[0].text
    assert [(o.name, o.error) for o in outcomes] == [("get_users", False), ("update_task_status", True)]


def test_another_conversations_session_is_refused_with_one_line():
    calls: list[str] = []

    async def echo(name, arguments):
        calls.append(name)
        return ToolReply(text="ok")

    scenario = _scenario("mock")

    async def main():
        async with ToolServer() as server:
            url_a = server.register("conv-a", scenario.agent_tools, echo)
            url_b = server.register("conv-b", scenario.agent_tools, echo)
            with pytest.raises(ToolServerError, match="^tool server: conversation 'conv-a' is already registered$"):
                server.register("conv-a", scenario.agent_tools, echo)
            headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
            body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "get_users", "arguments": {}}}
            async with httpx.AsyncClient() as http:
                # a session as clients of the 2025 protocol open one (the handshake era): initialize on A's URL
                hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bot", "version": "1"}}}
                opened = await http.post(url_a, headers=headers, json=hello)
                assert opened.status_code == 200, opened.text
                session = opened.headers["mcp-session-id"]
                assert server.sessions_of("conv-a") == [session]
                headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
                crossed = await http.post(url_b, headers=headers, json=body)
                unknown = await http.post(f"{server.base_url}/mcp/conv-zz", headers=headers, json=body)
                server.unregister("conv-a")
                ended = await http.post(url_a, headers=headers, json=body)
            return crossed, unknown, ended

    crossed, unknown, ended = run(main())
    assert crossed.status_code == 403 and unknown.status_code == 404 and ended.status_code == 404
    said = crossed.json()["error"]["message"]
    assert said == "tool server: this session belongs to another conversation; /mcp/conv-b serves conversation 'conv-b' only"
    assert unknown.json()["error"]["message"] == "tool server: no conversation 'conv-zz' here (ended, or never registered)"
    assert calls == []


@pytest.mark.slow  # loads τ²'s telecom tasks (about 3 s here)
def test_telecom_agent_tools_act_on_the_scenarios_db_with_sync():
    scenario = _scenario("telecom", split="base")
    state = fresh_state(scenario)
    outcomes: list = []
    phone = state.agent.db.customers[0].phone_number

    async def main():
        async with ToolServer() as server:
            url = server.register("t-1", scenario.agent_tools, state_callback(state, outcomes))
            async with Client(url) as client:
                found = await client.call_tool("get_customer_by_phone", {"phone_number": phone})
            return found

    found = run(main())
    assert not found.is_error and json.loads(found.content[0].text)["phone_number"] == phone
    assert outcomes[0].name == "get_customer_by_phone" and not outcomes[0].is_write


def test_a_tool_call_that_arrives_as_its_call_ends_is_answered_not_raised():
    """The request passed the URL check, then the call ended (``unregister``) before the handler
    ran: the bot gets an error result, and no traceback reaches the coordinator's log."""
    from types import SimpleNamespace

    from mcp import types

    server = ToolServer()
    ctx = SimpleNamespace(request=SimpleNamespace(url=SimpleNamespace(path="/mcp/conv-gone")))
    result = run(server._call_tool(ctx, types.CallToolRequestParams(name="get_users", arguments={})))
    assert result.is_error and result.content[0].text == \
        "Error: tool server: no conversation 'conv-gone' here (ended, or never registered)"
