"""The local test endpoint, driven through real litellm calls over HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import litellm
import pytest
from pydantic import ValidationError

from tauray.endpoint import (
    ALL_FAULT_KINDS,
    EndpointConfig,
    EndpointStartError,
    RunningEndpoint,
    start_endpoint,
)
from tauray.endpoint.behaviours import (
    BEHAVIOURS,
    STOP_TOKEN,
    arguments_for,
    scripted_agent,
    scripted_user,
)


def _tool(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties or {}, "required": required or []}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}


TOOLS = [
    _tool("end_conversation"),
    _tool("transfer_to_human_agents", {"summary": {"type": "string"}}, ["summary"]),
    _tool("update_plan", {"plan_id": {"type": "string"}}, ["plan_id"]),
    _tool(
        "get_customer_by_phone",
        {"phone_number": {"type": "string"}, "verbose": {"type": "boolean"}},
        ["phone_number"],
    ),
    _tool(
        "check_network_status",
        {
            "region": {"type": "string", "enum": ["north", "south"]},
            "limit": {"type": "integer"},
            "threshold": {"type": "number"},
            "strict": {"type": "boolean"},
            "filters": {"type": "object"},
            "lines": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
        },
        ["region", "limit", "threshold", "strict", "filters", "lines"],
    ),
]
EXPECTED_ARGS = {
    "get_customer_by_phone": {"phone_number": "unknown"},
    "check_network_status": {
        "region": "north",
        "limit": 1,
        "threshold": 1.0,
        "strict": True,
        "filters": {},
        "lines": [],
    },
}
AGENT_TURN = [
    {"role": "system", "content": "You are a telecom support agent."},
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "My phone shows no service since this morning."},
]


@pytest.fixture(scope="module")
def endpoints():
    """All endpoints this module needs, started side by side to keep the module fast."""
    configs = {
        "plain": EndpointConfig(user_turns=2),
        "latency": EndpointConfig(latency=0.3),
        "concurrent": EndpointConfig(latency=0.5),
        **{f"fault:{kind}": EndpointConfig(fault_rate=1.0, fault_kinds=[kind], timeout_hang_s=3.0) for kind in ALL_FAULT_KINDS},
    }
    with ThreadPoolExecutor(len(configs)) as pool:
        started = dict(zip(configs, pool.map(start_endpoint, configs.values())))
    yield started
    for endpoint in started.values():
        endpoint.stop()


def _complete(loop, endpoint: RunningEndpoint, model: str, messages: list[dict[str, Any]], **kwargs: Any):
    call = litellm.acompletion(
        model=f"openai/{model}",
        api_base=endpoint.base_url,
        api_key="test",
        messages=messages,
        num_retries=0,
        **kwargs,
    )
    return loop.run_until_complete(call)


# --------------------------------------------------------------------------- agent


@pytest.mark.slow
def test_agent_calls_a_lookup_tool_with_schema_arguments(loop, endpoints):
    response = _complete(loop, endpoints["plain"], "scripted-agent", AGENT_TURN, tools=TOOLS)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls
    assert len(calls) == 1
    name = calls[0].function.name
    assert name in EXPECTED_ARGS
    assert json.loads(calls[0].function.arguments) == EXPECTED_ARGS[name]
    assert calls[0].id and calls[0].type == "function"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0

    again = _complete(loop, endpoints["plain"], "scripted-agent", AGENT_TURN, tools=TOOLS)
    assert again.choices[0].message.tool_calls[0].function.name == name  # deterministic


@pytest.mark.slow
def test_agent_summarises_after_tool_result_and_greets_first(loop, endpoints):
    call = {"id": "call_1", "type": "function", "function": {"name": "get_customer_by_phone", "arguments": "{}"}}
    after_tool = AGENT_TURN + [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"name": "Ann"}'},
    ]
    response = _complete(loop, endpoints["plain"], "scripted-agent", after_tool, tools=TOOLS)
    assert response.choices[0].finish_reason == "stop"
    assert not response.choices[0].message.tool_calls
    assert response.choices[0].message.content

    first = AGENT_TURN[:1] + AGENT_TURN[2:]  # no assistant message yet
    greeting = _complete(loop, endpoints["plain"], "scripted-agent", first, tools=TOOLS)
    assert not greeting.choices[0].message.tool_calls
    assert greeting.choices[0].message.content


def test_agent_never_ends_or_transfers_on_its_own():
    body = {"model": "scripted-agent", "messages": AGENT_TURN, "tools": TOOLS[:2]}
    reply = scripted_agent(body, EndpointConfig())
    assert reply.finish_reason == "stop" and "tool_calls" not in reply.message
    # Without a get_/check_ tool it falls back to the first allowed one.
    body["tools"] = TOOLS[:3]
    assert scripted_agent(body, EndpointConfig()).message["tool_calls"][0]["function"]["name"] == "update_plan"


@pytest.mark.slow
def test_quiet_agent_only_talks(loop, endpoints):
    response = _complete(loop, endpoints["plain"], "scripted-agent-quiet", AGENT_TURN, tools=TOOLS)
    assert not response.choices[0].message.tool_calls
    assert response.choices[0].message.content


def test_arguments_cover_optional_and_nullable_schemas():
    fn = {
        "name": "get_x",
        "parameters": {
            "properties": {"a": {"anyOf": [{"type": "null"}, {"type": "integer"}]}, "b": {"type": ["string", "null"]}},
            "required": ["a", "b"],
        },
    }
    assert arguments_for(fn) == {"a": 1, "b": "unknown"}


# --------------------------------------------------------------------------- user


def _converse_as_user(loop, endpoint, model: str, max_turns: int = 10) -> list[str]:
    """Play the agent against the scripted user; its own words come back as assistant messages."""
    messages = [
        {"role": "system", "content": "You are a customer."},
        {"role": "user", "content": "Hi! How can I help you today?"},
    ]
    replies = []
    for _ in range(max_turns):
        content = _complete(loop, endpoint, model, messages).choices[0].message.content
        replies.append(content)
        if STOP_TOKEN in content:
            break
        messages += [{"role": "assistant", "content": content}, {"role": "user", "content": "Could you tell me more?"}]
    return replies


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "normal_replies"),
    [("scripted-user", 2), ("scripted-user:4", 4), ("scripted-user:0", 0), ("scripted-user-impatient", 1)],
)
def test_user_stops_after_its_turns(loop, endpoints, model, normal_replies):
    # The "plain" endpoint is configured with user_turns=2.
    replies = _converse_as_user(loop, endpoints["plain"], model)
    assert len(replies) == normal_replies + 1
    assert all(STOP_TOKEN not in r and r for r in replies[:-1])
    assert replies[-1].endswith(STOP_TOKEN)


def test_user_ignores_tools():
    body = {"model": "scripted-user", "messages": AGENT_TURN[:2], "tools": TOOLS}
    reply = scripted_user(body, EndpointConfig())
    assert reply.message["content"] and "tool_calls" not in reply.message


@pytest.mark.slow
def test_judge_returns_json_verdict(loop, endpoints):
    response = _complete(loop, endpoints["plain"], "judge-json", [{"role": "user", "content": "Judge this."}])
    assert json.loads(response.choices[0].message.content)["verdict"] == "pass"


# --------------------------------------------------------------------------- errors and faults


@pytest.mark.slow
def test_unknown_model_is_a_not_found_error_naming_it(loop, endpoints):
    with pytest.raises(litellm.NotFoundError) as info:
        _complete(loop, endpoints["plain"], "no-such-behaviour", AGENT_TURN)
    assert "no-such-behaviour" in str(info.value)
    assert "scripted-agent" in str(info.value)  # lists what is available


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "error"),
    [("429", litellm.RateLimitError), ("500", litellm.InternalServerError), ("timeout", litellm.Timeout)],
)
def test_error_faults_raise_the_matching_litellm_error(loop, endpoints, kind, error):
    endpoint = endpoints[f"fault:{kind}"]
    endpoint.reset_stats()
    with pytest.raises(error):
        _complete(loop, endpoint, "scripted-agent", AGENT_TURN, timeout=1.0)
    stats = endpoint.stats()
    assert stats["faults"] == {kind: 1}
    assert stats["requests"] == 1  # num_retries=0 really means one request


@pytest.mark.slow
def test_malformed_tool_json_fault(loop, endpoints):
    endpoint = endpoints["fault:malformed_tool_json"]
    endpoint.reset_stats()
    response = _complete(loop, endpoint, "scripted-agent", AGENT_TURN, tools=TOOLS)
    call = response.choices[0].message.tool_calls[0]
    assert call.function.name in EXPECTED_ARGS
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.function.arguments)
    # Without tools there is nothing to break, so the fault becomes an empty reply.
    plain = _complete(loop, endpoint, "scripted-agent", AGENT_TURN)
    assert not plain.choices[0].message.content and not plain.choices[0].message.tool_calls
    assert endpoint.stats()["faults"] == {"malformed_tool_json": 1, "empty": 1}


@pytest.mark.slow
def test_empty_fault(loop, endpoints):
    response = _complete(loop, endpoints["fault:empty"], "scripted-agent", AGENT_TURN, tools=TOOLS)
    message = response.choices[0].message
    assert not message.content and not message.tool_calls


# --------------------------------------------------------------------------- latency, concurrency, stats


@pytest.mark.slow
def test_latency_is_applied(loop, endpoints):
    start = time.perf_counter()
    _complete(loop, endpoints["latency"], "scripted-agent", AGENT_TURN)
    assert time.perf_counter() - start >= 0.3


@pytest.mark.slow
def test_requests_run_concurrently(loop, endpoints):
    endpoint = endpoints["concurrent"]
    endpoint.reset_stats()

    async def many():
        return await asyncio.gather(
            *(
                litellm.acompletion(
                    model="openai/scripted-user",
                    api_base=endpoint.base_url,
                    api_key="test",
                    messages=[{"role": "user", "content": f"Hello number {i}"}],
                    num_retries=0,
                )
                for i in range(100)
            )
        )

    responses = loop.run_until_complete(many())
    assert len(responses) == 100 and all(r.choices[0].message.content for r in responses)
    # Counted by the server, not timed: 100 requests that each wait 0.5 s are in flight together
    # (a clock would say so only on an idle machine).
    peak = endpoint.stats()["peak_in_flight"]
    assert peak >= 50, f"at most {peak} of 100 requests were in flight at once; they are not concurrent"
    stats = endpoint.stats()
    assert stats["by_behaviour"] == {"scripted-user": 100} and stats["in_flight"] == 0


@pytest.mark.slow
def test_stats_count_and_reset(loop, endpoints):
    endpoint = endpoints["plain"]
    endpoint.reset_stats()
    assert endpoint.stats()["requests"] == 0
    _complete(loop, endpoint, "scripted-agent", AGENT_TURN)
    _complete(loop, endpoint, "judge-json", AGENT_TURN)
    with pytest.raises(litellm.NotFoundError):
        _complete(loop, endpoint, "missing", AGENT_TURN)
    stats = endpoint.stats()
    assert stats["requests"] == 3
    assert stats["by_behaviour"] == {"scripted-agent": 1, "judge-json": 1}
    assert stats["rejected"] == 1
    assert stats["faults"] == {}


# --------------------------------------------------------------------------- config and lifecycle


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com", ""])
def test_config_refuses_non_loopback_hosts(host):
    with pytest.raises(ValidationError, match="loopback"):
        EndpointConfig(host=host)
    with pytest.raises(ValidationError):
        start_endpoint(host=host)


def test_config_accepts_loopback_and_is_frozen():
    assert EndpointConfig(host="localhost").host == "127.0.0.1"
    assert EndpointConfig(host="::1").host == "::1"
    config = EndpointConfig()
    with pytest.raises(ValidationError):
        config.latency = 1.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        EndpointConfig(fault_kinds=["teapot"])
    with pytest.raises(ValidationError):
        EndpointConfig(timeout_hang_s=10_000)
    assert set(BEHAVIOURS) >= {"scripted-agent", "scripted-agent-quiet", "scripted-user", "scripted-user-impatient", "judge-json"}


@pytest.mark.slow
def test_endpoint_listens_on_loopback_and_stops(endpoints):
    endpoint = endpoints["plain"]
    assert endpoint.base_url == f"http://127.0.0.1:{endpoint.port}/v1"
    # A taken port gives a start error that carries the child's stderr.
    with pytest.raises(EndpointStartError, match="cannot listen"):
        start_endpoint(port=endpoint.port, start_timeout=15)

    with start_endpoint() as temporary:
        assert temporary.running
    assert not temporary.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", temporary.port), timeout=1).close()
