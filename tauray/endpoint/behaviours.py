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
from typing import Any

from tauray.endpoint.audio_agent import AUDIO_BEHAVIOURS
from tauray.endpoint.judges import JUDGE_BEHAVIOURS
from tauray.endpoint.replies import (  # noqa: F401  (re-exported: behaviours import them from here)
    Behaviour,
    BehaviourError,
    BehaviourSettings,
    Reply,
    UnknownBehaviour,
    arguments_for,
    completion_words,
    conversation_digest,
    model_param,
    offered_functions,
    pick,
    placeholder_for,
    prompt_words,
    request_messages,
    split_model,
    text_reply,
    tool_call_reply,
)
from tauray.endpoint.roles import ROLE_BEHAVIOURS
from tauray.endpoint.scripted import (  # noqa: F401  (re-exported: the registry's names)
    STOP_TOKEN,
    scripted_agent,
    scripted_agent_quiet,
    scripted_user,
    scripted_user_impatient,
)
from tauray.endpoint.shapes import SHAPE_BEHAVIOURS
from tauray.endpoint.writers import WRITING_BEHAVIOURS

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
    **AUDIO_BEHAVIOURS,
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
