"""Reading a verdict out of a judge's reply, or saying precisely why not.

A judge is asked for JSON (through ``response_format`` where the provider
supports it, and always in the prompt), but replies arrive fenced, wrapped in
prose, repeated, truncated, hedged or quoting the conversation. Parsing is a
search with one rule: **one verdict per reply, or unscored**.

* Every complete JSON object or array in the reply is decoded (fences and prose
  skipped). A value that fails to decode (broken, truncated, a duplicate key)
  is skipped *as a whole*: the scanner never restarts inside it, so a verdict
  quoted in the reasoning of a broken reply is never read as the reply's own.
* Every verdict-shaped value is collected, at any depth: an object carrying the
  schema's own verdict key (``verdict``). Only that key produces a verdict.
* All collected verdicts must agree. Two different ones (a correction, a quoted
  hypothetical, a second block, two lists) make the question unscored with a
  reason starting ``ambiguous:`` that lists the candidates.
* Liberal in hearing disagreement, strict in accepting: every other *voice*
  that states a verdict and disagrees makes the question ambiguous. Voices are
  look-alike and off-schema keys (``Verdict``, full-width or Cyrillic
  look-alikes, ``passed``, ``is_resolved``, ``overall_verdict``, ``status``;
  ``0``/``1`` values included) beside ``verdict`` or in an object that reads
  as a reply; the example's shape around a real value; and verdict text
  outside every decoded value (``Verdict: FAIL``, ``{verdict: x}``,
  ``<verdict>fail</verdict>``, smart quotes, ``A1: not met``), in prose or in
  a value that failed to decode. A quoted record (ornaments, ``  | `` lines)
  is not a voice; an object with other data beside its voice (a tool result
  ``{"status": "ok", "passed": true}``) is quoted data, not a voice.
* A ``verdict`` whose value is the prompt's placeholder (``"<pass|fail>"``) is
  an echo of the reply-format example and says nothing.
* Nesting deeper than :data:`MAX_DEPTH` is a broken value, never a RecursionError.

Whatever cannot be matched back to exactly one answer per question becomes
*unscored* with a reason, never a pass and never a fail.

The pieces: :mod:`.reply_scan` finds the JSON values, :mod:`.fold` compares text
for look-alikes, :mod:`.voices` finds and reads every statement of a verdict;
this module decides, per question, what they add up to.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.judge.reply_scan import Scan, answer_part, scan
from tauray.actors.judge.voices import (ID_KEY, NL, OVERALL, Candidate, candidates, has_item_key,
                                        off_schema_voices, reason_text, stray_nl_verdicts, stray_verdicts)

_ID = re.compile(r"^\s*[Aa]?\s*(\d+)\s*$")


class ParsedVerdict(BaseModel):
    """One question's reading of one reply: a verdict, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: bool | None = Field(description="True pass/met, False fail/not met, None unscored.")
    reasoning: str | None = Field(None, description="The judge's reasoning for this question, if given.")
    unscored_reason: str | None = Field(None, description="Why no verdict could be read; None when scored.")


def reply_schema(kind: Literal["overall", "nl"]) -> dict[str, Any]:
    """The JSON schema a reply must follow; part of the prompt hash."""
    if kind == "overall":
        return {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "verdict": {"type": "string", "enum": ["pass", "fail"]}},
            "required": ["reasoning", "verdict"],
            "additionalProperties": False,
        }
    item = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "reasoning": {"type": "string"},
                       "verdict": {"type": "string", "enum": ["met", "not_met"]}},
        "required": ["id", "reasoning", "verdict"],
        "additionalProperties": False,
    }
    return {"type": "object", "properties": {"results": {"type": "array", "items": item}},
            "required": ["results"], "additionalProperties": False}


def response_format(kind: Literal["overall", "nl"]) -> dict[str, Any]:
    """litellm ``response_format`` asking for :func:`reply_schema`."""
    return {"type": "json_schema",
            "json_schema": {"name": f"judge_{kind}_verdict", "schema": reply_schema(kind), "strict": True}}


_ONLY_SECTION = "the reply holds only a reasoning section (<think>…</think> or kin) and no answer after it"


def _why_none(s: Scan, what: str) -> str:
    if s.broken:
        pos, error, _ = s.broken[0]
        extra = f" (and {len(s.broken) - 1} more)" if len(s.broken) > 1 else ""
        return (f"reply JSON starting at char {pos} could not be decoded: {error}{extra}; "
                f"nothing inside a broken value is read, and no other {what} was found")
    if s.values:
        keys = sorted({k for _, v in s.values for k in (v.keys() if isinstance(v, dict) else [])})
        return f"no {what} in the reply's JSON (top-level keys: {', '.join(keys) or 'none'})"
    return f"no JSON {what} found in reply"


# --------------------------------------------------------------------------- overall


def parse_overall(text: str | None) -> ParsedVerdict:
    """The one overall verdict in a reply, or unscored with the reason."""
    if text is None or not text.strip():
        return ParsedVerdict(verdict=None, unscored_reason="empty reply")
    text, _ = answer_part(text)
    if not text.strip():
        return ParsedVerdict(verdict=None, unscored_reason=_ONLY_SECTION)
    s = scan(text)
    cands = candidates(s.values, OVERALL)
    stray = stray_verdicts(s, OVERALL)
    real = [c for c in cands if not c.echo]
    conflicted = [c for c in real if c.problem and c.problem.startswith("ambiguous:")]
    if conflicted:
        return ParsedVerdict(verdict=None, reasoning=reason_text(conflicted[0].obj),
                             unscored_reason=conflicted[0].problem)
    # Every other voice in the reply: echoes with a real value, off-schema objects, text outside the JSON.
    others = [(c.label(), c.reading) for c in cands if c.echo and c.reading is not None]
    others += [(f"{obj!r} at {where}", reading) for obj, where, reading in off_schema_voices(s.values, parts=False)
               if not has_item_key(obj)]
    others += [(f"{w!r} outside any decoded JSON value", OVERALL[w]) for w in stray]
    voices = {("pass" if c.reading else "fail") if c.reading is not None else repr(c.raw) for c in real}
    if len(voices | {"pass" if r else "fail" for _, r in others}) > 1 and real:
        listed = [c.label() for c in real] + [label for label, _ in others]
        return ParsedVerdict(verdict=None, unscored_reason=f"ambiguous: the reply holds {len(listed)} verdicts that "
                             f"disagree: {'; '.join(listed)}"[:1000])
    voices |= {("pass" if OVERALL[w] else "fail") for w in stray}
    scored = [c for c in real if c.reading is not None]
    if scored:
        return ParsedVerdict(verdict=scored[0].reading, reasoning=reason_text(scored[-1].obj))
    if real:
        return ParsedVerdict(verdict=None, reasoning=reason_text(real[0].obj), unscored_reason=real[0].problem)
    if stray:
        prefix = "ambiguous: " if len(voices) > 1 else ""
        return ParsedVerdict(verdict=None, unscored_reason=(
            f"{prefix}verdict text {', '.join(map(repr, stray))} appears only outside any decoded JSON value; "
            + _why_none(s, "verdict"))[:1000])
    if cands:
        return ParsedVerdict(verdict=None, unscored_reason=cands[0].problem)
    return ParsedVerdict(verdict=None, unscored_reason=_why_none(s, "'verdict' key"))


# --------------------------------------------------------------------------- NL assertions


def assertion_id(index: int) -> str:
    """The id an assertion is shown under (A1, A2, ...) for position ``index`` (0-based)."""
    return f"A{index + 1}"


def _match_id(raw: Any, count: int) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        number = raw
    elif isinstance(raw, str) and (m := _ID.match(raw)):
        number = int(m.group(1))
    else:
        return None
    return number - 1 if 1 <= number <= count else None


def parse_nl(text: str | None, count: int) -> list[ParsedVerdict]:
    """One reading per assertion (in order) from a reply about ``count`` assertions.

    Every object with a ``verdict`` key is an item and must name an asked id;
    an item for an id that was not asked (or with no id) makes the whole reply
    unscored, because the judge evidently lost track of which statement is
    which. Items for one id anywhere in the reply (one list, two lists, two
    blocks, loose objects) must agree, or that assertion is ambiguous. A
    missing verdict leaves only that assertion unscored.
    """
    def all_unscored(reason: str) -> list[ParsedVerdict]:
        return [ParsedVerdict(verdict=None, unscored_reason=reason[:1000]) for _ in range(count)]

    if text is None or not text.strip():
        return all_unscored("empty reply")
    text, _ = answer_part(text)
    if not text.strip():
        return all_unscored(_ONLY_SECTION)
    s = scan(text)
    every = candidates(s.values, NL)
    cands = [c for c in every if not c.echo]
    stray = stray_verdicts(s, NL)
    extra: list[str] = []
    found: dict[int, list[Candidate]] = {}
    for c in cands:
        index = _match_id(c.obj.get(ID_KEY), count)
        if index is None:
            extra.append(f"{c.obj.get(ID_KEY)!r} at {c.where}")
        else:
            found.setdefault(index, []).append(c)
    if extra:
        return all_unscored(f"reply has verdicts for assertions that were not asked (or without an id): "
                            f"{', '.join(extra)}")
    # Other voices per assertion: echoes with a real value, off-schema items, "A1: not met" in prose.
    others: dict[int, list[tuple[str, bool]]] = {}
    for c in every:
        if c.echo and c.reading is not None and (index := _match_id(c.obj.get(ID_KEY), count)) is not None:
            others.setdefault(index, []).append((c.label(), c.reading))
    for obj, where, reading in off_schema_voices(s.values):
        if (index := _match_id(obj.get(ID_KEY), count)) is not None:
            others.setdefault(index, []).append((f"{obj!r} at {where}", reading))
    for number, reading, said in stray_nl_verdicts(s):
        # "Verdict: met" naming no assertion speaks for each (for the only one, when one was asked).
        targets = [number - 1] if number is not None else range(count)
        for index in (t for t in targets if 0 <= t < count):
            others.setdefault(index, []).append((f"{said!r} outside any decoded JSON value", reading))
    out = []
    for index in range(count):
        readings = found.get(index, [])
        aid = assertion_id(index)
        conflicted = [c for c in readings if c.problem and c.problem.startswith("ambiguous:")]
        voices = {c.reading if c.reading is not None else repr(c.raw) for c in readings}
        if readings and len(voices | {r for _, r in others.get(index, [])}) > 1 and not conflicted:
            listed = [c.label() for c in readings] + [label for label, _ in others.get(index, [])]
            out.append(ParsedVerdict(verdict=None, unscored_reason=(
                f"ambiguous: contradictory verdicts for {aid}: {'; '.join(listed)}")[:1000]))
        elif conflicted:
            out.append(ParsedVerdict(verdict=None, reasoning=reason_text(conflicted[0].obj),
                                     unscored_reason=f"{aid}: {conflicted[0].problem}"))
        elif len(voices) > 1:
            out.append(ParsedVerdict(verdict=None, unscored_reason=(
                f"ambiguous: contradictory verdicts for {aid}: {'; '.join(c.label() for c in readings)}")[:1000]))
        elif not readings:
            why = f"no verdict for {aid}"
            if not found:
                why += (f" ({'verdict text only outside any decoded JSON value; ' if stray else ''}"
                        f"{_why_none(s, 'item with an id and a verdict')})")
            out.append(ParsedVerdict(verdict=None, unscored_reason=why[:1000]))
        elif readings[0].reading is None:
            out.append(ParsedVerdict(verdict=None, reasoning=reason_text(readings[0].obj),
                                     unscored_reason=f"{aid}: {readings[0].problem}"))
        else:
            out.append(ParsedVerdict(verdict=readings[0].reading, reasoning=reason_text(readings[-1].obj)))
    return out


__all__ = ["ParsedVerdict", "assertion_id", "parse_nl", "parse_overall", "reply_schema", "response_format"]
