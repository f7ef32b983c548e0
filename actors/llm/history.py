"""A side's view turned into a history the provider family accepts: one place, every request.

A side's view is written the way τ² writes it (OpenAI chat format): the agent's opens
with its own greeting, a silent reply is an empty assistant turn, and the user
simulator's may end on its own words. OpenAI and Azure take all of that. Other
families document narrower rules, and litellm passes most histories through as given:

================  ===============================================================  ====================
Family            Documented rule                                                   Adaptation
================  ===============================================================  ====================
bedrock           Converse: "the first message must be from the user"; content     ``user_first``,
                  blocks must not be blank; roles alternate                         ``empty_dropped``,
                                                                                    ``merged``
gemini,           ``contents`` must start with role ``user``; a ``text`` part must  ``user_first``,
vertex_ai         not be empty; ``user``/``model`` turns alternate                  ``empty_dropped``,
                                                                                    ``merged``
anthropic         the first message is the user's; a final assistant turn is a      ``user_first``,
                  prefill (continued, refused with thinking)                        ``ends_on_user``
mistral           tool-call ids are 9 characters ``[a-zA-Z0-9]``; the last message  ``mistral_ids``,
                  must be user or tool (assistant only with ``prefix``)             ``ends_on_user``
other (vLLM,      chat templates (Gemma, Mistral) raise on assistant-first or       ``user_first``,
ollama, groq...)  non-alternating histories                                         ``ends_on_user``
================  ===============================================================  ====================

What is changed is named (``adaptations``) so a reader of the tables can tell that the
model saw the view through one of these rules; the view itself is never changed.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

OPEN_FAMILIES = frozenset({"openai", "azure", "azure_ai", "text-completion-openai"})
"""Providers that take the view as written (assistant-first, empty turns, any ending)."""

OPENING = "(The conversation begins.)"
"""The user turn put before an assistant-first history where a provider needs one."""

CONTINUE = "(Please continue.)"
"""The user turn put after a history that ends on the speaker's own words."""

_MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


def _blank(message: dict[str, Any]) -> bool:
    content = message.get("content")
    text = content if isinstance(content, str) else "".join(
        str(p.get("text") or "") for p in content or [] if isinstance(p, dict))
    return not text.strip() and not message.get("tool_calls")


def mistral_id(call_id: str) -> str:
    """A 9-character alphanumeric id, the same for the same call id; valid ids are kept."""
    if _MISTRAL_ID.match(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()
    return "".join(c for c in digest if c.isalnum())[:9]


def _merge(messages: list[dict[str, Any]], marks: set[str]) -> list[dict[str, Any]]:
    """Consecutive plain text turns of one role joined into one (roles must alternate)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        prev = out[-1] if out else None
        plain = m["role"] in ("user", "assistant") and not m.get("tool_calls") and isinstance(m.get("content"), str)
        if (prev is not None and plain and prev["role"] == m["role"] and not prev.get("tool_calls")
                and isinstance(prev.get("content"), str)):
            out[-1] = {**prev, "content": f"{prev['content']}\n\n{m['content']}"}
            marks.add("merged")
        else:
            out.append(m)
    return out


def adapt_history(messages: list[dict[str, Any]], provider: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The request's messages for ``provider`` and the names of the rules that changed them.

    Pure; ``messages`` is not modified. OpenAI-family providers get the messages as given.
    """
    if provider in OPEN_FAMILIES:
        return messages, ()
    marks: set[str] = set()
    system = [m for m in messages if m.get("role") == "system"]
    rest: list[dict[str, Any]] = []
    for m in messages:
        if m.get("role") == "system":
            continue
        if m.get("role") in ("user", "assistant") and _blank(m):
            marks.add("empty_dropped")
            continue
        if m.get("role") == "assistant" and m.get("tool_calls") and not (m.get("content") or "").strip():
            m = {**m, "content": None}  # no blank text part beside the calls (Gemini, Bedrock)
        rest.append(m)
    rest = _merge(rest, marks)
    if not rest or rest[0]["role"] != "user":
        rest.insert(0, {"role": "user", "content": OPENING})
        marks.add("user_first")
    if rest[-1]["role"] == "assistant" and not rest[-1].get("tool_calls"):
        rest.append({"role": "user", "content": CONTINUE})
        marks.add("ends_on_user")
    if provider in ("mistral", "codestral"):
        rest = [_mistral_ids(m, marks) for m in rest]
    return system + rest, tuple(sorted(marks))


def _mistral_ids(message: dict[str, Any], marks: set[str]) -> dict[str, Any]:
    if message.get("role") == "tool" and message.get("tool_call_id"):
        new = mistral_id(str(message["tool_call_id"]))
        if new != message["tool_call_id"]:
            marks.add("mistral_ids")
            return {**message, "tool_call_id": new}
    if message.get("tool_calls"):
        calls = [{**c, "id": mistral_id(str(c.get("id") or ""))} for c in message["tool_calls"]]
        if any(c["id"] != o.get("id") for c, o in zip(calls, message["tool_calls"])):
            marks.add("mistral_ids")
            return {**message, "tool_calls": calls}
    return message


__all__ = ["CONTINUE", "OPENING", "OPEN_FAMILIES", "adapt_history", "mistral_id"]
