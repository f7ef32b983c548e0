"""The writing scripted behaviours: they read the reference steps the way each runner
writes them, and through the real engine (litellm over HTTP to the endpoint) they
solve telecom tasks with writes and syncs on both sides."""

from __future__ import annotations

import asyncio
import json

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, OpenRequest, UserSimHost
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.policies import parse_phone_request
from tauray.endpoint.writers import (
    CLOSING,
    NoReferenceSteps,
    reference_steps,
    scripted_agent_writes,
    scripted_user_writes,
)
from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.prompts import reference_steps_prompt
from tests.units import make_units


def _both_sides_write(limit: int = 3) -> list[str]:
    names = []
    for e in select_scenarios(domain="telecom", split="small"):
        s = get_scenario(e.name)
        if {a.side for a in s.reference_actions} == {"agent", "user"} and any(
                a.arguments and a.side == "agent" for a in s.reference_actions):
            names.append(e.name)
    assert names, "the small split has tasks with agent and phone actions"
    return names[:limit]


def _expected(scenario) -> list[tuple[str, str, dict]]:
    return [(a.side, a.name, a.arguments) for a in scenario.reference_actions]


def test_reads_taurays_steps():
    s = get_scenario(_both_sides_write()[0])
    prompt = s.agent_prompt + "\n\n" + reference_steps_prompt(s.reference_actions)
    assert reference_steps(prompt, {}) == _expected(s)


def test_reads_tau2s_ground_truth_agent_prompt():
    """τ²'s own ground-truth agent writes the steps as ``name(key=value)``: arguments come
    back typed (the float gb_amount too), sides from the tools offered."""
    from tau2.agent.llm_agent import LLMGTAgent
    from tau2.registry import registry

    s = get_scenario(_both_sides_write()[0])
    env = registry.get_env_constructor("telecom")()
    task = next(t for t in registry.get_tasks_loader("telecom_full")() if t.id == s.upstream_id)
    agent = LLMGTAgent(tools=env.get_tools(), domain_policy=env.get_policy(), task=task, llm="x")
    offered = {t.openai_schema["function"]["name"]: t.openai_schema["function"] for t in env.get_tools()}
    assert reference_steps(agent.system_prompt, offered) == _expected(s)


def test_agent_follows_the_steps_one_per_reply_then_closes():
    s = get_scenario(_both_sides_write()[0])
    tools = [t.openai() for t in s.agent_tools]
    messages = [{"role": "system", "content": s.agent_prompt + "\n\n" + reference_steps_prompt(s.reference_actions)},
                {"role": "assistant", "content": "Hello, how can I help?"}, {"role": "user", "content": "Help."}]
    for side, name, arguments in _expected(s):
        reply = scripted_agent_writes({"messages": messages, "tools": tools}, None).message
        if side == "agent":
            call = reply["tool_calls"][0]
            assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (name, arguments)
            messages += [reply, {"role": "tool", "tool_call_id": call["id"], "content": "ok"}]
        else:
            assert parse_phone_request(reply["content"]) == (name, json.dumps(arguments))
            messages += [reply, {"role": "user", "content": "Done. My phone now shows: ok"}]
    assert scripted_agent_writes({"messages": messages, "tools": tools}, None).message["content"] == CLOSING
    with pytest.raises(NoReferenceSteps):
        scripted_agent_writes({"messages": messages[1:], "tools": tools}, None)


def test_user_performs_the_requested_phone_action_and_reports_it():
    phone = [{"type": "function", "function": {"name": "toggle_roaming", "parameters": {"type": "object"}}}]
    ask = "Could you toggle roaming?\n(phone action: toggle_roaming {})"
    view = [{"role": "system", "content": "customer"}, {"role": "user", "content": "Hello"}]
    opening = scripted_user_writes({"messages": view, "tools": phone}, None).message
    assert opening["content"] and "###STOP###" not in opening["content"]
    view += [opening, {"role": "user", "content": ask}]
    call = scripted_user_writes({"messages": view, "tools": phone}, None).message["tool_calls"][0]
    assert call["function"]["name"] == "toggle_roaming"
    view += [{"role": "assistant", "content": None, "tool_calls": [call]},
             {"role": "tool", "tool_call_id": call["id"], "content": "Roaming is ON"}]
    assert "Roaming is ON" in scripted_user_writes({"messages": view, "tools": phone}, None).message["content"]
    view += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "All done, anything else?"}]
    assert scripted_user_writes({"messages": view, "tools": phone}, None).message["content"].endswith("###STOP###")


def test_through_the_engine_every_conversation_writes_syncs_and_succeeds(endpoint):
    names = _both_sides_write()
    agent = {"model": "openai/scripted-agent-writes", "api_base": endpoint.base_url, "reference_steps": True}
    user = {"model": "openai/scripted-user-writes", "api_base": endpoint.base_url}
    units = make_units("w", names, 1, agent, user)
    agent_host, user_host = AgentHost(), UserSimHost()

    async def main():
        return await asyncio.gather(*(run_conversation(u, agent_host, user_host) for u in units))

    for r in asyncio.run(main()):
        c = r.conversation
        s = get_scenario(c.scenario)
        assert c.termination_reason == "user_stop", c.error_message
        assert c.success and c.action_match, c.success_reason
        writes = [a for a in r.actions if a.kind == "tool_call" and a.is_write]
        assert {a.side for a in writes} == {"agent", "user"}
        assert any(a.kind == "sync" and a.result != "sync after init" for a in r.actions)
        phone_steps = sum(a.side == "user" for a in s.reference_actions)
        # agent: one reply per step and a closing; user: opening, a call and a report per phone step, stop
        assert c.agent_llm_calls == len(s.reference_actions) + 1
        assert c.user_llm_calls == 2 + 2 * phone_steps


def test_user_model_may_not_ask_for_reference_steps(endpoint):
    name = _both_sides_write(1)[0]
    spec = ModelSpec(model="openai/scripted-user-writes", api_base=endpoint.base_url, reference_steps=True)
    with pytest.raises(ValueError, match="agent option"):
        asyncio.run(UserSimHost().open(OpenRequest(conversation_id="c", run_id="r", scenario=name, spec=spec, seed=1)))
