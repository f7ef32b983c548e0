"""What every behaviour of the test endpoint is built from: the reply it returns, the
ways it refuses, and helpers that read a Chat Completions request.

A behaviour stands in for a model: it looks at one request body and decides what the
assistant says next. Behaviours are pure functions of the request (plus the endpoint's
config), so the same conversation always gets the same answer and any number of requests
can run side by side; where one needs to "choose", it hashes the conversation so far.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Protocol


class BehaviourSettings(Protocol):
    """The part of the endpoint config a behaviour may read."""

    @property
    def user_turns(self) -> int: ...


@dataclass(frozen=True)
class Reply:
    """What a behaviour answers: the assistant message and why it stopped."""

    message: dict[str, Any]
    finish_reason: str  # "stop" or "tool_calls"
    empty_choices: bool = False  # answer with a completion whose "choices" list is empty


Behaviour = Callable[[dict[str, Any], BehaviourSettings], Reply]


class UnknownBehaviour(KeyError):
    """The request named a model that no behaviour answers to."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.model = model


class BehaviourError(Exception):
    """A behaviour's way to answer with an HTTP error, as a provider refusing a request does."""

    def __init__(self, status: int, message: str, err_type: str = "invalid_request_error", code: str | None = None,
                 error: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type
        self.code = code
        self.error = error  # the whole error object, where a provider documents its own (Azure's filters)


# --------------------------------------------------------------------------- helpers


def split_model(model: str) -> tuple[str, str | None]:
    """Split ``name:param`` into its name and optional parameter."""
    name, sep, param = model.partition(":")
    return name.strip(), (param.strip() if sep else None)


def model_param(body: dict[str, Any]) -> str | None:
    """The parameter after the colon in the request's model name, if any."""
    return split_model(str(body.get("model", "")))[1]


def conversation_digest(body: dict[str, Any]) -> int:
    """A stable integer for the conversation so far.

    Python's built-in ``hash`` is salted per process, so it cannot give the
    same choice across runs; a blake2b digest of the canonical JSON can.
    """
    raw = json.dumps(body.get("messages", []), sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(raw.encode(), digest_size=8).digest(), "big")


def pick(options: list[Any] | tuple[Any, ...], digest: int, salt: int = 0) -> Any:
    return options[(digest + salt) % len(options)]


def request_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages") or []
    return [m for m in messages if isinstance(m, dict)]


def offered_functions(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function specs offered in the request, in order."""
    specs = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function") if tool.get("type", "function") == "function" else None
            if isinstance(fn, dict) and fn.get("name"):
                specs.append(fn)
    return specs


def text_reply(content: str) -> Reply:
    return Reply({"role": "assistant", "content": content}, "stop")


def tool_call_reply(name: str, arguments: str, call_id: str) -> Reply:
    """An assistant message with one function call; ``arguments`` is sent as given."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return Reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def placeholder_for(schema: Any) -> Any:
    """A value that fits a JSON-schema property well enough for a scripted call."""
    if not isinstance(schema, dict):
        return "unknown"
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict)]
        non_null = [o for o in options if o.get("type") != "null"]
        if non_null:
            return placeholder_for(non_null[0])
    kind = schema.get("type")
    if isinstance(kind, list):  # e.g. ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    return {
        "string": "unknown",
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "object": {},
        "array": [],
        "null": None,
    }.get(kind, "unknown")


def arguments_for(function: dict[str, Any]) -> dict[str, Any]:
    """Placeholder arguments for a function's required parameters."""
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    return {name: placeholder_for(props.get(name)) for name in params.get("required") or []}


def _word_count(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):  # content parts
        return sum(_word_count(p.get("text") if isinstance(p, dict) else p) for p in value)
    return 0


def prompt_words(body: dict[str, Any]) -> int:
    """Rough token count of the request: words across all messages."""
    total = 0
    for m in request_messages(body):
        total += _word_count(m.get("content"))
        for call in m.get("tool_calls") or []:
            fn = (call.get("function") or {}) if isinstance(call, dict) else {}
            total += 1 + _word_count(str(fn.get("arguments", "")))
    return total


def completion_words(message: dict[str, Any]) -> int:
    """Rough token count of an assistant message."""
    total = _word_count(message.get("content"))
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        total += 1 + len(str(fn.get("arguments", "")).split())
    return total


__all__ = ["Behaviour", "BehaviourError", "BehaviourSettings", "Reply", "UnknownBehaviour", "arguments_for",
           "completion_words", "conversation_digest", "model_param", "placeholder_for", "prompt_words",
           "split_model", "text_reply", "tool_call_reply"]
