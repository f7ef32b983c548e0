"""The exact request tauray sends to each provider, built by litellm's own request
transformation and caught by a loopback server (no network): no provider refuses it
client-side, and the seed goes only where the provider takes one.

Before provider-safe parameters, ``anthropic/…`` and ``bedrock/…`` never reached the
wire: litellm refused ``seed`` (``UnsupportedParamsError``) and every conversation
ended on its first call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from tauray.actors.llm import ModelCallError, ModelClient, ModelConfigError, ModelSpec, request_params
from tests.actors.provider_answers import LoopbackServer

# provider -> (model string, the key the provider's wire format carries the seed under, or None)
MATRIX: dict[str, tuple[str, str | None]] = {
    "openai": ("openai/gpt-4o-mini", "seed"),
    "anthropic": ("anthropic/claude-3-5-sonnet-20240620", None),
    "bedrock": ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", None),
    "bedrock-converse": ("bedrock/converse/us.meta.llama3-1-70b-instruct-v1:0", None),
    "gemini": ("gemini/gemini-1.5-pro", "seed"),
    "vertex_ai": ("vertex_ai/gemini-1.5-pro", "seed"),
    "mistral": ("mistral/mistral-large-latest", "random_seed"),
    "groq": ("groq/llama-3.1-8b-instant", "seed"),
    "hosted_vllm": ("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct", "seed"),
    "ollama_chat": ("ollama_chat/llama3.1", "seed"),
    "ollama": ("ollama/llama3.1", "seed"),
}

FAKE_ENV = {
    "OPENAI_API_KEY": "test-openai", "ANTHROPIC_API_KEY": "test-anthropic", "GEMINI_API_KEY": "test-gemini",
    "MISTRAL_API_KEY": "test-mistral", "GROQ_API_KEY": "test-groq",
    "AWS_ACCESS_KEY_ID": "AKIATESTTESTTEST", "AWS_SECRET_ACCESS_KEY": "test-secret", "AWS_REGION_NAME": "us-east-1",
    "VERTEXAI_PROJECT": "test-project", "VERTEXAI_LOCATION": "us-central1",
}

TOOLS = [{"type": "function", "function": {
    "name": "get_customer", "description": "Look a customer up.",
    "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}}}]
MESSAGES = [{"role": "system", "content": "You are a support agent."}, {"role": "user", "content": "My phone is dead."}]


class Capture(LoopbackServer):
    """A loopback server that records every request and answers 502 (nothing is parsed; not a
    503, nor a 500, which litellm calls unavailable for Bedrock: the client would wait those
    out like a rate limit)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        self.requests.append({"path": request.path, "body": body})
        return web.json_response({"error": {"message": "captured", "type": "server_error"}}, status=502)


@pytest.fixture(scope="module")
def capture():
    return Capture()


def _contains_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_contains_key(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_contains_key(v, key) for v in value)
    return False


def _vertex_token(monkeypatch) -> None:
    # Vertex signs requests with a Google access token; offline, hand litellm a fixed one
    # instead of the token exchange (the request body is what this test is about).
    from litellm.llms.vertex_ai.vertex_llm_base import VertexBase

    async def token(self, credentials, project_id, custom_llm_provider):
        return ("test-token", project_id or "test-project")

    monkeypatch.setattr(VertexBase, "_ensure_access_token_async", token)
    monkeypatch.setattr(VertexBase, "_ensure_access_token",
                        lambda self, credentials, project_id, custom_llm_provider: ("test-token", project_id))


@pytest.mark.slow
@pytest.mark.parametrize("provider", list(MATRIX))
def test_request_reaches_the_wire_with_seed_only_where_taken(provider, capture, monkeypatch, loop):
    model, seed_key = MATRIX[provider]
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    if provider == "vertex_ai":
        _vertex_token(monkeypatch)
    api_base = f"{capture.base}/v1" if provider in ("openai", "mistral", "groq", "hosted_vllm") else capture.base
    spec = ModelSpec(model=model, api_base=api_base, num_retries=0, timeout=20, max_tokens=256,
                     seed=None, extra_params={"top_p": 0.9})
    client = ModelClient(spec)
    before = len(capture.requests)
    try:
        with pytest.raises(ModelCallError) as info:
            loop.run_until_complete(client.complete(MESSAGES, TOOLS, seed=1234))
    finally:
        loop.run_until_complete(client.aclose())
    sent = capture.requests[before:]
    assert sent, f"{provider}: refused before sending: {info.value.message}"
    assert info.value.status_code in (502, 500)  # our server's answer (Gemini: a 500), not a client-side refusal
    body = sent[-1]["body"]
    text = json.dumps(body)
    assert "1234" in text if seed_key else "1234" not in text, f"{provider}: {text[:600]}"
    if seed_key:
        assert _contains_key(body, seed_key), f"{provider}: {text[:600]}"
    assert json.dumps(body).count("get_customer") >= 1  # the tools went too
    assert client.request.seed is (seed_key is not None) and "seed" not in client.request.dropped  # spec: no seed
    assert ("temperature" in json.dumps(body)) or provider.startswith("ollama")  # sent (ollama: options)


def test_dropped_parameters_are_named():
    spec = ModelSpec(model="anthropic/claude-3-5-sonnet-20240620", seed=3, extra_params={"top_p": 0.5, "top_k": 5})
    req = request_params(spec)
    # Anthropic maps no seed: left out and named (rows record seed_applied=false); top_k is a provider extra.
    assert set(req.dropped) == {"seed"} and not req.seed
    assert req.params == {"top_p": 0.5, "top_k": 5, "temperature": 0.0, "max_tokens": 4096}
    assert request_params(ModelSpec(model="openai/gpt-4o-mini", seed=3)).seed is True


def test_an_explicit_parameter_the_provider_refuses_is_a_config_error_naming_it():
    # Before: frequency_penalty was silently left out of every call to Anthropic.
    spec = ModelSpec(model="anthropic/claude-3-5-sonnet-20240620", extra_params={"frequency_penalty": 0.1})
    with pytest.raises(ModelConfigError, match=r"claude-3-5-sonnet-20240620.*frequency_penalty"):
        request_params(spec)
