"""Who speaks for a side: a model over litellm, or a reference policy.

A policy sees one side's view of the conversation (OpenAI-format messages and
that side's tools) and returns the next reply: text and/or tool calls. The
reference policies need no model and are labelled as such wherever they
appear:

* ``oracle`` agent — calls the scenario's reference agent actions and asks the
  customer, in plain words, to perform each reference phone action in order;
  then ends the conversation.
* ``scripted`` user — states the problem, performs exactly the phone action
  the agent asked for, reports what the phone returned, stops when the agent
  has nothing more to ask.

Together they must pass every predicate of every telecom scenario, which makes
them a live self-check of the actors, the sync and the scoring.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from tauray.actors.llm.errors import ModelCallError
from tauray.actors.llm.replies import ModelReply, RawToolCall, filtered_prompt
from tauray.scenarios.conventions import END_CONVERSATION, ORACLE, SCRIPTED, STOP, is_reference, parse_phone_request
from tauray.scenarios.model import ReferenceAction, Scenario

if TYPE_CHECKING:  # the client's module loads litellm's helpers; a reference policy needs none
    from tauray.actors.llm.client import ModelClient

GREETING = "Hello, you have reached customer support. How can I help you today?"


class Policy(Protocol):
    """Who speaks for a side: the next reply to the side's view, with its tools."""

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply: ...


class LLMPolicy:
    """A model reached through litellm (the model client does retries and limits); its reply
    goes to the session as the client made it. A call refused because the provider's filter
    flagged the prompt is the filter's answer, not a failure: an empty reply that says so
    (:func:`~tauray.actors.llm.replies.filtered_prompt`)."""

    def __init__(self, client: ModelClient):
        self.client = client

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        try:
            return await self.client.complete(view, tools=tools or None, seed=seed)
        except ModelCallError as error:
            filtered = filtered_prompt(error, self.client.spec.model)
            if filtered is None:
                raise
            return filtered


# --- reference policies ---------------------------------------------------------------

def phone_request(action: ReferenceAction) -> str:
    """The oracle's plain-words request, with a tag the scripted user can act on."""
    words = action.name.replace("_", " ")
    details = ", ".join(f"{k} {v}" for k, v in action.arguments.items())
    plain = f"Could you please {words} on your phone" + (f" ({details})" if details else "")
    return f"{plain} and tell me what it shows?\n(phone action: {action.name} {json.dumps(action.arguments)})"


def _reply(policy: str, content: str | None = None, calls: list[RawToolCall] | None = None) -> ModelReply:
    """A reference policy's reply: the shape of a model's, named by the policy, with no usage."""
    return ModelReply(content=content, tool_calls=calls or [], model=policy)


def _last(view: list[dict[str, Any]], role: str) -> dict[str, Any] | None:
    return next((m for m in reversed(view) if m.get("role") == role), None)


class OracleAgent:
    """Reference agent: the scenario's reference actions, in order, then end."""

    label = "oracle (reference policy)"

    def __init__(self, scenario: Scenario):
        self.actions = scenario.reference_actions
        self.cursor = 0

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        if self.cursor >= len(self.actions):
            return _reply(ORACLE, calls=[RawToolCall(
                id=f"oracle-{self.cursor}-end", name=END_CONVERSATION,
                arguments=json.dumps({"reason": "all reference actions done"}))])
        action = self.actions[self.cursor]
        self.cursor += 1
        if action.side == "agent":
            return _reply(ORACLE, calls=[RawToolCall(
                id=f"oracle-{self.cursor - 1}", name=action.name, arguments=json.dumps(action.arguments))])
        return _reply(ORACLE, phone_request(action))


class ScriptedUser:
    """Reference user: states the problem, does exactly what the agent asks."""

    label = "scripted (reference policy)"

    def __init__(self, scenario: Scenario):
        self.opening = scenario.user.reason_for_call or scenario.ticket or scenario.user.instructions
        self.calls = 0
        self.opened = False

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        # The problem is stated once, first; a task that opens on an earlier conversation
        # (message history) has the customer's old words in the view, not this request.
        if not self.opened and parse_phone_request((_last(view, "user") or {}).get("content")) is None:
            self.opened = True
            return _reply(SCRIPTED, self.opening.strip())
        self.opened = True
        if view and view[-1].get("role") == "tool":
            return _reply(SCRIPTED, f"Done. My phone now shows: {view[-1].get('content')}")
        request = parse_phone_request((_last(view, "user") or {}).get("content"))
        if request is not None:
            self.calls += 1
            name, args = request
            return _reply(SCRIPTED, calls=[RawToolCall(id=f"scripted-{self.calls}", name=name, arguments=args)])
        return _reply(SCRIPTED, f"Thanks, that is all I needed. {STOP}")


class LiveAgent:
    """The policy of a side a live agent speaks for (a phone bot on the line): never asked. The
    side's session still holds its state and runs the bot's tool calls (``SideSession.run_tool``)."""

    def __init__(self, model: str):
        self.label = f"{model} (live agent)"

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        raise RuntimeError(f"{self.label}: a live agent's policy is never stepped; the bot on the line replies")


def make_policy(side: str, model: str, scenario: Scenario,
                client_factory: Callable[[], ModelClient] | None = None) -> Policy:
    """The policy for one side of one conversation."""
    if side == "agent" and model == ORACLE:
        return OracleAgent(scenario)
    if side == "user" and model == SCRIPTED:
        return ScriptedUser(scenario)
    if is_reference(model):
        raise ValueError(f"'{model}' is a reference policy for the {'agent' if model == ORACLE else 'user'} side only")
    return LLMPolicy(client_factory())
