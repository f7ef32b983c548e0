"""Small hand-built trajectories for the audit's unit tests."""

from __future__ import annotations

import json

from tauray.actors.audit.trajectory import Message, Trajectory, task_facts
from tauray.actors.policies import phone_request
from tauray.scenarios.model import ReferenceAction

# A mobile-data task whose customer is abroad (known information with a location).
SCENARIO = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"
GREETING = "Hello, you have reached customer support. How can I help you today?"


def ask(tool: str) -> str:
    """The reference agent's tagged request for a phone action."""
    return phone_request(ReferenceAction(action_id="x", side="user", name=tool, arguments={}))


def build(steps: list[tuple], scenario: str = SCENARIO, success: bool | None = True,
          error_kind: str | None = None) -> Trajectory:
    """steps: (turn, side, role, content[, [tool names]]) in order."""
    msgs = []
    for seq, step in enumerate(steps):
        turn, side, role, content, *rest = step
        calls = tuple({"id": f"c{seq}-{i}", "name": n, "arguments": "{}"} for i, n in enumerate(rest[0] if rest else ()))
        msgs.append(Message(seq=seq, turn=turn, side=side, role=role, content=content, tool_calls=calls,
                            tool_call_id=f"c{seq - 1}-0" if role == "tool" else None))
    facts = task_facts(scenario)
    actions = tuple({"kind": "tool_call", "turn": m.turn, "side": m.side, "tool": c["name"], "arguments": "{}",
                     "error": False, "is_write": c["name"] in facts.user_writes}
                    for m in msgs for c in m.tool_calls)
    row = {"run_id": "r", "conversation_id": "c", "unit_id": "c", "attempt": 0, "scenario": scenario,
           "success": success, "error_kind": error_kind, "user_model": "test", "seed": 1}
    return Trajectory(row=row, messages=tuple(msgs), actions=actions, task=facts,
                      keys={k: row[k] for k in ("run_id", "conversation_id", "unit_id", "attempt", "scenario")})


def opening() -> list[tuple]:
    return [(0, "agent", "assistant", GREETING), (1, "user", "user", "Hi, my phone has no data.")]


def performed(turn: int, tool: str, result: str, report: str | None = None) -> list[tuple]:
    """The customer runs ``tool`` and reports what it showed."""
    return [(turn, "user", "user", None, [tool]), (turn, "user", "tool", result),
            (turn, "user", "user", report if report is not None else f"Done. My phone now shows: {result}")]


def dumps(value) -> str:
    return json.dumps(value)
