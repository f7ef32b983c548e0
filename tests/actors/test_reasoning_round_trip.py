"""Reasoning sent back where the provider requires it, and every history change on the way
out (tauray's or litellm's) named in the reply's ``adapted``.

DeepSeek's reasoner documents that the assistant turn's ``reasoning_content`` must be passed
back on tool-call rounds, else HTTP 400. The loopback server below answers as documented: it
thinks and calls a tool, and refuses a request whose tool-calling assistant turn comes back
without its reasoning. Before, tauray sent it 0 of 2 times (the view holds no reasoning).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tauray.actors.llm import ModelCallError, ModelClient, ModelSpec
from tauray.actors.llm.history import litellm_adaptations, with_reasoning
from tests.actors.test_provider_matrix import Capture

TOOLS = [{"type": "function", "function": {
    "name": "get_customer", "description": "Look a customer up.",
    "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}}}]
START = [{"role": "system", "content": "You are a support agent."},
         {"role": "user", "content": "My phone has no signal."}]


class DeepSeekResponder(Capture):
    """A loopback chat-completions server answering as DeepSeek's reasoner documents."""

    async def _handle(self, request):
        from aiohttp import web

        body = await request.json()
        self.requests.append({"path": request.path, "body": body})
        bare = [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")
                and not m.get("reasoning_content")]
        if bare:
            return web.json_response({"error": {"message": "The reasoning_content in the thinking mode must be "
                                                "passed back to the API.", "type": "invalid_request_error"}},
                                     status=400)
        n = len(self.requests)
        message = {"role": "assistant", "content": "", "reasoning_content": f"Look the customer up ({n}).",
                   "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {
                       "name": "get_customer", "arguments": json.dumps({"customer_id": f"C{n}"})}}]}
        return web.json_response({"id": f"r{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


@pytest.fixture(scope="module")
def server():
    return DeepSeekResponder()


def _round(view: list[dict[str, Any]], reply) -> list[dict[str, Any]]:
    """The view as SideSession writes it after a tool round: no reasoning in it."""
    call = reply.tool_calls[0]
    return view + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": '{"name": "Ann"}'}]


def test_deepseek_reasoning_goes_back_on_every_tool_round(server, loop, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-ds")
    client = ModelClient(ModelSpec(model="deepseek/deepseek-reasoner", api_base=server.base, num_retries=0))
    view = START
    try:
        first = loop.run_until_complete(client.complete(view, TOOLS))
        assert first.reasoning_content == "Look the customer up (1)." and first.tool_calls
        view = _round(view, first)
        second = loop.run_until_complete(client.complete(view, TOOLS))  # 400 without its reasoning
        view = _round(view, second)
        third = loop.run_until_complete(client.complete(view, TOOLS))
    finally:
        loop.run_until_complete(client.aclose())
    turns = [m for r in server.requests[-2:] for m in r["body"]["messages"][-2:-1]]
    assert [m.get("reasoning_content") for m in turns] == ["Look the customer up (1).", "Look the customer up (2)."]
    sent = [m for m in server.requests[-1]["body"]["messages"] if m.get("tool_calls")]
    assert [m["reasoning_content"] for m in sent] == ["Look the customer up (1).", "Look the customer up (2)."]
    assert "reasoning_returned" in second.adapted and "reasoning_returned" in third.adapted
    assert "reasoning_returned" not in first.adapted


def test_the_server_refuses_a_tool_round_without_reasoning(server, loop, monkeypatch):
    # The responder is only worth something if it refuses what DeepSeek refuses.
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-ds")
    client = ModelClient(ModelSpec(model="deepseek/deepseek-reasoner", api_base=server.base, num_retries=0))
    view = START + [{"role": "assistant", "content": None, "tool_calls": [{"id": "call_x", "type": "function",
                     "function": {"name": "get_customer", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "call_x", "content": "{}"}]
    try:
        with pytest.raises(ModelCallError, match="reasoning_content"):
            loop.run_until_complete(client.complete(view, TOOLS))
    finally:
        loop.run_until_complete(client.aclose())


def test_reasoning_text_goes_only_to_providers_that_need_it():
    view = _Round.view()
    kept = {"call_1": ([], "because")}
    out, marks = with_reasoning(view, ["openai"], kept)
    assert out == view and marks == ()
    out, marks = with_reasoning(view, ["deepseek"], kept)
    assert out[1]["reasoning_content"] == "because" and marks == ("reasoning_returned",) and "reasoning_content" not in view[1]
    blocks = {"call_1": ([{"type": "thinking", "thinking": "t", "signature": "s"}], None)}
    assert with_reasoning(view, ["anthropic"], blocks)[1] == ("thinking_returned",)


class _Round:
    @staticmethod
    def view() -> list[dict[str, Any]]:
        return [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]


@pytest.mark.parametrize("model,expected", [("o3", True), ("o3-mini", True), ("o4-mini", True), ("gpt-4o", False),
                                            ("gpt-5", False)])
def test_litellm_turning_the_system_prompt_into_a_user_turn_is_named(model, expected):
    assert ("system_as_user" in litellm_adaptations(START, f"openai/{model}", "openai", {})) is expected
    assert litellm_adaptations(START[1:], f"openai/{model}", "openai", {}) == ()


def test_litellm_placeholder_reasoning_is_named():
    thinking = {"thinking": {"type": "enabled"}}
    view = _Round.view()
    assert litellm_adaptations(view, "deepseek/deepseek-reasoner", "deepseek", thinking) == ("reasoning_placeholder",)
    assert litellm_adaptations(view, "deepseek/deepseek-reasoner", "deepseek", {}) == ()


def test_o_series_system_prompt_change_is_recorded_as_sent(server, loop, monkeypatch):
    # litellm sends o4-mini's system prompt as a user turn; the reply's adapted says so.
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai")
    client = ModelClient(ModelSpec(model="openai/o4-mini", api_base=f"{server.base}/v1", num_retries=0))
    try:
        reply = loop.run_until_complete(client.complete(START, TOOLS))
    finally:
        loop.run_until_complete(client.aclose())
    assert server.requests[-1]["body"]["messages"][0]["role"] == "user"
    assert "system_as_user" in reply.adapted


def test_models_check_shows_the_round_trip_and_litellm_changes():
    from tauray.actors.llm.check import check_model

    o4 = check_model("openai/o4-mini").history
    assert all("system_as_user" in rules for shape, rules in o4.items() if shape != "a tool without arguments")
    assert "reasoning_returned" in check_model("deepseek/deepseek-reasoner").history["after a tool round (id call_1)"]
    assert not any(check_model("openai/gpt-4o").history.values())
