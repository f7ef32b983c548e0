"""ModelSpec, readiness checks and ModelClient, over real HTTP to the local test endpoint."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import ValidationError

from tauray.actors.llm import (
    ModelCallError,
    ModelClient,
    ModelConfigError,
    ModelReply,
    ModelSpec,
    check_model_ready,
    get_client,
    scrub,
)
from tauray.endpoint import EndpointConfig, RunningEndpoint, start_endpoint

SECRET = "sk-test-SECRET-1234567890abcdef"

AGENT_TURN = [
    {"role": "system", "content": "You are a telecom support agent."},
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "My phone shows no service since this morning."},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_customer_by_phone",
            "description": "Look a customer up by phone number.",
            "parameters": {
                "type": "object",
                "properties": {"phone_number": {"type": "string"}},
                "required": ["phone_number"],
            },
        },
    }
]


@pytest.fixture(scope="module")
def endpoints():
    """Every endpoint the module needs, started side by side."""
    configs = {
        "plain": EndpointConfig(),
        "slow": EndpointConfig(latency=0.3),
        "malformed": EndpointConfig(fault_rate=1.0, fault_kinds=["malformed_tool_json"]),
        "empty": EndpointConfig(fault_rate=1.0, fault_kinds=["empty"]),
        "429": EndpointConfig(fault_rate=1.0, fault_kinds=["429"]),
        "500": EndpointConfig(fault_rate=1.0, fault_kinds=["500"]),
        # Seed 4 makes the first request fail and the second succeed.
        "429-half": EndpointConfig(fault_rate=0.5, fault_kinds=["429"], fault_seed=4),
    }
    with ThreadPoolExecutor(len(configs)) as pool:
        started = dict(zip(configs, pool.map(start_endpoint, configs.values())))
    yield started
    for endpoint in started.values():
        endpoint.stop()


def _spec(endpoint: RunningEndpoint, model: str = "openai/scripted-agent", **fields: Any) -> ModelSpec:
    return ModelSpec(model=model, api_base=endpoint.base_url, **fields)


def _call(loop, spec: ModelSpec, messages=AGENT_TURN, tools=TOOLS, **kwargs: Any) -> ModelReply:
    client = ModelClient(spec)
    try:
        return loop.run_until_complete(client.complete(messages, tools, **kwargs))
    finally:
        loop.run_until_complete(client.aclose())


def _call_error(loop, spec: ModelSpec, **kwargs: Any) -> ModelCallError:
    with pytest.raises(ModelCallError) as info:
        _call(loop, spec, **kwargs)
    return info.value


# --------------------------------------------------------------------------- spec


def test_spec_defaults_label_and_parse():
    spec = ModelSpec.parse("openai/gpt-4o-mini")
    assert (spec.temperature, spec.concurrency, spec.num_retries, spec.fallbacks) == (0.0, 64, 3, [])
    assert not spec.is_reference and spec.label == "openai/gpt-4o-mini"
    assert ModelSpec.parse({"model": "oracle"}).label == "oracle (reference policy)"
    assert ModelSpec.parse('{"model": "scripted", "seed": 3}').is_reference
    assert ModelSpec.parse(spec.model_dump_json()) == spec
    with pytest.raises(ValidationError):
        ModelSpec(model="openai/x", unknown_field=1)
    with pytest.raises(ValidationError):
        ModelSpec(model="openai/x", extra_params={"api_key": "k"})
    with pytest.raises(ValidationError):
        ModelSpec(model="openai/x", fallbacks=["openai/x"])


@pytest.mark.parametrize("value", ["sk-abcdef0123456789", "MY KEY", "A" * 101])
def test_spec_rejects_key_in_api_key_env_without_echoing_it(value):
    with pytest.raises(ValidationError) as info:
        ModelSpec(model="openai/x", api_key_env=value)
    assert value not in str(info.value)
    assert ModelSpec(model="openai/x", api_key_env="OPENAI_API_KEY").api_key_env == "OPENAI_API_KEY"


# --------------------------------------------------------------------------- readiness


def test_check_unknown_provider_names_model():
    with pytest.raises(ModelConfigError, match="nosuchprovider/foo"):
        check_model_ready(ModelSpec(model="nosuchprovider/foo"))


def test_check_missing_key_env_names_variable(monkeypatch):
    monkeypatch.delenv("TAURAY_TEST_MISSING_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="TAURAY_TEST_MISSING_KEY") as info:
        check_model_ready(ModelSpec(model="openai/gpt-4o-mini", api_key_env="TAURAY_TEST_MISSING_KEY"))
    assert "openai/gpt-4o-mini" in str(info.value)


def test_check_provider_without_standard_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        check_model_ready(ModelSpec(model="anthropic/claude-3-5-haiku-20241022"))


@pytest.mark.slow
def test_check_local_endpoint_needs_no_key(endpoints, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    check_model_ready(_spec(endpoints["plain"]))
    check_model_ready(ModelSpec(model="scripted"))


def test_key_cannot_follow_a_fallback_to_another_provider(monkeypatch):
    monkeypatch.setenv("TAURAY_TEST_KEY", SECRET)
    spec = ModelSpec(model="openai/gpt-4o-mini", api_key_env="TAURAY_TEST_KEY", fallbacks=["anthropic/claude-3-5-haiku-20241022"])
    with pytest.raises(ModelConfigError, match="another provider"):
        check_model_ready(spec)
    with pytest.raises(ModelConfigError):
        ModelClient(spec)


def test_reference_policy_has_no_client():
    with pytest.raises(ModelConfigError, match="reference policy"):
        ModelClient(ModelSpec(model="oracle"))


# --------------------------------------------------------------------------- replies


@pytest.mark.slow
def test_tool_call_reply(loop, endpoints):
    reply = _call(loop, _spec(endpoints["plain"]))
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call.name == "get_customer_by_phone" and call.id
    assert isinstance(json.loads(call.arguments), dict)
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.latency_s > 0
    assert reply.finish_reason == "tool_calls"
    assert reply.model == "openai/scripted-agent"
    assert reply.cost_usd is None  # litellm has no price for a test behaviour


@pytest.mark.slow
def test_an_unpriced_models_reply_skips_litellms_zero_cost_scan(loop, endpoints, monkeypatch):
    # litellm's Router files a ~200-key empty price entry for a deployment it cannot price and,
    # after every reply, scans all of it for a rate (twice a call, about 2.5 ms of CPU: the largest
    # part of what tauray's hosts spent over bare litellm in `bench engine`). Explicit zero rates
    # on the deployment end that scan at its first test; the reply's cost stays unknown (None).
    logging_module = pytest.importorskip("litellm.litellm_core_utils.litellm_logging")
    if not hasattr(logging_module, "diagnose_zero_cost"):
        pytest.skip("this litellm has no zero-cost diagnostic")
    from litellm.litellm_core_utils.llm_cost_calc import zero_cost_diagnostic

    scans = []
    real = zero_cost_diagnostic._declares_a_rate
    monkeypatch.setattr(zero_cost_diagnostic, "_declares_a_rate", lambda entry: scans.append(1) or real(entry))
    reply = _call(loop, _spec(endpoints["plain"]))
    assert reply.content or reply.tool_calls
    assert reply.cost_usd is None and scans == []


@pytest.mark.slow
def test_text_reply_without_tools(loop, endpoints):
    reply = _call(loop, _spec(endpoints["plain"]), tools=None)
    assert reply.content and not reply.tool_calls


@pytest.mark.slow
def test_malformed_tool_json_is_returned_raw(loop, endpoints):
    reply = _call(loop, _spec(endpoints["malformed"]))
    assert len(reply.tool_calls) == 1
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.tool_calls[0].arguments)


@pytest.mark.slow
def test_empty_reply_is_not_an_error(loop, endpoints):
    reply = _call(loop, _spec(endpoints["empty"]))
    assert reply.content == "" and reply.tool_calls == []


@pytest.mark.slow
def test_fallback_answers_when_model_fails(loop, endpoints):
    spec = _spec(endpoints["plain"], model="openai/no-such-behaviour", fallbacks=["openai/scripted-agent-quiet"])
    reply = _call(loop, spec)
    assert reply.model == "openai/scripted-agent-quiet" and reply.content


# --------------------------------------------------------------------------- errors and retries


@pytest.mark.slow
def test_transient_fault_is_retried_by_router_then_infra(loop, endpoints):
    endpoint = endpoints["500"]
    endpoint.reset_stats()
    error = _call_error(loop, _spec(endpoint, num_retries=2))
    assert error.kind == "infra"
    assert error.status_code == 500
    stats = endpoint.stats()
    assert stats["requests"] == 3 and stats["faults"] == {"500": 3}


@pytest.mark.slow
@pytest.mark.parametrize("wait", [0.0, 1.4])
def test_a_429_is_waited_out_by_the_client_not_the_router_then_infra(loop, endpoints, wait):
    """The Router does not retry a 429 (num_retries=2 is for other faults); the client waits
    it out (no retry-after here: backoff of 1 s, then 2 s) until rate_limit_wait is spent."""
    endpoint = endpoints["429"]
    endpoint.reset_stats()
    error = _call_error(loop, _spec(endpoint, num_retries=2, rate_limit_wait=wait))
    assert error.kind == "infra" and error.status_code == 429
    stats = endpoint.stats()
    expected = 1 if wait == 0 else 2  # one backoff (0.75-1.25 s) fits in 1.4 s, a second (1.5-2.5 s more) does not
    assert stats["requests"] == expected and stats["faults"] == {"429": expected}


@pytest.mark.slow
def test_intermittent_429_eventually_succeeds(loop, endpoints):
    endpoint = endpoints["429-half"]
    endpoint.reset_stats()
    reply = _call(loop, _spec(endpoint, num_retries=5))
    assert reply.tool_calls
    stats = endpoint.stats()
    faults = stats["faults"].get("429", 0)
    assert faults >= 1 and stats["requests"] == faults + 1


@pytest.mark.slow
def test_unknown_model_is_a_model_error_and_not_retried(loop, endpoints):
    endpoint = endpoints["plain"]
    endpoint.reset_stats()
    error = _call_error(loop, _spec(endpoint, model="openai/no-such-behaviour", num_retries=3))
    assert error.kind == "model" and error.status_code == 404
    assert "openai/no-such-behaviour" in error.message
    assert endpoint.stats()["requests"] == 1
    copy = pickle.loads(pickle.dumps(error))  # crosses actor boundaries intact
    assert (copy.kind, copy.message, copy.status_code) == ("model", error.message, 404)


# --------------------------------------------------------------------------- secrets


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["500", "unknown-model"])
def test_secret_never_leaks(loop, endpoints, monkeypatch, caplog, capfd, failure):
    monkeypatch.setenv("TAURAY_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    if failure == "500":
        spec = _spec(endpoints["500"], api_key_env="TAURAY_TEST_KEY", num_retries=0)
    else:
        spec = _spec(endpoints["plain"], model="openai/no-such-behaviour", api_key_env="TAURAY_TEST_KEY")
    check_model_ready(spec)
    error = _call_error(loop, spec)
    out, err = capfd.readouterr()
    for text in (str(error), repr(error), error.message, repr(spec), spec.model_dump_json(), caplog.text, out, err):
        assert SECRET not in text
    assert "SECRET-1234567890" not in caplog.text + out + err


def test_scrub_masks_credential_shapes():
    text = scrub(f"Authorization: Bearer abc.def-123 key={SECRET} and raw {SECRET}", SECRET)
    assert SECRET not in text and "abc.def-123" not in text
    assert scrub("api_key='hunter2hunter2'") == "api_key='[REDACTED]'"


# --------------------------------------------------------------------------- concurrency and cache


@pytest.mark.slow
def test_concurrency_bound(loop, endpoints):
    client = ModelClient(_spec(endpoints["slow"], concurrency=4))

    async def run() -> float:
        started = time.perf_counter()
        replies = await asyncio.gather(*(client.complete(AGENT_TURN, TOOLS) for _ in range(12)))
        assert all(r.tool_calls for r in replies)
        return time.perf_counter() - started

    try:
        elapsed = loop.run_until_complete(run())
    finally:
        loop.run_until_complete(client.aclose())
    # 12 calls, 4 at a time, 0.3 s each: three waves; unbounded would take about 0.3 s.
    assert 0.9 <= elapsed < 3.0


@pytest.mark.slow
def test_get_client_caches_per_spec(endpoints):
    spec = _spec(endpoints["plain"])
    client = get_client(spec)
    assert get_client(ModelSpec.parse(spec.model_dump_json())) is client
    assert get_client(_spec(endpoints["plain"], seed=7)) is not client


# --------------------------------------------------------------------------- executor


def _in_litellm(fn):
    fn.__module__ = "litellm.fake"  # what the executor recognises litellm's functions by
    return fn


def test_litellm_request_building_runs_in_place_other_jobs_in_threads():
    import contextvars
    import functools
    import threading

    from tauray.actors.llm import LitellmInlineExecutor

    executor = LitellmInlineExecutor()

    @_in_litellm
    def build(x: int, **kwargs) -> tuple[int, int]:
        return x, threading.get_ident()

    @_in_litellm
    def broken(**kwargs) -> None:
        raise ValueError("boom")

    def wrapped(fn, *args, model="openai/gpt-4o-mini"):  # litellm's shape: partial(Context.run, partial(fn, ...))
        return functools.partial(contextvars.copy_context().run, functools.partial(fn, *args, model=model))

    try:
        assert executor.submit(wrapped(build, 7)).result() == (7, threading.get_ident())
        with pytest.raises(ValueError, match="boom"):
            executor.submit(wrapped(broken)).result()
        # anything else (not litellm, or not in litellm's shape) goes to a pool thread
        assert executor.submit(threading.get_ident).result(timeout=5) != threading.get_ident()
        assert executor.submit(build, 1).result(timeout=5)[1] != threading.get_ident()
        # a provider not known to build requests without I/O goes to a thread too
        assert executor.submit(wrapped(build, 2, model="vertex_ai/gemini")).result(timeout=5)[1] != threading.get_ident()
    finally:
        executor.shutdown()


@pytest.mark.slow
def test_client_installs_inline_executor_and_litellm_builds_on_the_loop_thread(loop, endpoints, monkeypatch):
    import functools
    import threading

    import litellm.main

    from tauray.actors.llm import LitellmInlineExecutor

    threads: list[int] = []
    original = litellm.main.completion

    @functools.wraps(original)
    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    monkeypatch.setattr(litellm.main, "completion", spy)

    async def main() -> int:
        client = ModelClient(_spec(endpoints["plain"]))
        try:
            reply = await client.complete(AGENT_TURN, TOOLS)
        finally:
            await client.aclose()
        assert reply.tool_calls
        assert isinstance(asyncio.get_running_loop()._default_executor, LitellmInlineExecutor)
        return threading.get_ident()

    loop_thread = loop.run_until_complete(main())
    assert threads and set(threads) == {loop_thread}
