"""Agreement of binary raters and the votes of judge samples (pure functions).

A judge against a reference, or judges among themselves: Cohen's κ with an
interval that keeps its width at perfect agreement, Fleiss' κ, and the
confusion-matrix rates with Wilson intervals; ``results.stats.judges``
applies them. The votes of one judge's samples (:func:`tally_votes`) and how
its unscored items fall on the truth live here too. ``results.metrics``
re-exports every name here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from tauray.results.stats.intervals import wilson_interval

BOOTSTRAP_SEED = 20240601


def _kappas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cohen's κ per row of two (samples × items) boolean arrays; nan where chance agreement is 1."""
    po = (a == b).mean(axis=1)
    pa, pb = a.mean(axis=1), b.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1.0, (po - pe) / (1 - pe), np.nan)


def _raters(a: Sequence[bool], b: Sequence[bool]) -> tuple[np.ndarray, np.ndarray] | None:
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return (x, y) if x.size and x.shape == y.shape else None


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two binary raters over aligned items; nan when there are none or
    chance agreement is 1 (both raters constant and equal)."""
    xy = _raters(a, b)
    return math.nan if xy is None else float(_kappas(xy[0][None, :], xy[1][None, :])[0])


def kappa_interval(a: Sequence[bool], b: Sequence[bool], confidence: float = 0.95, n_boot: int = 2000,
                   seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Interval of :func:`cohen_kappa` that does not collapse when observed agreement is
    0 or 1 (where every plug-in standard error is zero); (nan, nan) where κ is undefined.

    The hull of (1) a percentile bootstrap over items (seeded, so a report is
    reproducible), which carries the uncertainty of the chance agreement, and
    (2) the Wilson interval of the observed agreement mapped onto the κ scale at
    the observed chance agreement, which keeps its width when agreement is
    perfect or nil (2 items in perfect agreement are weak evidence, not κ = 1).
    """
    xy = _raters(a, b)
    if xy is None or math.isnan(cohen_kappa(*xy)):
        return (math.nan, math.nan)
    x, y = xy
    pe = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    lo_po, hi_po = wilson_interval(int((x == y).sum()), x.size, confidence)
    lo, hi = (lo_po - pe) / (1 - pe), (hi_po - pe) / (1 - pe)
    idx = np.random.default_rng(seed).integers(0, x.size, size=(n_boot, x.size))
    boot = _kappas(x[idx], y[idx])
    boot = boot[~np.isnan(boot)]
    if boot.size:
        tail = (1 - confidence) / 2 * 100
        lo, hi = min(lo, float(np.percentile(boot, tail))), max(hi, float(np.percentile(boot, 100 - tail)))
    return (max(-1.0, lo), min(1.0, hi))


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float:
    """Fleiss' κ for items each rated pass/fail by the same number (>= 2) of raters; nan when undefined."""
    if not ratings or len(ratings[0]) < 2 or any(len(r) != len(ratings[0]) for r in ratings):
        return math.nan
    n, items = len(ratings[0]), len(ratings)
    passes = [sum(map(bool, r)) for r in ratings]
    p_pass = sum(passes) / (items * n)
    pe = p_pass ** 2 + (1 - p_pass) ** 2
    p_bar = sum((c ** 2 + (n - c) ** 2 - n) / (n * (n - 1)) for c in passes) / items
    return (p_bar - pe) / (1 - pe) if pe < 1.0 else math.nan


def binary_metrics(judge: Sequence[bool], truth: Sequence[bool], confidence: float = 0.95) -> dict[str, Any]:
    """Confusion counts of aligned binary verdicts against a reference, and accuracy,
    sensitivity and specificity (each with its Wilson interval), κ with
    :func:`kappa_interval`, and both pass rates; nan where a rate has no items."""
    j, t = np.asarray(judge, dtype=bool), np.asarray(truth, dtype=bool)
    tp, tn, fp, fn = (int(v) for v in ((j & t).sum(), (~j & ~t).sum(), (j & ~t).sum(), (~j & t).sum()))
    n = int(j.size)

    def rate(k: int, m: int) -> tuple[float, tuple[float, float]]:
        return (k / m if m else math.nan), wilson_interval(k, m, confidence)

    (accuracy, accuracy_ci), (sens, sens_ci), (spec, spec_ci) = rate(tp + tn, n), rate(tp, tp + fn), rate(tn, tn + fp)
    return {"n": n, "tp": tp, "tn": tn, "fp": fp, "fn": fn, "accuracy": accuracy, "accuracy_ci": accuracy_ci,
            "sensitivity": sens, "sensitivity_ci": sens_ci, "specificity": spec, "specificity_ci": spec_ci,
            "kappa": cohen_kappa(j, t), "kappa_ci": kappa_interval(j, t, confidence),
            "judge_pass_rate": rate(tp + fp, n)[0], "truth_pass_rate": rate(tp + fn, n)[0]}


# --- judge samples ------------------------------------------------------------------------


def majority(verdicts: list[bool | None]) -> tuple[bool | None, float | None]:
    """Majority over the scored verdicts (None on a tie or none) and the share of scored ones agreeing."""
    return tally_votes(verdicts)[:2]  # type: ignore[return-value]


def tally_votes(verdicts: list[bool | None]) -> tuple[bool | None, float | None, int, int]:
    """(majority, agreement, scored, total): unscored samples are not votes, and how many
    samples were scored is kept beside the majority, so [pass, unscored, unscored] reads
    as one scored pass out of three, not as a unanimous pass."""
    scored = [v for v in verdicts if v is not None]
    if not scored:
        return None, None, 0, len(verdicts)
    yes = sum(scored)
    no = len(scored) - yes
    if yes == no:
        return None, 0.5, len(scored), len(verdicts)
    return yes > no, max(yes, no) / len(scored), len(scored), len(verdicts)


def unscored_reason_class(reason: str | None) -> str:
    """The kind of an unscored reason, without the reply-specific detail: ``ambiguous``, ``empty reply``,
    ``no JSON verdict found in reply``, ``reply JSON could not be decoded`` ..."""
    if reason is None:
        return "tie among scored samples"
    head = re.split(r"[:(;]", reason, maxsplit=1)[0].strip()
    return re.sub(r"\s*starting at char \d+", "", re.sub(r"'[^']*'", "'…'", head))[:60] or "unknown"


def unscored_by_truth(verdicts: dict[str, bool | None], truth: dict[str, bool],
                      reasons: dict[str, str] | None = None) -> dict[str, Any]:
    """How a judge's unscored items fall on the ground truth: per label (``success``: truth is a
    success, ``failure``: it is not) the items, the unscored ones, their rate with a Wilson interval and
    the reasons' kinds; ``gap`` is the success rate minus the failure rate. Unscored items count as not
    successful where a judge gates, so a judge whose unscored items lean to one label shifts results."""
    out: dict[str, Any] = {}
    for label, want in (("success", True), ("failure", False)):
        items = [c for c in verdicts if c in truth and truth[c] is want]
        unscored = [c for c in items if verdicts[c] is None]
        kinds: dict[str, int] = {}
        for c in unscored:
            kind = unscored_reason_class((reasons or {}).get(c))
            kinds[kind] = kinds.get(kind, 0) + 1
        out[label] = {"items": len(items), "unscored": len(unscored),
                      "rate": len(unscored) / len(items) if items else None,
                      "rate_ci": wilson_interval(len(unscored), len(items)) if items else None,
                      "reasons": dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}
    s, f = out["success"]["rate"], out["failure"]["rate"]
    out["gap"] = s - f if s is not None and f is not None else None
    return out


__all__ = ["BOOTSTRAP_SEED", "binary_metrics", "cohen_kappa", "fleiss_kappa", "kappa_interval", "majority",
           "tally_votes", "unscored_by_truth", "unscored_reason_class"]
