"""Incremental, crash-safe Parquet writing of result rows.

Every flush adds new files and never rewrites old ones, so a run can be
read while it is still going and resumed after it stops. Each file is written
under a dot-prefixed temporary name (which pyarrow and pandas skip), synced,
then renamed into place: a crash leaves at worst an ignored temp file.

Within a flush the detail tables go first and ``conversations`` last. Resume
treats a conversation row as "this conversation is done", so that row must
never land on disk before the rows that describe it.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field
from tauray.results.records import TABLES, ConversationResult, rows_by_table
from tauray.results.schemas import SCHEMAS, schema_for

WRITE_ORDER: tuple[str, ...] = (
    "predicate_verdicts",
    "actions",
    "messages",
    "nl_assertion_verdicts",
    "judge_verdicts",
    "conversations",
)
# ``cells`` is a per-sweep summary, not written per conversation.
assert set(WRITE_ORDER) | {"cells"} == set(SCHEMAS) and WRITE_ORDER[-1] == "conversations"


class WriterStats(BaseModel):
    """What a writer has committed to disk so far."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rows: dict[str, int] = Field(description="Rows written per table.")
    files: dict[str, int] = Field(description="Files written per table.")

    @property
    def total_files(self) -> int:
        return sum(self.files.values())


def _check_run_id(run_id: str) -> None:
    # The run id becomes part of file names, so it must be one path segment.
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith((".", "_")):
        raise ValueError(f"run_id {run_id!r} cannot be used in a file name")


def _part_pattern(run_id: str) -> re.Pattern[str]:
    return re.compile(rf"^part-{re.escape(run_id)}-(\d{{6,}})-[0-9a-f]{{8}}\.parquet$")


def next_seq(out_dir: Path, run_id: str) -> int:
    """First file sequence number not yet used by ``run_id`` in ``out_dir``.

    A writer started on an existing run (a resume) continues the numbering so
    files still sort in the order they were written.
    """
    pattern = _part_pattern(run_id)
    highest = -1
    for table in SCHEMAS:
        folder = Path(out_dir) / table
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder):
            match = pattern.match(entry.name)
            if match:
                highest = max(highest, int(match.group(1)))
    return highest + 1


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _commit_file(out_dir: Path, table: str, arrow_table: pa.Table, run_id: str, seq: int) -> Path:
    folder = Path(out_dir) / table
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"part-{run_id}-{seq:06d}-{secrets.token_hex(4)}.parquet"
    tmp = folder / f".{final.name}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(arrow_table, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(folder)
    return final


def _to_arrow(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema_for(table))


def write_rows(
    out_dir: Path | str,
    table: str,
    rows: list[dict[str, Any]] | list[BaseModel],
    run_id: str,
) -> Path | None:
    """Append ``rows`` of one table to a run directory as one new file (named after
    ``run_id``; rows of a table with a ``run_id`` column must carry that id).

    Rows are validated through the table's record class first, so a bad row
    fails here instead of producing a file that does not match the schema.
    Returns the new file, or None when there was nothing to write.
    """
    schema_for(table)
    _check_run_id(run_id)
    if not rows:
        return None
    record = TABLES[table]
    per_run = "run_id" in record.model_fields  # table-level rows (cells) carry no run id
    dumped: list[dict[str, Any]] = []
    for row in rows:
        validated = row if isinstance(row, record) else record.model_validate(
            row.model_dump() if isinstance(row, BaseModel) else row
        )
        if per_run and validated.run_id != run_id:  # type: ignore[attr-defined]
            raise ValueError(f"{table} row has run_id {validated.run_id!r}, expected {run_id!r}")  # type: ignore[attr-defined]
        dumped.append(validated.model_dump())
    out_dir = Path(out_dir)
    return _commit_file(out_dir, table, _to_arrow(table, dumped), run_id, next_seq(out_dir, run_id))


class TableWriter:
    """Buffers conversation results and flushes them to per-table Parquet files.

    Meant for one thread (e.g. the asyncio loop of the driver): ``add`` only
    appends plain dicts; Arrow conversion and I/O happen at flush time.
    The time limit is checked on ``add``, not by a background timer.
    """

    def __init__(
        self,
        out_dir: Path | str,
        run_id: str,
        flush_rows: int = 2000,
        flush_seconds: float = 5.0,
    ) -> None:
        _check_run_id(run_id)
        if flush_rows < 1:
            raise ValueError("flush_rows must be at least 1")
        if flush_seconds < 0:
            raise ValueError("flush_seconds must not be negative")
        self.out_dir = Path(out_dir)
        self.run_id = run_id
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._buffers: dict[str, list[dict[str, Any]]] = {t: [] for t in WRITE_ORDER}
        self._rows_written = {t: 0 for t in WRITE_ORDER}
        self._files_written = {t: 0 for t in WRITE_ORDER}
        self._seq = next_seq(self.out_dir, run_id)
        self._last_flush = time.monotonic()
        self._closed = False

    @property
    def stats(self) -> WriterStats:
        return WriterStats(rows=dict(self._rows_written), files=dict(self._files_written))

    @property
    def pending_rows(self) -> int:
        return sum(len(buf) for buf in self._buffers.values())

    def add(self, result: ConversationResult) -> None:
        if self._closed:
            raise RuntimeError("TableWriter is closed")
        if result.conversation.run_id != self.run_id:
            raise ValueError(
                f"result belongs to run {result.conversation.run_id!r}, writer is for {self.run_id!r}"
            )
        for table, rows in rows_by_table(result).items():
            self._buffers[table].extend(row.model_dump() for row in rows)
        if self._flush_due():
            self.flush()

    def _flush_due(self) -> bool:
        if time.monotonic() - self._last_flush >= self.flush_seconds:
            return True
        return any(len(buf) >= self.flush_rows for buf in self._buffers.values())

    def flush(self) -> None:
        """Write every non-empty buffer as one new file, conversations last.

        A buffer is dropped only once its file is in place; if a write fails,
        the rest of the flush (conversations included) is not attempted and
        stays buffered for the next try.
        """
        pending = [t for t in WRITE_ORDER if self._buffers[t]]
        if pending:
            seq = self._seq
            self._seq += 1
            for table in pending:
                rows = self._buffers[table]
                _commit_file(self.out_dir, table, _to_arrow(table, rows), self.run_id, seq)
                self._rows_written[table] += len(rows)
                self._files_written[table] += 1
                self._buffers[table] = []
        self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._closed:
            return
        self.flush()
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Buffered results are complete conversations, so they are worth
        # keeping even when the block failed.
        self.close()
