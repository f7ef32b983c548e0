"""Incremental, crash-safe Parquet writing of result rows.

Every flush adds new files and never rewrites old ones, so a run can be read
while it is going and resumed after it stops. Each file is written under a
dot-prefixed temporary name (which pyarrow and pandas skip), synced, then
renamed into place.

What makes a flush all-or-nothing:

* rows carry their unit and attempt (``records``), and readers count a
  detail row only when its attempt's conversation row exists. Within a flush
  ``conversations`` is renamed last, so a driver killed mid-flush (SIGKILL)
  leaves detail rows of an attempt that never counts; the writer numbers
  attempts past every attempt on disk, so the rerun's rows never mix with them;
* a flush first moves the buffers into one pending batch whose file names are
  fixed, then commits table by table; a table's file that is already in place
  is not written again. An exception at any line (a failed write, a
  ``KeyboardInterrupt``) leaves the batch pending and the next flush (or
  ``close``) finishes it: nothing is written twice, nothing is dropped;
* SIGINT and SIGTERM arriving during a flush are held until it is done;
* the run directory is locked for as long as a writer is open
  (``results.lock``), and temp files left by a dead writer are removed on open.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from tauray.results.tables.layout import (
    CONVERSATIONS,
    check_run_id,
    next_seq,
    part_name,
    table_dir,
    temp_files,
    temp_path,
    write_audio,
)
from tauray.results.tables.lock import RunLock
from tauray.results.tables.readers import scan
from tauray.results.tables.records import TABLES, ConversationResult, records_by_table
from tauray.results.tables.schemas import SCHEMAS, schema_for

WRITE_ORDER: tuple[str, ...] = (
    "predicate_verdicts",
    "actions",
    "messages",
    "nl_assertion_verdicts",
    "judge_verdicts",
    "sim_findings",
    "sim_attributions",
    "utterances",
    "segments",
    CONVERSATIONS,
)
# ``cells`` is a per-sweep summary, not written per conversation.
assert set(WRITE_ORDER) | {"cells"} == set(SCHEMAS) and WRITE_ORDER[-1] == CONVERSATIONS


class WriterStats(BaseModel):
    """What a writer has committed to disk so far."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rows: dict[str, int] = Field(description="Rows written per table.")
    files: dict[str, int] = Field(description="Files written per table.")

    @property
    def total_files(self) -> int:
        return sum(self.files.values())


def remove_temp_files(out_dir: Path | str) -> list[Path]:
    """Delete temp files a dead writer left in the table folders (call with the lock held)."""
    removed = temp_files(out_dir)
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


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


def commit_file(final: Path, arrow_table: pa.Table) -> None:
    """Write ``arrow_table`` to ``final`` atomically (temp name, fsync, rename, fsync folder)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(arrow_table, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(final.parent)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them (main thread only:
    elsewhere Python cannot install handlers, and signals reach only the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, lambda signum, _frame: caught.append(signum))
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


def _to_arrow(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema_for(table))


def _validated(table: str, rows: list[dict[str, Any]] | list[BaseModel], run_id: str) -> list[dict[str, Any]]:
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
    return dumped


def write_records(
    out_dir: Path | str,
    table: str,
    rows: list[dict[str, Any]] | list[BaseModel],
    run_id: str,
) -> Path | None:
    """Append ``rows`` (records of one table, or their dicts) to a run directory as one new file
    (named after ``run_id``; rows of a table with a ``run_id`` column must carry that id).

    Rows are validated through the table's record class first, so a bad row
    fails here instead of producing a file that does not match the schema.
    Judge rows must carry the ``attempt`` of the conversation they judged.
    Holds the run directory's lock while writing (re-entrant: a process that
    holds it already, like the sweep driver, just writes). Returns the new
    file, or None when there was nothing to write.
    """
    schema_for(table)
    check_run_id(run_id)
    if not rows:
        return None
    arrow = _to_arrow(table, _validated(table, rows, run_id))
    out_dir = Path(out_dir)
    with RunLock(out_dir):
        final = table_dir(out_dir, table) / part_name(run_id, next_seq(out_dir, run_id))
        with deferred_signals():
            commit_file(final, arrow)
    return final


def attempts_on_disk(out_dir: Path | str, run_id: str) -> dict[str, int]:
    """Highest attempt of each unit of ``run_id`` in any table, detail rows of a
    killed flush included (so the next attempt's number is new everywhere)."""

    highest: dict[str, int] = {}
    for table in WRITE_ORDER:
        t = scan([Path(out_dir)], table, ["run_id", "unit_id", "attempt"])
        if not t.num_rows:
            continue
        top = t.filter(pc.equal(t["run_id"], run_id)).group_by("unit_id").aggregate([("attempt", "max")])
        for unit, attempt in zip(top["unit_id"].to_pylist(), top["attempt_max"].to_pylist()):
            if attempt > highest.get(unit, -1):
                highest[unit] = attempt
    return highest


class TableWriter:
    """Buffers conversation results and flushes them to per-table Parquet files.

    Meant for one thread (e.g. the asyncio loop of the driver): ``add`` only
    appends plain dicts; Arrow conversion and I/O happen at flush time. The
    time limit is checked on ``add``, not by a background timer. Each result
    is stamped with its unit's next attempt number. Opening a writer takes the
    run directory's lock; ``close`` releases it.
    """

    def __init__(
        self,
        out_dir: Path | str,
        run_id: str,
        flush_rows: int = 2000,
        flush_seconds: float = 5.0,
    ) -> None:
        check_run_id(run_id)
        if flush_rows < 1:
            raise ValueError("flush_rows must be at least 1")
        if flush_seconds < 0:
            raise ValueError("flush_seconds must not be negative")
        self.out_dir = Path(out_dir)
        self.run_id = run_id
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._lock = RunLock(self.out_dir)
        try:
            self.temp_files_removed = len(remove_temp_files(self.out_dir))
            self._attempts = attempts_on_disk(self.out_dir, run_id)
            self._seq = next_seq(self.out_dir, run_id)
        except BaseException:
            self._lock.release()
            raise
        self._buffers: dict[str, list[dict[str, Any]]] = {t: [] for t in WRITE_ORDER}
        self._pending: tuple[str, dict[str, list[dict[str, Any]]]] | None = None
        self._rows_written = {t: 0 for t in WRITE_ORDER}
        self._files_written = {t: 0 for t in WRITE_ORDER}
        self._last_flush = time.monotonic()
        self._closed = False

    @property
    def stats(self) -> WriterStats:
        return WriterStats(rows=dict(self._rows_written), files=dict(self._files_written))

    @property
    def pending_rows(self) -> int:
        waiting = sum(len(buf) for buf in self._buffers.values())
        return waiting + (sum(len(r) for r in self._pending[1].values()) if self._pending else 0)

    def next_attempt(self, unit_id: str) -> int:
        return self._attempts.get(unit_id, -1) + 1

    def add(self, result: ConversationResult) -> int:
        """Buffer one conversation's rows as the next attempt of its unit; returns that attempt."""
        if self._closed:
            raise RuntimeError("TableWriter is closed")
        c = result.conversation
        if c.run_id != self.run_id:
            raise ValueError(f"result belongs to run {c.run_id!r}, writer is for {self.run_id!r}")
        attempt = self.next_attempt(c.unit_id)
        stamp = {"unit_id": c.unit_id, "attempt": attempt}
        rows = {table: [{**row.model_dump(), **stamp} for row in rows] for table, rows in records_by_table(result).items()}
        for table, dumped in rows.items():
            self._buffers[table].extend(dumped)
        for ref, data in result.audio.items():  # content-addressed: before the rows that name them
            write_audio(self.out_dir, ref, data)
        self._attempts[c.unit_id] = attempt
        if self._flush_due():
            self.flush()
        return attempt

    def _flush_due(self) -> bool:
        if time.monotonic() - self._last_flush >= self.flush_seconds:
            return True
        return any(len(buf) >= self.flush_rows for buf in self._buffers.values())

    def flush(self) -> None:
        """Commit the pending batch (if an earlier flush was interrupted), then the buffers."""
        with deferred_signals():
            while self._pending is not None or any(self._buffers.values()):
                if self._pending is None:
                    name = part_name(self.run_id, self._seq)
                    self._pending, self._buffers, self._seq = (name, self._buffers), {t: [] for t in WRITE_ORDER}, self._seq + 1
                self._commit(*self._pending)
                self._pending = None
        self._last_flush = time.monotonic()

    def _commit(self, name: str, batch: dict[str, list[dict[str, Any]]]) -> None:
        for table in WRITE_ORDER:
            rows = batch.get(table)
            if not rows:
                continue
            final = table_dir(self.out_dir, table) / name
            if not final.exists():  # in place already when an interrupted flush got that far
                commit_file(final, _to_arrow(table, rows))
                self._rows_written[table] += len(rows)
                self._files_written[table] += 1
            del batch[table]

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.flush()
        finally:
            if not self._pending and not any(self._buffers.values()):
                self._closed = True
                self._lock.release()

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
