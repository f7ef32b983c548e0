"""Finding the JSON values in a judge's reply, and what is left around them.

Every complete JSON object or array in the reply is decoded (fences and prose
skipped). A value that fails to decode (broken, truncated, a duplicate key) is
skipped *as a whole*: the scanner never restarts inside it, so a verdict quoted
in the reasoning of a broken reply is never read as the reply's own. Nesting
deeper than :data:`MAX_DEPTH` is a broken value, never a RecursionError.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# The first character after "{" or "[" that can begin JSON content: anything
# else ("{the agent...", "[see R1") is prose, not a value that failed to decode.
MAX_DEPTH = 64
_OBJECT_START = re.compile(r"""\s*(["'}]|[A-Za-z_]\w*\s*:)""")
_ARRAY_START = re.compile(r"""\s*(["'{\[\]\-0-9]|true|false|null)""")


# A reasoning section the judge writes before its answer (a draft, self-corrections): ``<think>…</think>``
# and its kin, ``[THINK]…[/THINK]``, ``◁think▷…◁/think▷``, a harmony analysis channel. Only at the very
# start of the reply, closed, and only the sections there: what follows is the answer.
_SECTION = re.compile(
    r"\A\s*(?:<(think|thinking|reasoning|reflection|analysis|scratchpad)\s*>.*?</\1\s*>"
    r"|\[think\].*?\[/think\]|\u25c1think\u25b7.*?\u25c1/think\u25b7"
    r"|(?:<\|start\|>assistant)?<\|channel\|>analysis<\|message\|>.*?<\|end\|>)", re.S | re.I)
_FINAL_CHANNEL = re.compile(r"\A\s*(?:<\|start\|>assistant)?<\|channel\|>final<\|message\|>")


def answer_part(text: str) -> tuple[str, bool]:
    """The reply less the reasoning sections it opens with (drafts before the final answer are not answers),
    and whether there were any."""
    stripped = False
    while (m := _SECTION.match(text)) is not None:
        text, stripped = text[m.end():], True
    if (m := _FINAL_CHANNEL.match(text)) is not None:
        text = text[m.end():]
    return text, stripped


class DuplicateKeyError(ValueError):
    """An object names the same key twice: which one the judge meant is unknowable."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKeyError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def _close(text: str, start: int) -> tuple[int | None, int]:
    """End (exclusive) of the bracketed region opening at ``start`` (None if it never closes), and its depth."""
    depth, deepest, in_string, escaped = 0, 0, False, False
    for k in range(start, len(text)):
        c = text[k]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return k + 1, deepest
    return None, deepest


@dataclass
class Scan:
    """What a reply holds: the values that decode, the bracketed spans that do not, and the prose."""

    values: list[tuple[int, Any]] = field(default_factory=list)
    broken: list[tuple[int, str, str]] = field(default_factory=list)  # (start, decoder error, span text)
    prose: list[str] = field(default_factory=list)


def scan(text: str) -> Scan:
    """Every top-level JSON value of ``text`` in order; a value that fails to decode is skipped whole."""
    out = Scan()
    i, n, last = 0, len(text), 0

    def consumed(j: int, k: int) -> None:
        nonlocal last
        out.prose.append(text[last:j])
        last = k

    while i < n:
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            break
        if not (_OBJECT_START if text[j] == "{" else _ARRAY_START).match(text, j + 1):
            i = j + 1  # prose with a bracket in it, not the start of a value
            continue
        end, deepest = _close(text, j)
        try:
            if deepest > MAX_DEPTH:  # no reply nests this deep; decoding it would only exhaust the stack
                raise RecursionError(f"nested {deepest} levels deep (more than {MAX_DEPTH})")
            value, stop = _DECODER.raw_decode(text, j)
        except (ValueError, RecursionError) as exc:
            error = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            if end is None:
                error = f"{error}; it never closes (truncated?)"
            out.broken.append((j, error, text[j:end]))
            i = n if end is None else end
            consumed(j, i)
            continue
        if end is not None and stop != end:  # decoded a prefix of a larger bracketed region
            out.broken.append((j, "value is followed by unbalanced text", text[j:end]))
            i = end
            consumed(j, i)
            continue
        if text[j - 1:j] == '"' or text[stop:stop + 1] == '"':
            # A value glued to a double quote sits inside a string the reply failed to
            # escape (a quote in a broken reasoning), not at the reply's own level.
            out.broken.append((j, "value sits inside an unescaped quoted string", text[j:stop]))
            i = stop
            consumed(j, i)
            continue
        out.values.append((j, value))
        i = stop
        consumed(j, i)
    out.prose.append(text[last:])
    return out


__all__ = ["MAX_DEPTH", "DuplicateKeyError", "Scan", "answer_part", "scan"]
