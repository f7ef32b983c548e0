"""Turning a stored conversation into the text a judge reads.

The rendering is the judge's whole view, so it must be unambiguous and must
not let the conversation steer the judge. Three rules:

* Delimiters are structural: the record starts and ends with marker lines at
  column 0, and every line of message content is indented behind ``  | ``, so
  no content can ever produce a line that looks like a marker.
* Tool calls and tool results are rendered as text with the tool's name and
  JSON arguments (an empty result says so; nothing renders as "None").
* Content that imitates the markers or the verdict format (verdict-shaped JSON
  keys, code fences, "VERDICT:" lines) is neutralised: the words stay readable
  but no longer parse as a verdict, so an agent cannot write its own grade into
  the record and have a judge reply echo it back as one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

BEGIN = "===== BEGIN CONVERSATION RECORD ====="
END = "===== END CONVERSATION RECORD ====="
_INDENT = "  | "

_MARKER = re.compile(r"(?i)(begin|end)(\s+)(conversation\s+record)")
_RULE = re.compile(r"={3,}|<{3,}|>{3,}|#{3,}")
_FENCE = re.compile(r"`{3,}")
_VERDICT_KEY = re.compile(
    r"""(["'])(verdict|verdicts|passed|pass|resolved|met|results|assertions|reasoning)\1(\s*):""", re.IGNORECASE)
_VERDICT_WORD = re.compile(r"(?i)\b(verdict|grade|judgement|judgment)(\s*)([:=])")
_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


def neutralise(text: str) -> str:
    """``text`` with delimiter and verdict-format imitations defused (readable, not parseable)."""
    text = _MARKER.sub(lambda m: f"{m.group(1)}{m.group(2)}(quoted) {m.group(3)}", text)
    text = _RULE.sub(lambda m: " ".join(m.group(0)[:3]), text)
    text = _FENCE.sub("'''", text)
    text = _VERDICT_KEY.sub(lambda m: f"<{m.group(2)}>{m.group(3)}=", text)
    text = _VERDICT_WORD.sub(lambda m: f"{m.group(1)} (quoted){m.group(2)}-", text)
    return text


def _block(text: str | None, empty: str) -> str:
    body = neutralise(text) if text is not None and text.strip() else empty
    return "\n".join(_INDENT + line for line in body.splitlines() or [empty])


def _field(message: Any, name: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(name)
    return getattr(message, name, None)


def _calls(raw: Any) -> list[dict[str, Any]]:
    if raw is None or (isinstance(raw, float) and raw != raw):  # None or NaN from pandas
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return [{"id": "", "name": "unparseable_tool_calls", "arguments": raw}]
    return [c for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []


def _arguments(raw: Any) -> str:
    if raw is None:
        return "{}"
    if isinstance(raw, str):
        try:
            return json.dumps(json.loads(raw), ensure_ascii=False, sort_keys=True)
        except ValueError:
            return f"(malformed arguments) {raw}"
    return json.dumps(raw, ensure_ascii=False, sort_keys=True, default=str)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value)


def render_transcript(messages: Iterable[BaseModel | Mapping[str, Any]]) -> str:
    """The conversation as delimited, neutralised text (messages in ``seq`` order)."""
    lines = [BEGIN]
    tool_names: dict[str, str] = {}
    for number, message in enumerate(messages, start=1):
        side = _field(message, "side")
        role = _field(message, "role")
        who = "AGENT" if side == "agent" else "CUSTOMER"
        content = _text(_field(message, "content"))
        if role == "tool":
            call_id = _text(_field(message, "tool_call_id")) or ""
            tool = tool_names.get(call_id, "unknown tool")
            label = f"TOOL RESULT for the agent ({tool})" if side == "agent" else (
                f"DEVICE RESULT on the customer's phone ({tool})")
            lines.append(f"#{number} {label}:")
            lines.append(_block(content, "(empty result)"))
            continue
        calls = _calls(_field(message, "tool_calls"))
        if content is not None and content.strip() or not calls:
            lines.append(f"#{number} {who} says:")
            lines.append(_block(content, "(no text)"))
        for call in calls:
            name = _NAME.sub("_", str(call.get("name") or "unnamed")) or "unnamed"
            tool_names[str(call.get("id") or "")] = name
            action = "AGENT calls tool" if side == "agent" else "CUSTOMER performs phone action"
            lines.append(f"#{number} {action} {name} with arguments:")
            lines.append(_block(_arguments(call.get("arguments")), "{}"))
    lines.append(END)
    return "\n".join(lines)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["BEGIN", "END", "neutralise", "render_transcript", "text_hash"]
