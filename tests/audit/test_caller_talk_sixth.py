"""Issue 51, after the fifth pass: a class of caller talk read wrongly, found on the `talk5` set
(measured once, then read, so `talk5` is a tuning set from here on). Every sentence here was written
for these tests, none is taken from an evaluation set."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims


@pytest.mark.parametrize(("said", "expected"), [
    ("The bars are not just good, they are excellent, as the screen shows.", {"signal": "excellent"}),
    ("Mobile data is not only on, it is racing along.", {"mobile_data": "on"}),
    ("Roaming isn't merely on, it's been on all week.", {"roaming": "on"}),
])
def test_not_just_a_value_raises_it_and_negates_nothing(said, expected) -> None:
    """"not just X, (it's) Y" says at least X: a scalar intensifier, not a negation of X."""
    assert claims.claims(said) == expected


@pytest.mark.parametrize(("said", "expected"), [
    ("The signal is not even good.", {"signal": "~poor"}),  # kept: "not even" negates
    ("Roaming is not on.", {"roaming": "off"}),  # kept
])
def test_a_plain_negation_still_negates(said, expected) -> None:
    assert claims.claims(said) == expected
