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
from typing import Any

from pydantic import Field
from tauray.scenarios.model import Frozen, ReferenceAction, Scenario
from tauray.scenarios.conventions import (END_CONVERSATION, ORACLE, REFERENCE_BY_SIDE, SCRIPTED, STOP, is_reference,
                                         parse_phone_request)

REFERENCE_POLICIES = {side: (name,) for side, name in REFERENCE_BY_SIDE.items()}
GREETING = "Hello, you have reached customer support. How can I help you today?"


class PolicyToolCall(Frozen):
    id: str = Field(description="Call id, unique within the conversation.")
    name: str = Field(description="Tool name as the policy wrote it.")
    arguments: str = Field(description="Arguments as raw JSON text (may be malformed when a model wrote it).")


class PolicyReply(Frozen):
    content: str | None = Field(default=None, description="Text of the reply.")
    tool_calls: tuple[PolicyToolCall, ...] = Field(default=(), description="Tool calls of the reply.")
    llm_call: bool = Field(default=False, description="True when a model was called to produce it.")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    seed_applied: bool | None = Field(default=None, description="Whether the call carried the seed (None: none asked "
                                      "for, or no model called).")
    empty: str | None = Field(default=None, description="Why a model's reply was empty (no_choices, no_content); "
                              "None otherwise.")
    retries: int = Field(default=0, ge=0, description="Router retries the model call needed (0: first attempt).")
    stop: str | None = Field(default=None, description="Why the model stopped, in one vocabulary (length, "
                             "content_filter, refusal, tool_calls, stop, other); None without a model call.")
    finish_reason: str | None = Field(default=None, description="The provider's own finish reason.")
    refusal: str | None = Field(default=None, description="The model's refusal text, when it refused.")
    reasoning_tokens: int = Field(default=0, ge=0, description="Reasoning tokens the call reported.")
    cached_tokens: int = Field(default=0, ge=0, description="Prompt tokens served from the provider's cache.")
    adapted: tuple[str, ...] = Field(default=(), description="How the history was adapted for the provider.")
    dropped: tuple[str, ...] = Field(default=(), description="Parameters of the spec left out of the call.")


class LLMPolicy:
    """A model reached through litellm (the model client does retries and limits)."""

    def __init__(self, client: Any):
        self.client = client

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> PolicyReply:
        r = await self.client.complete(view, tools=tools or None, seed=seed)
        return PolicyReply(
            content=r.content,
            tool_calls=tuple(PolicyToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in r.tool_calls),
            llm_call=True, prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
            cost_usd=r.cost_usd, latency_s=r.latency_s, seed_applied=r.seed_applied, empty=r.empty, retries=r.retries,
            stop=r.stop, finish_reason=r.finish_reason, refusal=r.refusal, reasoning_tokens=r.reasoning_tokens,
            cached_tokens=r.cached_tokens, adapted=tuple(r.adapted), dropped=tuple(r.dropped),
        )


# --- reference policies ---------------------------------------------------------------

def phone_request(action: ReferenceAction) -> str:
    """The oracle's plain-words request, with a tag the scripted user can act on."""
    words = action.name.replace("_", " ")
    details = ", ".join(f"{k} {v}" for k, v in action.arguments.items())
    plain = f"Could you please {words} on your phone" + (f" ({details})" if details else "")
    return f"{plain} and tell me what it shows?\n(phone action: {action.name} {json.dumps(action.arguments)})"


def _last(view: list[dict[str, Any]], role: str) -> dict[str, Any] | None:
    return next((m for m in reversed(view) if m.get("role") == role), None)


class OracleAgent:
    """Reference agent: the scenario's reference actions, in order, then end."""

    label = "oracle (reference policy)"

    def __init__(self, scenario: Scenario):
        self.actions = scenario.reference_actions
        self.cursor = 0

    async def reply(self, view, tools, seed) -> PolicyReply:
        if self.cursor >= len(self.actions):
            return PolicyReply(tool_calls=(PolicyToolCall(
                id=f"oracle-{self.cursor}-end", name=END_CONVERSATION,
                arguments=json.dumps({"reason": "all reference actions done"})),))
        action = self.actions[self.cursor]
        self.cursor += 1
        if action.side == "agent":
            return PolicyReply(tool_calls=(PolicyToolCall(
                id=f"oracle-{self.cursor - 1}", name=action.name, arguments=json.dumps(action.arguments)),))
        return PolicyReply(content=phone_request(action))


class ScriptedUser:
    """Reference user: states the problem, does exactly what the agent asks."""

    label = "scripted (reference policy)"

    def __init__(self, scenario: Scenario):
        self.opening = scenario.user.reason_for_call or scenario.ticket or scenario.user.instructions
        self.calls = 0
        self.opened = False

    async def reply(self, view, tools, seed) -> PolicyReply:
        # The problem is stated once, first; a task that opens on an earlier conversation
        # (message history) has the customer's old words in the view, not this request.
        if not self.opened and parse_phone_request((_last(view, "user") or {}).get("content")) is None:
            self.opened = True
            return PolicyReply(content=self.opening.strip())
        self.opened = True
        if view and view[-1].get("role") == "tool":
            return PolicyReply(content=f"Done. My phone now shows: {view[-1].get('content')}")
        request = parse_phone_request((_last(view, "user") or {}).get("content"))
        if request is not None:
            self.calls += 1
            name, args = request
            return PolicyReply(tool_calls=(PolicyToolCall(id=f"scripted-{self.calls}", name=name, arguments=args),))
        return PolicyReply(content=f"Thanks, that is all I needed. {STOP}")


def make_policy(side: str, model: str, scenario: Scenario, client_factory: Any = None) -> Any:
    """The policy for one side of one conversation."""
    if side == "agent" and model == ORACLE:
        return OracleAgent(scenario)
    if side == "user" and model == SCRIPTED:
        return ScriptedUser(scenario)
    if is_reference(model):
        raise ValueError(f"'{model}' is a reference policy for the {'agent' if model == ORACLE else 'user'} side only")
    return LLMPolicy(client_factory())
