"""Reading a judge's reply: the reply is its answer, as a whole, or it is no answer.

A reply is read only when it is, as a whole, one JSON value of the declared
format (:func:`reply_schema`): one surrounding code fence and whitespace are
allowed, nothing else. The value must be an object with a string ``reasoning``
and a ``verdict`` of the schema's enum (for NL: a ``results`` list answering
every asked id exactly once, and no other), and no key the schema does not
declare (it says ``additionalProperties: false``: a second list or verdict
beside the first would leave the answer in doubt); a key named twice makes the
value unreadable. Nothing is ever searched for inside
free text, so a schema-shaped value quoted inside a longer reply (a forged
verdict the conversation carried, an example, a hypothetical) is never the
answer: a judge that answers off-format gets one repair turn (:mod:`.repair`),
read by this same rule, and otherwise its question is unscored with the reason.

Why so strict: any parser that searches a reply for something verdict-shaped
can be handed a reply whose real answer it does not hear and a quoted one it
does. Enforcing the format at the source (structured output, grammars) makes
conforming replies the norm; the repair turn covers the rest.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?[ \t]*```\Z", re.S)
OVERALL_VALUES = {"pass": True, "fail": False}
NL_VALUES = {"met": True, "not_met": False}


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


def assertion_id(index: int) -> str:
    """The id an assertion is shown under (A1, A2, ...) for position ``index`` (0-based)."""
    return f"A{index + 1}"


class NotConforming(ValueError):
    """The reply is not, as a whole, one value of the declared format; the message says why."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise NotConforming(f"the reply's JSON names the key {key!r} twice")
        seen[key] = value
    return seen


def _value(text: str | None) -> dict[str, Any]:
    """The reply as one JSON object (fence and whitespace stripped), or :class:`NotConforming`."""
    if text is None or not text.strip():
        raise NotConforming("empty reply")
    body = text.strip()
    if m := _FENCE.match(body):
        body = m.group(1).strip()
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates)
    except NotConforming:
        raise
    except (ValueError, RecursionError) as exc:
        raise NotConforming(f"the reply is not one JSON value (a code fence and whitespace aside): {exc}"[:300])
    if not isinstance(value, dict):
        raise NotConforming(f"the reply's JSON is a {type(value).__name__}, not an object")
    return value


def _declared(obj: dict[str, Any], schema: dict[str, Any], where: str) -> None:
    """No key beyond the ``properties`` of ``schema`` (every object of the format forbids them)."""
    extra = [key for key in obj if key not in schema["properties"]]
    if extra:
        raise NotConforming(f"{where} has keys the format does not declare: {', '.join(map(repr, extra))}")


_OVERALL = reply_schema("overall")
_NL = reply_schema("nl")
_NL_ITEM = _NL["properties"]["results"]["items"]


def _answer(obj: Any, values: dict[str, bool], where: str, schema: dict[str, Any]) -> tuple[bool, str]:
    if not isinstance(obj, dict):
        raise NotConforming(f"{where} is not an object")
    if not isinstance(obj.get("reasoning"), str):
        raise NotConforming(f"{where} has no string 'reasoning'")
    raw = obj.get("verdict")
    if not isinstance(raw, str) or raw not in values:
        raise NotConforming(f"{where} has verdict {raw!r}, not one of {', '.join(values)}")
    _declared(obj, schema, where)
    return values[raw], obj["reasoning"]


def read_overall(text: str | None) -> ParsedVerdict:
    """The overall verdict of a conforming reply; :class:`NotConforming` otherwise."""
    verdict, reasoning = _answer(_value(text), OVERALL_VALUES, "the reply's object", _OVERALL)
    return ParsedVerdict(verdict=verdict, reasoning=reasoning)


def read_nl(text: str | None, count: int) -> list[ParsedVerdict]:
    """One verdict per asked assertion from a conforming reply; :class:`NotConforming` otherwise."""
    value = _value(text)
    items = value.get("results")
    if not isinstance(items, list):
        raise NotConforming("the reply's object has no 'results' list")
    _declared(value, _NL, "the reply's object")
    asked = {assertion_id(i): i for i in range(count)}
    found: dict[int, ParsedVerdict] = {}
    for n, item in enumerate(items):
        aid = item.get("id") if isinstance(item, dict) else None
        if aid not in asked:
            raise NotConforming(f"results[{n}] answers {aid!r}, which was not asked")
        if asked[aid] in found:
            raise NotConforming(f"{aid} is answered twice")
        verdict, reasoning = _answer(item, NL_VALUES, f"results[{n}] ({aid})", _NL_ITEM)
        found[asked[aid]] = ParsedVerdict(verdict=verdict, reasoning=reasoning)
    missing = [assertion_id(i) for i in range(count) if i not in found]
    if missing:
        raise NotConforming(f"no answer for {', '.join(missing)}")
    return [found[i] for i in range(count)]


def parse_overall(text: str | None) -> ParsedVerdict:
    """:func:`read_overall`, with a non-conforming reply as an unscored reading that says why."""
    try:
        return read_overall(text)
    except NotConforming as exc:
        return ParsedVerdict(verdict=None, unscored_reason=str(exc))


def parse_nl(text: str | None, count: int) -> list[ParsedVerdict]:
    """:func:`read_nl`, with a non-conforming reply as ``count`` unscored readings that say why."""
    try:
        return read_nl(text, count)
    except NotConforming as exc:
        return [ParsedVerdict(verdict=None, unscored_reason=str(exc)) for _ in range(count)]


__all__ = ["NotConforming", "ParsedVerdict", "assertion_id", "parse_nl", "parse_overall", "read_nl",
           "read_overall", "reply_schema", "response_format"]
