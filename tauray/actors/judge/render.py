"""Turning a stored conversation into the text a judge reads.

The rendering is the judge's whole view, so it must be unambiguous and must
not let the conversation write the judge's answer. Everything inside the
record (agent and customer text, tool results, tool-call arguments, malformed
or not) was written by a party under evaluation, so it is *defused by
structure*, not by a list of suspicious words:

* **No JSON can start inside the record.** The parser only ever decodes a
  value that begins with ``{`` or ``[``; :func:`defuse` replaces every curly
  and square bracket of content with look-alike ornaments (``❴ ❵ ⟦ ⟧``) that
  no decoder treats as JSON. Whatever the encoding (``\\u0070assed`` escapes,
  full-width letters, zero-width characters), content cannot decode to a
  value, so a judge that quotes the record cannot quote a verdict. The
  replacement runs after NFKC normalisation, so full-width and small-form
  brackets (``｛ ﹛``) are caught too.
* **Delimiters are structural.** The record starts and ends with marker lines
  at column 0 and every line of content is indented behind ``  | ``, so no
  content can produce a marker line. Look-alike markers inside content are
  matched after NFKC normalisation with zero-width and other format (Cf)
  characters removed, and marked as quoted so the judge is not misled either.
* Tool calls and tool results are rendered as text with the tool's name and
  arguments (an empty result says so; nothing renders as "None").

The same :func:`defuse` is applied to every per-conversation value placed in a
judge prompt (ticket, goal, NL assertions), so no channel into the prompt can
carry a verdict.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

BEGIN = "===== BEGIN CONVERSATION RECORD ====="
END = "===== END CONVERSATION RECORD ====="
_INDENT = "  | "

_BRACKETS = str.maketrans({"{": "\u2774", "}": "\u2775", "[": "\u27e6", "]": "\u27e7"})
# Marker look-alikes, matched on the folded text (case, look-alikes, small capitals, Lisu letters,
# combining underlines and escapes already gone): "END CONVERSATION RECORD", "END OF CONVERSATION
# RECORD", "END_CONVERSATION_RECORD", "endconversationrecord".
_MARKER = re.compile(r"(?<![a-z0-9])(begin|end)[\s_\-]*(?:of[\s_\-]+)?(?:the[\s_\-]+)?conversation[\s_\-]*record")
_RULE = re.compile(r"={3,}|<{3,}|>{3,}|#{3,}|~{3,}")
_FENCE = re.compile(r"`{3,}")
_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_LINE_BREAKS = re.compile(r"\r\n?|[\u2028\u2029\x85\x0b\x0c]")


def _visible(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return not (cat == "Cf" or (cat == "Cc" and ch not in "\n\t") or cat in ("Cs", "Co", "Cn"))


# Letters that NFKC keeps but a reader takes for Latin ones: Cyrillic, Greek, Latin small capitals,
# Lisu (Fraser) capitals, dotless i. The "Е" in "ЕND", the "ᴇ" in "ᴇɴᴅ", the "ꓰ" in "ꓰꓠꓓ" read as "e".
CONFUSABLES = str.maketrans(dict(zip(
    "аеосрхуіјѕԁһӏԛԝүкАВЕКМНОРСТХІЈЅҮαοριυνκτχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢı"
    "ꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ",
    "aeocpxyijsdhlqwykABEKMHOPCTXIJSYaopiuvktxeABEZHIKMNOPTYX"
    "abcdefghijklmnoprstuvwyzi"
    "BPDTGKJCZFMNLSRVHWXYAEIOU", strict=True)))


def fold_map(text: str) -> tuple[str, list[int]]:
    """``text`` folded for look-alike markers (NFKC per character, format characters and combining marks
    dropped, look-alikes mapped, casefolded), and for each folded character the index in ``text`` just
    after the character it came from, so a match on the folded text marks the original."""
    parts: list[str] = []
    ends: list[int] = []
    for at, ch in enumerate(text):
        if ch.isascii():
            parts.append(ch.lower())
            ends.append(at + 1)
            continue
        for c in unicodedata.normalize("NFKC", ch):
            if unicodedata.category(c) not in ("Cf", "Mn", "Me"):
                folded = c.translate(CONFUSABLES).casefold()
                parts.append(folded)
                ends.extend([at + 1] * len(folded))
    return "".join(parts), ends


def defuse(text: str) -> str:
    """``text`` as it may appear inside a judge prompt: readable, but unable to carry JSON or a marker.

    NFKC-normalised; format, control and unassigned characters removed; every
    bracket replaced by an ornament; marker and rule look-alikes broken up.
    """
    text = unicodedata.normalize("NFKC", _LINE_BREAKS.sub("\n", text))
    text = "".join(ch for ch in text if _visible(ch))
    text = unicodedata.normalize("NFKC", text)  # removing characters can expose a new composition
    text = text.translate(_BRACKETS)
    # Look-alike markers ("ЕND" with a Cyrillic Е, "ᴇɴᴅ", "E̲N̲D̲") are found on the folded text.
    folded, ends = fold_map(text)
    marks = [ends[m.end(1) - 1] for m in _MARKER.finditer(folded)]
    text = _insert(text, marks, " (quoted)")
    text = _RULE.sub(lambda m: " ".join(m.group(0)[:3]), text)
    return _FENCE.sub("'''", text)


def _insert(text: str, positions: list[int], mark: str) -> str:
    """``mark`` inserted at each position (once per position), in one pass: linear in the text's size."""
    parts, last = [], 0
    for at in sorted(set(positions)):
        parts += [text[last:at], mark]
        last = at
    parts.append(text[last:])
    return "".join(parts)


# Kept for callers of the earlier name.
neutralise = defuse


def _block(text: str | None, empty: str) -> str:
    body = defuse(text) if text is not None and text.strip() else empty
    if not body.strip():
        body = empty
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
    calls = [c for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []
    # OpenAI's shape nests name and arguments under "function"; tauray's rows keep them flat.
    return [{**c, **{k: v for k, v in c["function"].items() if k in ("name", "arguments")}}
            if isinstance(c.get("function"), Mapping) else c for c in calls]


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
    """The conversation as delimited, defused text (messages in the order given)."""
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
            name = _NAME.sub("_", defuse(str(call.get("name") or "unnamed")))[:80] or "unnamed"
            tool_names[str(call.get("id") or "")] = name
            action = "AGENT calls tool" if side == "agent" else "CUSTOMER performs phone action"
            lines.append(f"#{number} {action} {name} with arguments:")
            lines.append(_block(_arguments(call.get("arguments")), "(no arguments)"))
    lines.append(END)
    return "\n".join(lines)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["BEGIN", "END", "defuse", "neutralise", "render_transcript", "text_hash"]
