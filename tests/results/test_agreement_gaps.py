"""Agreement statistics on hand-computed cases (issue 27: the mutation run found the
κ interval's mapping, Fleiss' κ guards and the unscored-reason classes unpinned)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tauray.results.stats import metrics


def test_fleiss_kappa_hand_computed_and_undefined_cases():
    # 3 items x 3 raters: passes per item 3, 0, 2 -> p_pass = 5/9, pe = 41/81,
    # P_i = 1, 1, 1/3 -> p_bar = 7/9, kappa = (7/9 - 41/81) / (1 - 41/81) = 22/40
    assert metrics.fleiss_kappa([[1, 1, 1], [0, 0, 0], [1, 1, 0]]) == pytest.approx(22 / 40)
    assert math.isnan(metrics.fleiss_kappa([]))
    assert math.isnan(metrics.fleiss_kappa([[1], [0]]))  # one rater per item
    assert math.isnan(metrics.fleiss_kappa([[1, 1], [0]]))  # unequal raters per item
    assert math.isnan(metrics.fleiss_kappa([[1, 1], [1, 1]]))  # chance agreement 1
    assert metrics.fleiss_kappa([[1, 0], [0, 1]]) == pytest.approx(-1.0)


def test_kappa_interval_maps_the_wilson_interval_at_the_chance_agreement():
    """With perfect agreement every bootstrap κ is 1, so the lower end is the Wilson lower
    bound of p_o = 1 mapped onto the κ scale: (lo_po - pe) / (1 - pe); the upper end is 1."""
    a = [True, False] * 5
    lo_po, _ = metrics.wilson_interval(10, 10)
    lo, hi = metrics.kappa_interval(a, a)
    assert lo == pytest.approx((lo_po - 0.5) / 0.5) and hi == 1.0
    lo90, _ = metrics.kappa_interval(a, a, confidence=0.90)
    assert lo90 > lo  # a narrower interval at 90%
    assert metrics.kappa_interval([True] * 4, [True] * 4) == pytest.approx((math.nan, math.nan), nan_ok=True)
    assert metrics.kappa_interval([], []) == pytest.approx((math.nan, math.nan), nan_ok=True)
    # total disagreement: the upper end is the Wilson upper bound of p_o = 0 mapped the same way
    b = [not v for v in a]
    lo, hi = metrics.kappa_interval(a, b)
    _, hi_po = metrics.wilson_interval(0, 10)
    assert lo == -1.0 and hi == pytest.approx((hi_po - 0.5) / 0.5)  # every bootstrap κ lies below it


@pytest.mark.parametrize(("reason", "kind"), [
    (None, "tie among scored samples"),
    ("ambiguous: the reply holds 2 verdicts that disagree: 'pass'; 'fail'", "ambiguous"),
    ("reply JSON starting at char 12 could not be decoded: Expecting value", "reply JSON could not be decoded"),
    ("no 'verdict' key in the reply (top-level keys: a, b)", "no '…' key in the reply"),
    ("empty reply", "empty reply"),
    ("x" * 80, "x" * 60),
    (": nothing before the colon", "unknown"),
])
def test_unscored_reasons_fall_into_classes(reason, kind):
    assert metrics.unscored_reason_class(reason) == kind


def test_scored_mask_keeps_the_frame_index():
    conv = pd.DataFrame({"error_kind": [None, "infra", "model", None], "success": [True, False, False, None]},
                        index=[10, 11, 12, 13]).astype({"success": "boolean"})
    mask = metrics.scored_mask(conv)
    assert mask.tolist() == [True, False, True, False] and list(mask.index) == [10, 11, 12, 13]
    assert str(mask.dtype) == "bool"


def test_binary_metrics_on_a_hand_counted_confusion_matrix():
    judge = [1, 1, 1, 0, 0, 0, 1, 0]
    truth = [1, 1, 0, 0, 0, 1, 1, 1]  # tp 3, fp 1, tn 2, fn 2
    m = metrics.binary_metrics(judge, truth)
    assert (m["n"], m["tp"], m["fp"], m["tn"], m["fn"]) == (8, 3, 1, 2, 2)
    assert m["accuracy"] == 5 / 8 and m["sensitivity"] == 3 / 5 and m["specificity"] == 2 / 3
    assert m["judge_pass_rate"] == 4 / 8 and m["truth_pass_rate"] == 5 / 8
    assert m["accuracy_ci"] == metrics.wilson_interval(5, 8) and m["specificity_ci"] == metrics.wilson_interval(2, 3)
    assert m["kappa"] == pytest.approx(metrics.cohen_kappa(judge, truth))
    assert m["kappa_ci"] == metrics.kappa_interval([bool(v) for v in judge], [bool(v) for v in truth])
    narrow = metrics.binary_metrics(judge, truth, confidence=0.5)
    assert narrow["accuracy_ci"] == metrics.wilson_interval(5, 8, 0.5)
    assert narrow["kappa_ci"] == metrics.kappa_interval(judge, truth, 0.5)
    empty = metrics.binary_metrics([1, 1], [1, 1])  # no negatives: specificity has no items
    assert math.isnan(empty["specificity"]) and empty["sensitivity"] == 1.0


def test_cohen_kappa_needs_aligned_items():
    assert math.isnan(metrics.cohen_kappa([], []))
    assert math.isnan(metrics.cohen_kappa([1, 0], [1, 0, 1]))  # not aligned
    assert metrics.cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert metrics.cohen_kappa(["yes", "", "yes", ""], [1, 0, 0, 0]) == pytest.approx(0.5)  # truthiness


def test_unscored_items_by_ground_truth():
    verdicts = {"a": None, "b": True, "c": None, "d": False, "e": None, "x": None}
    truth = {"a": True, "b": True, "c": False, "d": False, "e": False}  # x has no truth: left out
    reasons = {"a": "empty reply", "c": "ambiguous: two", "e": "ambiguous: three"}
    out = metrics.unscored_by_truth(verdicts, truth, reasons)
    assert out["success"] == {"items": 2, "unscored": 1, "rate": 0.5, "rate_ci": metrics.wilson_interval(1, 2),
                              "reasons": {"empty reply": 1}}
    assert out["failure"]["items"] == 3 and out["failure"]["rate"] == pytest.approx(2 / 3)
    assert list(out["failure"]["reasons"].items()) == [("ambiguous", 2)]
    assert out["gap"] == pytest.approx(0.5 - 2 / 3)
    none = metrics.unscored_by_truth({"a": True}, {"a": True})
    assert none["failure"] == {"items": 0, "unscored": 0, "rate": None, "rate_ci": None, "reasons": {}}
    assert none["gap"] is None
    many = metrics.unscored_by_truth({"a": None, "b": None, "c": None}, {"a": True, "b": True, "c": True},
                                     {"a": "empty reply", "b": "ambiguous: x", "c": "ambiguous: y"})
    assert list(many["success"]["reasons"]) == ["ambiguous", "empty reply"]  # most frequent first


def test_pass_k_per_task_and_where_it_is_undefined():
    assert metrics.pass_hat_k_task(4, 2, 2) == pytest.approx(1 / 6)
    assert metrics.pass_at_k_task(4, 2, 2) == pytest.approx(5 / 6)
    assert metrics.pass_hat_k_task(2, 2, 2) == 1.0 and metrics.pass_at_k_task(2, 0, 2) == 0.0
    assert math.isnan(metrics.pass_hat_k_task(1, 1, 2)) and math.isnan(metrics.pass_at_k_task(1, 1, 2))


def test_wilson_interval_edges():
    assert all(math.isnan(v) for v in metrics.wilson_interval(0, 0))
    lo, hi = metrics.wilson_interval(1, 1)
    assert hi == 1.0 and 0 < lo < 1
