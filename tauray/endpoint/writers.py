"""Scripted behaviours that change state: an agent that follows the reference steps and
a customer who performs the phone actions it asks for.

The other scripted agents only look things up, so a run with them never writes,
never pulls a DB, never syncs: the dual-state path that makes a conversation
expensive goes unmeasured. These two make every conversation do what a solved
one does: the agent performs its own reference actions as real tool calls and
asks the customer, in words, for each phone action; the customer performs it
with the phone tool it was offered and reports what the phone shows.

Like every behaviour they are pure functions of the request. The agent learns
the steps from its system prompt, the one thing a runner can tell it per task:

* tauray puts them there when the agent's ModelSpec says ``reference_steps``
  (:func:`tauray.scenarios.prompts.reference_steps_prompt`, one
  ``N. agent|customer: tool {json}`` line per step);
* τ²'s runner does it with its ground-truth agent (``tau2 run --agent
  llm_agent_gt``), one ``[Step N] …: tool(key=value, …)`` line per step; which
  side a step belongs to is read from the tools the request offers (an agent
  step is one of the agent's own tools).

Where it is in the list is counted from the history: every step it took left
one assistant message with a tool call or a phone request. Phone requests use
the reference policies' tagged wording (:func:`tauray.actors.policies.phone_request`),
which is what the customer here parses.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauray.actors.policies import parse_phone_request, phone_request
from tauray.endpoint.replies import text_reply, tool_call_reply
from tauray.scenarios.conventions import STOP as STOP_TOKEN
from tauray.scenarios.model import ReferenceAction

_TAURAY_STEP = re.compile(r"^\d+\. (?P<side>agent|customer): (?P<name>[A-Za-z_]\w*) (?P<args>\{.*\})$", re.MULTILINE)
_TAU2_STEP = re.compile(r"^\[Step \d+\][^:\n]*: (?P<name>[A-Za-z_]\w*)\((?P<args>.*)\)\.?$", re.MULTILINE)
_KEY = re.compile(r",\s*(?=[A-Za-z_]\w*=)")

OPENING = "Hi, something is wrong with my phone and I need help fixing it."
CLOSING = "That was the last step on my side; everything should work now. Is there anything else I can do?"
THANKS = "Thanks, that is all I needed."


class NoReferenceSteps(ValueError):
    """The agent's request carries no reference steps, so there is nothing to follow."""


def request_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _functions(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            out[str(fn["name"])] = fn
    return out


def _scalar(text: str, schema: dict[str, Any] | None) -> Any:
    """A τ² argument written as ``str(value)``, typed by the tool's schema when known."""
    kind = (schema or {}).get("type")
    if kind == "string":
        return text
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if kind == "integer" or (kind is None and re.fullmatch(r"-?\d+", text)) else number


def _tau2_arguments(text: str, function: dict[str, Any] | None) -> dict[str, Any]:
    props = ((function or {}).get("parameters") or {}).get("properties") or {}
    args: dict[str, Any] = {}
    for part in _KEY.split(text.strip()) if text.strip() else []:
        key, _, value = part.partition("=")
        args[key.strip()] = _scalar(value.strip(), props.get(key.strip()))
    return args


def reference_steps(system: str, offered: dict[str, dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(side, tool, arguments) of each reference step listed in an agent's system prompt."""
    steps = [("agent" if m["side"] == "agent" else "user", m["name"], json.loads(m["args"]))
             for m in _TAURAY_STEP.finditer(system)]
    if steps:
        return steps
    return [("agent" if m["name"] in offered else "user", m["name"], _tau2_arguments(m["args"], offered.get(m["name"])))
            for m in _TAU2_STEP.finditer(system)]


def _took_step(message: dict[str, Any]) -> bool:
    return message.get("role") == "assistant" and bool(
        message.get("tool_calls") or parse_phone_request(message.get("content") if isinstance(message.get("content"), str)
                                                         else None))


def scripted_agent_writes(body: dict[str, Any], settings: Any) -> Any:
    """An agent that performs the reference steps in order, one per reply, then closes.

    Agent steps are tool calls with the reference arguments (writes included);
    customer steps are phone requests in words. Raises :class:`NoReferenceSteps`
    (the endpoint answers 500) when the system prompt lists none.
    """

    messages = request_messages(body)
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    steps = reference_steps(system, _functions(body))
    if not steps:
        raise NoReferenceSteps("the system prompt lists no reference steps: give tauray's agent "
                               "reference_steps=true, or run τ² with --agent llm_agent_gt")
    done = sum(_took_step(m) for m in messages)
    if done >= len(steps):
        return text_reply(CLOSING)
    side, name, arguments = steps[done]
    if side == "agent":
        return tool_call_reply(name, json.dumps(arguments), f"call_step_{done}")
    return text_reply(phone_request(ReferenceAction(action_id=str(done), side="user", name=name, arguments=arguments)))


def scripted_user_writes(body: dict[str, Any], settings: Any) -> Any:
    """A customer who opens with the problem, performs each phone action the agent asks for
    with the phone tool offered, reports what the phone shows, and stops when nothing
    more is asked."""

    messages = request_messages(body)
    own = [m for m in messages if m.get("role") == "assistant"]
    if not own:
        return text_reply(OPENING)
    last = messages[-1]
    if last.get("role") == "tool":
        return text_reply(f"Done. My phone now shows: {last.get('content')}")
    request = parse_phone_request(last.get("content") if last.get("role") == "user" and isinstance(
        last.get("content"), str) else None)
    if request is not None:
        name, arguments = request
        if name not in _functions(body):
            return text_reply(f"I can't find a way to {name.replace('_', ' ')} on my phone.")
        return tool_call_reply(name, arguments, f"phone_{sum(bool(m.get('tool_calls')) for m in own)}")
    return text_reply(f"{THANKS} {STOP_TOKEN}")


WRITING_BEHAVIOURS = {
    "scripted-agent-writes": scripted_agent_writes,
    "scripted-user-writes": scripted_user_writes,
}
"""Registered into the endpoint's behaviour registry under these names."""


__all__ = ["WRITING_BEHAVIOURS", "NoReferenceSteps", "reference_steps", "scripted_agent_writes",
           "scripted_user_writes"]
