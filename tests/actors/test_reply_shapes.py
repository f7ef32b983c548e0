"""Every reply shape real servers send ends as its documented outcome (table in
tauray.actors.llm.replies): through real HTTP from the test endpoint's shape behaviours,
the model client and a side session executing the calls on a real phone."""

from __future__ import annotations

import asyncio
import json

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.llm import ModelClient, ModelSpec
from tauray.actors.policies import LLMPolicy
from tauray.actors.session import SideSession
from tauray.endpoint.shapes import AFTER_TOOL, PREAMBLE
from tauray.scenarios import domain_spec, get_scenario
from tests.units import make_units

SCENARIO = "tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy"


def _client(endpoint, shape: str) -> ModelClient:
    return ModelClient(ModelSpec(model=f"openai/{shape}", api_base=endpoint.base_url, num_retries=0))


def _user_session(endpoint, shape: str) -> SideSession:
    scenario = get_scenario(SCENARIO)
    state = domain_spec("telecom").fresh_side("user")
    return SideSession(scenario, "user", state, LLMPolicy(_client(endpoint, shape)), seed=1, run_id="r",
                       conversation_id="c")


def _step(loop, session: SideSession, rounds: int = 3):
    return loop.run_until_complete(session.step("Could you check your phone for me?", max_rounds=rounds,
                                                max_errors=5))


@pytest.mark.parametrize("shape", ["shape-args-null", "shape-args-empty", "shape-args-object"])
def test_null_empty_and_object_arguments_are_a_no_argument_call(endpoint, loop, shape):
    reply = loop.run_until_complete(_client(endpoint, shape).complete(
        [{"role": "user", "content": "hi"}], [{"type": "function", "function": {
            "name": "check_apn_settings", "description": "d", "parameters": {"type": "object", "properties": {}}}}]))
    assert [c.arguments for c in reply.tool_calls] == ["{}"]
    session = _user_session(endpoint, shape)
    result = _step(loop, session)
    events = [e for r in result.rounds for e in r.events]
    assert len(events) == 1 and not events[0].malformed and not events[0].outcome.error, events
    assert session.counters["malformed_tool_calls"] == 0 and session.counters["tool_calls"] == 1
    assert result.kind == "text" and result.rounds[-1].message.content == AFTER_TOOL


def test_missing_ids_get_unique_generated_ids_and_each_result_answers_one_call(endpoint, loop):
    session = _user_session(endpoint, "shape-no-ids")
    result = _step(loop, session)
    calls = json.loads(result.rounds[0].message.tool_calls)
    ids = [c["id"] for c in calls]
    assert len(ids) == 2 and all(ids) and len(set(ids)) == 2
    answered = [m["tool_call_id"] for m in session.view if m["role"] == "tool"]
    assert answered == ids


def test_parallel_calls_run_one_at_a_time_in_order(endpoint, loop):
    session = _user_session(endpoint, "shape-parallel")
    result = _step(loop, session)
    events = [e for r in result.rounds for e in r.events]
    assert [e.message.tool_call_id for e in events] == ["call_shape_0", "call_shape_1", "call_shape_2"]
    assert session.counters["tool_calls"] == 3 and result.kind == "text"


def test_text_beside_tool_calls_stays_in_the_speakers_transcript(endpoint, loop):
    session = _user_session(endpoint, "shape-text-and-tools")
    result = _step(loop, session)
    first = next(m for m in session.view if m["role"] == "assistant")
    assert first["content"] == PREAMBLE and first["tool_calls"]
    assert result.kind == "text" and result.rounds[-1].message.content == AFTER_TOOL  # what the other side hears


@pytest.mark.parametrize("shape, reason", [("shape-no-choices", "no_choices"), ("shape-empty-content", "no_content"),
                                           ("shape-null-content", "no_content")])
def test_empty_replies_are_counted_with_a_reason_and_the_conversation_goes_on(endpoint, loop, shape, reason):
    reply = loop.run_until_complete(_client(endpoint, shape).complete([{"role": "user", "content": "hi"}]))
    assert reply.content == "" and reply.tool_calls == [] and reply.empty == reason
    session = _user_session(endpoint, shape)
    result = _step(loop, session)
    assert result.kind == "text" and result.rounds[-1].message.content == ""
    assert session.counters["empty_replies"] == 1


@pytest.mark.parametrize("shape", ["shape-no-choices", "shape-empty-content"])
def test_a_conversation_with_empty_replies_is_a_row_not_an_internal_error(endpoint, shape):
    agent = {"model": f"openai/{shape}", "api_base": endpoint.base_url}
    unit = make_units("t", [SCENARIO], 1, agent, {"model": "scripted"}, max_steps=6)[0]
    row = asyncio.run(run_conversation(unit, AgentHost(), UserSimHost())).conversation
    assert row.error_kind is None, row.error_message
    assert row.empty_replies == row.agent_llm_calls > 0
    assert json.dumps(row.model_dump(mode="json"))  # a plain row


def test_ids_and_arguments_normalised_whatever_the_transport_passed_on():
    """litellm fills missing ids on the OpenAI path but not on every path; the client must not rely on it."""
    from tauray.actors.llm.replies import tool_calls_of

    message = {"tool_calls": [
        {"function": {"name": "a", "arguments": None}},
        {"id": "", "function": {"name": "b", "arguments": {"x": 1}}},
        {"id": "call_0", "function": {"name": "c", "arguments": " "}},
        {"id": "call_0", "function": {"name": "d", "arguments": '{"y": 2}'}},
        {"id": "call_9", "function": {"name": "e", "arguments": "{broken"}},
    ]}
    calls = tool_calls_of(message)
    ids = [c.id for c in calls]
    assert all(ids) and len(set(ids)) == 5 and ids[2] == "call_0" and ids[4] == "call_9"
    assert [c.arguments for c in calls] == ["{}", '{"x": 1}', "{}", '{"y": 2}', "{broken"]


def test_the_servers_fingerprint_is_kept_on_the_reply():
    """A llama.cpp deployment of tauray's names the grammar that constrained the reply in
    system_fingerprint; the judge's rows carry it as reply_fingerprint."""
    from tauray.actors.llm.replies import reply_of

    response = {"choices": [{"message": {"role": "assistant", "content": '{"verdict": "pass"}'},
                             "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                "system_fingerprint": "llama.cpp grammar=json-schema:abc123"}
    reply = reply_of(response, latency_s=0.1, model="openai/x", cost_usd=None, seed_applied=None)
    assert reply.fingerprint == "llama.cpp grammar=json-schema:abc123"
    assert reply_of({**response, "system_fingerprint": None}, latency_s=0.1, model="openai/x", cost_usd=None,
                    seed_applied=None).fingerprint is None
