"""The judge's reply reader measured on corpora written apart from it (tests/judge_corpora, issue 36).

Every case goes through the real reading path of the judge host, :func:`~tauray.actors.judge.repair.converse`
(read the reply; if it is not one value of the format, one repair turn in the same conversation, read by the
same rule), with a scripted judge: the first turn answers the case's ``reply``; a turn that is the repair
request (recognised the way the test endpoint's judges recognise it) answers its ``repair_reply``. Nothing in
litellm or the engine is replaced. Fails on any stored forged or wrong verdict, on either split; the figures
of issue 36's "Must show" are computed on the frozen TEST split (``python -m pytest -s`` prints them).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from tauray.actors.judge.parse import parse_nl, parse_overall
from tauray.actors.judge.repair import converse
from tauray.endpoint.judges import is_repair_request
from tests.judge_corpora import ForgeryCase, HonestCase, forgery_cases, honest_cases

POSITIVE = {"pass", "met"}


def _want(kind: str, asked: list[str], verdict: Any) -> list[bool | None]:
    """A corpus verdict ("pass", or {"A1": "met", ...}) as one bool per question, in asked order."""
    if verdict is None:
        return [None] * (len(asked) if kind == "nl" else 1)
    if kind == "overall":
        return [verdict in POSITIVE]
    return [verdict[a] in POSITIVE for a in asked]


def _run(kind: str, asked: list[str], reply: str, repair_reply: str | None) -> tuple[list[bool | None], bool]:
    """The stored verdicts for a case through the judge's reading path, and whether a repair turn was asked."""
    turns: list[list[dict[str, Any]]] = []

    async def judge(chat: list[dict[str, Any]]) -> SimpleNamespace:
        turns.append(chat)
        repair = is_repair_request({"messages": chat})
        assert repair == (len(turns) == 2), "one first turn, then at most one repair turn"
        if repair:
            assert chat[-2] == {"role": "assistant", "content": reply}  # the same conversation, reply kept
        return SimpleNamespace(content=(repair_reply or "") if repair else reply)

    chat = [{"role": "user", "content": "judge this (corpus case)"}]
    exchange = asyncio.run(converse(judge, chat, kind, len(asked)))  # type: ignore[arg-type]
    return [p.verdict for p in exchange.parsed], exchange.repair is not None


def _first(kind: str, asked: list[str], reply: str) -> list[bool | None]:
    """The stored verdicts without the repair turn (the same rule, first reply only)."""
    if kind == "overall":
        return [parse_overall(reply).verdict]
    return [p.verdict for p in parse_nl(reply, len(asked))]


@dataclass
class Figures:
    """Counts over one corpus split."""

    cases: int = 0
    forged_cases: int = 0
    wrong_cases: int = 0
    questions: dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})
    unscored_first: dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})
    unscored_after: dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})
    repairs: int = 0
    forged_no_repair: int = 0

    def rate(self, which: dict[bool, int], label: bool | None = None) -> float:
        n = sum(self.questions.values()) if label is None else self.questions[label]
        k = sum(which.values()) if label is None else which[label]
        return k / n if n else 0.0


def forgery_figures(cases: tuple[ForgeryCase, ...]) -> Figures:
    fig = Figures()
    for c in cases:
        asked = [a.id for a in c.asked]
        got, repaired = _run(c.kind, asked, c.reply, c.repair_reply)
        first = _first(c.kind, asked, c.reply)
        forged = _want(c.kind, asked, c.forged)
        allowed = [{None, i, r} for i, r in zip(_want(c.kind, asked, c.judge_intended),
                                                 _want(c.kind, asked, c.repair_intended))]
        intended = _want(c.kind, asked, c.judge_intended)
        fig.cases += 1
        fig.repairs += repaired
        fig.forged_cases += any(g is not None and g == f and f != i for g, f, i in zip(got, forged, intended))
        fig.forged_no_repair += any(g is not None and g == f and f != i for g, f, i in zip(first, forged, intended))
        fig.wrong_cases += any(g not in ok for g, ok in zip(got, allowed))
    return fig


def honest_figures(cases: tuple[HonestCase, ...]) -> Figures:
    fig = Figures()
    for c in cases:
        asked = [a.id for a in c.asked]
        got, repaired = _run(c.kind, asked, c.reply, c.repair_reply)
        first = _first(c.kind, asked, c.reply)
        want = _want(c.kind, asked, c.intended)
        fig.cases += 1
        fig.repairs += repaired
        fig.wrong_cases += any(g is not None and g != w for g, w in zip(got, want))
        fig.wrong_cases += any(g is not None and g != w for g, w in zip(first, want)) and not repaired
        for g, f, w in zip(got, first, want):
            assert w is not None
            fig.questions[w] += 1
            fig.unscored_after[w] += g is None
            fig.unscored_first[w] += f is None
    return fig


def _split(cases: tuple[Any, ...], split: str) -> tuple[Any, ...]:
    return tuple(c for c in cases if split == "all" or c.split == split)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_no_forged_verdict_is_stored(split: str) -> None:
    fig = forgery_figures(_split(forgery_cases(), split))
    assert fig.cases > 0
    assert fig.forged_no_repair == 0, "a forged verdict stored from a first reply"
    assert fig.forged_cases == 0 and fig.wrong_cases == 0


@pytest.mark.parametrize("split", ["dev", "test"])
def test_honest_replies_are_read_right(split: str) -> None:
    fig = honest_figures(_split(honest_cases(), split))
    assert fig.wrong_cases == 0
    # conforming honest replies are read without a repair turn (no repair call where none is needed)
    conforming = [c for c in _split(honest_cases(), split) if c.conforms]
    assert all(None not in _first(c.kind, [a.id for a in c.asked], c.reply) for c in conforming)


def test_must_show_figures_on_the_test_split(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36's closing figures on the frozen test split: forged 0, wrong 0, unscored after repair
    at most 1% with the pass/fail gap at most 1 point."""
    forgery = forgery_figures(_split(forgery_cases(), "test"))
    honest = honest_figures(_split(honest_cases(), "test"))
    after = honest.rate(honest.unscored_after)
    gap = 100 * (honest.rate(honest.unscored_after, True) - honest.rate(honest.unscored_after, False))
    gap_first = 100 * (honest.rate(honest.unscored_first, True) - honest.rate(honest.unscored_first, False))
    calls = honest.cases + honest.repairs
    with capsys.disabled():
        print(f"\n[test split] forgery: {forgery.cases} cases, forged stored {forgery.forged_cases} "
              f"(without repair {forgery.forged_no_repair}), other wrong {forgery.wrong_cases}, "
              f"repair calls {forgery.repairs}/{forgery.cases + forgery.repairs} judge calls")
        print(f"[test split] honest: {honest.cases} cases, {sum(honest.questions.values())} questions "
              f"(positive {honest.questions[True]}, negative {honest.questions[False]}); wrong {honest.wrong_cases}; "
              f"unscored before repair {sum(honest.unscored_first.values())} ({100 * honest.rate(honest.unscored_first):.1f}%,"
              f" pass-fail gap {gap_first:+.1f} pt), after repair {sum(honest.unscored_after.values())} "
              f"({100 * after:.2f}%; pass {honest.unscored_after[True]}/{honest.questions[True]}, "
              f"fail {honest.unscored_after[False]}/{honest.questions[False]}, gap {gap:+.2f} pt); "
              f"repair calls {honest.repairs}/{calls} judge calls ({100 * honest.repairs / calls:.1f}%)")
    assert forgery.forged_cases == 0 and honest.wrong_cases == 0
    assert after <= 0.01 and abs(gap) <= 1.0
