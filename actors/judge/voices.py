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

from tauray.actors.judge.fold import CONFUSABLES, fold, plain_key, unescape
from tauray.actors.judge.reply_scan import Scan

VERDICT_KEY = "verdict"
ID_KEY = "id"
OVERALL = {"pass": True, "passed": True, "fail": False, "failed": False}
NL = {"met": True, "not_met": False, "not met": False, "not-met": False}
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
# A verdict stated outside any decoded value: "verdict": "x", {verdict: x}, Verdict: FAIL, <verdict>fail<...
_STRAY = re.compile(rf"(?<![a-z0-9_]){_QUOTE}*verdict{_QUOTE}*\s*(?:[:=>]|\bis\b)\s*{_QUOTE}*\s*"
                    r"(not[ _\-]?met|unmet|met|passed|pass|failed|fail)(?![a-z0-9_])")
_STRAY_ANYCASE = re.compile(_STRAY.pattern, re.IGNORECASE)
# "A1: not met" in prose.
_NL_STRAY = re.compile(rf"(?<![a-z0-9_])a\s*(\d+)\s*(?:[:=\-\u2013\u2014)]|\bis\b)\s*{_QUOTE}*\s*"
                       r"(not[ _\-]?met|unmet|met)(?![a-z0-9_])")
_NL_STRAY_ANYCASE = re.compile(_NL_STRAY.pattern, re.IGNORECASE)


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
    lines = [line for _, _, span in s.broken for line in unescape(span).splitlines()]
    lines += [line for segment in s.prose for line in unescape(segment).splitlines()]
    return [line for line in lines if not line.lstrip().startswith("|")]  # a record line ("  | ...")


def stray_verdicts(s: Scan, words: dict[str, bool]) -> list[str]:
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


def stray_nl_verdicts(s: Scan) -> list[tuple[int, bool, str]]:
    """``A1: not met`` stated outside every decoded value: (number, reading, text)."""
    return [(int(m.group(1)), NL[w], m.group(0)) for line in _outside_lines(s) for m in _NL_STRAY.finditer(line)
            if (w := _word(m.group(2), NL)) and not _in_ornaments(line, m.start())]


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


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and bool(_PLACEHOLDER.match(value)) and value.strip().lower() not in (
        OVERALL.keys() | NL.keys())


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


def _key_polarity(key: str) -> bool | None:
    """None: the key states no verdict; True: its value reads as is; False: inverted (``failed``, ``unmet``)."""
    k = plain_key(key)
    if not (any(t in k for t in _VOICE_TOKENS) or _VOICE_MET.match(k)):
        return None
    return not (("fail" in k and "pass" not in k) or k.startswith(("not", "un")))


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


def candidates(values: list[tuple[int, Any]], words: dict[str, bool]) -> list[Candidate]:
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


def off_schema_voices(values: list[tuple[int, Any]]) -> list[tuple[dict[str, Any], str, bool]]:
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
            plain = plain_key(key)
            if side is not None:
                readings.add(side if polarity else not side)
            elif not (plain in _ITEM_KEYS or any(t in plain for t in _EXPLAIN_TOKENS)):
                reply_like = False  # other data beside it: a quoted record, not a reply
        out += [(obj, where, r) for r in sorted(readings)] if reply_like else []
    return out


def has_item_key(obj: dict[str, Any]) -> bool:
    return any(plain_key(k) in _ITEM_KEYS for k in obj)


__all__ = ["ID_KEY", "NL", "OVERALL", "VERDICT_KEY", "Candidate", "candidates", "has_item_key", "stray_nl_verdicts",
           "reason_text", "stray_verdicts", "voice_positions", "off_schema_voices"]
