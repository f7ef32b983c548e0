"""Metric tables on the inputs the readers really hand them (issue 27, second mutation run).

The readers give group keys as categoricals whose categories come from the whole table,
so a filtered frame keeps categories no row uses; keys can be missing; rows come in file
order, not sorted. The earlier tests built plain, sorted, complete string keys, so the
grouping options (``observed``, ``dropna``, ``sort``) of the stop-reason and
manual-vs-workflow tables, and the pass-through of the interval options, were unpinned.
Each test here failed on the mutants that changed them (see docs/mutation.md).
"""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pandas as pd
import pytest

from tauray.results.stats import metrics
from tests.report.test_metrics import _rows, _trials


def _as_read(df: pd.DataFrame, column: str = "agent_model") -> pd.DataFrame:
    """``column`` as the reader gives it after filtering: a categorical with an unused category."""
    df = df.copy()
    values = df[column].astype(object)
    df[column] = pd.Categorical(values, categories=["ghost", *sorted(v for v in values.dropna().unique())])
    return df


def _varied(arms: tuple[str, ...], tasks: int = 30, seed: int = 7, variant: str = "manual") -> list[tuple]:
    """Many tasks with uneven trial counts: per-task rates vary finely, so an interval
    moves when its resamples, seed or level change."""
    draws = random.Random(seed)
    return [t for arm in arms for i in range(tasks)
            for t in _trials(arm, f"T{i}", [draws.random() < 0.6 for _ in range(1 + i % 6)], variant=variant,
                             up=f"U{i}")]


# --- stop reasons --------------------------------------------------------------------------


def _stops() -> pd.DataFrame:
    # file order: n before m; one row without an agent model
    df = _rows(_trials("n", "A", [True]) + _trials("m", "A", [True, False]) + _trials(None, "A", [False]))
    df["truncated_replies"] = [1, 2, None, 4]
    df["refused_replies"] = [0, 1, 1, 0]
    return _as_read(df)


def test_stop_reasons_group_as_read_sorted_with_missing_keys_and_no_phantom_groups():
    per = metrics.stop_reasons(_stops(), "agent_model")
    assert per["agent_model"].astype(object).tolist()[:2] == ["m", "n"]  # sorted, not file order
    assert len(per) == 3 and per["agent_model"].isna().iloc[2]  # the missing model is its own group, last
    assert "ghost" not in per["agent_model"].astype(object).tolist()  # no row for an unused category
    assert per["conversations"].tolist() == [2, 1, 1]
    assert per["truncated_replies"].tolist() == [2, 1, 4] and per["refused_replies"].tolist() == [2, 0, 0]


def test_stop_reasons_are_integer_counts_and_the_total_has_only_its_columns():
    per = metrics.stop_reasons(_stops(), "agent_model")
    assert all(per[c].dtype.kind == "i" for c in metrics.STOP_COLUMNS)  # counts, not 2.0 / 1.0
    total = metrics.stop_reasons(_stops())
    assert list(total.columns) == ["conversations", *metrics.STOP_COLUMNS]
    assert list(total.index) == [0] and total.iloc[0]["truncated_replies"] == 7


# --- manual vs workflow --------------------------------------------------------------------


def _policies() -> pd.DataFrame:
    spec = (_trials("n", "wf_1", [True], variant="workflow", up="u1")
            + _trials("n", "man_1", [False], variant="manual", up="u1")
            + _trials("m", "man_1", [True, False], variant="manual", up="u1")
            + _trials("m", "wf_1", [True, True], variant="workflow", up="u1")
            + _trials(None, "man_1", [False], variant="manual", up="u1")
            + _trials(None, "wf_1", [False], variant="workflow", up="u1"))
    return _as_read(_rows(spec))


FIELDS = ["tasks", "rate_a", "rate_b", "difference", "lo", "hi", "won", "lost", "tied"]


def test_manual_vs_workflow_groups_as_read_sorted_with_missing_keys_and_no_phantom_groups():
    per = metrics.manual_vs_workflow(_policies(), n_boot=100)
    assert list(per.columns) == ["agent_model", *FIELDS]
    assert per["agent_model"].astype(object).tolist()[:2] == ["m", "n"] and len(per) == 3
    assert per["agent_model"].isna().iloc[2]  # the rows without a model are compared too
    assert per["difference"].tolist() == [0.5, 1.0, 0.0]


def test_manual_vs_workflow_without_rows_keeps_its_columns():
    none = _rows(_trials("m", "A", [True]))  # a "manual" variant is needed; make it something else
    none["policy_variant"] = "custom"
    assert list(metrics.manual_vs_workflow(none).columns) == ["agent_model", *FIELDS]
    assert list(metrics.manual_vs_workflow(none, by=None).columns) == FIELDS


def test_manual_vs_workflow_passes_its_interval_options_to_each_comparison():
    df = _rows(_varied(("m",), variant="manual") + _varied(("m",), seed=8, variant="workflow"))
    df["scenario"] = df["policy_variant"].astype(object) + "_" + df["upstream_id"].astype(object)
    got = metrics.manual_vs_workflow(df, n_boot=300, confidence=0.6, seed=4).iloc[0]
    want = metrics.paired_comparison(df, "workflow", "manual", by="policy_variant", task="upstream_id",
                                     n_boot=300, confidence=0.6, seed=4)
    assert (got["lo"], got["hi"]) == (want.lo, want.hi)
    assert want.tasks == 30 and want.lo < want.difference < want.hi
    default = metrics.manual_vs_workflow(df).iloc[0]
    explicit = metrics.manual_vs_workflow(df, n_boot=2000, confidence=0.95, seed=0).iloc[0]
    assert (default["lo"], default["hi"]) == (explicit["lo"], explicit["hi"])
    assert (default["lo"], default["hi"]) != (got["lo"], got["hi"])


# --- paired comparison ---------------------------------------------------------------------


def test_paired_comparison_interval_is_the_task_bootstrap_of_the_differences_at_the_asked_level():
    df = _rows(_varied(("X", "Y")))
    pc = metrics.paired_comparison(df, "X", "Y", n_boot=400, confidence=0.8, seed=9)
    tc = metrics.task_counts(df, "agent_model").assign(rate=lambda t: t["c"] / t["n"])
    rates = tc.pivot_table(index="scenario", columns="agent_model", values="rate", aggfunc="first")
    diff = (rates["X"] - rates["Y"]).to_numpy()
    assert pc.tasks == 30 and pc.difference == pytest.approx(diff.mean())
    assert (pc.lo, pc.hi) == metrics.task_bootstrap(diff, None, n_boot=400, confidence=0.8, seed=9)
    assert pc.lo < pc.difference < pc.hi
    assert metrics.paired_comparison(df, "X", "Y") == metrics.paired_comparison(
        df, "X", "Y", n_boot=2000, confidence=0.95, seed=0)
    assert metrics.paired_comparison(df, "X", "Y") != metrics.paired_comparison(df, "X", "Y", n_boot=2001)


def test_paired_comparison_with_either_arm_absent_has_no_tasks_and_warns_nothing():
    df = _rows(_varied(("X", "Y"), tasks=3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "mean of empty slice" from an empty comparison
        for a, b in (("nobody", "Y"), ("X", "nobody")):
            pc = metrics.paired_comparison(df, a, b, n_boot=50)
            assert pc.tasks == 0 and (pc.won, pc.lost, pc.tied) == (0, 0, 0)
            assert math.isnan(pc.rate_a) and math.isnan(pc.rate_b) and math.isnan(pc.difference)


# --- breakdown -----------------------------------------------------------------------------


def test_breakdown_defaults_and_task_column():
    df = _rows(_varied(("m",)))
    assert metrics.breakdown(df, "domain").equals(
        metrics.breakdown(df, "domain", n_boot=1000, confidence=0.95, seed=0))
    assert not metrics.breakdown(df, "domain").equals(metrics.breakdown(df, "domain", n_boot=1001))
    assert not metrics.breakdown(df, "domain").equals(metrics.breakdown(df, "domain", seed=1))
    # tasks counted on the task column given: every upstream task here spans two scenarios
    df["upstream_id"] = "U" + (df["scenario"].astype(object).str[1:].astype(int) // 2).astype(str)
    assert metrics.breakdown(df, "domain", task="upstream_id")["tasks"].tolist() == [15]
    assert metrics.breakdown(df, "domain")["tasks"].tolist() == [30]


# --- agreement -----------------------------------------------------------------------------


def test_kappa_interval_is_the_hull_of_the_item_bootstrap_and_the_mapped_wilson_interval():
    """Moderate agreement over 60 items: the bootstrap, which also resamples the chance
    agreement, reaches past the mapped Wilson interval at the upper end."""
    draws = random.Random(3)
    a = [draws.random() < 0.5 for _ in range(60)]
    b = [v if draws.random() < 0.75 else not v for v in a]
    x, y = np.asarray(a), np.asarray(b)
    pe = x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean())
    for confidence, n_boot, seed in ((0.95, 2000, metrics.BOOTSTRAP_SEED), (0.8, 500, 1)):
        lo_po, hi_po = metrics.wilson_interval(int((x == y).sum()), x.size, confidence)
        idx = np.random.default_rng(seed).integers(0, x.size, size=(n_boot, x.size))
        boot = np.array([metrics.cohen_kappa(x[i], y[i]) for i in idx])
        boot = boot[~np.isnan(boot)]
        tail = (1 - confidence) / 2 * 100
        want = (max(-1.0, min((lo_po - pe) / (1 - pe), np.percentile(boot, tail))),
                min(1.0, max((hi_po - pe) / (1 - pe), np.percentile(boot, 100 - tail))))
        got = metrics.kappa_interval(a, b, confidence, n_boot, seed)
        assert got == pytest.approx(want, abs=1e-12), confidence
        if confidence == 0.95:
            assert got[1] > (hi_po - pe) / (1 - pe)  # the bootstrap's end, not Wilson's
    assert metrics.kappa_interval(a, b) == metrics.kappa_interval(a, b, 0.95, 2000, metrics.BOOTSTRAP_SEED)
    assert metrics.kappa_interval(a, b) != metrics.kappa_interval(a, b, 0.95, 2001, metrics.BOOTSTRAP_SEED)


def test_binary_metrics_reads_any_truthy_verdicts():
    judge = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]  # a float column (0/1), as pandas stores a bool with gaps
    truth = np.array([1, 1, 0, 0, 0, 1, 1, 1], dtype=float)
    m = metrics.binary_metrics(judge, truth)
    assert (m["tp"], m["fp"], m["tn"], m["fn"]) == (3, 1, 2, 2)
    m = metrics.binary_metrics(pd.Series(truth), judge)
    assert (m["tp"], m["fp"], m["tn"], m["fn"]) == (3, 2, 2, 1)


def test_unscored_reasons_are_listed_most_frequent_first():
    out = metrics.unscored_by_truth({"a": None, "b": None, "c": None}, dict.fromkeys("abc", False),
                                    {"a": "empty reply", "b": "empty reply", "c": "ambiguous: x"})
    assert list(out["failure"]["reasons"].items()) == [("empty reply", 2), ("ambiguous", 1)]


# --- leaderboard, cost and tokens ----------------------------------------------------------


def test_leaderboard_defaults_and_task_column():
    df = _rows(_varied(("m", "n")))
    lb = metrics.leaderboard(df)
    assert lb.equals(metrics.leaderboard(df, n_boot=2000, confidence=0.95, seed=0))
    assert lb.equals(metrics.leaderboard(df))  # seeded: the same table twice
    assert not lb.equals(metrics.leaderboard(df, n_boot=2001)) and not lb.equals(metrics.leaderboard(df, seed=1))
    df["upstream_id"] = "U" + (df["scenario"].astype(object).str[1:].astype(int) // 2).astype(str)
    assert metrics.leaderboard(df, task="upstream_id")["tasks"].tolist() == [15, 15]
    assert metrics.leaderboard(df)["tasks"].tolist() == [30, 30]


def _costs() -> pd.DataFrame:
    # file order: n before m; one row without an agent model; m never succeeds
    df = _rows(_trials("n", "A", [True, True]) + _trials("m", "A", [False, False]) + _trials(None, "A", [True]))
    df["agent_cost_usd"] = [None, 0.02, 0.03, 0.05, 0.07]  # n: one row knows its cost
    return _as_read(df)


def test_cost_and_tokens_group_as_read_sorted_with_missing_keys_and_no_phantom_groups():
    out = metrics.cost_and_tokens(_costs(), "agent_model")
    assert out["agent_model"].astype(object).tolist()[:2] == ["m", "n"] and len(out) == 3
    assert out["agent_model"].isna().iloc[2] and "ghost" not in out["agent_model"].astype(object).tolist()
    assert out["cost_usd"].tolist() == pytest.approx([0.08, 0.02, 0.07])  # one known cost is a known cost
    assert out["tokens"].tolist() == [220, 220, 110]


def test_per_success_figures_of_a_group_without_successes_are_undefined_not_infinite():
    out = metrics.cost_and_tokens(_costs(), "agent_model")
    m = out.iloc[0]
    assert m["successes"] == 0 and m["cost_usd"] > 0 and m["tokens"] > 0
    assert math.isnan(m["cost_per_success"]) and math.isnan(m["tokens_per_success"])
    assert out.iloc[1]["cost_per_success"] == pytest.approx(0.01)


# --- interval edges ------------------------------------------------------------------------


def test_wilson_interval_never_leaves_zero_to_one():
    # the formula's own rounding puts 9 of 9 a hair above 1 and 0 of 21 a hair below 0
    for n in range(1, 60):
        for k in range(n + 1):
            lo, hi = metrics.wilson_interval(k, n)
            assert 0.0 <= lo < hi <= 1.0, (k, n)
    assert metrics.wilson_interval(9, 9)[1] == 1.0 and metrics.wilson_interval(0, 21)[0] == 0.0


def test_kappa_interval_stays_on_the_kappa_scale_when_chance_agreement_is_high():
    # both raters pass 9 of 10 and disagree twice: pe = 0.82, p_o = 0.8; the Wilson lower end of
    # p_o (0.49) maps to about -1.8, which is no κ: the interval stops at -1
    a = [True] * 9 + [False]
    b = [False] + [True] * 9
    lo, hi = metrics.kappa_interval(a, b)
    assert lo == -1.0 and -1.0 < metrics.cohen_kappa(a, b) < hi <= 1.0


def test_kappa_of_constant_raters_is_undefined_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0 / 0 where chance agreement is 1: nan, quietly
        assert math.isnan(metrics.cohen_kappa([True] * 5, [True] * 5))
        assert math.isnan(metrics.kappa_interval([True] * 5, [True] * 5)[0])
        # resamples of a nearly constant pair are often constant; their κ is left out, quietly
        lo, hi = metrics.kappa_interval([True] * 9 + [False], [True] * 9 + [False])
        assert lo < 1.0 and hi == 1.0


def test_kappa_reads_truthy_verdicts_alike_on_either_side():
    truthy, flags = ["yes", "", "yes", ""], [1, 0, 0, 0]
    assert metrics.cohen_kappa(flags, truthy) == metrics.cohen_kappa(truthy, flags) == pytest.approx(0.5)
    counts = [2, 0, 2, 0]  # any non-zero count is a pass
    assert metrics.cohen_kappa(flags, counts) == pytest.approx(0.5)


# --- added after the second full run (its survivors) ----------------------------------------


def test_leaderboard_keeps_a_group_with_only_infra_rows_and_orders_ties_by_name():
    df = _rows(_trials("n", "A", [True, False]) + _trials("m", "A", [True, False])
               + _trials("z", "A", [None, None], ["infra", "infra"]))
    lb = metrics.leaderboard(df, n_boot=50)
    assert lb["agent_model"].tolist() == ["m", "n", "z"]  # equal rates: by name; no rate: last
    assert "index" not in lb.columns and list(lb.index) == [0, 1, 2]
    z = lb.iloc[2]
    assert (z["conversations"], z["infra_errors"], z["counted"]) == (2, 2, 0)
    assert math.isnan(z["success_rate"]) and math.isnan(z["pass_hat_1"])


def test_pass_k_uses_the_task_column_given_and_lists_groups_sorted():
    # two scenarios per upstream task: per scenario every task is 1 of 1 or 0 of 1; per upstream task 1 of 2
    spec = [t for i in range(4) for t in _trials("n", f"S{i}", [i % 2 == 0], up=f"U{i // 2}")]
    spec += _trials("m", "S0", [True], up="U0")
    df = _rows(spec)
    per_upstream = metrics.pass_k_curve(df, [2], "agent_model", task="upstream_id").set_index("agent_model")
    assert per_upstream.loc["n", "pass_hat_k"] == 0.0 and per_upstream.loc["n", "tasks"] == 2
    assert math.isnan(metrics.pass_k_curve(df, [2], "agent_model").set_index("agent_model").loc["n", "pass_hat_k"])
    assert metrics.pass_k_curve(df, [1], "agent_model")["agent_model"].tolist() == ["m", "n"]
    lb = metrics.leaderboard(df, k_max=2, task="upstream_id", n_boot=50).set_index("agent_model")
    assert lb.loc["n", "pass_hat_2"] == 0.0 and lb.loc["n", "k_cap"] == 2


def _ranked() -> pd.DataFrame:
    # file order n, m, (no model); "ghost" is an unused category; the model-less rows are a group
    spec = (_trials("n", "A", [True, True]) + _trials("n", "B", [True])
            + _trials("m", "A", [True, False]) + _trials("m", "B", [False])
            + _trials(None, "A", [True, False]) + _trials(None, "C", [None], ["infra"]))
    return _as_read(_rows(spec))


def test_leaderboard_and_pass_k_on_keys_as_read():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a group with no counted row: NaN rate, quietly
        lb = metrics.leaderboard(_ranked(), n_boot=50)
    models = lb["agent_model"].astype(object).tolist()
    assert models[0] == "n" and pd.isna(models[1]) and models[2] == "m"  # rates 1, 1/2, 1/3
    assert len(lb) == 3 and "ghost" not in models
    none = lb[lb["agent_model"].isna()].iloc[0]
    assert (none["conversations"], none["counted"], none["tasks"], none["success_rate"]) == (3, 2, 1, 0.5)
    assert none["pass_hat_1"] == 0.5 and none["k_cap"] == 2
    curve = metrics.pass_k_curve(_ranked(), [1], "agent_model")
    assert curve["agent_model"].astype(object).tolist()[:2] == ["m", "n"] and curve["agent_model"].isna().iloc[2]
    assert len(curve) == 3 and curve["tasks"].tolist() == [2, 2, 1]
    tc = metrics.task_counts(_ranked(), "agent_model")
    assert tc["agent_model"].astype(object).tolist()[:4] == ["m", "m", "n", "n"] and tc["agent_model"].isna().iloc[4]
    assert len(tc) == 5 and tc["n"].tolist() == [2, 1, 2, 1, 2]
    c = metrics.counts(_ranked(), "agent_model")
    assert len(c) == 3 and c["conversations"].tolist() == [3, 3, 3]


def test_a_group_with_only_infra_rows_has_no_rate_and_no_warning():
    df = _rows(_trials("m", "A", [True]) + _trials("z", "A", [None], ["infra"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lb = metrics.leaderboard(df, n_boot=20).set_index("agent_model")
        share = metrics.counts(df, "agent_model").set_index("agent_model")["infra_share"]
    assert math.isnan(lb.loc["z", "success_rate"]) and lb.loc["z", "tasks"] == 0
    assert share.to_dict() == {"m": 0.0, "z": 1.0}


def test_tables_of_a_run_where_nothing_counted():
    """Every row an infra error: no task, no rate, no interval, and every table keeps its columns."""
    df = _rows(_trials("m", "A", [None, None], ["infra", "infra"]))
    lb = metrics.leaderboard(df, n_boot=20)
    assert lb["tasks"].tolist() == [0] and lb["tasks"].dtype.kind == "i" and math.isnan(lb.iloc[0]["success_rate"])
    assert math.isnan(lb.iloc[0]["ci_lo"]) and math.isnan(lb.iloc[0]["pass_hat_1"])
    flat = metrics.pass_k_curve(df, [1, 2])
    assert flat["k_cap"].tolist() == [0, 0] and flat["conversations"].tolist() == [0, 0]
    per = metrics.pass_k_curve(df, [1], "agent_model")
    assert per.empty and list(per.columns) == ["agent_model", "k", "k_cap", "tasks", "conversations",
                                               "pass_hat_k", "pass_at_k"]
    cost = metrics.cost_and_tokens(df)
    assert list(cost.columns) == ["successes", "cost_usd", "tokens", "cost_per_success", "tokens_per_success"]


def test_counts_split_failures_by_kind_and_k_past_the_cap_rests_on_nothing():
    df = _rows(_trials("m", "A", [True, False, None], [None, None, None]) + _trials("m", "B", [False], ["model"]))
    c = metrics.counts(df).iloc[0]
    assert (c["successes"], c["failed"], c["unscored"], c["model_errors"], c["failures"]) == (1, 1, 1, 1, 3)
    past = metrics.pass_k_curve(df, [2]).iloc[0]  # B has one trial: k = 2 is past the cap
    assert (past["k_cap"], past["tasks"], past["conversations"]) == (1, 0, 0)


def test_task_bootstrap_leaves_out_resamples_of_weightless_tasks():
    # task 0 has weight 0: a resample of it alone has no mean (left out); with task 1 the mean is 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert metrics.task_bootstrap([0.2, 0.8], [0, 1], n_boot=200) == (0.8, 0.8)
        assert metrics.task_bootstrap([0.2, 0.8], [0, 0.5], n_boot=200) == (0.8, 0.8)
        # a task without counted trials is dropped before resampling, quietly
        assert metrics.rate_interval([4, 0, 3], [2, 0, 3], n_boot=200) == metrics.rate_interval([4, 3], [2, 3], n_boot=200)


def test_rate_interval_defaults():
    n = [1 + i % 6 for i in range(30)]
    c = [(i * 7) % (k + 1) for i, k in enumerate(n)]
    got = metrics.rate_interval(n, c)
    assert got == metrics.rate_interval(n, c, 2000, 0.95, 0)
    assert got != metrics.rate_interval(n, c, 2001) and got != metrics.rate_interval(n, c, seed=1)
