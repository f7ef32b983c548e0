"""Scoring: pure functions of (final dual state, executed calls, scenario).

What scoring needs of a side's final DB (its hash and the verdicts of the
assertions on that side) is a :class:`SideCheck`, computed where the DB is
(:func:`check_side`: on the side's host, so no DB crosses between actors);
:func:`score_checks` combines the checks of both sides with the calls and
words of the conversation, and :func:`score` does both over a dual state.

Predicates are evaluated on the final state, one verdict each; a predicate
that raises is a failed verdict carrying the error, never a crash. DB hashes
are compared with gold, reference actions are looked for among the executed
calls with upstream's matching rule, COMMUNICATE checks the agent's words, and
the verdict combines the gating signals only. A gating signal that has not
been scored yet (NL assertions before the judge ran) leaves success unknown.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from pydantic import Field

from tauray.scenarios.gold import GoldReplay, gold_replay
from tauray.scenarios.model import (
    Frozen,
    Predicate,
    ReferenceAction,
    Scenario,
    Side,
    SuccessSignal,
)
from tauray.scenarios.state import DualState, SideState, no_side_state


class ExecutedCall(Frozen):
    """The part of an executed tool call that scoring looks at."""

    side: Side = Field(description="Side that made the call.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(description="Arguments as called.")


class PredicateVerdict(Frozen):
    index: int = Field(description="Position among the scenario's assertions.")
    side: Side = Field(description="Side whose state was checked.")
    function: str = Field(description="Assertion function.")
    arguments: dict[str, Any] = Field(description="Its arguments.")
    expected: bool = Field(description="Value the function had to return.")
    actual: str | None = Field(description="What it returned, as JSON text; None when it raised.")
    met: bool = Field(description="True when actual equals expected.")
    error: str | None = Field(default=None, description="Why the predicate could not be evaluated.")


class ActionCheck(Frozen):
    action_id: str = Field(description="Reference action id.")
    side: Side = Field(description="Side of the reference action.")
    name: str = Field(description="Tool name of the reference action.")
    matched_call: int | None = Field(description="Index of the first executed call that matches; None if none.")


class Verdict(Frozen):
    success: bool | None = Field(description="All gating signals passed; None when one is not scored yet.")
    signals: dict[str, bool | None] = Field(description="Every computed signal: passed, failed, or None (not scored).")
    gating: tuple[str, ...] = Field(description="Signals that decide success.")
    excluded: tuple[str, ...] = Field(description="Signals computed but excluded from the verdict.")
    reason: str = Field(description="Short explanation: which gating signals failed or are missing.")


class SideCheck(Frozen):
    """What scoring needs of one side's final DB, computed where the DB lives."""

    side: Side = Field(description="The side checked.")
    db_hash: str = Field(description="Hash of the side's final DB (taken before its assertions ran).")
    predicates: tuple[PredicateVerdict, ...] = Field(
        description="Verdicts of the scenario's assertions on this side, in the scenario's order.")


class Score(Frozen):
    verdict: Verdict
    predicates: tuple[PredicateVerdict, ...]
    actions: tuple[ActionCheck, ...]
    agent_hash: str
    user_hash: str | None
    gold_agent_hash: str
    gold_user_hash: str | None
    db_state_match: bool
    action_match: bool
    communicate: bool | None


def evaluate_predicate(state: DualState | SideState, predicate: Predicate) -> PredicateVerdict:
    """One assertion's verdict on the final state (both sides, or the one side it is about)."""
    base = dict(index=predicate.index, side=predicate.side, function=predicate.func_name,
                arguments=dict(predicate.arguments), expected=predicate.assert_value)
    try:
        if isinstance(state, SideState):
            if state.side != predicate.side:
                raise ValueError(f"the assertion is on the {predicate.side} side, not the {state.side} side")
            side = state
        else:
            side = state.side(predicate.side)
        value = side.call_function(predicate.func_name, dict(predicate.arguments))
    except Exception as exc:
        return PredicateVerdict(**base, actual=None, met=False, error=f"{type(exc).__name__}: {exc}")
    actual = json.dumps(value, default=str)
    if not isinstance(value, bool):
        return PredicateVerdict(**base, actual=actual, met=False,
                                error=f"{predicate.func_name} returned {type(value).__name__}, not bool")
    return PredicateVerdict(**base, actual=actual, met=value == predicate.assert_value)


def action_matches(action: ReferenceAction, call: ExecutedCall) -> bool:
    """Upstream's rule: same tool name; compare the listed arguments, or, with no
    list, every argument the executed call passed."""
    if action.name != call.name:
        return False
    keys = action.compare_args if action.compare_args is not None else tuple(call.arguments)
    if not keys:
        return True
    return ({k: v for k, v in call.arguments.items() if k in keys}
            == {k: v for k, v in action.arguments.items() if k in keys})


def check_actions(scenario: Scenario, calls: list[ExecutedCall]) -> tuple[ActionCheck, ...]:
    checks = []
    for action in scenario.reference_actions:
        hit = next((i for i, call in enumerate(calls) if action_matches(action, call)), None)
        checks.append(ActionCheck(action_id=action.action_id, side=action.side, name=action.name, matched_call=hit))
    return tuple(checks)


def matched_reference(scenario: Scenario, call: ExecutedCall) -> str | None:
    """The first reference action an executed call satisfies (for the actions table)."""
    return next((a.action_id for a in scenario.reference_actions if action_matches(a, call)), None)


def communicated(info: Iterable[str] | None, agent_texts: Iterable[str]) -> bool:
    info = list(info or ())
    texts = [t.lower().replace(",", "") for t in agent_texts if t]
    return all(any(item.lower() in t for t in texts) for item in info)


def combine(scenario: Scenario, signals: dict[str, bool | None]) -> Verdict:
    gating = tuple(s.value for s in scenario.success_signals.gating)
    excluded = tuple(s.value for s in scenario.success_signals.informational)
    failed = [g for g in gating if signals.get(g) is False]
    missing = [g for g in gating if signals.get(g) is None]
    if failed:
        success, reason = False, "failed: " + ", ".join(failed)
    elif missing:
        success, reason = None, "not scored yet: " + ", ".join(missing)
    else:
        success, reason = True, "all gating signals passed: " + ", ".join(gating)
    return Verdict(success=success, signals=dict(signals), gating=gating, excluded=excluded, reason=reason)


def check_side(scenario: Scenario, state: SideState) -> SideCheck:
    """The hash of one side's final DB, then the verdicts of the scenario's assertions on it
    (hash first, as upstream does: an assertion function may touch the DB)."""
    db_hash = state.db_hash()
    predicates = tuple(evaluate_predicate(state, p) for p in scenario.db_state_assertions or ()
                       if p.side == state.side)
    return SideCheck(side=state.side, db_hash=db_hash, predicates=predicates)


def score(scenario: Scenario, state: DualState, calls: list[ExecutedCall],
          agent_texts: list[str] | None = None, nl_passed: bool | None = None,
          judge_passed: bool | None = None, gold: GoldReplay | None = None) -> Score:
    user = check_side(scenario, state.user) if state.user is not None else None
    return score_checks(scenario, check_side(scenario, state.agent), user, calls, agent_texts=agent_texts,
                        nl_passed=nl_passed, judge_passed=judge_passed, gold=gold)


def _predicates(scenario: Scenario, checks: dict[str, SideCheck]) -> tuple[PredicateVerdict, ...]:
    """Every assertion's verdict in the scenario's order, from the checks of the sides; an
    assertion on a side without state fails with the error asking that side would raise."""
    verdicts = {side: iter(check.predicates) for side, check in checks.items()}
    out = []
    for p in scenario.db_state_assertions or ():
        if p.side not in verdicts:
            exc = no_side_state(p.side)
            out.append(PredicateVerdict(index=p.index, side=p.side, function=p.func_name,
                                        arguments=dict(p.arguments), expected=p.assert_value, actual=None,
                                        met=False, error=f"{type(exc).__name__}: {exc}"))
            continue
        verdict = next(verdicts[p.side], None)
        if verdict is None or verdict.index != p.index or verdict.function != p.func_name:
            raise ValueError(f"the {p.side} side's check does not match the scenario's assertions")
        out.append(verdict)
    return tuple(out)


def score_checks(scenario: Scenario, agent: SideCheck, user: SideCheck | None, calls: list[ExecutedCall],
                 agent_texts: list[str] | None = None, nl_passed: bool | None = None,
                 judge_passed: bool | None = None, gold: GoldReplay | None = None) -> Score:
    """The score from each side's :class:`SideCheck` (``user`` None: no user-side state)."""
    gold = gold or gold_replay(scenario)
    hashes = {"agent": agent.db_hash, "user": user.db_hash if user is not None else None}
    predicates = _predicates(scenario, {c.side: c for c in (agent, user) if c is not None})
    actions = check_actions(scenario, calls)
    db_match = hashes["agent"] == gold.agent_hash and hashes["user"] == gold.user_hash
    action_match = all(a.matched_call is not None for a in actions)
    communicate = communicated(scenario.communicate_info, agent_texts) if agent_texts is not None else (
        True if not scenario.communicate_info else None)
    signals: dict[str, bool | None] = {
        SuccessSignal.DB_STATE_ASSERTION.value: all(p.met for p in predicates),
        SuccessSignal.DB_STATE_MATCH.value: db_match,
        SuccessSignal.ACTION_MATCH.value: action_match,
        SuccessSignal.COMMUNICATE.value: communicate,
        SuccessSignal.NL_ASSERTION.value: True if not scenario.nl_assertions else nl_passed,
        SuccessSignal.JUDGE_PASSED.value: judge_passed,
    }
    return Score(
        verdict=combine(scenario, signals), predicates=predicates, actions=actions,
        agent_hash=hashes["agent"], user_hash=hashes["user"],
        gold_agent_hash=gold.agent_hash, gold_user_hash=gold.user_hash,
        db_state_match=db_match, action_match=action_match, communicate=communicate,
    )
