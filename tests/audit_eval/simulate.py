"""A conversation between the endpoint's reference-steps agent and the independent customer, in
process and without a phone (tool results are a fixed status line): enough to check that the
customer commits exactly one fault and that replaying it finds the same one, in milliseconds.
The measurement itself runs real sweeps (``measure.py``).

With ``phone=True`` both sides' tools run on the scenario's real initial state (τ²'s telecom tools, as
:func:`tauray.scenarios.gold.fresh_state` sets them up), so the customer reports real results; ``said``,
when given, collects each customer reply's ``Decision.talk`` (the talk customer's faithful lines)."""

from __future__ import annotations

import json
from typing import Any

from tauray.endpoint.writers import scripted_agent_writes
from tauray.scenarios.gold import fresh_state
from tauray.scenarios.model import Scenario
from tests.audit_eval.customer import Injection, decide

GREETING = "Hi! How can I help you today?"
PHONE_RESULT = "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%"


def _steps_prompt(s: Scenario) -> str:
    return "Reference steps:\n" + "\n".join(
        f"{i + 1}. {'customer' if a.side == 'user' else 'agent'}: {a.name} {json.dumps(a.arguments)}"
        for i, a in enumerate(s.reference_actions))


def _run(state: Any, side: str, call: dict[str, Any]) -> str:
    try:
        args = json.loads(call["function"].get("arguments") or "{}")
    except ValueError:
        args = {}
    return state.execute(side, call["function"]["name"], args if isinstance(args, dict) else {})[0].result


def converse(s: Scenario, model: str, seed: int, max_replies: int = 40, phone: bool = False,
             said: list[tuple[str, ...]] | None = None) -> tuple[list[tuple[str, dict[str, Any]]], list[Injection]]:
    """(side, message) of the whole conversation, and the injections the customer reported."""
    state = fresh_state(s) if phone else None
    conv: list[tuple[str, dict[str, Any]]] = [("agent", {"role": "assistant", "content": GREETING})]
    tools = [t.openai() for t in s.user_tools]
    injections: list[Injection] = []
    for _ in range(max_replies):
        while True:
            view = [{"role": "system", "content": s.user_prompt}]
            for side, m in conv:
                if side == "user":
                    view.append(m)
                elif m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls"):
                    view.append({"role": "user", "content": m["content"]})
            d = decide({"model": model, "messages": view, "tools": tools, "seed": seed})
            conv.append(("user", d.reply.message))
            if said is not None:
                said.append(d.talk)
            if d.injection is not None:
                injections.append(d.injection)
            calls = d.reply.message.get("tool_calls")
            if not calls:
                break
            result = _run(state, "user", calls[0]) if state is not None else PHONE_RESULT
            conv.append(("user", {"role": "tool", "tool_call_id": calls[0]["id"], "content": result}))
        if "###" in str(d.reply.message.get("content") or ""):
            break
        while True:
            view = [{"role": "system", "content": _steps_prompt(s)}]
            for side, m in conv:
                if side == "agent":
                    view.append(m)
                elif m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls"):
                    view.append({"role": "user", "content": m["content"]})
            a = scripted_agent_writes({"model": "agent", "messages": view}, None).message
            conv.append(("agent", a))
            if not a.get("tool_calls"):
                break
            result = _run(state, "agent", a["tool_calls"][0]) if state is not None else "ok"
            conv.append(("agent", {"role": "tool", "tool_call_id": a["tool_calls"][0]["id"], "content": result}))
    return conv, injections


__all__ = ["converse"]
