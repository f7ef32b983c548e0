"""``tauray compact RUN_OR_SWEEP_DIR``: rewrite each table into one file, dropping
rows that no longer count.

A long sweep with resumes and retries leaves many small files and rows of
superseded attempts (and detail rows of attempts whose conversation row never
landed). Compaction keeps exactly what the readers return by default, so reads
before and after are the same; ``pandas.read_parquet`` then shows no
superseded rows either.

Per table, the counted rows are written as one new file (temp name, fsync,
rename) and only then are the old files deleted. A crash between the two
leaves old and new files side by side: the readers drop exact key repeats
(``readers.NATURAL_KEY``), so reads stay the same, and running compact again
finishes the job. The run directory's lock is held throughout, so no writer
adds rows meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tauray.results.tables.layout import COMPACT_RUN, data_files, next_seq, part_name, run_dirs, table_dir
from tauray.results.tables.lock import RunLock
from tauray.results.tables.readers import counted_rows
from tauray.results.tables.records import TABLES
from tauray.results.tables.writer import commit_file, deferred_signals, remove_temp_files


class CompactSummary(BaseModel):
    """What one ``tauray compact`` did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dirs: list[str] = Field(description="Run directories compacted.")
    files_before: dict[str, int] = Field(description="Data files per table before.")
    files_after: dict[str, int] = Field(description="Data files per table after.")
    rows_kept: dict[str, int] = Field(description="Rows per table after (what the readers return).")
    rows_dropped: dict[str, int] = Field(description="Stored rows per table that no longer counted.")
    seconds: float


def compact(path: Path | str) -> CompactSummary:
    """Compact every run directory under ``path`` (a run directory or a sweep folder)."""
    started = time.perf_counter()
    dirs = run_dirs(path)
    before = dict.fromkeys(TABLES, 0)
    after = dict.fromkeys(TABLES, 0)
    kept = dict.fromkeys(TABLES, 0)
    dropped = dict.fromkeys(TABLES, 0)
    for run_dir in dirs:
        with RunLock(run_dir):
            remove_temp_files(run_dir)
            name = part_name(COMPACT_RUN, next_seq(run_dir, COMPACT_RUN))
            for table in TABLES:
                old = data_files(table_dir(run_dir, table))
                before[table] += len(old)
                if not old:
                    continue
                stored = counted_rows([run_dir], table, all_attempts=True).num_rows
                rows = counted_rows([run_dir], table)
                kept[table] += rows.num_rows
                dropped[table] += stored - rows.num_rows
                if len(old) == 1 and stored == rows.num_rows:
                    after[table] += 1
                    continue
                with deferred_signals():
                    if rows.num_rows:
                        commit_file(table_dir(run_dir, table) / name, rows)
                    for f in old:
                        f.unlink(missing_ok=True)
                after[table] += 1 if rows.num_rows else 0
    return CompactSummary(run_dirs=[str(d) for d in dirs], files_before=before, files_after=after,
                          rows_kept=kept, rows_dropped=dropped, seconds=round(time.perf_counter() - started, 3))
