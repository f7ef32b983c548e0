"""The scripted agent and customer: the endpoint's stand-ins for a model in each role.

Deterministic per conversation (each reply is picked by a digest of the conversation so
far), so a sweep against the endpoint is reproducible; kept apart from the registry
(:mod:`.behaviours`) so that other behaviours (the role router in :mod:`.roles`) can use
them without importing the registry that lists them.
"""

from __future__ import annotations

import json
from typing import Any

from tauray.endpoint.replies import (
    BehaviourSettings,
    Reply,
    arguments_for,
    conversation_digest,
    model_param,
    offered_functions,
    pick,
    request_messages,
    text_reply,
    tool_call_reply,
)
from tauray.scenarios.conventions import HARNESS_TOOLS, STOP

STOP_TOKEN = STOP
"""Marker a simulated user appends to its last message (τ²'s convention)."""

# Tools a scripted agent never picks on its own: calling them would end or hand
# off the conversation, which is not what a scripted look-up should do.
_NEVER_CALLED = HARNESS_TOOLS
_PREFERRED_PREFIXES = ("get_", "check_")


# --------------------------------------------------------------------------- agents

_GREETINGS = (
    "Hello, thanks for contacting support. How can I help you today?",
    "Hi there! I'm the support assistant. What can I do for you?",
    "Good day, you've reached customer service. How may I assist you?",
)
_AFTER_TOOL = (
    "I looked that up in our system and have the details now. Is there anything else you need?",
    "Thanks for waiting, I checked your account and everything is in order.",
    "I've looked into it: the information is on file and I can help from here.",
)
_AGENT_TEXT = (
    "I understand. Could you give me a little more detail so I can help?",
    "Thanks for the information. Let me make sure I have this right before we continue.",
    "Understood. I can help with that; please confirm that you'd like me to proceed.",
    "Sorry for the trouble. Could you try that again and tell me what you see?",
)


def _is_first_agent_turn(messages: list[dict[str, Any]]) -> bool:
    return not any(m.get("role") == "assistant" for m in messages)


def _agent_text(messages: list[dict[str, Any]], digest: int) -> Reply:
    if _is_first_agent_turn(messages):
        return text_reply(pick(_GREETINGS, digest))
    if messages and messages[-1].get("role") == "tool":
        return text_reply(pick(_AFTER_TOOL, digest))
    return text_reply(pick(_AGENT_TEXT, digest))


def _choose_tool(body: dict[str, Any], digest: int) -> dict[str, Any] | None:
    allowed = [f for f in offered_functions(body) if f["name"] not in _NEVER_CALLED]
    preferred = [f for f in allowed if f["name"].startswith(_PREFERRED_PREFIXES)]
    if preferred:
        return pick(preferred, digest)
    return allowed[0] if allowed else None


def scripted_agent(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A support agent that looks one thing up after each customer message.

    The first turn is a greeting. When tools are offered and the customer has
    just spoken, it calls one read-style tool (``get_*``/``check_*``) with
    placeholder arguments; after the tool result it says what it found.
    """
    messages = request_messages(body)
    digest = conversation_digest(body)
    if (
        body.get("tools")
        and not _is_first_agent_turn(messages)
        and messages
        and messages[-1].get("role") == "user"
    ):
        function = _choose_tool(body, digest)
        if function is not None:
            args = json.dumps(arguments_for(function))
            return tool_call_reply(function["name"], args, f"call_{digest:016x}")
    return _agent_text(messages, digest)


def scripted_agent_quiet(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The same agent without tool use: text only, so sweeps have a contrast."""
    messages = request_messages(body)
    return _agent_text(messages, conversation_digest(body))


# --------------------------------------------------------------------------- users

_USER_OPENINGS = (
    "Hi, my mobile data stopped working this morning and I need it fixed.",
    "Hello, I was charged twice on my last bill and would like a refund.",
    "Hi, I can't make any calls from my phone since yesterday.",
    "Hello, I'd like to change my reservation to a later date please.",
)
_USER_FOLLOW_UPS = (
    "Okay, I did that. What should I do next?",
    "My account number should be on file, the phone number is the one I'm calling from.",
    "I restarted the phone but it still doesn't work.",
    "Sure, please go ahead.",
    "Can you check again? I still see the same problem.",
)
_USER_CLOSINGS = (
    "Great, that's all I needed. Thank you!",
    "Thanks for your help, goodbye.",
    "Alright, I'll leave it there for today. Bye.",
)


def _user_turn_limit(body: dict[str, Any], default: int) -> int:
    param = model_param(body)
    if param:
        try:
            return max(0, int(param))
        except ValueError:
            pass
    return default


def _user_reply(body: dict[str, Any], turns: int) -> Reply:
    """Reply as the customer; in this view the agent speaks as ``user``.

    Having already replied ``turns`` times, the customer wraps up and marks the
    end with the stop token.
    """
    messages = request_messages(body)
    digest = conversation_digest(body)
    own_replies = sum(1 for m in messages if m.get("role") == "assistant")
    if own_replies >= turns:
        return text_reply(f"{pick(_USER_CLOSINGS, digest)} {STOP_TOKEN}")
    if own_replies == 0:
        return text_reply(pick(_USER_OPENINGS, digest))
    return text_reply(pick(_USER_FOLLOW_UPS, digest))


def scripted_user(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A customer who replies ``user_turns`` times (or ``:N``), then stops."""
    return _user_reply(body, _user_turn_limit(body, settings.user_turns))


def scripted_user_impatient(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A customer who gives up after a single reply."""
    return _user_reply(body, _user_turn_limit(body, 1))


# --------------------------------------------------------------------------- refusals
