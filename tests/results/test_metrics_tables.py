"""Metric tables on groups the report tests never build (issue 27): a missing group
key, an arm with no scored task, no grouping at all, unknown costs, the defaults."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from tauray.results.stats import metrics
from tests.report.test_metrics import _rows, _trials


def _two_arms() -> pd.DataFrame:
    spec = (_trials("zeta", "A", [True, True]) + _trials("zeta", "B", [True, False])
            + _trials("alpha", "A", [False, False]) + _trials("alpha", "B", [True, False])
            + _trials("alpha", "C", [None, False], ["infra", "infra"]))
    df = _rows(spec)
    df.loc[df["agent_model"] == "alpha", "agent_cost_usd"] = None  # nobody knows alpha's cost
    return df


def test_leaderboard_ranks_groups_and_keeps_unknown_costs_unknown():
    lb = metrics.leaderboard(_two_arms(), n_boot=200)
    assert list(lb["agent_model"]) == ["zeta", "alpha"]  # best first
    z, a = lb.iloc[0], lb.iloc[1]
    assert (z["success_rate"], a["success_rate"]) == (0.75, 0.25)
    assert (z["tasks"], a["tasks"]) == (2, 2)  # alpha's C has only infra rows: not a task
    assert (a["conversations"], a["infra_errors"], a["counted"]) == (6, 2, 4)
    assert a["infra_share"] == pytest.approx(2 / 6) and z["infra_share"] == 0
    assert [c for c in lb.columns if c.startswith("pass_hat_")] == [f"pass_hat_{k}" for k in range(1, 5)]
    assert z["pass_hat_1"] == pytest.approx(0.75) and z["pass_hat_2"] == pytest.approx(0.5)
    assert z["cost_usd"] == pytest.approx(0.04) and z["cost_per_success"] == pytest.approx(0.04 / 3)
    assert math.isnan(a["cost_usd"]) and math.isnan(a["cost_per_success"])  # unknown, not 0
    assert z["tokens"] == 4 * 110 and z["tokens_per_success"] == pytest.approx(440 / 3)


def test_no_grouping_is_one_row_over_everything():
    lb = metrics.leaderboard(_two_arms(), by=None, n_boot=200)
    assert len(lb) == 1
    row = lb.iloc[0]
    assert (row["conversations"], row["counted"], row["successes"], row["tasks"]) == (10, 8, 4, 2)
    assert row["success_rate"] == 0.5 and row["ci_lo"] <= 0.5 <= row["ci_hi"]
    assert row["cost_usd"] == pytest.approx(0.04)
    c = metrics.counts(_two_arms())
    assert c.iloc[0][["conversations", "infra_errors", "failures"]].tolist() == [10, 2, 4]


def test_a_missing_group_key_is_its_own_group():
    df = _two_arms()
    df["persona"] = pd.Series(["easy"] * 6 + [None] * 4, dtype=object)  # alpha's B and C: no persona
    c = metrics.counts(df, ["agent_model", "persona"])
    assert len(c) == 3 and c["persona"].isna().sum() == 1
    assert list(c["agent_model"]) == ["alpha", "alpha", "zeta"]  # sorted by key
    bd = metrics.breakdown(df, "persona", n_boot=100).set_index(["agent_model", "persona"])
    assert bd.loc[("alpha", "(none)"), "success_rate"] == 0.5 and bd.loc[("alpha", "(none)"), "tasks"] == 1
    assert bd.loc[("alpha", "easy"), "success_rate"] == 0.0 and bd.loc[("zeta", "easy"), "tasks"] == 2


def test_a_comparison_with_an_absent_arm_has_no_tasks():
    df = _two_arms()
    pc = metrics.paired_comparison(df, "zeta", "nobody", n_boot=100)
    assert pc.tasks == 0 and math.isnan(pc.rate_a) and math.isnan(pc.rate_b) and math.isnan(pc.difference)
    assert (pc.won, pc.lost, pc.tied) == (0, 0, 0)
    pc = metrics.paired_comparison(df, "zeta", "alpha", n_boot=100)
    assert (pc.tasks, pc.won, pc.lost, pc.tied) == (2, 1, 0, 1)
    assert pc.rate_a == 0.75 and pc.rate_b == 0.25 and pc.difference == 0.5


def test_manual_vs_workflow_without_grouping_and_per_group():
    spec = (_trials("m", "man_1", [True, False], variant="manual", up="u1")
            + _trials("m", "wf_1", [True, True], variant="workflow", up="u1")
            + _trials("n", "man_1", [False], variant="manual", up="u1")
            + _trials("n", "wf_1", [True], variant="workflow", up="u1"))
    df = _rows(spec)
    per = metrics.manual_vs_workflow(df, n_boot=100)
    assert list(per["agent_model"]) == ["m", "n"] and list(per["difference"]) == [0.5, 1.0]
    one = metrics.manual_vs_workflow(df, by=None, n_boot=100)
    assert len(one) == 1 and "agent_model" not in one.columns and one.iloc[0]["tasks"] == 1


def test_the_default_interval_is_2000_resamples_from_seed_0():
    draws = random.Random(5)
    spec = [t for arm in ("m", "n") for i in range(8)
            for t in _trials(arm, f"T{i}", [draws.random() < 0.5 for _ in range(3)])]
    df = _rows(spec)
    assert metrics.leaderboard(df).equals(metrics.leaderboard(df, n_boot=2000, seed=0, confidence=0.95))
    values = [0.1, 0.25, 0.3, 0.45, 0.5, 0.7, 0.75, 0.9]
    assert metrics.task_bootstrap(values) == metrics.task_bootstrap(values, None, 2000, 0.95, 0)
    assert metrics.task_bootstrap(values) != metrics.task_bootstrap(values, None, 2000, 0.95, 1)
    assert metrics.task_bootstrap(values) != metrics.task_bootstrap(values, None, 2001, 0.95, 0)
    assert metrics.rate_interval([2, 3], [1, 3]) == metrics.rate_interval([2, 3], [1, 3], 2000, 0.95, 0)
    assert metrics.breakdown(df, "domain").equals(metrics.breakdown(df, "domain", n_boot=1000, seed=0))
    assert (metrics.paired_comparison(df, "m", "n") == metrics.paired_comparison(df, "m", "n", n_boot=2000, seed=0))


def test_stop_reasons_count_every_bad_reply_kind_per_group():
    df = _rows(_trials("m", "A", [True, False, True]) + _trials("n", "A", [False]))
    df["truncated_replies"] = [1, None, 2, 0]
    df["refused_replies"] = [0, 1, 0, 3]
    df = df.drop(columns=[c for c in ("empty_replies",) if c in df.columns])  # an older run's table
    per = metrics.stop_reasons(df, "agent_model").set_index("agent_model")
    assert per.loc["m", "conversations"] == 3 and per.loc["n", "conversations"] == 1
    assert per.loc["m", "truncated_replies"] == 3 and per.loc["m", "refused_replies"] == 1
    assert per.loc["n", "refused_replies"] == 3 and per.loc["n", "empty_replies"] == 0
    assert list(per.columns) == ["conversations", *metrics.STOP_COLUMNS]
    total = metrics.stop_reasons(df)
    assert len(total) == 1 and "agent_model" not in total.columns
    assert total.iloc[0][["conversations", "truncated_replies", "refused_replies"]].tolist() == [4, 3, 4]
