"""Exactly once: which units of a sweep are done, and cleaning up after a killed driver.

The tables are append-only and every file lands atomically (temp name, fsync,
rename). One flush of the writer puts the detail rows of a set of
conversations into one file per table and their conversation rows last, all
files sharing one sequence number. So:

* a conversation row on disk means "this unit is done": resume skips it;
* a driver killed in the middle of a flush leaves detail files whose flush has
  no conversations file and whose conversations have no later row: those rows
  are orphans of units that will run again. Before writing anything, resume
  moves such files aside (``_orphan-`` prefix, which every Parquet reader
  skips), so the rerun's rows never sit beside them. A flush that failed and
  was retried by the same writer (details at seq S, conversations at S+1) is
  recognised by the later conversation row and kept;
* ``--retry-errors`` reruns units whose latest row is an infra error; the new
  attempt's files come later, and the readers (``tauray.results.readers``)
  keep only the latest attempt of a conversation, its detail rows included.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds

from tauray.results.writer import WRITE_ORDER

_PART = re.compile(r"^part-(?P<run>.+)-(?P<seq>\d{6,})-[0-9a-f]{8}\.parquet$")
ORPHAN_PREFIX = "_orphan-"


def _parts(folder: Path) -> list[tuple[Path, str, int]]:
    if not folder.is_dir():
        return []
    out = []
    for entry in os.scandir(folder):
        m = _PART.match(entry.name)
        if m:
            out.append((Path(entry.path), m["run"], int(m["seq"])))
    return out


def _conversation_seqs(out: Path) -> pd.DataFrame:
    rows = []
    for path, run, seq in _parts(out / "conversations"):
        t = ds.dataset(str(path), format="parquet").to_table(columns=["run_id", "conversation_id"]).to_pandas()
        t["_seq"] = seq
        rows.append(t)
    if not rows:
        return pd.DataFrame({"run_id": [], "conversation_id": [], "_seq": []})
    return pd.concat(rows, ignore_index=True)


def cleanup_orphans(out: Path | str) -> list[Path]:
    """Move aside detail files left by a flush that never wrote its conversations file.

    Returns the files moved. Idempotent, so a driver killed during the cleanup
    itself simply does it again next time.
    """
    out = Path(out)
    committed = {(run, seq) for _, run, seq in _parts(out / "conversations")}
    candidates = [(p, run, seq) for table in WRITE_ORDER if table != "conversations"
                  for p, run, seq in _parts(out / table) if (run, seq) not in committed]
    if not candidates:
        return []
    latest = _conversation_seqs(out).groupby(["run_id", "conversation_id"])["_seq"].max().to_dict()
    moved = []
    for path, run, seq in candidates:
        ids = ds.dataset(str(path), format="parquet").to_table(columns=["run_id", "conversation_id"]).to_pylist()
        # kept when a later flush of the same writer committed these conversations
        if any(latest.get((r["run_id"], r["conversation_id"]), -1) > seq for r in ids):
            continue
        target = path.with_name(ORPHAN_PREFIX + path.name)
        os.replace(path, target)
        moved.append(target)
    return moved


@dataclass
class ResumeState:
    """What the tables already hold for a sweep."""

    done: set[str] = field(default_factory=set)  # unit ids whose latest row counts as final
    to_retry: set[str] = field(default_factory=set)  # unit ids whose latest row is an infra error (retry asked)
    rows: int = 0  # conversation rows on disk (latest per unit)
    infra_rows: int = 0
    orphans_moved: int = 0


def resume_state(out: Path | str, run_id: str, retry_errors: bool = False) -> ResumeState:
    """Read the latest conversation row of every unit of ``run_id`` in ``out``."""
    from tauray.results.readers import read_conversations

    out = Path(out)
    state = ResumeState()
    if not (out / "conversations").is_dir():
        return state
    df = read_conversations(out, columns=["conversation_id", "error_kind"], run_id=run_id)
    state.rows = len(df)
    infra = df["error_kind"] == "infra"
    state.infra_rows = int(infra.sum())
    if retry_errors:
        state.to_retry = set(df.loc[infra, "conversation_id"])
        state.done = set(df.loc[~infra, "conversation_id"])
    else:
        state.done = set(df["conversation_id"])
    return state
