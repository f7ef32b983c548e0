"""Retry patience by cause, against loopback servers that answer as each provider documents.

* An overloaded provider (Anthropic's 529 ``overloaded_error``, a 503 unavailable) clears
  like a rate limit does, so it gets the same patience: the call waits it out (the
  provider's ``retry-after`` or a backoff), up to ``rate_limit_wait``. Before, the Router's
  few quick retries (about 9 s with ``num_retries=3``) were all it got.
* A spent quota or spend cap (OpenAI's ``insufficient_quota`` 429, Anthropic's credit-balance
  400, a Gemini per-day quota) does not clear by waiting: the model's calls stop at the first
  such answer, with one line that says so, and later calls fail at once without a request.

Every test counts the requests that reached the server; none times anything.
"""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.llm import ModelCallError, ModelClient, ModelSpec
from tauray.actors.quota import reset_gate
from tests.actors.provider_answers import (
    ANTHROPIC_CREDIT,
    ANTHROPIC_OVERLOADED,
    GEMINI_PER_DAY,
    OPENAI_INSUFFICIENT_QUOTA,
    OPENAI_UNAVAILABLE,
    ProviderAnswers,
)

pytestmark = pytest.mark.slow  # loopback servers and litellm calls

MESSAGES = [{"role": "user", "content": "My phone is dead."}]

# provider -> (model, the api_base for the server's port, key variable)
PROVIDERS = {
    "openai": ("openai/gpt-4o-mini", "{base}/v1", None),
    "anthropic": ("anthropic/claude-3-5-sonnet-20240620", "{base}", "ANTHROPIC_API_KEY"),
    "gemini": ("gemini/gemini-2.0-flash", "{base}", "GEMINI_API_KEY"),
}


@pytest.fixture(autouse=True)
def own_book():
    reset_gate()  # a fresh process book: no stop or learned limit from another test
    yield
    reset_gate()


def _client(provider: str, server: ProviderAnswers, monkeypatch, **fields) -> ModelClient:
    model, base, key = PROVIDERS[provider]
    if key:
        monkeypatch.setenv(key, "test-key")
    return ModelClient(ModelSpec(model=model, api_base=base.format(base=server.base), timeout=20, **fields))


def _complete(client: ModelClient):
    async def main():
        try:
            return await client.complete(MESSAGES)
        except ModelCallError as error:
            return error
        finally:
            await client.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("provider,answer", [("anthropic", ANTHROPIC_OVERLOADED), ("openai", OPENAI_UNAVAILABLE)],
                         ids=["anthropic-529", "openai-503"])
def test_an_overloaded_provider_is_waited_out_like_a_rate_limit(provider, answer, monkeypatch):
    """Two overloaded answers, then a reply: with num_retries=0 the Router retries nothing,
    so only the rate-limit patience can carry the call through (before: an infra error at the
    first overloaded answer, 1 request)."""
    server = ProviderAnswers(errors=[answer, answer])
    try:
        reply = _complete(_client(provider, server, monkeypatch, num_retries=0, rate_limit_wait=60))
    finally:
        server.close()
    assert not isinstance(reply, ModelCallError), reply
    assert server.requests == 3 and reply.retries >= 2 and reply.content == "Hello."


def test_an_overloaded_provider_is_waited_out_only_up_to_rate_limit_wait(monkeypatch):
    server = ProviderAnswers(forever=ANTHROPIC_OVERLOADED)
    try:
        error = _complete(_client("anthropic", server, monkeypatch, num_retries=0, rate_limit_wait=2))
    finally:
        server.close()
    # a backoff of about 1 s fits in 2 s, the next (about 2 s) does not
    assert isinstance(error, ModelCallError) and error.kind == "infra"
    assert server.requests == 2 and "overloaded" in error.message and "rate_limit_wait=2" in error.message


@pytest.mark.parametrize("provider,answer", [("openai", OPENAI_INSUFFICIENT_QUOTA), ("anthropic", ANTHROPIC_CREDIT),
                                             ("gemini", GEMINI_PER_DAY)],
                         ids=["openai-insufficient-quota", "anthropic-credit", "gemini-per-day"])
def test_a_spent_quota_stops_the_model_at_once_with_one_line(provider, answer, monkeypatch):
    """rate_limit_wait=3 would wait out a rate limit (1 s, then 2 s: 3 requests); a spent quota
    is not waited out: 1 request, an infra row (not the model's doing) that says why, and the
    next call of the model (another conversation) fails without reaching the provider."""
    server = ProviderAnswers(forever=answer)
    try:
        first = _complete(_client(provider, server, monkeypatch, num_retries=3, rate_limit_wait=3))
        requests = server.requests
        second = _complete(_client(provider, server, monkeypatch, num_retries=3, rate_limit_wait=3))
    finally:
        server.close()
    assert isinstance(first, ModelCallError) and first.kind == "infra", first
    assert requests == 1, requests
    assert "quota or spend cap is spent" in first.message and "--retry-errors" in first.message
    assert first.message.count("\n") == 0
    assert isinstance(second, ModelCallError) and second.kind == "infra" and server.requests == 1
    assert second.message == first.message


def test_a_spent_quota_in_a_run_fails_every_later_unit_fast_and_each_row_says_why(ray_local, tmp_path):
    """Four conversations one at a time, the agent's provider out of credit: one request
    reaches it (before: each conversation waited out rate_limit_wait, about 3 requests each),
    and every row is an infra row with the line."""
    from tauray.pipeline.config import SweepConfig
    from tauray.pipeline.driver import execute
    from tauray.results.tables.readers import conversations_df

    server = ProviderAnswers(forever=OPENAI_INSUFFICIENT_QUOTA)
    notes: list[str] = []
    try:
        cfg = SweepConfig.model_validate({
            "name": "spent", "models": {"a": {"model": "openai/gpt-4o-mini", "api_base": f"{server.base}/v1",
                                              "rate_limit_wait": 3, "num_retries": 0}},
            "agents": ["a"], "users": ["scripted"], "scenarios": [{"domain": "mock", "limit": 4}],
            "max_in_flight": 1})
        summary = execute(cfg, out=tmp_path / "run", probe=False, progress=False, notes=notes.append)
    finally:
        server.close()
    rows = conversations_df(tmp_path / "run")
    assert summary.rows == 4 and summary.infra_errors == 4
    assert server.requests == 1
    assert rows["error_message"].str.contains("quota or spend cap is spent").all()
    assert any("quota or spend cap is spent" in n for n in notes)
