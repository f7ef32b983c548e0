"""Agreement statistics on hand-computed cases (issue 27: the mutation run found the
κ interval's mapping, Fleiss' κ guards and the unscored-reason classes unpinned)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tauray.results import metrics


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
