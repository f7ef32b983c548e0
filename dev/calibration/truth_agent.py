"""Ground truth of the agent side of a calibration conversation: did the faulty agent commit
its fault, and at which turn; and, where both sides erred, which fault failed the task.

The endpoint's agents are pure functions of the request, so the request the agent got
before each of its recorded replies is rebuilt from the stored transcript (its system prompt
with the reference steps and its tools from the scenario, its own replies and tool results,
the customer's words) and replayed through the faulty agent and through the clean writing
agent. The first reply where the two differ is the injected fault; a replay that does not
give the recorded reply is reported as a mismatch, never guessed over.

Which fault failed a conversation where both sides committed one is not read from the
record at all: the conversation is run again, in this process, with the same seed and one
side replaced by its clean counterpart (the faulty agent with the clean customer, the clean
agent with the faulty customer). A side's fault fails the task when the run with only that
side faulty fails. This is the counterfactual the audit's rules can only approximate, with
the one caveat that the faulty customer draws its fault among the points of the new run
(the same ones up to the agent's fault).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dev.calibration.truth import (
    _recorded,  # the recorded reply as the endpoint answers it
)
from tauray.actors.audit.trajectory import Trajectory
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.unit import WorkUnit
from tauray.endpoint.writers import scripted_agent_writes
from tauray.scenarios.prompts import reference_steps_prompt
from tauray.scenarios.registry import default_registry
from tests.test_helpers import faulty_agent, faulty_user

FAULTY_AGENT_PREFIX = "faulty-agent:"
CLEAN_AGENT = "scripted-agent-writes"
CLEAN_USER = "scripted-user-writes"


class AgentTruth(BaseModel):
    """What a calibration conversation's agent did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    behaviour: str = Field(description="The agent model's behaviour (faulty-agent:<class>[:<split>] or the clean one).")
    fault: str | None = Field(description="Fault class it plays; None for the clean agent.")
    committed: bool = Field(description="Whether the fault was committed in this conversation.")
    turn: int | None = Field(description="Turn of the first reply that differs from the clean agent's.")
    mismatch: str | None = Field(description="Why the replay did not reproduce the record, if it did not.")


def _signature(message: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return faulty_user.reply_signature(message)


def replay_agent(t: Trajectory) -> AgentTruth:
    """Replay one conversation's agent (see the module doc)."""

    model = str(t.row.get("agent_model") or "").removeprefix("openai/")
    if not model.startswith(FAULTY_AGENT_PREFIX):
        return AgentTruth(behaviour=model, fault=None, committed=False, turn=None, mismatch=None)
    fault = model.removeprefix(FAULTY_AGENT_PREFIX).split(":")[0]
    scenario = default_registry().get(str(t.row["scenario"]))
    system = scenario.agent_prompt + "\n\n" + reference_steps_prompt(scenario.reference_actions)
    tools = [x.openai() for x in scenario.agent_tools]
    seed = int(t.row["seed"])
    history: list[dict[str, Any]] = []
    for m in t.messages:
        if m.side == "user":
            if m.role == "user" and m.content and not m.tool_calls:
                history.append({"role": "user", "content": m.content})
            continue
        if m.role == "tool":
            history.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content or ""})
            continue
        recorded = _recorded(m)
        if m.turn == 0:  # the harness's greeting, not the agent's reply
            history.append(recorded)
            continue
        body = {"model": model, "seed": seed, "tools": tools,
                "messages": [{"role": "system", "content": system}, *history]}
        got = faulty_agent.faulty_agent(body, None).message
        if _signature(got) != _signature(recorded):
            return AgentTruth(behaviour=model, fault=fault, committed=False, turn=None,
                              mismatch=f"turn {m.turn}: replay gave {_signature(got)!r}")
        if _signature(scripted_agent_writes(body, None).message) != _signature(got):
            return AgentTruth(behaviour=model, fault=fault, committed=True, turn=m.turn, mismatch=None)
        history.append(recorded)
    return AgentTruth(behaviour=model, fault=fault, committed=False, turn=None, mismatch=None)


async def _run_again(t: Trajectory, agent: dict[str, Any], user: dict[str, Any]) -> bool | None:
    unit = WorkUnit(unit_id=f"again-{t.keys.get('unit_id')}", run_id="again", sweep_id="again", cell_id="again",
                    scenario=str(t.row["scenario"]), trial=0, seed=int(t.row["seed"]), agent=agent, user=user,
                    max_steps=100, max_errors=10)
    result = await run_conversation(unit, AgentHost(), UserSimHost())
    return result.conversation.success


def fails_alone(t: Trajectory, endpoint: str) -> tuple[bool | None, bool | None]:
    """(the faulty agent with the clean customer fails, the clean agent with the faulty customer
    fails), each run again at the conversation's seed against the endpoint at ``endpoint``."""
    agent_model = str(t.row.get("agent_model") or "")
    user_model = str(t.row.get("user_model") or "")
    clean_agent = {"model": f"openai/{CLEAN_AGENT}", "api_base": endpoint, "reference_steps": True}
    clean_user = {"model": f"openai/{CLEAN_USER}", "api_base": endpoint}
    bad_agent = {"model": agent_model, "api_base": endpoint, "reference_steps": True}
    bad_user = {"model": user_model, "api_base": endpoint}

    async def both() -> tuple[bool | None, bool | None]:
        a, u = await asyncio.gather(_run_again(t, bad_agent, clean_user), _run_again(t, clean_agent, bad_user))
        return (None if a is None else not a), (None if u is None else not u)

    return asyncio.run(both())


__all__ = ["CLEAN_AGENT", "CLEAN_USER", "FAULTY_AGENT_PREFIX", "AgentTruth", "fails_alone", "replay_agent"]
