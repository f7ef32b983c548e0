"""Where a judge's reply states a verdict, and how each statement reads.

* A *candidate* is an object carrying the schema's own verdict key
  (``verdict``), at any depth of a decoded value; only candidates make verdicts.
  A ``verdict`` whose value is the prompt's placeholder (``"<pass|fail>"``), or
  that sits in the example's shape, is an echo of the reply-format example.
* A *voice* states a verdict without being a candidate: look-alike and
  off-schema keys (``Verdict``, ``passed``, ``is_resolved``, ``status``;
  ``0``/``1`` values included) in an object that reads as a reply, and verdict
  text outside every decoded value (``Verdict: FAIL``, ``{verdict: x}``,
  ``<verdict>fail</verdict>``, ``A1: not met``), in prose or in a value that
  failed to decode. A quoted record (ornaments, ``  | `` lines) is not a voice;
  an object with other data beside its voice is quoted data, not a voice.
  Voices never make a verdict; one that disagrees makes the question ambiguous.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tauray.actors.judge.fold import fold, fold_map, plain_key, unescape
from tauray.actors.judge.reply_scan import Scan

VERDICT_KEY = "verdict"
ID_KEY = "id"
OVERALL = {"pass": True, "passed": True, "fail": False, "failed": False}
NL = {"met": True, "not_met": False, "not met": False, "not-met": False}
# Voices: keys that state *the* verdict without being the schema's key. They never make a verdict; where
# one disagrees with the verdict read, the question is ambiguous. A key is a voice when, folded (NFKC,
# look-alikes, case, punctuation dropped), it holds "verdict", or is one of these words once qualifiers
# ("is", "final", "overall", "task" ...) and a negation are taken off: "passed", "is_resolved",
# "final_result", "isNotMet". A key naming a part of the case ("issue_resolved", "customer_satisfied",
# "criteria_passed", "agent_claimed_success") describes a sub-aspect, not the verdict: never a voice.
_VOICE_WORDS = {
    "pass": True, "passed": True, "passes": True, "result": True, "status": True, "outcome": True,
    "resolved": True, "resolution": True, "success": True, "successful": True, "succeeded": True,
    "satisfied": True, "decision": True, "judgment": True, "judgement": True, "grade": True,
    "conclusion": True, "holds": True, "met": True,
    "fail": False, "failed": False, "fails": False, "failure": False}
_QUALIFIERS = ("is", "was", "has", "been", "final", "overall", "the", "my", "judge", "judges", "task", "case",
               "conversation", "evaluation", "eval", "reply", "answer")
# Tokens of a key that names a part of the case rather than the verdict: such a key is judge-like
# content (an object made of them still reads as a reply) but never a voice.
_ASPECT_TOKENS = ("pass", "fail", "result", "status", "outcome", "resolv", "success", "satisf", "decision",
                  "judg", "grade", "conclu", "holds", "met")
# Keys that explain or name a verdict rather than state one: an object made only of voices and these
# reads as a reply; one with other data (a tool result {"status": "ok", "passed": true}) is quoted data.
_EXPLAIN_TOKENS = ("reason", "explan", "rational", "justif", "comment", "note", "summar", "evidence", "analy",
                   "confiden", "detail", "critique", "feedback", "thought")
_ITEM_KEYS = frozenset({"id", "criterion", "criterionid", "assertion", "assertionid", "statement", "requirement",
                        "rule", "name", "label"})
# Containers of per-part judgments ({"criteria": {"R1": {"met": true}}}): nothing under them is an overall voice.
_PART_KEYS = frozenset({"criteria", "criterion", "rubric", "check", "checks", "requirement", "requirements",
                        "aspect", "aspects", "step", "steps", "assertion", "assertions", "item", "items",
                        "subscore", "subscores", "scores", "breakdown", "rule", "rules", "r", "c", "a", "q"})
_SIDE_TRUE = {"true", "yes", "pass", "passed", "met", "resolved", "success", "succeeded", "holds", "satisfied"}
_SIDE_FALSE = {"false", "no", "fail", "failed", "not met", "unmet", "unresolved", "violated", "not passed",
               "not satisfied", "not resolved"}
_QUOTE = "[\"'`*\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201f]"
# A placeholder of a reply-format example: "<two or three sentences>", "<pass or fail>", "pass|fail". Only
# words that describe a form count, so reasoning written inside <...> ("<the agent never fixed it>") is
# reasoning, and "toggle_airplane_mode | check_status_bar" is a value, not an echo.
_PLACEHOLDER = re.compile(r"^\s*[<\u2039]([^<>\u2039\u203a]*)[>\u203a]\s*$")
_FORM_WORDS = frozenset(
    "one two three four five a an or and short brief concise sentence sentences per criterion criteria to each "
    "reason reasons reasoning explanation explain your here text string statement assertion id ids number pass "
    "fail met not verdict why the of word words few paragraph value summary justification up at most max e g eg "
    "etc true false yes no your answer r".split())
_ANSWER_WORDS = frozenset({"pass", "fail", "met", "not_met", "true", "false", "yes", "no"})
# A verdict stated outside any decoded value: "verdict": "x", {verdict: x}, Verdict: FAIL, <verdict>fail<...
# (matched on folded text, so case and look-alikes are already gone)
_STRAY = re.compile(rf"(?<![a-z0-9_]){_QUOTE}*verdict{_QUOTE}*\s*(?:[:=>]|\bis\b)\s*{_QUOTE}*\s*"
                    r"(not[ _\-]?met|unmet|met|passed|pass|failed|fail)(?![a-z0-9_])")
# "A1: not met" in prose.
_NL_STRAY = re.compile(rf"(?<![a-z0-9_])a\s*(\d+){_QUOTE}*\s*(?:[:=\-\u2013\u2014)]|\bis\b)\s*{_QUOTE}*\s*"
                       r"(not[ _\-]?met|unmet|met)(?![a-z0-9_])")
# Where prose names an assertion ("A2", "**A2**", "assertion 2"): a "Verdict: met" after it speaks for it.
_NL_ID = re.compile(r"(?<![a-z0-9_])(?:a|assertion\s*a?|statement\s*a?)\s?(\d{1,3})(?![0-9])")
_OPEN, _SHUT = "\u2774", "\u2775"


def _unquoted(line: str) -> str:
    """``line`` with every span between a defused ``❴`` and its matching ``❵`` blanked (a quote of the
    record); an ornament without its partner quotes nothing. Linear, positions kept."""
    opens: list[int] = []
    spans: list[tuple[int, int]] = []
    for k, c in enumerate(line):
        if c == _OPEN:
            opens.append(k)
        elif c == _SHUT and opens:
            start = opens.pop()
            if not opens:
                spans.append((start, k + 1))
    if not spans:
        return line
    parts, last = [], 0
    for start, stop in spans:
        parts += [line[last:start], " " * (stop - start)]
        last = stop
    return "".join(parts) + line[last:]


def _word(raw: str, words: dict[str, bool]) -> str | None:
    w = re.sub(r"[\s_\-]+", "_", raw.strip())
    w = {"unmet": "not_met"}.get(w, w)
    return w if w in words else None


def _outside(s: Scan) -> list[list[str]]:
    """Folded lines of each value that failed to decode and of the prose (all prose as one piece, in
    order), less quotes of the record: lines ``  | ...`` and spans between ornaments."""
    pieces = [unescape(span) for _, _, span in s.broken] + ["\n".join(unescape(p) for p in s.prose)]
    return [[_unquoted(line) for line in piece.splitlines() if not line.lstrip().startswith("|")]
            for piece in pieces]


def stray_verdicts(s: Scan, words: dict[str, bool]) -> list[str]:
    """Verdict words stated outside every decoded value: ``"verdict": "x"``, ``{verdict: x}``,
    ``Verdict: FAIL``, ``<verdict>fail</verdict>``, ``“verdict”: “fail”``.

    Never read as a verdict: inside a value that failed to decode, which answer
    it holds is unknowable; in prose, it may be debris of the reply's own JSON
    or an answer in a shape the schema does not have (a quote of the defused
    record, between its ornaments or on a ``  | `` line, is left alone). Only
    ever a disagreeing voice against the decoded verdicts, so a reply whose
    real answer is unreadable cannot keep a quoted one."""
    return [w for piece in _outside(s) for line in piece for m in _STRAY.finditer(line)
            if (w := _word(m.group(1), words))]


def stray_nl_verdicts(s: Scan) -> list[tuple[int | None, bool, str]]:
    """NL verdicts stated outside every decoded value, each with the assertion number it speaks for:
    ``A1: not met``, or ``Verdict: met`` after prose that last named an assertion (``### A2``); a
    ``Verdict: met`` before any name speaks for no one in particular (number None)."""
    out: list[tuple[int | None, bool, str]] = []
    for piece in _outside(s):
        current: int | None = None
        for line in piece:
            events = [(m.start(), int(m.group(1)), None) for m in _NL_ID.finditer(line)]
            events += [(m.start(), None, m) for m in _STRAY.finditer(line)]
            for _, number, m in sorted(events, key=lambda e: e[0]):
                if number is not None:
                    current = number
                elif (w := _word(m.group(1), NL)) is not None:
                    out.append((current, NL[w], m.group(0)))
            out += [(int(m.group(1)), NL[w], m.group(0)) for m in _NL_STRAY.finditer(line)
                    if (w := _word(m.group(2), NL))]
    return out


def voice_positions(text: str) -> list[int]:
    """Where, in ``text``, a verdict the parser would hear as a voice ends its key word ("Verdict" in
    ``Verdict: PASS``, "\\u0076erdict" in ``\\u0076erdict: pass``, "A1" in ``A1: met``), found on the
    parser's own folding (:func:`.fold.fold_map`), between ornaments too: the renderer marks these as
    quoted, so a judge repeating a line of the record does not add a voice."""
    folded, ends = fold_map(text)
    out = []
    for m in _STRAY.finditer(folded):
        out.append(ends[m.start() + m.group(0).find("verdict") + len("verdict") - 1])
    out += [ends[m.end(1) - 1] for m in _NL_STRAY.finditer(folded)]
    return sorted(set(out))


def _is_placeholder(value: Any) -> bool:
    """Whether ``value`` is a placeholder of a reply-format example, not something the judge said."""
    if not isinstance(value, str):
        return False
    if (m := _PLACEHOLDER.match(value)) is not None:
        return all(w in _FORM_WORDS or w.isdigit() for w in re.findall(r"[a-z]+|\d+", m.group(1).lower()))
    alternatives = [a.strip().lower() for a in value.split("|")]
    return len(alternatives) > 1 and all(a in _ANSWER_WORDS for a in alternatives)


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


def _core_polarity(k: str, depth: int = 0) -> bool | None:
    """How a folded key reads once qualifiers and a negation are taken off; None when it is no verdict word."""
    if k in _VOICE_WORDS:
        return _VOICE_WORDS[k]
    if depth > 3:
        return None
    for neg in ("not", "un"):
        if k.startswith(neg) and (p := _core_polarity(k[len(neg):], depth + 1)) is not None:
            return not p
    for q in _QUALIFIERS:
        if len(k) > len(q) and k.startswith(q) and (p := _core_polarity(k[len(q):], depth + 1)) is not None:
            return p
        if len(k) > len(q) and k.endswith(q) and (p := _core_polarity(k[:-len(q)], depth + 1)) is not None:
            return p
    return None


def _key_polarity(key: str) -> bool | None:
    """None: the key states no verdict; True: its value reads as is; False: inverted (``failed``, ``unmet``)."""
    k = plain_key(key)
    if any(t in k for t in _EXPLAIN_TOKENS):
        return None
    if "verdict" in k:
        return not (("fail" in k and "pass" not in k) or k.startswith(("not", "un")))
    return _core_polarity(k)


def _is_aspect(key: str) -> bool:
    """A key naming a judged part of the case (``issue_resolved``, ``criteria_passed``): judge-like, no voice."""
    k = plain_key(key)
    return _key_polarity(key) is None and any(t in k for t in _ASPECT_TOKENS)


def reason_text(obj: dict[str, Any]) -> str | None:
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


def _part_key(key: str) -> bool:
    """A key holding per-part judgments: ``criteria``, ``rubric``, ``R1``, ``criterion_2``."""
    return plain_key(key) in _PART_KEYS or re.fullmatch(r"(?:[a-z]+[\s_\-]?)?\d+", fold(key)) is not None


def _walk(values: list[tuple[int, Any]]) -> list[tuple[dict[str, Any], str, bool]]:
    """Every object inside the decoded values, with where it sits and whether it sits under a part key."""
    out: list[tuple[dict[str, Any], str, bool]] = []

    def walk(value: Any, where: str, part: bool) -> None:
        if isinstance(value, dict):
            out.append((value, where, part))
            for k, v in value.items():
                walk(v, f"{where}.{k}", part or _part_key(k))
        elif isinstance(value, list):
            for n, v in enumerate(value):
                walk(v, f"{where}[{n}]", part)

    for pos, value in values:
        walk(value, f"char {pos}", False)
    return out


def candidates(values: list[tuple[int, Any]], words: dict[str, bool]) -> list[Candidate]:
    return [_read(obj, where, words) for obj, where, _ in _walk(values) if VERDICT_KEY in obj]


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


def off_schema_voices(values: list[tuple[int, Any]], parts: bool = True) -> list[tuple[dict[str, Any], str, bool]]:
    """Objects without the schema key that still read as a reply stating a verdict (``{"passed": false}``,
    ``{"Verdict": "fail"}``, ``{"overall_verdict": "fail"}``, ``{"id": "A1", "status": "not_met"}``):
    (object, where, reading). Never a verdict; a disagreeing voice. With ``parts`` False, objects under
    a per-part key (``{"criteria": {"R1": {"met": true}}}``) are left out: they judge a part, not the whole."""
    out = []
    for obj, where, under_part in _walk(values):
        if VERDICT_KEY in obj or (under_part and not parts):
            continue
        readings, reply_like = set(), True
        for key, value in obj.items():
            if isinstance(value, (dict, list)):
                continue
            polarity = _key_polarity(key)
            side = _side_reading(value) if polarity is not None or _is_aspect(key) else None
            plain = plain_key(key)
            if side is not None and polarity is not None:
                readings.add(side if polarity else not side)
            elif not (side is not None or plain in _ITEM_KEYS or any(t in plain for t in _EXPLAIN_TOKENS)):
                reply_like = False  # other data beside it: a quoted record, not a reply
        out += [(obj, where, r) for r in sorted(readings)] if reply_like else []
    return out


def has_item_key(obj: dict[str, Any]) -> bool:
    return any(plain_key(k) in _ITEM_KEYS for k in obj)


__all__ = ["ID_KEY", "NL", "OVERALL", "VERDICT_KEY", "Candidate", "candidates", "has_item_key", "stray_nl_verdicts",
           "reason_text", "stray_verdicts", "voice_positions", "off_schema_voices"]
