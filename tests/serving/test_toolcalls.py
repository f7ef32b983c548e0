"""Tool calls through a chat template that has no tools: written into the prompt, read from tags."""

from __future__ import annotations

import json

from tauray.actors.serving.toolcalls import parse_reply, render_messages

TOOLS = [{"type": "function", "function": {"name": "get_order", "description": "Look up an order.",
                                           "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}}]


def test_tools_go_into_the_system_message_and_history_becomes_text():
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Where is order 7?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": "7"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
    ]
    out = render_messages(messages, TOOLS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool"]
    assert out[0]["content"].startswith("You are an agent.") and '"name": "get_order"' in out[0]["content"]
    assert all(isinstance(m["content"], str) for m in out)  # templates concatenate strings; None would break them
    assert json.loads(out[2]["content"].split("<tool_call>")[1].split("</tool_call>")[0]) == {
        "name": "get_order", "arguments": {"id": "7"}}
    assert out[3]["content"] == "<tool_response>\nshipped\n</tool_response>"
    # no tools: no instructions, and a missing system message is not invented
    assert render_messages([{"role": "user", "content": "hi"}], None) == [{"role": "user", "content": "hi"}]


def test_tagged_calls_are_parsed_and_broken_ones_kept_raw():
    content, calls = parse_reply('Let me check.\n<tool_call>\n{"name": "get_order", "arguments": {"id": "7"}}\n</tool_call>')
    assert content == "Let me check."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [("get_order", {"id": "7"})]
    # unterminated, not JSON: still a call, its raw text the arguments, so the engine counts it malformed
    content, calls = parse_reply('<tool_call>\n{"name": "get_order", "arguments": {id: 7}')
    assert content is None and calls[0]["function"]["name"] == "get_order"
    assert calls[0]["function"]["arguments"] == '{"name": "get_order", "arguments": {id: 7}'
    # plain text stays text
    assert parse_reply("Your order shipped.") == ("Your order shipped.", [])
    # two calls, ids distinct
    _, calls = parse_reply('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b"}</tool_call>')
    assert [c["function"]["name"] for c in calls] == ["a", "b"] and calls[0]["id"] != calls[1]["id"]
