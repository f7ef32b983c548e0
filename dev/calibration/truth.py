"""Ground truth of a calibration conversation: did the faulty customer commit its fault,
and at which turn.

The endpoint's customers are pure functions of the request, so the request the customer
got before each of its recorded replies is rebuilt from the stored transcript (its system
prompt and phone tools from the scenario, the agent's words as ``user`` messages, its own
replies and phone results) and replayed through the faulty customer and through the clean
one. The first reply where the two differ is the injected fault, unless it is a check the
faulty customer ran only to decide whether to commit its fault (``is_preparation``: a stop
right after a failing check, going on after a resolved one); a replay that does not give
the recorded reply is reported as a mismatch, never guessed over.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.audit.trajectory import Trajectory
from tauray.endpoint.writers import scripted_user_writes
from tauray.scenarios.registry import default_registry
from tests.test_helpers import faulty_user as fu

FAULTY_PREFIX = "faulty-user:"


class Truth(BaseModel):
    """What a calibration conversation's customer did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    behaviour: str = Field(description="The user model's behaviour (faulty-user:<class>:<split> or the clean one).")
    fault: str | None = Field(description="Fault class (or hard negative) it plays; None for the clean customer.")
    negative: bool = Field(description="A hard negative (looks like a fault, is not one).")
    committed: bool = Field(description="Whether the fault was committed in this conversation.")
    turn: int | None = Field(description="Turn of the first reply that differs from the clean customer's.")
    mismatch: str | None = Field(description="Why the replay did not reproduce the record, if it did not.")


def _body(system: str, tools: list[dict[str, Any]], history: list[dict[str, Any]], model: str, seed: int) -> dict:
    return {"model": model, "messages": [{"role": "system", "content": system}, *history], "tools": tools,
            "seed": seed}


def _recorded(message: Any) -> dict[str, Any]:
    calls = [{"id": c.get("id"), "type": "function", "function": {"name": c.get("name"), "arguments":
                                                                   c.get("arguments")}} for c in message.tool_calls]
    return {"role": "assistant", "content": message.content, **({"tool_calls": calls} if calls else {})}


def replay(t: Trajectory) -> Truth:
    """Replay one conversation's customer (see the module doc)."""
    FAULTS, faulty_user, is_preparation, reply_signature = fu.FAULTS, fu.faulty_user, fu.is_preparation, fu.reply_signature

    model = str(t.row.get("user_model") or "").removeprefix("openai/")
    fault_name = model.removeprefix(FAULTY_PREFIX).split(":")[0] if model.startswith(FAULTY_PREFIX) else None
    negative = bool(fault_name and FAULTS[fault_name].negative)
    if fault_name is None:
        return Truth(behaviour=model, fault=None, negative=False, committed=False, turn=None, mismatch=None)
    scenario = default_registry().get(str(t.row["scenario"]))
    if scenario.message_history:
        return Truth(behaviour=model, fault=fault_name, negative=negative, committed=False, turn=None,
                     mismatch="the task opens on a message history (not replayed)")
    tools = [x.openai() for x in scenario.user_tools]
    seed = int(t.row["seed"])
    history: list[dict[str, Any]] = []
    for m in t.messages:
        if m.side == "agent" and m.role == "assistant":
            if m.content and not m.tool_calls:
                history.append({"role": "user", "content": m.content})
            continue
        if m.side != "user":
            continue
        if m.role == "tool":
            history.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content or ""})
            continue
        body = _body(scenario.user_prompt, tools, history, model, seed)
        recorded = _recorded(m)
        got = faulty_user(body, None).message
        if reply_signature(got) != reply_signature(recorded):
            return Truth(behaviour=model, fault=fault_name, negative=negative, committed=False, turn=None,
                         mismatch=f"turn {m.turn}: replay gave {reply_signature(got)!r}")
        clean = scripted_user_writes(body, None).message
        if reply_signature(clean) != reply_signature(got) and not is_preparation(got):
            return Truth(behaviour=model, fault=fault_name, negative=negative, committed=True, turn=m.turn,
                         mismatch=None)
        history.append({k: v for k, v in recorded.items()})
    return Truth(behaviour=model, fault=fault_name, negative=negative, committed=False, turn=None, mismatch=None)


__all__ = ["FAULTY_PREFIX", "Truth", "replay"]
