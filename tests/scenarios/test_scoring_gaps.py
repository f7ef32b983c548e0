"""Scoring behaviour the mutation run found unpinned (issue 27): a predicate whose
expected value is False, and verdicts that combine a failing informational signal or
an unscored gating signal. Each test failed on the mutant its docstring names."""

from __future__ import annotations

import json

import pytest

from tauray.scenarios import (
    ExecutedCall,
    SuccessSignal,
    SuccessSignals,
    combine,
    default_registry,
    fresh_state,
    replay,
    score,
)
from tauray.scenarios.model import Predicate
from tauray.scenarios.scoring import communicated, evaluate_predicate

SCENARIO = default_registry().get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")
S = SuccessSignal
REFUELLED = dict(side="agent", func_name="assert_data_refueling_amount",
                 arguments={"customer_id": "C1001", "line_id": "L1002", "expected_amount": 2.0})


def _with(gating, informational=()):
    return SCENARIO.model_copy(update={"success_signals": SuccessSignals(gating=tuple(gating),
                                                                         informational=tuple(informational))})


def test_a_predicate_expecting_false_is_met_only_when_the_function_returns_false():
    """Kills: ``met = value == assert_value`` read as ``met = value`` (the expected value ignored)."""
    expects_false = Predicate(index=0, assert_value=False, **REFUELLED)
    expects_true = Predicate(index=1, assert_value=True, **REFUELLED)
    before = fresh_state(SCENARIO)  # nothing refuelled yet: the function returns False
    after, _ = replay(SCENARIO)  # the gold actions refuel 2 GB: it returns True
    v = evaluate_predicate(before, expects_false)
    assert (v.actual, v.expected, v.met, v.error) == ("false", False, True, None)
    v = evaluate_predicate(after, expects_false)
    assert (v.actual, v.expected, v.met, v.error) == ("true", False, False, None)
    assert evaluate_predicate(before, expects_true).met is False
    assert evaluate_predicate(after, expects_true).met is True


def test_a_failing_informational_signal_never_fails_the_verdict():
    """Kills: informational signals counted among the gating ones."""
    scenario = _with([S.DB_STATE_ASSERTION], [S.DB_STATE_MATCH, S.ACTION_MATCH, S.JUDGE_PASSED])
    v = combine(scenario, {"DB_STATE_ASSERTION": True, "DB_STATE_MATCH": False, "ACTION_MATCH": False,
                           "JUDGE_PASSED": False})
    assert v.success is True
    assert v.reason == "all gating signals passed: DB_STATE_ASSERTION"
    assert v.gating == ("DB_STATE_ASSERTION",)
    assert v.excluded == ("DB_STATE_MATCH", "ACTION_MATCH", "JUDGE_PASSED")
    assert v.signals["JUDGE_PASSED"] is False  # still stored, as a diagnostic


def test_an_unscored_gating_signal_leaves_success_unknown_and_a_failure_wins_over_it():
    """Kills: ``missing`` read as passed (success True before the judge ran), and the
    order of the failed / not-scored checks swapped."""
    scenario = _with([S.DB_STATE_ASSERTION, S.NL_ASSERTION, S.JUDGE_PASSED])
    v = combine(scenario, {"DB_STATE_ASSERTION": True, "NL_ASSERTION": None, "JUDGE_PASSED": True})
    assert v.success is None and v.reason == "not scored yet: NL_ASSERTION"
    v = combine(scenario, {"DB_STATE_ASSERTION": True})  # absent counts as not scored
    assert v.success is None and v.reason == "not scored yet: NL_ASSERTION, JUDGE_PASSED"
    v = combine(scenario, {"DB_STATE_ASSERTION": False, "NL_ASSERTION": None, "JUDGE_PASSED": False})
    assert v.success is False and v.reason == "failed: DB_STATE_ASSERTION, JUDGE_PASSED"
    v = combine(scenario, {"DB_STATE_ASSERTION": True, "NL_ASSERTION": True, "JUDGE_PASSED": True})
    assert v.success is True
    assert v.reason == "all gating signals passed: DB_STATE_ASSERTION, NL_ASSERTION, JUDGE_PASSED"


def test_score_gates_on_the_judge_only_when_the_scenario_says_so():
    """The same gold conversation through ``score``: a failed judge is a diagnostic when
    JUDGE_PASSED is informational, a failure when it gates, unknown when it gates and the
    judge has not run."""
    state, outcomes = replay(SCENARIO)
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    informational = score(_with([S.DB_STATE_ASSERTION], [S.JUDGE_PASSED]), state, calls, judge_passed=False)
    assert informational.verdict.success is True and informational.verdict.signals["JUDGE_PASSED"] is False
    gating = _with([S.DB_STATE_ASSERTION, S.JUDGE_PASSED])
    assert score(gating, state, calls, judge_passed=False).verdict.success is False
    assert score(gating, state, calls, judge_passed=None).verdict.success is None
    assert score(gating, state, calls, judge_passed=True).verdict.success is True
    # No NL assertions in this scenario: the NL signal passes vacuously, whatever the judge said.
    assert score(_with([S.NL_ASSERTION]), state, calls, nl_passed=None).verdict.success is True


def test_communicate_ignores_case_and_thousands_separators_and_needs_every_item():
    assert communicated(["1000 GB", "Paid"], ["Your plan has 1,000 gb.", "the bill is PAID"]) is True
    assert communicated(["1000 GB", "refund"], ["Your plan has 1,000 gb."]) is False
    assert communicated(None, []) is True and communicated([], ["x"]) is True
    assert communicated(["x"], [None, ""]) is False


def test_a_predicate_that_raises_or_returns_no_bool_fails_with_a_precise_error():
    state = fresh_state(SCENARIO)
    v = evaluate_predicate(state, Predicate(index=0, side="user", func_name="no_such_function", arguments={}))
    assert (v.actual, v.met) == (None, False) and v.error.startswith("AttributeError: ")
    v = evaluate_predicate(state, Predicate(index=1, side="user", func_name="check_status_bar", arguments={}))
    shown = state.user.call_function("check_status_bar", {})
    assert isinstance(shown, str)
    assert v.met is False and v.actual == json.dumps(shown)
    assert v.error == "check_status_bar returned str, not bool"


def test_reference_actions_compare_the_listed_arguments_or_else_every_argument_called():
    from tauray.scenarios.model import ReferenceAction
    from tauray.scenarios.scoring import action_matches

    call = ExecutedCall(side="agent", name="refuel_data", arguments={"line_id": "L1", "gb_amount": 2.0})
    listed = ReferenceAction(action_id="a", side="agent", name="refuel_data",
                             arguments={"line_id": "L1", "gb_amount": 5.0}, compare_args=("line_id",))
    assert action_matches(listed, call) is True  # gb_amount is not compared
    assert action_matches(listed.model_copy(update={"compare_args": None}), call) is False  # every argument is
    assert action_matches(listed.model_copy(update={"compare_args": ("gb_amount",)}), call) is False
    assert action_matches(listed.model_copy(update={"compare_args": ()}), call) is True  # the name alone
    assert action_matches(listed.model_copy(update={"name": "suspend_line", "compare_args": ()}), call) is False
    same = listed.model_copy(update={"arguments": {"line_id": "L1", "gb_amount": 2.0}, "compare_args": None})
    assert action_matches(same, call) is True


def test_db_state_match_needs_both_sides_equal_to_gold():
    state, outcomes = replay(SCENARIO)
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    gold = score(SCENARIO, state, calls)
    assert gold.db_state_match is True and gold.user_hash == gold.gold_user_hash is not None
    state.execute("user", "toggle_airplane_mode", {})  # the phone changes, the operator's records do not
    after = score(SCENARIO, state, calls)
    assert after.agent_hash == after.gold_agent_hash
    assert after.user_hash == state.hashes()["user"] != after.gold_user_hash
    assert after.db_state_match is False and after.verdict.signals["DB_STATE_MATCH"] is False


def test_communicate_is_unknown_without_the_agent_words_and_vacuous_without_info():
    state, outcomes = replay(SCENARIO)
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    told = SCENARIO.model_copy(update={"communicate_info": ("2 GB",)})
    assert score(told, state, calls).communicate is None
    assert score(told, state, calls, agent_texts=["I added 2 gb."]).communicate is True
    assert score(told, state, calls, agent_texts=["Done."]).communicate is False
    assert score(SCENARIO, state, calls).communicate is True


def test_checks_from_the_sides_must_match_the_scenario_and_a_missing_side_fails_its_assertions():
    from tauray.scenarios.scoring import check_side, score_checks

    state, outcomes = replay(SCENARIO)
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    agent, user = check_side(SCENARIO, state.agent), check_side(SCENARIO, state.user)
    assert [p.side for p in user.predicates] == ["user", "user"] and len(agent.predicates) == 1
    full = score_checks(SCENARIO, agent, user, calls)
    assert full.verdict.success is True and [p.index for p in full.predicates] == [0, 1, 2]
    # no user-side state: the user's assertions fail with the error asking that side raises
    alone = score_checks(SCENARIO, agent, None, calls)
    first = alone.predicates[0]
    assert (first.index, first.side, first.function, first.arguments, first.expected, first.actual, first.met) == (
        0, "user", "assert_mobile_data_status", {"expected_status": True}, True, None, False)
    assert first.error == "ValueError: this scenario has no user-side state"
    assert alone.predicates[2] == full.predicates[2] and alone.verdict.success is False
    assert alone.user_hash is None and alone.db_state_match is False
    # a side's check that does not line up with the scenario's assertions is refused
    for wrong in (user.model_copy(update={"predicates": user.predicates[:1]}),
                  user.model_copy(update={"predicates": user.predicates[::-1]})):
        with pytest.raises(ValueError, match="^the user side's check does not match the scenario's assertions$"):
            score_checks(SCENARIO, agent, wrong, calls)
    on_agent = evaluate_predicate(state.agent, SCENARIO.db_state_assertions[0])  # a user assertion
    assert on_agent.met is False
    assert on_agent.error == "ValueError: the assertion is on the user side, not the agent side"


def test_score_passes_the_judge_nl_verdict_and_a_given_gold_through():
    from tauray.scenarios.gold import GoldReplay

    state, outcomes = replay(SCENARIO)
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    nl = SCENARIO.model_copy(update={"nl_assertions": ("The agent apologised.",)})
    gated = _with([S.NL_ASSERTION]).model_copy(update={"nl_assertions": ("The agent apologised.",)})
    assert score(gated, state, calls, nl_passed=False).verdict.success is False
    assert score(gated, state, calls, nl_passed=True).verdict.success is True
    assert score(nl, state, calls, nl_passed=False).verdict.signals["NL_ASSERTION"] is False
    other = GoldReplay(domain="telecom", upstream_id="x", agent_hash="a", user_hash="u", failed_actions=())
    s = score(SCENARIO, state, calls, gold=other)
    assert (s.gold_agent_hash, s.gold_user_hash, s.db_state_match) == ("a", "u", False)
    mock = default_registry().get("tau2_mock__update_task_with_message_history")
    mstate, mout = replay(mock)
    m = score(mock, mstate, [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in mout])
    assert m.user_hash is None and m.db_state_match is True
