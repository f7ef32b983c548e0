"""Exactly once: which units of a sweep are done, and which a resume runs again.

Nothing is moved or deleted on resume. Every row carries its ``unit_id`` and
``attempt``, and the readers count a unit's newest attempt only, its detail and
judge rows joined by ``(run_id, unit_id, attempt)``. So:

* a conversation row on disk means "this attempt of the unit is done";
* a driver killed in the middle of a flush leaves detail rows of an attempt
  with no conversation row: they never count, and the writer numbers the rerun
  past them (``results.writer.attempts_on_disk``);
* rows written by ``tauray judge`` belong to the attempt they judged, so a
  resume before or after a re-judge leaves them where they are;
* ``--retry-errors`` reruns units whose newest row is an infra or internal
  error (model errors are verdicts on the model and stay); the rerun is a new
  attempt and supersedes the old one in every table.

``tauray compact`` drops superseded rows from disk when wanted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tauray.results.tables import layout
from tauray.results.tables.readers import conversations_df
from tauray.results.tables.records import INFRA, INTERNAL, ErrorKind

RETRYABLE: tuple[ErrorKind, ...] = (INFRA, INTERNAL)


@dataclass
class ResumeState:
    """What the tables already hold for a sweep."""

    done: set[str] = field(default_factory=set)  # unit ids whose newest row counts as final
    to_retry: set[str] = field(default_factory=set)  # unit ids whose newest row is a retryable error (retry asked)
    rows: int = 0  # units with a row on disk
    infra_rows: int = 0
    internal_rows: int = 0
    attempts: int = 0  # conversation rows on disk, superseded attempts included


def resume_state(out: Path | str, run_id: str, retry_errors: bool = False) -> ResumeState:
    """Read the newest conversation row of every unit of ``run_id`` in ``out``."""

    out = Path(out)
    state = ResumeState()
    if not layout.has_conversations(out):
        return state
    df = conversations_df(out, columns=["unit_id", "error_kind"], run=run_id)
    state.attempts = len(conversations_df(out, columns=["unit_id"], run=run_id, all_attempts=True))
    state.rows = len(df)
    kind = df["error_kind"].astype(object)
    state.infra_rows = int((kind == INFRA).sum())
    state.internal_rows = int((kind == INTERNAL).sum())
    units = df["unit_id"].astype(str)
    if retry_errors:
        retry = kind.isin(RETRYABLE).to_numpy()
        state.to_retry = set(units[retry])
        state.done = set(units[~retry])
    else:
        state.done = set(units)
    return state
