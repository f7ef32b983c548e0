"""Every major provider, called as a user would configure it, for every kind of call a
conversation makes: the request litellm builds is caught on a loopback server (no
network) and checked against that provider's documented rules.

Call kinds (views written exactly as ``SideSession`` builds them):

* ``agent_first``: system prompt, the agent's own greeting (assistant), the customer's words;
* ``agent_tool``: the same after one tool round (a call with id ``call_1``, as the mock
  tasks with history write it, and its result);
* ``agent_empty``: after the agent's own empty reply and the customer's next words;
* ``user_empty``: the user simulator after the agent said nothing (its view ends on its own
  words, then an empty user turn);
* ``judge``: system prompt and one user message, no tools.

Rules (``RULES``), each from the provider's documentation:

* ``sent``: the request reaches the wire (litellm refuses none client-side; OpenAI reasoning
  models: "Only temperature=1 is supported").
* ``first_user``: the first turn is the user's (Bedrock Converse: "A conversation must start
  with a user message"; Gemini/Vertex ``contents`` start with role ``user``; Anthropic
  Messages; Gemma/Mistral chat templates on vLLM raise otherwise).
* ``no_empty_text``: no blank text block or part (Bedrock: "The text field in the
  ContentBlock object is blank"; Gemini: empty text parameter; Anthropic: "text content
  blocks must be non-empty").
* ``alternate``: user and assistant/model turns alternate (Bedrock Converse, Gemini, vLLM
  chat templates: "Conversation roles must alternate").
* ``ends_on_user``: the last message is the user's or a tool result (Mistral: an assistant
  last message needs ``prefix``; Anthropic with thinking: no prefill).
* ``mistral_ids``: tool-call ids are 9 characters ``[a-zA-Z0-9]`` (Mistral: "Tool call id
  was call_1 but must be a-z, A-Z, 0-9, with a length of 9").
* ``no_temperature``: reasoning models and thinking get no temperature unless the user set
  one (OpenAI reasoning guide; Anthropic: thinking "isn't compatible with temperature").
* ``gemini_params``: no function declaration whose parameters are an object without
  properties (Gemini: "properties: should be non-empty for OBJECT type").
* ``finite_max_tokens``: tauray sends a max_tokens of its own choosing, never the model's
  maximum (Anthropic: max_tokens is required and billed against; thinking: budget_tokens
  must be below max_tokens).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tauray.actors.llm import ModelCallError, ModelClient, ModelSpec
from tests.actors.test_provider_matrix import FAKE_ENV, Capture, _vertex_token

GREETING = "Hello, you have reached customer support. How can I help you today?"
THINKING = {"type": "enabled", "budget_tokens": 1024}

AGENT_TOOLS = [{"type": "function", "function": {
    "name": "get_customer", "description": "Look a customer up.",
    "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}}}]
USER_TOOLS = [{"type": "function", "function": {
    "name": "check_status_bar", "description": "What the phone's status bar shows.",
    "parameters": {"type": "object", "properties": {}, "required": []}}}]

AGENT_FIRST = [{"role": "system", "content": "You are a support agent."},
               {"role": "assistant", "content": GREETING},
               {"role": "user", "content": "My phone has no signal."}]
VIEWS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = {
    "agent_first": (AGENT_FIRST, AGENT_TOOLS),
    "agent_tool": (AGENT_FIRST + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_customer", "arguments": '{"customer_id": "C1"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"name": "Ann"}'}], AGENT_TOOLS),
    "agent_empty": (AGENT_FIRST + [{"role": "assistant", "content": ""},
                                   {"role": "user", "content": "Hello? Are you there?"}], AGENT_TOOLS),
    "user_empty": ([{"role": "system", "content": "You are a customer."}, {"role": "user", "content": GREETING},
                    {"role": "assistant", "content": "My phone has no signal."}, {"role": "user", "content": ""}],
                   USER_TOOLS),
    "judge": ([{"role": "system", "content": "You grade conversations."},
               {"role": "user", "content": "Transcript: ... Did the agent resolve it?"}], None),
}

# name -> (model, extra spec fields, rules checked)
OPENAI_LIKE = ("sent",)
PROVIDERS: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "openai-gpt-4o": ("openai/gpt-4o", {}, OPENAI_LIKE),
    "openai-o4-mini": ("openai/o4-mini", {}, ("sent", "no_temperature")),
    "openai-gpt-5": ("openai/gpt-5", {}, ("sent", "no_temperature")),
    "azure": ("azure/gpt-4o", {}, OPENAI_LIKE),
    "anthropic": ("anthropic/claude-sonnet-4-5-20250929", {},
                  ("sent", "first_user", "no_empty_text", "finite_max_tokens")),
    "anthropic-thinking": ("anthropic/claude-sonnet-4-5-20250929", {"extra_params": {"thinking": THINKING}},
                           ("sent", "first_user", "no_empty_text", "ends_on_user", "no_temperature",
                            "finite_max_tokens")),
    "gemini": ("gemini/gemini-2.5-flash", {}, ("sent", "first_user", "no_empty_text", "alternate", "gemini_params")),
    "vertex_ai": ("vertex_ai/gemini-2.5-pro", {}, ("sent", "first_user", "no_empty_text", "alternate",
                                                  "gemini_params")),
    "bedrock-claude": ("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", {},
                       ("sent", "first_user", "no_empty_text", "alternate", "finite_max_tokens")),
    "bedrock-llama": ("bedrock/converse/us.meta.llama3-1-70b-instruct-v1:0", {},
                      ("sent", "first_user", "no_empty_text", "alternate")),
    "mistral": ("mistral/mistral-large-latest", {}, ("sent", "ends_on_user", "mistral_ids")),
    "deepseek": ("deepseek/deepseek-chat", {}, OPENAI_LIKE),
    "groq": ("groq/llama-3.1-8b-instant", {}, OPENAI_LIKE),
    "together_ai": ("together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", {}, OPENAI_LIKE),
    "fireworks_ai": ("fireworks_ai/accounts/fireworks/models/llama-v3p3-70b-instruct", {}, OPENAI_LIKE),
    "openrouter": ("openrouter/meta-llama/llama-3.3-70b-instruct", {}, OPENAI_LIKE),
    "xai": ("xai/grok-3", {}, OPENAI_LIKE),
    "ollama_chat": ("ollama_chat/llama3.1", {}, OPENAI_LIKE),
    "hosted_vllm": ("hosted_vllm/google/gemma-3-12b-it", {}, ("sent", "first_user", "alternate")),
}

MORE_ENV = {"AZURE_API_KEY": "test-azure", "AZURE_API_VERSION": "2024-10-21", "DEEPSEEK_API_KEY": "test-ds",
            "TOGETHERAI_API_KEY": "test-together", "FIREWORKS_AI_API_KEY": "test-fw",
            "OPENROUTER_API_KEY": "test-or", "XAI_API_KEY": "test-xai"}
ROOT_BASE = ("anthropic", "gemini", "vertex_ai", "bedrock", "ollama_chat", "azure")


@pytest.fixture(scope="module")
def capture():
    return Capture()


@pytest.fixture(scope="module")
def sent(capture, loop):
    """Every provider's request for every call kind (None where nothing reached the wire)."""
    mp = pytest.MonkeyPatch()
    for name, value in {**FAKE_ENV, **MORE_ENV}.items():
        mp.setenv(name, value)
    _vertex_token(mp)
    out: dict[tuple[str, str], dict[str, Any] | None] = {}
    try:
        for name, (model, fields, _) in PROVIDERS.items():
            prefix = model.split("/", 1)[0]
            base = capture.base if prefix in ROOT_BASE else f"{capture.base}/v1"
            client = ModelClient(ModelSpec(model=model, api_base=base, num_retries=0, timeout=20, **fields))
            for kind, (messages, tools) in VIEWS.items():
                before = len(capture.requests)
                try:
                    loop.run_until_complete(client.complete(messages, tools, seed=7))
                except ModelCallError:
                    pass
                out[(name, kind)] = capture.requests[-1]["body"] if len(capture.requests) > before else None
            loop.run_until_complete(client.aclose())
    finally:
        mp.undo()
    return out


# ----------------------------------------------------------------------------- the wire, read back


def turns(body: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(role, content blocks) per non-system message, whatever the wire format."""
    if "contents" in body:  # Gemini / Vertex
        return [(c.get("role", "user"), list(c.get("parts") or [])) for c in body["contents"]]
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "system":
            continue
        content = m.get("content")
        if isinstance(content, str) or content is None:
            blocks = [] if content is None else [{"text": content}]
        else:
            blocks = [b if "text" in b or b.get("type") != "text" else {**b, "text": b.get("text", "")}
                      for b in content]
        out.append((m["role"], blocks + [{"tool_call": c} for c in m.get("tool_calls") or []]))
    return out


def _role(role: str) -> str:
    return {"model": "assistant", "tool": "user"}.get(role, role)


def check(rule: str, body: dict[str, Any] | None, name: str) -> str | None:
    """None when ``body`` keeps ``rule``; else what is wrong."""
    if body is None:
        return "refused before sending" if rule == "sent" else None
    ts = turns(body)
    text = json.dumps(body)
    if rule == "first_user" and ts and _role(ts[0][0]) != "user":
        return f"first turn is {ts[0][0]!r}"
    if rule == "no_empty_text":
        blank = [r for r, blocks in ts for b in blocks if "text" in b and not str(b["text"]).strip()]
        if blank or any(not blocks for _, blocks in ts):
            return f"blank text in {blank or 'an empty turn'}"
    if rule == "alternate":
        roles = [_role(r) for r, _ in ts]
        if any(a == b and a != "user" or (a == b == "user" and "contents" in body) for a, b in zip(roles, roles[1:])):
            return f"roles do not alternate: {roles}"
    if rule == "ends_on_user" and ts and ts[-1][0] == "assistant":
        return "ends on an assistant message"
    if rule == "mistral_ids":
        ids = re.findall(r'"(?:id|tool_call_id)": "([^"]*)"', text)
        bad = [i for i in ids if not re.fullmatch(r"[a-zA-Z0-9]{9}", i)]
        if bad:
            return f"tool-call ids {bad}"
    if rule == "no_temperature" and body.get("temperature") not in (None, 1, 1.0):
        return f"temperature {body.get('temperature')} sent"
    if rule == "gemini_params":
        declarations = [d for t in body.get("tools") or [] for d in t.get("function_declarations") or []]
        empty = [d["name"] for d in declarations if (d.get("parameters") or {}).get("type", "").lower() == "object"
                 and not d["parameters"].get("properties")]
        if empty:
            return f"object parameters without properties: {empty}"
    if rule == "finite_max_tokens":
        value = body.get("max_tokens") or (body.get("inferenceConfig") or {}).get("maxTokens")
        if not value or value > 16384:
            return f"max_tokens {value}"
        budget = (body.get("thinking") or {}).get("budget_tokens")
        if budget and value <= budget:
            return f"max_tokens {value} not above budget_tokens {budget}"
    return None


CASES = [(name, kind, rule) for name, (_, _, rules) in PROVIDERS.items() for kind in VIEWS for rule in rules]


@pytest.mark.parametrize("name,kind,rule", CASES, ids=[f"{n}-{k}-{r}" for n, k, r in CASES])
def test_provider_call_keeps_documented_rule(name, kind, rule, sent):
    problem = check(rule, sent[(name, kind)], name)
    assert problem is None, f"{name} {kind}: {problem}"


def test_the_checker_can_fail():
    # The rules above are only worth something if a bad request breaks them.
    assistant_first = {"messages": [{"role": "assistant", "content": ""}, {"role": "user", "content": "hi"}]}
    assert check("first_user", assistant_first, "x") and check("no_empty_text", assistant_first, "x")
    assert check("ends_on_user", {"messages": [{"role": "user", "content": "a"}, {"role": "assistant",
                                                                                  "content": "b"}]}, "x")
    assert check("mistral_ids", {"messages": [{"role": "tool", "tool_call_id": "call_1"}]}, "mistral")
    assert check("alternate", {"contents": [{"role": "user", "parts": [{"text": "a"}]},
                                            {"role": "user", "parts": [{"text": "b"}]}]}, "gemini")
    assert check("sent", None, "x") and check("no_temperature", {"temperature": 0.0}, "x")
    assert check("gemini_params", {"tools": [{"function_declarations": [
        {"name": "f", "parameters": {"type": "object"}}]}]}, "gemini")


@pytest.mark.parametrize("role,greeting_role", [("agent (models.a)", "assistant"), ("user (models.u)", "user")])
def test_the_probe_sends_the_first_real_call_of_its_role(role, greeting_role, capture, loop, monkeypatch):
    # Before, the probe sent one plain user message: Bedrock passed it and then refused every
    # agent conversation (Converse: "A conversation must start with a user message").
    from tauray.actors.llm.usable import ProbeError, probe_models_async

    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    spec = {"model": "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "api_base": capture.base,
            "num_retries": 0, "timeout": 20}
    before = len(capture.requests)
    with pytest.raises(ProbeError):
        loop.run_until_complete(probe_models_async({role: spec}, seed=None))
    body = capture.requests[before]["body"]
    roles = [(m["role"], m["content"][0].get("text", "")) for m in body["messages"]]
    assert (greeting_role, GREETING) in roles and roles[0][0] == "user" and body.get("toolConfig")
    assert check("first_user", body, "bedrock") is None and check("alternate", body, "bedrock") is None


class AnthropicResponder(Capture):
    """A loopback Anthropic Messages API that thinks, then calls a tool (and records requests)."""

    async def _handle(self, request):
        from aiohttp import web

        self.requests.append({"path": request.path, "body": await request.json()})
        return web.json_response({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "thinking", "thinking": "Look the customer up.", "signature": "sig-abc"},
                        {"type": "tool_use", "id": "toolu_01", "name": "get_customer", "input": {"customer_id": "C1"}}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})


def test_thinking_blocks_go_back_with_the_tool_round(loop, monkeypatch):
    # Anthropic, extended thinking with tool use: the assistant turn that called a tool must be sent
    # back with its thinking block (signature included), else the API answers 400. Before, the
    # block was dropped with the reply and the next tool round was refused.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic")
    server = AnthropicResponder()
    spec = ModelSpec(model="anthropic/claude-sonnet-4-5-20250929", api_base=server.base, num_retries=0,
                     extra_params={"thinking": THINKING})
    client = ModelClient(spec)
    try:
        reply = loop.run_until_complete(client.complete(AGENT_FIRST, AGENT_TOOLS))
        assert reply.thinking_blocks and reply.thinking_blocks[0]["signature"] == "sig-abc"
        assert reply.dropped == ("temperature",)  # thinking: the default temperature is left out, and said
        call = reply.tool_calls[0]
        view = AGENT_FIRST + [  # as SideSession writes it: no thinking in the view
            {"role": "assistant", "content": None, "tool_calls": [{"id": call.id, "type": "function",
                                                                   "function": {"name": call.name,
                                                                                "arguments": call.arguments}}]},
            {"role": "tool", "tool_call_id": call.id, "content": '{"name": "Ann"}'}]
        loop.run_until_complete(client.complete(view, AGENT_TOOLS))
    finally:
        loop.run_until_complete(client.aclose())
    turn = [m for m in server.requests[-1]["body"]["messages"] if m["role"] == "assistant"][-1]
    assert turn["content"][0]["type"] == "thinking" and turn["content"][0]["signature"] == "sig-abc"
    assert "temperature" not in server.requests[-1]["body"]


def test_strict_opt_in_sends_tools_openai_strict_mode_accepts(capture, loop):
    # OpenAI structured outputs, function calling with strict: true: every object needs
    # "additionalProperties": false and every property listed in "required". With `strict` the
    # tools are rewritten so and marked strict; without it they go as written.
    def tools_sent(strict: bool) -> list[dict[str, Any]]:
        client = ModelClient(ModelSpec(model="openai/gpt-4o", api_base=f"{capture.base}/v1", num_retries=0,
                                       strict=strict))
        try:
            loop.run_until_complete(client.complete(AGENT_FIRST, AGENT_TOOLS + USER_TOOLS))
        except ModelCallError:
            pass
        finally:
            loop.run_until_complete(client.aclose())
        return capture.requests[-1]["body"]["tools"]

    for tool in tools_sent(True):
        function = tool["function"]
        params = function["parameters"]
        assert function["strict"] is True and params["additionalProperties"] is False
        assert set(params["required"]) == set(params["properties"])
    assert all("strict" not in t["function"] for t in tools_sent(False))
