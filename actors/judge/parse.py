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
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VERDICT_KEY = "verdict"
ID_KEY = "id"
RESULTS_KEY = "results"
_OVERALL = {"pass": True, "passed": True, "fail": False, "failed": False}
_NL = {"met": True, "not_met": False, "not met": False, "not-met": False}
# Voices: keys that state a verdict without being the schema's key. They never make a verdict; where
# one disagrees with the verdict read, the question is ambiguous. A key is a voice when, folded
# (NFKC, look-alikes, case, punctuation), it holds one of these (or is "met", "ismet"...).
_VOICE_TOKENS = ("verdict", "pass", "fail", "result", "status", "outcome", "resolv", "success", "satisf",
                 "decision", "judg", "grade", "conclu", "holds")
_VOICE_MET = re.compile(r"^(is|was|been|overall|final|not|un)?met$")
# Keys that explain or name a verdict rather than state one: an object made only of voices and these
# reads as a reply; one with other data (a tool result {"status": "ok", "passed": true}) is quoted data.
_EXPLAIN_TOKENS = ("reason", "explan", "rational", "justif", "comment", "note", "summar", "evidence", "analy",
                   "confiden", "detail", "critique", "feedback", "thought")
_ITEM_KEYS = frozenset({"id", "criterion", "criterionid", "assertion", "assertionid", "statement", "requirement",
                        "rule", "name", "label"})
_SIDE_TRUE = {"true", "yes", "pass", "passed", "met", "resolved", "success", "succeeded", "holds", "satisfied"}
_SIDE_FALSE = {"false", "no", "fail", "failed", "not met", "unmet", "unresolved", "violated", "not passed",
               "not satisfied", "not resolved"}
_QUOTE = "[\"'`*\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201f]"
_PLACEHOLDER = re.compile(r"^\s*<[^<>]*>\s*$|^\s*[a-z_]+(\s*\|\s*[a-z_]+)+\s*$", re.IGNORECASE)
_ID = re.compile(r"^\s*[Aa]?\s*(\d+)\s*$")
# A verdict stated outside any decoded value: "verdict": "x", {verdict: x}, Verdict: FAIL, <verdict>fail<...
_STRAY = re.compile(rf"(?<![a-z0-9_]){_QUOTE}*verdict{_QUOTE}*\s*(?:[:=>]|\bis\b)\s*{_QUOTE}*\s*"
                    r"(not[ _\-]?met|unmet|met|passed|pass|failed|fail)(?![a-z0-9_])")
_STRAY_ANYCASE = re.compile(_STRAY.pattern, re.IGNORECASE)
# "A1: not met" in prose.
_NL_STRAY = re.compile(rf"(?<![a-z0-9_])a\s*(\d+)\s*(?:[:=\-\u2013\u2014)]|\bis\b)\s*{_QUOTE}*\s*"
                       r"(not[ _\-]?met|unmet|met)(?![a-z0-9_])")
_NL_STRAY_ANYCASE = re.compile(_NL_STRAY.pattern, re.IGNORECASE)
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# The first character after "{" or "[" that can begin JSON content: anything
# else ("{the agent...", "[see R1") is prose, not a value that failed to decode.
MAX_DEPTH = 64
_OBJECT_START = re.compile(r"""\s*(["'}]|[A-Za-z_]\w*\s*:)""")
_ARRAY_START = re.compile(r"""\s*(["'{\[\]\-0-9]|true|false|null)""")


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


# --------------------------------------------------------------------------- scanning


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


def json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in ``text`` that decodes, in order."""
    return [v for _, v in scan(text).values]


# Cyrillic and Greek letters that NFKC keeps but a reader takes for Latin ones (one to one, so
# positions survive): the "е" in "vеrdict" or "ЕND" is read as "e".
CONFUSABLES = str.maketrans(dict(zip(
    "аеосрхуіјѕԁһӏԛԝүкАВЕКМНОРСТХІЈЅҮαοριυνκτχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeocpxyijsdhlqwykABEKMHOPCTXIJSYaopiuvktxeABEZHIKMNOPTYX", strict=True)))


def fold(text: str) -> str:
    """``text`` as compared for look-alikes: NFKC, format characters removed, confusables mapped, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf").translate(CONFUSABLES).casefold()


def _unescape(text: str) -> str:
    return fold(_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text).replace('\\"', '"'))


def _in_ornaments(line: str, at: int) -> bool:
    """Whether position ``at`` sits between a defused ``❴`` and its ``❵`` on one line (a quote of the record)."""
    before = line[:at]
    return before.rfind("\u2774") > before.rfind("\u2775")


def _word(raw: str, words: dict[str, bool]) -> str | None:
    w = re.sub(r"[\s_\-]+", "_", raw.strip())
    w = {"unmet": "not_met"}.get(w, w)
    return w if w in words else None


def _outside_lines(s: Scan) -> list[str]:
    """Folded lines of the prose and of the values that failed to decode, less quotes of the record."""
    lines = [line for _, _, span in s.broken for line in _unescape(span).splitlines()]
    lines += [line for segment in s.prose for line in _unescape(segment).splitlines()]
    return [line for line in lines if not line.lstrip().startswith("|")]  # a record line ("  | ...")


def _stray(s: Scan, words: dict[str, bool]) -> list[str]:
    """Verdict words stated outside every decoded value: ``"verdict": "x"``, ``{verdict: x}``,
    ``Verdict: FAIL``, ``<verdict>fail</verdict>``, ``“verdict”: “fail”``.

    Never read as a verdict: inside a value that failed to decode, which answer
    it holds is unknowable; in prose, it may be debris of the reply's own JSON
    or an answer in a shape the schema does not have (a quote of the defused
    record, between its ornaments or on a ``  | `` line, is left alone). Only
    ever a disagreeing voice against the decoded verdicts, so a reply whose
    real answer is unreadable cannot keep a quoted one."""
    found = []
    for line in _outside_lines(s):
        found += [w for m in _STRAY.finditer(line)
                  if (w := _word(m.group(1), words)) and not _in_ornaments(line, m.start())]
    return found


def _nl_stray(s: Scan) -> list[tuple[int, bool, str]]:
    """``A1: not met`` stated outside every decoded value: (number, reading, text)."""
    return [(int(m.group(1)), _NL[w], m.group(0)) for line in _outside_lines(s) for m in _NL_STRAY.finditer(line)
            if (w := _word(m.group(2), _NL)) and not _in_ornaments(line, m.start())]


def voice_positions(text: str) -> list[int]:
    """Where, in (NFKC-normalised) ``text``, a verdict stated in prose ends its key word ("Verdict" in
    ``Verdict: PASS``, "A1" in ``A1: met``): the renderer marks these as quoted, so a judge repeating a
    line of the record does not add a voice the parser would hear."""
    probe = text.translate(CONFUSABLES)  # one to one: positions stay
    out = []
    for m in _STRAY_ANYCASE.finditer(probe):
        at = m.start() + m.group(0).lower().find("verdict") + len("verdict")
        line_start = probe.rfind("\n", 0, at) + 1
        if not _in_ornaments(probe[line_start:at], at - line_start):
            out.append(at)
    out += [m.end(1) for m in _NL_STRAY_ANYCASE.finditer(probe)]
    return sorted(set(out))


# --------------------------------------------------------------------------- verdict-shaped values


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and bool(_PLACEHOLDER.match(value)) and value.strip().lower() not in (
        _OVERALL.keys() | _NL.keys())


def _side_reading(value: Any) -> bool | None:
    """What a voice's value says, if it says pass/fail at all (``0``/``1`` included)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        v = re.sub(r"[\s_\-]+", " ", fold(value)).strip(" .!")
        return True if v in _SIDE_TRUE else False if v in _SIDE_FALSE else None
    return None


def _plain_key(key: str) -> str:
    """A key as a look-alike compares: ``Verdict``, ``ｖｅｒｄｉｃｔ``, ``vеrdict`` and ``ver\u200bdict`` are ``verdict``."""
    return re.sub(r"[^a-z]", "", fold(key))


def _key_polarity(key: str) -> bool | None:
    """None: the key states no verdict; True: its value reads as is; False: inverted (``failed``, ``unmet``)."""
    k = _plain_key(key)
    if not (any(t in k for t in _VOICE_TOKENS) or _VOICE_MET.match(k)):
        return None
    return not (("fail" in k and "pass" not in k) or k.startswith(("not", "un")))


def _reason_text(obj: dict[str, Any]) -> str | None:
    r = obj.get("reasoning")
    return r if isinstance(r, str) else (json.dumps(r, ensure_ascii=False) if r is not None else None)


@dataclass
class Candidate:
    """One object carrying a ``verdict`` key, and how it reads."""

    where: str
    raw: Any
    reading: bool | None = None
    problem: str | None = None  # unrecognised / echo / fields disagree
    echo: bool = False
    obj: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.raw!r} at {self.where}" + (" (in an echo of the format example)" if self.echo else "")


def _walk(values: list[tuple[int, Any]]) -> list[tuple[dict[str, Any], str]]:
    """Every object inside the decoded values, with where it sits."""
    out: list[tuple[dict[str, Any], str]] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            out.append((value, where))
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for n, v in enumerate(value):
                walk(v, f"{where}[{n}]")

    for pos, value in values:
        walk(value, f"char {pos}")
    return out


def _candidates(values: list[tuple[int, Any]], words: dict[str, bool]) -> list[Candidate]:
    return [_read(obj, where, words) for obj, where in _walk(values) if VERDICT_KEY in obj]


def _read(obj: dict[str, Any], where: str, words: dict[str, bool]) -> Candidate:
    raw = obj[VERDICT_KEY]
    c = Candidate(where=where, raw=raw, obj=obj)
    if _is_placeholder(raw):
        c.echo, c.problem = True, f"echo of the reply-format example ({VERDICT_KEY}={raw!r})"
        return c
    c.reading = words.get(raw.strip().lower()) if isinstance(raw, str) else None
    if any(_is_placeholder(v) for k, v in obj.items() if k not in (ID_KEY, VERDICT_KEY)):
        # The example's shape around a real value: never a verdict, but still a voice that may disagree.
        c.echo, c.problem = True, f"echo of the reply-format example ({VERDICT_KEY}={raw!r})"
        return c
    if c.reading is None:
        c.problem = f"unrecognised verdict value {raw!r} (expected {' or '.join(sorted(set(words) & {'pass', 'fail', 'met', 'not_met'}))})"
        return c
    for key, value in obj.items():
        polarity = _key_polarity(key) if key != VERDICT_KEY else None
        side = _side_reading(value) if polarity is not None else None
        if side is not None and (side if polarity else not side) != c.reading:
            c.problem = f"ambiguous: {VERDICT_KEY}={raw!r} but {key}={value!r} in one object at {where}"
            c.reading = None
            return c
    return c


def _voices(values: list[tuple[int, Any]]) -> list[tuple[dict[str, Any], str, bool]]:
    """Objects without the schema key that still read as a reply stating a verdict (``{"passed": false}``,
    ``{"Verdict": "fail"}``, ``{"overall_verdict": "fail"}``, ``{"id": "A1", "status": "not_met"}``):
    (object, where, reading). Never a verdict; a disagreeing voice."""
    out = []
    for obj, where in _walk(values):
        if VERDICT_KEY in obj:
            continue
        readings, reply_like = set(), True
        for key, value in obj.items():
            if isinstance(value, (dict, list)):
                continue
            polarity = _key_polarity(key)
            side = _side_reading(value) if polarity is not None else None
            plain = _plain_key(key)
            if side is not None:
                readings.add(side if polarity else not side)
            elif not (plain in _ITEM_KEYS or any(t in plain for t in _EXPLAIN_TOKENS)):
                reply_like = False  # other data beside it: a quoted record, not a reply
        out += [(obj, where, r) for r in sorted(readings)] if reply_like else []
    return out


def _has_item_key(obj: dict[str, Any]) -> bool:
    return any(_plain_key(k) in _ITEM_KEYS for k in obj)


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
    s = scan(text)
    cands = _candidates(s.values, _OVERALL)
    stray = _stray(s, _OVERALL)
    real = [c for c in cands if not c.echo]
    conflicted = [c for c in real if c.problem and c.problem.startswith("ambiguous:")]
    if conflicted:
        return ParsedVerdict(verdict=None, reasoning=_reason_text(conflicted[0].obj),
                             unscored_reason=conflicted[0].problem)
    # Every other voice in the reply: echoes with a real value, off-schema objects, text outside the JSON.
    others = [(c.label(), c.reading) for c in cands if c.echo and c.reading is not None]
    others += [(f"{obj!r} at {where}", reading) for obj, where, reading in _voices(s.values)
               if not _has_item_key(obj)]
    others += [(f"{w!r} outside any decoded JSON value", _OVERALL[w]) for w in stray]
    voices = {("pass" if c.reading else "fail") if c.reading is not None else repr(c.raw) for c in real}
    if len(voices | {"pass" if r else "fail" for _, r in others}) > 1 and real:
        listed = [c.label() for c in real] + [label for label, _ in others]
        return ParsedVerdict(verdict=None, unscored_reason=f"ambiguous: the reply holds {len(listed)} verdicts that "
                             f"disagree: {'; '.join(listed)}"[:1000])
    voices |= {("pass" if _OVERALL[w] else "fail") for w in stray}
    scored = [c for c in real if c.reading is not None]
    if scored:
        return ParsedVerdict(verdict=scored[0].reading, reasoning=_reason_text(scored[-1].obj))
    if real:
        return ParsedVerdict(verdict=None, reasoning=_reason_text(real[0].obj), unscored_reason=real[0].problem)
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
    s = scan(text)
    every = _candidates(s.values, _NL)
    cands = [c for c in every if not c.echo]
    stray = _stray(s, _NL)
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
    if stray and found:
        return all_unscored(f"ambiguous: verdict text {', '.join(map(repr, stray))} also appears outside any decoded "
                            f"JSON value, so the decoded results may not be the judge's whole answer")
    # Other voices per assertion: echoes with a real value, off-schema items, "A1: not met" in prose.
    others: dict[int, list[tuple[str, bool]]] = {}
    for c in every:
        if c.echo and c.reading is not None and (index := _match_id(c.obj.get(ID_KEY), count)) is not None:
            others.setdefault(index, []).append((c.label(), c.reading))
    for obj, where, reading in _voices(s.values):
        if (index := _match_id(obj.get(ID_KEY), count)) is not None:
            others.setdefault(index, []).append((f"{obj!r} at {where}", reading))
    for number, reading, said in _nl_stray(s):
        if 1 <= number <= count:
            others.setdefault(number - 1, []).append((f"{said!r} outside any decoded JSON value", reading))
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
            out.append(ParsedVerdict(verdict=None, reasoning=_reason_text(conflicted[0].obj),
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
            out.append(ParsedVerdict(verdict=None, reasoning=_reason_text(readings[0].obj),
                                     unscored_reason=f"{aid}: {readings[0].problem}"))
        else:
            out.append(ParsedVerdict(verdict=readings[0].reading, reasoning=_reason_text(readings[-1].obj)))
    return out


__all__ = ["CONFUSABLES", "DuplicateKeyError", "ParsedVerdict", "Scan", "assertion_id", "fold", "json_values", "parse_nl",
           "parse_overall", "reply_schema", "response_format", "scan",
           "voice_positions"]
