"""A provider's completion, reduced to what the engine records and scores, whatever its shape.

Servers disagree on the details of a reply, and litellm passes some of them on
as they came. Each shape has one documented outcome here, so that a server's
habit is never mistaken for the model's misbehaviour (or the other way round),
and never becomes an internal error:

=====================================  ==============================================================
Shape of the reply                     Outcome
=====================================  ==============================================================
arguments ``None``, ``""``, ``{}``     a call with no arguments: ``"{}"`` (valid, not malformed)
arguments a JSON object (not text)     its JSON text; the call runs as usual
arguments text that is not JSON        kept as sent: the engine answers "not valid JSON", counts it
                                       malformed, and the model may try again
tool call without an id (or a          a generated id (``call_<hex>``), unique, so each tool result
duplicate id within the reply)         answers exactly one call
several tool calls in one reply        run one at a time in order; after a write the rest wait for
                                       the sync (``SideSession``), then run
text beside tool calls                 kept in the speaker's own transcript with the calls; not said
                                       to the other side (only a reply without calls is)
no ``choices`` at all                  an empty reply, counted (``empty_replies``), reason
                                       ``no_choices``; the conversation goes on
``content`` ``None`` or blank, no      an empty reply ``""``, counted (``empty_replies``), reason
tool calls                             ``no_content``; the conversation goes on
=====================================  ==============================================================
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EmptyReason = Literal["no_choices", "no_content"]


class RawToolCall(BaseModel):
    """A tool call as the model produced it (id and no-argument forms normalised); the engine
    parses (and judges) the arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Provider-assigned id that the tool result must echo (generated when missing).")
    name: str = Field(description="Name of the called tool.")
    arguments: str = Field(description="Arguments as the raw JSON text returned, possibly malformed.")


class ModelReply(BaseModel):
    """One completion, reduced to what the engine records and scores."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None = Field(description='Text of the reply; "" for an empty reply, None beside tool calls.')
    tool_calls: list[RawToolCall] = Field(default_factory=list, description="Tool calls, in the order returned.")
    finish_reason: str | None = Field(None, description="Why generation stopped, as the provider said.")
    prompt_tokens: int = Field(0, ge=0, description="Input tokens billed for the successful attempt.")
    completion_tokens: int = Field(0, ge=0, description="Output tokens billed for the successful attempt.")
    cost_usd: float | None = Field(None, description="litellm's cost estimate; None when litellm has no price for the model.")
    latency_s: float = Field(0.0, ge=0.0, description="Seconds from sending the request to the reply, retries included.")
    retries: int = Field(0, ge=0, description="Router retries the call needed before this reply (0: first attempt).")
    model: str = Field(description="litellm model string of the deployment that answered (a fallback if one did).")
    seed_applied: bool | None = Field(
        None, description="True when a seed was sent with the call, False when one was asked for but the provider "
        "takes none (left out), None when no seed was asked for.")
    empty: EmptyReason | None = Field(
        None, description="Why the reply is empty (no_choices: the completion had none; no_content: no text and no "
        "tool calls); None for a reply with something in it.")


def arguments_text(arguments: Any) -> str:
    """The arguments as JSON text; ``None``, blank text and ``{}`` all mean "no arguments"."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments if arguments.strip() else "{}"
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError):
        return str(arguments)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def tool_calls_of(message: Any) -> list[RawToolCall]:
    """The message's tool calls with arguments as text and ids present and distinct."""
    calls: list[RawToolCall] = []
    seen: set[str] = set()
    for call in _field(message, "tool_calls") or []:
        function = _field(call, "function")
        call_id = str(_field(call, "id") or "")
        if not call_id or call_id in seen:
            call_id = f"call_{uuid.uuid4().hex[:16]}"
        seen.add(call_id)
        calls.append(RawToolCall(id=call_id, name=str(_field(function, "name") or ""),
                                 arguments=arguments_text(_field(function, "arguments"))))
    return calls


def reply_of(response: Any, *, latency_s: float, model: str, cost_usd: float | None,
             seed_applied: bool | None, retries: int = 0) -> ModelReply:
    """The :class:`ModelReply` of a litellm ``ModelResponse``, every shape mapped as the table says."""
    usage = _field(response, "usage")
    common = dict(prompt_tokens=int(_field(usage, "prompt_tokens") or 0),
                  completion_tokens=int(_field(usage, "completion_tokens") or 0),
                  cost_usd=cost_usd, latency_s=latency_s, model=model, seed_applied=seed_applied, retries=retries)
    choices = _field(response, "choices") or []
    if not choices:
        return ModelReply(content="", empty="no_choices", finish_reason=None, **common)
    choice = choices[0]
    message = _field(choice, "message")
    calls = tool_calls_of(message)
    content = _field(message, "content")
    if content is not None and not isinstance(content, str):  # content parts
        content = "".join(str(_field(p, "text") or "") for p in content) if isinstance(content, list) else str(content)
    empty: EmptyReason | None = None
    if not calls and not (content or "").strip():
        content, empty = content or "", "no_content"  # an empty reply is a reply; the engine counts it
    return ModelReply(content=content, tool_calls=calls, finish_reason=_field(choice, "finish_reason"),
                      empty=empty, **common)


__all__ = ["EmptyReason", "ModelReply", "RawToolCall", "arguments_text", "reply_of", "tool_calls_of"]
