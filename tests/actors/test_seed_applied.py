"""The seed goes only to providers that take one, and the conversation row says whether it went.

``deepinfra/…`` speaks the OpenAI protocol (so the local endpoint can answer it) but, in
litellm's table, takes no seed: the seed must be left out (the ``no-seed`` behaviour
refuses any request that carries one) and the row must say ``seed_applied=False``.
"""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.llm import ModelCallError, ModelClient, ModelSpec
from tests.units import make_units

MESSAGES = [{"role": "user", "content": "hello"}]
SCENARIO = "tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy"


def test_seed_left_out_where_the_provider_takes_none(endpoint, loop):
    taker = ModelClient(ModelSpec(model="openai/no-seed", api_base=endpoint.base_url, num_retries=0))
    with pytest.raises(ModelCallError, match="seed"):  # openai takes a seed: it is sent, this server refuses it
        loop.run_until_complete(taker.complete(MESSAGES, seed=5))
    assert loop.run_until_complete(taker.complete(MESSAGES)).seed_applied is None
    other = ModelClient(ModelSpec(model="deepinfra/no-seed", api_base=endpoint.base_url, num_retries=0))
    reply = loop.run_until_complete(other.complete(MESSAGES, seed=5))
    assert reply.content == "ready" and reply.seed_applied is False
    assert other.request.dropped == () and not other.request.seed


def _conversation(endpoint, agent_model: str, user_model: str):
    agent = {"model": agent_model} if "/" not in agent_model else {"model": agent_model, "api_base": endpoint.base_url}
    user = {"model": user_model} if "/" not in user_model else {"model": user_model, "api_base": endpoint.base_url}
    unit = make_units("t", [SCENARIO], 1, agent, user, max_steps=30)[0]
    return asyncio.run(run_conversation(unit, AgentHost(), UserSimHost())).conversation


@pytest.mark.parametrize("agent, user, expected", [
    ("openai/scripted-agent", "openai/scripted-user:2", True),
    ("deepinfra/scripted-agent", "openai/scripted-user:2", False),
    ("oracle", "scripted", None),
])
def test_row_records_whether_the_seed_was_applied(endpoint, agent, user, expected):
    row = _conversation(endpoint, agent, user)
    assert row.error_kind is None, row.error_message
    assert row.seed_applied is expected
