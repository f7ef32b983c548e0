"""Reading a verdict out of a judge's reply, or saying precisely why not.

A judge is asked for JSON (through ``response_format`` where the provider
supports it, and always in the prompt), but replies arrive fenced, wrapped in
prose, repeated, truncated or empty. Parsing is therefore a search, not a
``json.loads``: every top-level JSON value in the text is decoded in order, the
ones shaped like a verdict are kept, and when several appear the last one wins
(a model that corrects itself ends with the correction). Anything that cannot
be matched back to exactly one question becomes *unscored* with a reason,
never a pass and never a fail; an empty reply in particular never passes.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_OVERALL_PASS = {"pass", "passed", "yes", "true", "resolved", "success", "succeeded"}
_OVERALL_FAIL = {"fail", "failed", "no", "false", "not_resolved", "unresolved", "failure"}
_NL_MET = {"met", "true", "yes", "pass", "passed", "holds"}
_NL_NOT_MET = {"not_met", "not met", "unmet", "false", "no", "fail", "failed", "violated"}
_RESULT_LIST_KEYS = ("results", "assertions", "verdicts")
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


def json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in ``text``, in order (fences and prose skipped)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            break
        try:
            value, end = decoder.raw_decode(text, j)
        except ValueError:
            i = j + 1
            continue
        values.append(value)
        i = end
    return values


def _norm(value: Any, yes: set[str], no: set[str]) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().lower().replace("-", "_")
        if v in yes:
            return True
        if v in no or v.replace("_", " ") in no:
            return False
    return None


def _reason(obj: dict[str, Any]) -> str | None:
    r = obj.get("reasoning", obj.get("reason", obj.get("explanation")))
    return r if isinstance(r, str) else (json.dumps(r) if r is not None else None)


def _overall_of(obj: dict[str, Any]) -> ParsedVerdict:
    readings = []
    for key in ("verdict", "passed", "pass", "resolved"):
        if key in obj:
            verdict = _norm(obj[key], _OVERALL_PASS, _OVERALL_FAIL)
            if verdict is None:
                return ParsedVerdict(verdict=None, reasoning=_reason(obj),
                                     unscored_reason=f"unrecognised verdict value {key}={obj[key]!r}")
            readings.append(verdict)
    if len(set(readings)) > 1:
        return ParsedVerdict(verdict=None, reasoning=_reason(obj),
                             unscored_reason="contradictory verdict fields in one reply object")
    return ParsedVerdict(verdict=readings[0], reasoning=_reason(obj))


def _is_overall(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in ("verdict", "passed", "pass", "resolved"))


def parse_overall(text: str | None) -> ParsedVerdict:
    """The overall verdict in a reply; the last verdict-shaped object wins."""
    if text is None or not text.strip():
        return ParsedVerdict(verdict=None, unscored_reason="empty reply")
    candidates: list[dict[str, Any]] = []
    for value in json_values(text):
        if _is_overall(value):
            candidates.append(value)
        elif isinstance(value, list):
            candidates += [v for v in value if _is_overall(v)]
    if not candidates:
        return ParsedVerdict(verdict=None, unscored_reason="no JSON verdict found in reply")
    return _overall_of(candidates[-1])


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


def _is_nl_item(value: Any) -> bool:
    return isinstance(value, dict) and ("id" in value or "index" in value) and ("verdict" in value or "met" in value)


def _nl_lists(text: str) -> list[list[Any]]:
    lists: list[list[Any]] = []
    loose: list[Any] = []
    for value in json_values(text):
        if isinstance(value, dict):
            key = next((k for k in _RESULT_LIST_KEYS if isinstance(value.get(k), list)), None)
            if key is not None:
                lists.append(value[key])
            elif _is_nl_item(value):
                loose.append(value)  # one object per assertion, outside any list
        elif isinstance(value, list) and any(_is_nl_item(v) for v in value):
            lists.append(value)
    if not lists and loose:
        # Separate objects: when an id repeats, the later object is the later word.
        by_id: dict[str, Any] = {}
        for item in loose:
            by_id[json.dumps(item.get("id", item.get("index")))] = item
        lists.append(list(by_id.values()))
    return lists


def parse_nl(text: str | None, count: int) -> list[ParsedVerdict]:
    """One reading per assertion (in order) from a reply about ``count`` assertions.

    Missing verdicts are unscored one by one. A verdict for an id that was not
    asked (or without an id) makes the whole reply unscored, because the judge
    evidently lost track of which statement is which. Two different verdicts
    for one id in the same list are contradictory and unscored.
    """
    def all_unscored(reason: str) -> list[ParsedVerdict]:
        return [ParsedVerdict(verdict=None, unscored_reason=reason) for _ in range(count)]

    if text is None or not text.strip():
        return all_unscored("empty reply")
    lists = _nl_lists(text)
    if not lists:
        return all_unscored("no JSON verdict list found in reply")
    items = lists[-1]
    found: dict[int, list[ParsedVerdict]] = {}
    extra: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            extra.append(repr(item)[:40])
            continue
        raw_id = item.get("id", item.get("index"))
        index = _match_id(raw_id, count)
        if index is None:
            extra.append(repr(raw_id)[:40])
            continue
        raw = item.get("verdict", item.get("met"))
        verdict = _norm(raw, _NL_MET, _NL_NOT_MET)
        found.setdefault(index, []).append(ParsedVerdict(
            verdict=verdict, reasoning=_reason(item),
            unscored_reason=None if verdict is not None else f"unrecognised verdict value {raw!r}"))
    if extra:
        return all_unscored(f"reply has verdicts for assertions that were not asked: {', '.join(extra)}")
    out = []
    for index in range(count):
        readings = found.get(index)
        if not readings:
            out.append(ParsedVerdict(verdict=None, unscored_reason=f"no verdict for {assertion_id(index)}"))
        elif len({r.verdict for r in readings}) > 1:
            out.append(ParsedVerdict(verdict=None, reasoning=readings[-1].reasoning,
                                     unscored_reason=f"contradictory verdicts for {assertion_id(index)}"))
        else:
            out.append(readings[-1])
    return out


__all__ = ["ParsedVerdict", "assertion_id", "json_values", "parse_nl", "parse_overall", "reply_schema",
           "response_format"]
