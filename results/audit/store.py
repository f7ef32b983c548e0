"""Where the audit lands: its two tables in the audited run's directory.

An audit adds part files (never rewrites one), under the run's lock so it cannot
interleave with a writer of the same run. Every row carries its ``audit_id``; a reader
keeps, per run, the rows of the newest audit, so re-auditing with new detector versions
supersedes the old findings without deleting them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
from pydantic import BaseModel

from tauray.results.layout import AUDIT_TABLE_NAMES, child_run_dirs, data_files, next_audit_seq, part_name, table_dir
from tauray.results.lock import RunLock
from tauray.results.records import AUDIT_TABLES
from tauray.results.schemas import audit_schema_for
from tauray.results.writer import commit_file


def write_audit(run_dir: Path | str, run_id: str, tables: dict[str, list[BaseModel]]) -> dict[str, int]:
    """Write one audit's rows of one run (every audit table, even when empty): rows per table."""
    run_dir = Path(run_dir)
    written = {}
    with RunLock(run_dir):
        seq = next_audit_seq(run_dir, run_id)
        for table in AUDIT_TABLE_NAMES:
            rows = tables.get(table, [])
            record = AUDIT_TABLES[table]
            dumped = [record.model_validate(r.model_dump() if isinstance(r, BaseModel) else r).model_dump()
                      for r in rows]
            schema = audit_schema_for(table)
            arrow = pa.Table.from_pylist(dumped, schema=schema)
            commit_file(table_dir(run_dir, table) / part_name(run_id, seq), arrow)
            written[table] = len(dumped)
    return written


def _frame(path: Path | str, table: str) -> pd.DataFrame:
    schema = audit_schema_for(table)
    files = [f for d in child_run_dirs(path) for f in data_files(table_dir(d, table))]
    if not files:
        return schema.empty_table().to_pandas()
    return ds.dataset([str(f) for f in files], schema=schema, format="parquet").to_table().to_pandas()


def latest_audits(path: Path | str, attributions: pd.DataFrame | None = None) -> dict[str, str]:
    """run id -> id of its newest audit (from the attributions, which every audit writes a
    row to per conversation, so an audit that found nothing still counts); ``attributions``:
    that table, when the caller has already read it."""
    frame = _frame(path, "sim_attributions") if attributions is None else attributions
    if frame.empty:
        return {}
    newest = frame.sort_values(["audited_at", "audit_id"]).groupby("run_id", observed=True).tail(1)
    return dict(zip(newest["run_id"].astype(str), newest["audit_id"].astype(str)))


def read_audit(path: Path | str, table: str) -> pd.DataFrame:
    """One audit table of a run or sweep folder: per run, the rows of its newest audit."""
    frame = _frame(path, table)
    if frame.empty:
        return frame
    latest = latest_audits(path, frame if table == "sim_attributions" else None)
    keep = frame["audit_id"].astype(str) == frame["run_id"].astype(str).map(latest)
    return frame.loc[keep].reset_index(drop=True)


__all__ = ["read_audit", "write_audit"]
