"""Metric functions against hand-computed values (no Ray, synthetic rows)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from tauray.results import metrics
from tauray.results.readers import read_table


def _rows(spec: list[tuple]) -> pd.DataFrame:
    """(arm, scenario, upstream_id, variant, success, error_kind) -> a conversations frame with declared dtypes."""
    base = read_table("/nonexistent", "conversations")  # empty, declared dtypes
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
    # task A 4/4, task B 2/4, task C 3/4; plus rows that must not count:
    # an infra error (with success False) and an unscored row on task B.
    spec = (_trials("m", "A", [True] * 4) + _trials("m", "B", [True, False, True, False])
            + _trials("m", "C", [True, True, False, True])
            + _trials("m", "B", [False, None], ["infra", None]))
    return _rows(spec)


def test_pass_hat_k_hand_computed(three_tasks):
    # per task C(c,k)/C(n,k): A = 1,1,1,1; B = 1/2, 1/6, 0, 0; C = 3/4, 1/2, 1/4, 0
    expected = {1: (1 + 0.5 + 0.75) / 3, 2: (1 + 1 / 6 + 0.5) / 3, 3: (1 + 0 + 0.25) / 3, 4: 1 / 3}
    curve = metrics.pass_k_curve(three_tasks, [1, 2, 3, 4])
    for k, value in expected.items():
        row = curve[curve["k"] == k].iloc[0]
        assert row["pass_hat_k"] == pytest.approx(value, abs=1e-12)
        assert row["tasks"] == 3
        assert metrics.pass_hat_k(three_tasks, k) == pytest.approx(value, abs=1e-12)
    # pass@k: A = 1; B = 1/2, 5/6, 1, 1; C = 3/4, 1, 1, 1
    assert curve.set_index("k")["pass_at_k"].tolist() == pytest.approx(
        [(1 + 0.5 + 0.75) / 3, (1 + 5 / 6 + 1) / 3, 1.0, 1.0])
    assert metrics.pass_k_curve(three_tasks, [5])["tasks"].iloc[0] == 0  # no task has 5 scored trials


def test_infra_and_unscored_are_counted_apart(three_tasks):
    c = metrics.counts(three_tasks).iloc[0]
    assert (c["conversations"], c["infra_errors"], c["unscored"], c["scored"], c["successes"]) == (14, 1, 1, 12, 9)
    lb = metrics.leaderboard(three_tasks, k_max=4, n_boot=200).iloc[0]
    assert lb["success_rate"] == pytest.approx(9 / 12)
    assert lb["pass_hat_1"] == pytest.approx(0.75) and lb["pass_hat_4"] == pytest.approx(1 / 3)
    lo, hi = metrics.wilson_interval(9, 12)
    assert (lb["wilson_lo"], lb["wilson_hi"]) == pytest.approx((lo, hi))
    assert lb["boot_lo"] <= 0.75 <= lb["boot_hi"]
    # cost counts every row (the infra row spent money too); per success over 9 successes
    assert lb["cost_usd"] == pytest.approx(14 * 0.01) and lb["cost_per_success"] == pytest.approx(14 * 0.01 / 9)
    assert lb["tokens_per_success"] == pytest.approx(14 * 110 / 9)


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
    df = _rows(_trials("m", "A", [True, False]) + _trials("m", "B", [True, True]))
    df["persona"] = ["easy", "easy", None, None]
    bd = metrics.breakdown(df, "persona").set_index("persona")
    assert bd.loc["easy", "success_rate"] == 0.5 and bd.loc["(none)", "success_rate"] == 1.0
    a = metrics.task_bootstrap([0.0, 1.0, 0.5], n_boot=300, seed=7)
    assert a == metrics.task_bootstrap([0.0, 1.0, 0.5], n_boot=300, seed=7) and 0 <= a[0] <= 0.5 <= a[1] <= 1


def test_cohen_kappa_and_judge_agreement():
    # po = 0.8, pe = .6*.4 + .4*.6 = .48 -> κ = .32/.52
    assert metrics.cohen_kappa([1, 1, 0, 0, 1], [1, 0, 0, 0, 1]) == pytest.approx(0.32 / 0.52)
    assert math.isnan(metrics.cohen_kappa([1, 1], [1, 1]))
    conv = _rows(_trials("m", "A", [True, True, False, False]) + _trials("m", "B", [True], ["infra"]))
    jv_base = read_table("/nonexistent", "judge_verdicts")
    samples = {"c0": [True, True, False], "c1": [False, False, True], "c2": [False, None, None],
               "c3": [True, False, None], "c4": [True, True, True]}  # c3: tie -> no verdict; c4: infra row
    rows = [{"run_id": "r", "conversation_id": cid, "judge_config_id": "J", "judge_model": "j", "prompt_id": "p",
             "prompt_version": "1", "sample_index": k, "passed": v}
            for cid, vals in samples.items() for k, v in enumerate(vals)]
    jv = pd.concat([jv_base, pd.DataFrame(rows)], ignore_index=True).astype({"passed": "boolean"})
    labels = metrics.judge_labels(jv).set_index("conversation_id")
    assert labels.loc["c0", "judge_passed"] == True and labels.loc["c1", "judge_passed"] == False
    assert pd.isna(labels.loc["c3", "judge_passed"]) and labels.loc["c2", "unscored_samples"] == 2
    ag = metrics.judge_agreement(conv, jv).iloc[0]
    # compared: c0 (J pass, P pass), c1 (J fail, P pass), c2 (J fail, P fail)
    assert (ag["n"], ag["tp"], ag["fp"], ag["fn"], ag["tn"]) == (3, 1, 0, 1, 1)
    assert ag["accuracy"] == pytest.approx(2 / 3) and ag["judge_unscored"] == 1
    pw = metrics.judge_pairwise(conv, jv)
    assert set(pw["rater_a"]) == {"predicates", "j · p@1"}
    cell = pw[(pw["rater_a"] == "predicates") & (pw["rater_b"] == "j · p@1")].iloc[0]
    assert cell["n"] == 3 and cell["agreement"] == pytest.approx(2 / 3)
