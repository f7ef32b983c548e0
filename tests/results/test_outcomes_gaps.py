"""One row, one outcome; counts with every key (issue 27: float successes, absent
outcomes and the errors total were unpinned)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tauray.results.stats.outcomes import OUTCOMES, outcome, outcomes, success_rate, tally


@pytest.mark.parametrize(("kind", "success", "expected"), [
    (None, 1.0, "success"), (None, 0.0, "failed"), (None, True, "success"), (None, False, "failed"),
    (None, float("nan"), "unscored"), (None, pd.NA, "unscored"), (None, None, "unscored"),
    ("", True, "success"), (float("nan"), 0.0, "failed"),
    ("infra", True, "infra"), ("model", None, "model"), ("internal", False, "internal"),
    ("something new", True, "internal"),  # an unknown kind is a bug of ours
])
def test_outcome_of_one_row(kind, success, expected):
    assert outcome(kind, success) == expected


def test_the_vectorised_outcomes_agree_with_the_row_rule():
    rows = [(None, True), (None, False), (None, None), ("infra", None), ("model", False), ("internal", True),
            ("odd", None), ("", False)]
    conv = pd.DataFrame(rows, columns=["error_kind", "success"])
    got = outcomes(conv)
    assert list(got) == [outcome(k, s) for k, s in rows]
    assert list(got.cat.categories) == list(OUTCOMES) and got.name == "outcome"
    assert list(got.index) == list(conv.index)


def test_tally_counts_every_outcome_even_absent_ones():
    t = tally(["success", "success", "failed", "infra", "model", "internal", "internal"])
    assert t == {"success": 2, "failed": 1, "unscored": 0, "model": 1, "internal": 2, "infra": 1,
                 "total": 7, "counted": 6, "errors": 4}
    empty = tally([])
    assert empty == {**{o: 0 for o in OUTCOMES}, "total": 0, "counted": 0, "errors": 0}
    assert tally(pd.Series(["unscored"]))["unscored"] == 1


def test_success_rate_is_nan_when_nothing_counts():
    assert success_rate(3, 4) == 0.75
    assert math.isnan(success_rate(0, 0))
