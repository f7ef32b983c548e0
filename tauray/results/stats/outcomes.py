"""How a conversation ended, in one place: the sweep summary, the ``cells`` table,
the run summary, the metrics and the report all count with these functions.

Every row is exactly one of:

* ``success`` — scored and successful;
* ``failed`` — scored and not successful (including ``max_steps`` and
  ``too_many_errors`` stops: the termination reason says why);
* ``unscored`` — no error, but a gating signal could not be scored (e.g. a
  judge reply that could not be read);
* ``model`` — the model refused or broke the request (bad request, context
  window, refused parameter): a verdict on the model;
* ``internal`` — a tauray bug (the row carries the traceback);
* ``infra`` — the infrastructure failed (provider outage, actor died): says
  nothing about the model.

The success rate is successes over every row except ``infra`` (as τ² scores
any early termination 0): model errors, internal errors and unscored rows
lower it. Infra rows are left out and reported beside each rate, as a count
and a share of all rows.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from tauray.results.tables.records import INFRA, INTERNAL, MODEL, ErrorKind

Outcome = Literal["success", "failed", "unscored", ErrorKind]
ERRORS: tuple[ErrorKind, ...] = (MODEL, INTERNAL, INFRA)
OUTCOMES: tuple[Outcome, ...] = ("success", "failed", "unscored", *ERRORS)
EXCLUDED: tuple[Outcome, ...] = (INFRA,)  # left out of every rate's denominator


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def error_outcome(error_kind: str) -> ErrorKind:
    """The kind a non-empty ``error_kind`` counts as: an unknown kind is a bug of ours."""
    return INFRA if error_kind == INFRA else MODEL if error_kind == MODEL else INTERNAL


def outcome(error_kind: Any, success: Any) -> Outcome:
    """The outcome of one row from its ``error_kind`` and ``success`` columns."""
    if isinstance(error_kind, str) and error_kind:
        return error_outcome(error_kind)
    if _missing(success):
        return "unscored"
    return "success" if bool(success) else "failed"


def outcomes(conv: pd.DataFrame) -> pd.Series:
    """:func:`outcome` of every row of a conversations frame (vectorised), as a categorical."""
    kind = conv["error_kind"].astype(object)
    has_error = kind.map(lambda k: isinstance(k, str) and bool(k)).to_numpy(dtype=bool)
    success = conv["success"].astype("boolean")
    out = np.where(success.isna().to_numpy(), "unscored", np.where(success.fillna(False).to_numpy(dtype=bool),
                                                                     "success", "failed")).astype(object)
    out[has_error] = [error_outcome(k) for k in kind[has_error]]
    return pd.Series(pd.Categorical(out, categories=list(OUTCOMES)), index=conv.index, name="outcome")


def tally(labels: pd.Series | list[str]) -> dict[str, int]:
    """Count of every outcome (all six keys), plus ``total``, ``counted`` (rows in the
    rate's denominator) and ``errors`` (model + internal + infra)."""
    counts = pd.Series(list(labels), dtype=object).value_counts()
    out = {o: int(counts.get(o, 0)) for o in OUTCOMES}
    out["total"] = int(sum(out[o] for o in OUTCOMES))
    out["counted"] = out["total"] - sum(out[o] for o in EXCLUDED)
    out["errors"] = sum(out[o] for o in ERRORS)
    return out


def success_rate(successes: float, counted: float) -> float:
    """Successes over counted rows (all but infra); NaN when nothing counts."""
    return successes / counted if counted else float("nan")
