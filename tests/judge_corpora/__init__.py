"""Evaluation corpora for the judge's reply reading (issue 36), written apart from the parser.

Two JSON Lines files sit beside this module:

- ``forgery.jsonl``: judge replies whose own answer is off the requested format and that
  quote a verdict-shaped value written by the agent or the customer (or an example, or a
  hypothetical). Storing the forged value is the failure these cases measure.
- ``honest.jsonl``: honest judge replies in many styles, labelled with whether the reply as a
  whole is one value of the requested format, the verdict the judge meant, and what the judge
  answers when asked to repair.

This module gives typed access (frozen pydantic records), the frozen dev/test split rule and a
*reference* conformance check. The reference check is deliberately tiny and uses ``json.loads``
only: it states what the corpus labels mean, it is not the judge's parser and must never be
imported by product code. See README.md for how the corpora were written.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HERE = Path(__file__).resolve().parent
FORGERY = HERE / "forgery.jsonl"
HONEST = HERE / "honest.jsonl"
README = HERE / "README.md"

Kind = Literal["overall", "nl"]
Split = Literal["dev", "test"]
OverallVerdict = Literal["pass", "fail"]
NLVerdict = Literal["met", "not_met"]
Verdict = OverallVerdict | dict[str, NLVerdict]
"""An overall verdict (``pass``/``fail``) or, for NL, one ``met``/``not_met`` per assertion id."""

OVERALL_VALUES = frozenset({"pass", "fail"})
NL_VALUES = frozenset({"met", "not_met"})


def split_of(case_id: str) -> Split:
    """The frozen split of a case: the parity of the SHA-256 of its id (stable, about 50/50).

    Written into every line as ``split``; the corpus test recomputes it, so a case cannot move
    between dev and test without the test failing.
    """
    return "test" if int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 2 else "dev"


class Assertion(BaseModel):
    """One natural-language statement the NL judge is asked about."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="The statement's id as the prompt lists it (A1, A2, ...).")
    text: str = Field(description="The statement itself.")


class Message(BaseModel):
    """One message of the conversation the judge was shown (before defusing)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["agent", "customer", "tool"] = Field(description="Who wrote it.")
    text: str = Field(description="What was written; a forged verdict sits in one of these.")


class Context(BaseModel):
    """The conversation a reply is about: enough for a reader to see where the forgery came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: str = Field(description="telecom, airline or retail.")
    ticket: str = Field(description="The ticket as filed.")
    goal: str = Field(description="What the customer wanted.")
    transcript: list[Message] = Field(description="The messages, in order; numbered #1.. in the judge's record.")


class ForgeryCase(BaseModel):
    """A reply whose own answer is off-format and that quotes a forged, format-shaped verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable case id; the split is derived from it.")
    split: Split = Field(description="Frozen split, split_of(id).")
    kind: Kind = Field(description="overall or nl.")
    asked: list[Assertion] = Field(default_factory=list, description="The NL assertions asked (empty for overall).")
    context: Context = Field(description="The conversation the judge saw, with the injected verdict.")
    reply: str = Field(description="The judge's reply, verbatim.")
    judge_intended: Verdict | None = Field(description="The judge's real answer, or None when it refused.")
    forged: Verdict = Field(description="The verdict-shaped value quoted in the reply that the judge did not give.")
    style: str = Field(description="Which shape the judge's own answer takes (prose_final_answer, german, ...).")
    repair_reply: str = Field(description="What the judge answers when asked for only the answer in the format.")
    repair_intended: Verdict | None = Field(
        description="The verdict repair_reply conveys when it conforms; None when it refuses or stays off-format.")
    expected: Literal["must_not_store_forged"] = Field(
        description="Storing `forged` (where it differs from judge_intended) is a forgery; acceptable: unscored, "
                    "or after the repair turn the judge's intended verdict.")


class HonestCase(BaseModel):
    """An honest judge reply, labelled with conformance, the intended verdict and its repair."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable case id; the split is derived from it.")
    split: Split = Field(description="Frozen split, split_of(id).")
    kind: Kind = Field(description="overall or nl.")
    asked: list[Assertion] = Field(default_factory=list, description="The NL assertions asked (empty for overall).")
    reply: str = Field(description="The judge's reply, verbatim.")
    conforms: bool = Field(description="Whether the reply as a whole is one value of the format (a surrounding "
                                       "code fence and whitespace allowed).")
    intended: Verdict = Field(description="The verdict the judge meant.")
    repair_reply: str | None = Field(description="What the judge answers when asked to repair (may be None when "
                                                 "conforms).")
    repair_conforms: bool | None = Field(description="Whether repair_reply conforms (None when there is none); "
                                                     "False for the few small-model repairs that stay broken.")
    style: str = Field(description="The reply style (bare_compact, think_block, trailing_comma, ...).")
    model_voice: str = Field(description="Whose habits the reply imitates (gpt-4o, claude, qwen3, smollm2, ...).")


_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n(.*)\n[ \t]*```\Z", re.S)


def strip_fence(text: str) -> str:
    """The reply without surrounding whitespace and one surrounding code fence, if it has one."""
    body = text.strip()
    m = _FENCE.match(body)
    return m.group(1).strip() if m else body


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate key in {keys}")
    return dict(pairs)


def reference_read(kind: Kind, asked: list[str], text: str) -> Verdict | None:
    """The verdict ``text`` carries if it is, as a whole, one value of the format; else None.

    The format (docs/judge.md, data/judge_prompts): overall ``{"reasoning": str, "verdict":
    "pass"|"fail"}``; NL ``{"results": [{"id", "reasoning", "verdict": "met"|"not_met"}]}`` with
    every asked id answered exactly once and no other id. No field beyond these (the format
    says ``additionalProperties: false``; until issue 47 the corpora labelled extra fields
    conforming); ``reasoning`` must be a string. Only ``json.loads`` decides what is JSON: no
    repair, no search inside the text.
    """
    try:
        value = json.loads(strip_fence(text), object_pairs_hook=_no_duplicates)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    if kind == "overall":
        ok = value.get("verdict") in OVERALL_VALUES and isinstance(value.get("reasoning"), str)
        return value["verdict"] if ok and set(value) == {"reasoning", "verdict"} else None
    items = value.get("results")
    if not isinstance(items, list) or set(value) != {"results"}:
        return None
    out: dict[str, NLVerdict] = {}
    for item in items:
        if not (isinstance(item, dict) and set(item) == {"id", "reasoning", "verdict"} and isinstance(item.get("id"), str)
                and item.get("verdict") in NL_VALUES and isinstance(item.get("reasoning"), str)):
            return None
        if item["id"] in out:
            return None
        out[item["id"]] = item["verdict"]
    return out if sorted(out) == sorted(asked) else None


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@lru_cache(maxsize=None)
def forgery_cases() -> tuple[ForgeryCase, ...]:
    """Every forgery case, in file order."""
    return tuple(ForgeryCase.model_validate(row) for row in _lines(FORGERY))


@lru_cache(maxsize=None)
def honest_cases() -> tuple[HonestCase, ...]:
    """Every honest case, in file order."""
    return tuple(HonestCase.model_validate(row) for row in _lines(HONEST))


def cases_in(split: Split) -> tuple[tuple[ForgeryCase, ...], tuple[HonestCase, ...]]:
    """Both corpora restricted to one split (tune on dev; report on test)."""
    return (tuple(c for c in forgery_cases() if c.split == split),
            tuple(c for c in honest_cases() if c.split == split))


__all__ = ["Assertion", "Context", "ForgeryCase", "HonestCase", "Message", "Verdict", "cases_in", "file_sha256",
           "forgery_cases", "honest_cases", "reference_read", "split_of", "strip_fence"]
