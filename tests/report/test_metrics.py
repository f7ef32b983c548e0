"""Metric functions against hand-computed values (no Ray, synthetic rows)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tauray.results.stats import judges as judge_report
from tauray.results.stats import metrics
from tauray.results.tables.readers import conversations_df, judge_verdicts_df


def _rows(spec: list[tuple]) -> pd.DataFrame:
    """(arm, scenario, upstream_id, variant, success, error_kind) -> a conversations frame with declared dtypes."""
    base = conversations_df("/nonexistent")  # empty, declared dtypes
    records = []
    for i, (arm, scen, up, variant, success, err) in enumerate(spec):
        records.append({"run_id": "r", "conversation_id": f"c{i}", "agent_model": arm, "user_model": "u",
                        "scenario": scen, "upstream_id": up, "policy_variant": variant, "domain": "telecom",
                        "success": success, "error_kind": err, "termination_reason": "agent_end",
                        "agent_cost_usd": 0.01, "user_cost_usd": None, "judge_cost_usd": None,
                        "agent_prompt_tokens": 100, "agent_completion_tokens": 10, "user_prompt_tokens": 0,
                        "user_completion_tokens": 0, "judge_prompt_tokens": 0, "judge_completion_tokens": 0})
    df = pd.concat([base, pd.DataFrame(records)], ignore_index=True)
    return df.astype({"success": "boolean"})


def _trials(arm: str, scen: str, outcomes: list[bool | None], err: list[str | None] | None = None,
            variant: str = "manual", up: str | None = None) -> list[tuple]:
    err = err or [None] * len(outcomes)
    return [(arm, scen, up or scen, variant, o, e) for o, e in zip(outcomes, err)]


@pytest.fixture()
def three_tasks() -> pd.DataFrame:
    # task A 4/4, task B 2/4, task C 3/4; plus an infra error (with success
    # False), which must not count, and an unscored row on task B, which counts
    # as not successful.
    spec = (_trials("m", "A", [True] * 4) + _trials("m", "B", [True, False, True, False])
            + _trials("m", "C", [True, True, False, True])
            + _trials("m", "B", [False, None], ["infra", None]))
    return _rows(spec)


def test_pass_hat_k_hand_computed(three_tasks):
    # counted trials: A 4 (c=4), B 5 (c=2), C 4 (c=3); k up to the smallest, 4.
    # per task C(c,k)/C(n,k): A = 1,1,1,1; B = 2/5, 1/10, 0, 0; C = 3/4, 1/2, 1/4, 0
    expected = {1: (1 + 0.4 + 0.75) / 3, 2: (1 + 0.1 + 0.5) / 3, 3: (1 + 0 + 0.25) / 3, 4: 1 / 3}
    curve = metrics.pass_k_curve(three_tasks, [1, 2, 3, 4])
    for k, value in expected.items():
        row = curve[curve["k"] == k].iloc[0]
        assert row["pass_hat_k"] == pytest.approx(value, abs=1e-12)
        assert (row["tasks"], row["conversations"], row["k_cap"]) == (3, 13, 4)
    # pass@k = 1 - C(n-c,k)/C(n,k): A = 1; B = 2/5, 7/10, 9/10, 1; C = 3/4, 1, 1, 1
    assert curve.set_index("k")["pass_at_k"].tolist() == pytest.approx(
        [(1 + 0.4 + 0.75) / 3, (1 + 0.7 + 1) / 3, (1 + 0.9 + 1) / 3, 1.0])
    five = metrics.pass_k_curve(three_tasks, [5]).iloc[0]  # past the smallest trial count: not computed
    assert five["tasks"] == 0 and math.isnan(five["pass_hat_k"])


def test_pass_hat_k_is_non_increasing_with_uneven_trials():
    # task a lost three of its four trials (infra), b and c have all four.
    # Averaging over "tasks with n >= k" let pass^2 (b, c only) exceed pass^1.
    spec = (_trials("m", "a", [False, None, None, None], [None, "infra", "infra", "infra"])
            + _trials("m", "b", [True] * 4) + _trials("m", "c", [True, True, False, True]))
    curve = metrics.pass_k_curve(_rows(spec), [1, 2, 3, 4])
    values = curve["pass_hat_k"].dropna().tolist()
    assert len(values) == 1 and curve["k_cap"].iloc[0] == 1  # capped at the smallest trial count, as τ²
    spec = _trials("m", "a", [False, True]) + _trials("m", "b", [True] * 4) + _trials("m", "c", [True, False, True])
    curve = metrics.pass_k_curve(_rows(spec), [1, 2, 3, 4])
    values = curve["pass_hat_k"].tolist()
    assert values[0] == pytest.approx((0.5 + 1 + 2 / 3) / 3) and values[1] == pytest.approx((0 + 1 + 1 / 3) / 3)
    assert math.isnan(values[2]) and curve["tasks"].tolist() == [3, 3, 0, 0]
    lb = metrics.leaderboard(_rows(spec), n_boot=50).iloc[0]
    assert lb["pass_hat_1"] >= lb["pass_hat_2"] and lb["k_cap"] == 2


def test_every_outcome_is_counted(three_tasks):
    c = metrics.counts(three_tasks).iloc[0]
    assert (c["conversations"], c["infra_errors"], c["unscored"], c["counted"], c["successes"], c["failures"]) == (
        14, 1, 1, 13, 9, 4)
    assert c["infra_share"] == pytest.approx(1 / 14)
    lb = metrics.leaderboard(three_tasks, k_max=4, n_boot=200).iloc[0]
    assert lb["success_rate"] == pytest.approx(9 / 13)
    assert lb["pass_hat_1"] == pytest.approx((1 + 0.4 + 0.75) / 3) and lb["pass_hat_4"] == pytest.approx(1 / 3)
    assert lb["ci_lo"] <= 9 / 13 <= lb["ci_hi"] and lb["tasks"] == 3
    # cost counts every row (the infra row spent money too); per success over 9 successes
    assert lb["cost_usd"] == pytest.approx(14 * 0.01) and lb["cost_per_success"] == pytest.approx(14 * 0.01 / 9)
    assert lb["tokens_per_success"] == pytest.approx(14 * 110 / 9)


def test_model_error_rows_lower_the_rate():
    # 5 solved and 5 ended on a model error must rank with 5 solved and 5 failed, not above it
    errs = _trials("errs", "t", [True] * 5 + [None] * 5, [None] * 5 + ["model"] * 5)
    fails = _trials("fails", "t", [True] * 5 + [False] * 5)
    internal = _trials("internal", "t", [True] * 5 + [None] * 5, [None] * 5 + ["internal"] * 5)
    infra = _trials("infra", "t", [True] * 5 + [None] * 5, [None] * 5 + ["infra"] * 5)
    lb = metrics.leaderboard(_rows(errs + fails + internal + infra), n_boot=50).set_index("agent_model")
    assert lb.loc["errs", "success_rate"] == pytest.approx(0.5)
    assert lb.loc["fails", "success_rate"] == pytest.approx(0.5)
    assert lb.loc["internal", "success_rate"] == pytest.approx(0.5)
    assert lb.loc["infra", "success_rate"] == pytest.approx(1.0)  # infra says nothing about the model ...
    assert (lb.loc["infra", "infra_errors"], lb.loc["infra", "infra_share"]) == (5, 0.5)  # ... and is shown beside
    assert (lb.loc["errs", "model_errors"], lb.loc["internal", "internal_errors"]) == (5, 5)


def test_one_classification_for_metrics_summary_and_cells():
    from tauray.results.stats.outcomes import outcome, outcomes, tally

    df = _rows(_trials("m", "A", [True, False, None, None, None, None], [None, None, None, "model", "internal", "infra"]))
    labels = outcomes(df).astype(str).tolist()
    assert labels == ["success", "failed", "unscored", "model", "internal", "infra"]
    assert labels == [outcome(e, s) for e, s in zip(df["error_kind"], df["success"])]
    t = tally(labels)
    c = metrics.counts(df).iloc[0]
    assert (t["total"], t["counted"], t["success"]) == (c["conversations"], c["counted"], c["successes"])
    assert (t["model"], t["internal"], t["infra"], t["unscored"]) == (
        c["model_errors"], c["internal_errors"], c["infra_errors"], c["unscored"])


def test_wilson_interval_hand_computed():
    # p = 0.8, n = 10, z = 1.959964: centre 0.71671, half-width 0.22661
    assert metrics.wilson_interval(8, 10) == pytest.approx((0.4901624715, 0.9433178485), abs=1e-9)
    # zero successes: upper end z²/(n + z²)
    z2 = 1.959963984540054 ** 2
    assert metrics.wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)), abs=1e-12)
    assert all(math.isnan(x) for x in metrics.wilson_interval(0, 0))


def test_paired_comparison_hand_computed():
    # per-task rates X: 1, .5, 0, 1 ; Y: .5, .5, 1, 0 -> differences .5, 0, -1, 1
    spec = []
    for task, x, y in [("T1", [True, True], [True, False]), ("T2", [True, False], [False, True]),
                       ("T3", [False, False], [True, True]), ("T4", [True, True], [False, False])]:
        spec += _trials("X", task, x) + _trials("Y", task, y)
    spec += _trials("X", "T5", [True, True])  # only X ran T5: not compared
    df = _rows(spec)
    pc = metrics.paired_comparison(df, "X", "Y", n_boot=500, seed=1)
    assert pc.tasks == 4 and (pc.won, pc.lost, pc.tied) == (2, 1, 1)
    assert pc.difference == pytest.approx(0.125) and pc.rate_a == pytest.approx(0.625) and pc.rate_b == 0.5
    assert -1 <= pc.lo <= pc.difference <= pc.hi <= 1
    assert metrics.paired_comparison(df, "X", "Y", n_boot=500, seed=1) == pc  # seeded: reproducible
    assert metrics.paired_comparison(df, "Y", "X", n_boot=500, seed=1).difference == pytest.approx(-0.125)


def test_manual_vs_workflow_pairs_identical_upstream_tasks():
    spec = (_trials("m", "man_1", [True, False], variant="manual", up="u1")
            + _trials("m", "wf_1", [True, True], variant="workflow", up="u1")
            + _trials("m", "man_2", [True, True], variant="manual", up="u2")
            + _trials("m", "wf_2", [True, True], variant="workflow", up="u2")
            + _trials("m", "man_3", [False, False], variant="manual", up="u3"))  # no workflow twin
    ab = metrics.manual_vs_workflow(_rows(spec), n_boot=200).iloc[0]
    assert ab["tasks"] == 2 and ab["difference"] == pytest.approx(0.25)
    assert ab["rate_a"] == pytest.approx(1.0) and ab["rate_b"] == pytest.approx(0.75)
    assert (ab["won"], ab["lost"], ab["tied"]) == (1, 0, 1)


def test_breakdown_and_bootstrap():
    df = _rows(_trials("m", "A", [True, False]) + _trials("m", "B", [True, True]) + _trials("m", "C", [False, True]))
    df["persona"] = ["easy", "easy", None, None, "easy", "easy"]
    bd = metrics.breakdown(df, "persona", n_boot=300).set_index("persona")
    assert bd.loc["easy", "success_rate"] == 0.5 and bd.loc["(none)", "success_rate"] == 1.0
    assert bd.loc["easy", "tasks"] == 2 and bd.loc["easy", "ci_lo"] <= 0.5 <= bd.loc["easy", "ci_hi"]
    assert math.isnan(bd.loc["(none)", "ci_lo"])  # one task: no task-clustered interval
    a = metrics.task_bootstrap([0.0, 1.0, 0.5], n_boot=300, seed=7)
    assert a == metrics.task_bootstrap([0.0, 1.0, 0.5], n_boot=300, seed=7) and 0 <= a[0] <= 0.5 <= a[1] <= 1


def test_task_clustered_interval_covers_at_its_nominal_level():
    """60 tasks x 4 trials, per-task rates drawn from Beta(0.5, 0.5) (strongly clustered):
    the task bootstrap covers the population rate about 95% of the time; treating
    trials as independent (Wilson) covers far less."""
    import numpy as np

    rng = np.random.default_rng(2026)
    sims, tasks, trials, true = 300, 60, 4, 0.5
    boot_hits = wilson_hits = 0
    for i in range(sims):
        p = rng.beta(0.5, 0.5, size=tasks)
        c = rng.binomial(trials, p)
        lo, hi = metrics.rate_interval([trials] * tasks, c, n_boot=400, seed=i)
        boot_hits += lo <= true <= hi
        wlo, whi = metrics.wilson_interval(int(c.sum()), tasks * trials)
        wilson_hits += wlo <= true <= whi
    assert 0.90 <= boot_hits / sims <= 0.98, boot_hits / sims
    assert wilson_hits / sims < 0.88, wilson_hits / sims


def test_cohen_kappa_and_judge_agreement():
    # po = 0.8, pe = .6*.4 + .4*.6 = .48 -> κ = .32/.52
    assert metrics.cohen_kappa([1, 1, 0, 0, 1], [1, 0, 0, 0, 1]) == pytest.approx(0.32 / 0.52)
    assert math.isnan(metrics.cohen_kappa([1, 1], [1, 1]))
    conv = _rows(_trials("m", "A", [True, True, False, False]) + _trials("m", "B", [True], ["infra"]))
    jv_base = judge_verdicts_df("/nonexistent")
    samples = {"c0": [True, True, False], "c1": [False, False, True], "c2": [False, None, None],
               "c3": [True, False, None], "c4": [True, True, True]}  # c3: tie -> no verdict; c4: infra row
    rows = [{"run_id": "r", "conversation_id": cid, "judge_config_id": "J", "judge_model": "j", "prompt_id": "p",
             "prompt_version": "1", "sample_index": k, "passed": v}
            for cid, vals in samples.items() for k, v in enumerate(vals)]
    jv = pd.concat([jv_base, pd.DataFrame(rows)], ignore_index=True).astype({"passed": "boolean"})
    labels = judge_report.judge_labels(jv).set_index("conversation_id")
    assert labels.loc["c0", "judge_passed"] == True and labels.loc["c1", "judge_passed"] == False
    assert pd.isna(labels.loc["c3", "judge_passed"]) and labels.loc["c2", "unscored_samples"] == 2
    ag = judge_report.judge_agreement(conv, jv).iloc[0]
    # compared: c0 (J pass, P pass), c1 (J fail, P pass), c2 (J fail, P fail)
    assert (ag["n"], ag["tp"], ag["fp"], ag["fn"], ag["tn"]) == (3, 1, 0, 1, 1)
    assert ag["accuracy"] == pytest.approx(2 / 3) and ag["judge_unscored"] == 1
    pw = judge_report.judge_pairwise(conv, jv)
    assert set(pw["rater_a"]) == {"predicates", "j · p@1"}
    cell = pw[(pw["rater_a"] == "predicates") & (pw["rater_b"] == "j · p@1")].iloc[0]
    assert cell["n"] == 3 and cell["agreement"] == pytest.approx(2 / 3)
