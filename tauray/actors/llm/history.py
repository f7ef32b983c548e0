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

Reasoning goes back where the provider requires it. The view holds no reasoning, so the
client keeps each tool-calling reply's reasoning by call id and puts it back on that turn:
Anthropic/Bedrock thinking blocks with their signatures (``thinking_returned``; refused
with 400 otherwise on a tool round) and DeepSeek's ``reasoning_content`` (``reasoning_returned``;
DeepSeek: "The reasoning_content in the thinking mode must be passed back to the API").

litellm changes some histories on its own way out; :func:`litellm_adaptations` names them so
they are recorded too: ``system_as_user`` (o3, o3-mini, o4-mini, o1-mini: litellm's
o-series transformation turns the system prompt into a user turn where its model map says
the model takes no system messages) and ``reasoning_placeholder`` (DeepSeek with thinking
on: an assistant turn without reasoning gets a single space as its reasoning).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from typing import Any

OPEN_FAMILIES = frozenset({"openai", "azure", "azure_ai", "text-completion-openai"})
"""Providers that take the view as written (assistant-first, empty turns, any ending)."""

OPENING = "(The conversation begins.)"
"""The user turn put before an assistant-first history where a provider needs one."""

CONTINUE = "(Please continue.)"
"""The user turn put after a history that ends on the speaker's own words."""

REASONING_FAMILIES = frozenset({"deepseek"})
"""Providers whose reasoning text (``reasoning_content``) must go back on a tool round."""

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


def with_reasoning(messages: list[dict[str, Any]], providers: list[str],
                   kept: Mapping[str, tuple[list[dict[str, Any]], str | None]]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The messages with each tool-calling assistant turn's kept reasoning put back, as the
    providers require (``kept``: first call id -> (thinking blocks, reasoning text)). Thinking
    blocks go back for every provider (litellm sends them where the provider takes them);
    reasoning text only to :data:`REASONING_FAMILIES`. Pure."""
    if not kept:
        return messages, ()
    text_back = bool(REASONING_FAMILIES.intersection(providers))
    marks: set[str] = set()
    out = []
    for m in messages:
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        blocks, text = kept.get(str(calls[0].get("id")), ([], None)) if calls else ([], None)
        extra: dict[str, Any] = {}
        if blocks and not m.get("thinking_blocks"):
            extra["thinking_blocks"] = blocks
            marks.add("thinking_returned")
        if text and text_back and not m.get("reasoning_content"):
            extra["reasoning_content"] = text
            marks.add("reasoning_returned")
        out.append({**m, **extra} if extra else m)
    return out, tuple(sorted(marks))


@functools.lru_cache(maxsize=256)
def _litellm_says(question: str, bare: str, provider: str) -> bool:
    """litellm's answer to ``supports_system_messages`` or ``supports_reasoning`` for a model, asked
    once per process: it walks litellm's model table each time (about 7% of a host's CPU in
    ``bench engine`` when asked on every call), and a model's entry does not change during a run."""
    from litellm import utils  # lazy: litellm is heavy

    try:
        if question == "system":
            return bool(utils.supports_system_messages(bare, provider))
        return bool(utils.supports_reasoning(model=bare, custom_llm_provider=provider))
    except Exception:
        return question == "system"  # unknown: litellm sends a system message as it is, and adds no reasoning


def litellm_adaptations(messages: list[dict[str, Any]], model: str, provider: str,
                        params: Mapping[str, Any]) -> tuple[str, ...]:
    """The changes litellm itself makes to these messages on the way out (see the module
    docstring), asked of litellm's own tables; empty when it makes none."""
    bare = model.split("/", 1)[1] if model.startswith(f"{provider}/") else model
    marks = []
    if provider in ("openai", "azure") and any(m.get("role") == "system" for m in messages):
        if not _litellm_says("system", bare, provider):
            marks.append("system_as_user")
    thinking = params.get("thinking")
    if (provider in REASONING_FAMILIES and isinstance(thinking, dict) and thinking.get("type") == "enabled"
            and any(m.get("role") == "assistant" and not m.get("reasoning_content") for m in messages)):
        if _litellm_says("reasoning", bare, provider):
            marks.append("reasoning_placeholder")
    return tuple(marks)


def outgoing_adaptations(view: list[dict[str, Any]], model: str, provider: str,
                         params: Mapping[str, Any]) -> tuple[str, ...]:
    """What ``models check`` shows beside :func:`adapt_history` for a sample view: the
    reasoning tauray sends back on a tool round for ``provider`` and litellm's own changes."""
    tool_round = any(m.get("role") == "assistant" and m.get("tool_calls") for m in view)
    back = ("reasoning_returned",) if tool_round and provider in REASONING_FAMILIES else ()
    view = [{**m, "reasoning_content": "r"} if back and m.get("tool_calls") else m for m in view]
    return tuple(sorted({*back, *litellm_adaptations(view, model, provider, params)}))


__all__ = ["CONTINUE", "OPENING", "OPEN_FAMILIES", "REASONING_FAMILIES", "adapt_history",
           "litellm_adaptations", "mistral_id", "outgoing_adaptations", "with_reasoning"]
