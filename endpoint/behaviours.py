"""Scripted behaviours served by the local test endpoint, and their registry.

The request's ``model`` field names the behaviour. Anything after a colon is a parameter
for it, e.g. ``scripted-user:5``. This module holds the agent and user behaviours and the
refusals; the judges live in :mod:`~tauray.endpoint.judges`, the writing pair in
:mod:`~tauray.endpoint.writers`, the reply shapes in
:mod:`~tauray.endpoint.shapes`, and what they are all built from in
:mod:`~tauray.endpoint.replies`. New behaviours are added to :data:`BEHAVIOURS`.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from tauray.endpoint.judges import JUDGE_BEHAVIOURS
from tauray.endpoint.replies import (  # noqa: F401  (re-exported: behaviours import them from here)
    Behaviour,
    BehaviourError,
    BehaviourSettings,
    Reply,
    UnknownBehaviour,
    request_messages,
    offered_functions,
    pick,
    arguments_for,
    completion_words,
    conversation_digest,
    model_param,
    placeholder_for,
    prompt_words,
    split_model,
    text_reply,
    tool_call_reply,
)
from tauray.endpoint.shapes import SHAPE_BEHAVIOURS
from tauray.endpoint.roles import ROLE_BEHAVIOURS
from tauray.endpoint.writers import WRITING_BEHAVIOURS
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

REFUSE_MARK = "[refuse]"
"""A message containing this makes ``refuse-marked`` refuse the request."""


def refuse_marked(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Refuses (with the HTTP status after the colon, default 400) any request whose messages
    carry :data:`REFUSE_MARK`, and answers every other one: a provider that refuses some requests
    for what they are while the deployment stays healthy."""
    status = int(model_param(body) or 400)
    if any(REFUSE_MARK in str(m.get("content") or "") for m in request_messages(body)):
        raise BehaviourError(status, f"Refused: the request carries {REFUSE_MARK}.", code="refused")
    return text_reply("ready")


def no_seed(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A server that refuses the ``seed`` parameter (as some OpenAI-compatible servers do)."""
    if "seed" in body:
        raise BehaviourError(400, "Unrecognized request argument supplied: seed", code="unsupported_parameter")
    return text_reply("ready")


BEHAVIOURS: dict[str, Behaviour] = {
    "scripted-agent": scripted_agent,
    "scripted-agent-quiet": scripted_agent_quiet,
    "scripted-user": scripted_user,
    "scripted-user-impatient": scripted_user_impatient,
    "refuse-marked": refuse_marked,
    "no-seed": no_seed,
    **JUDGE_BEHAVIOURS,
    **WRITING_BEHAVIOURS,
    **SHAPE_BEHAVIOURS,
    **ROLE_BEHAVIOURS,
}
"""Behaviour registry: model name (before any ``:param``) to behaviour; :func:`load_behaviours`
adds a module's own at start (``tauray endpoint --behaviours MODULE``)."""


def load_behaviours(module: str) -> list[str]:
    """Add the ``BEHAVIOURS`` dict of ``module`` (e.g. ``tests.test_helpers.faulty``, the
    faulty customers, agents and judges that are the tests' ground truth) to the registry;
    the names added. A name already registered to another behaviour is refused, naming it."""
    try:
        found = importlib.import_module(module).BEHAVIOURS
    except ModuleNotFoundError as exc:
        raise ValueError(f"cannot load behaviours from {module!r}: {exc}") from None
    except AttributeError:
        raise ValueError(f"{module!r} defines no BEHAVIOURS dict") from None
    clash = sorted(n for n, b in found.items() if BEHAVIOURS.get(n, b) is not b)
    if clash:
        raise ValueError(f"{module!r} redefines registered behaviours: {', '.join(clash)}")
    BEHAVIOURS.update(found)
    return sorted(found)


def resolve(model: str) -> tuple[str, Behaviour]:
    """The registered name and behaviour for a request's model field."""
    name, _ = split_model(model)
    behaviour = BEHAVIOURS.get(name)
    if behaviour is None:
        raise UnknownBehaviour(model)
    return name, behaviour


__all__ = [
    "BEHAVIOURS",
    "REFUSE_MARK",
    "STOP_TOKEN",
    "BehaviourError",
    "Behaviour",
    "BehaviourSettings",
    "Reply",
    "UnknownBehaviour",
    "arguments_for",
    "completion_words",
    "conversation_digest",
    "load_behaviours",
    "model_param",
    "placeholder_for",
    "prompt_words",
    "resolve",
    "split_model",
    "text_reply",
    "tool_call_reply",
]
