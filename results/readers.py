"""Reading result tables of a run directory into pandas.

Reads go through ``pyarrow.dataset`` with the declared schema, so a table
that is missing or empty still comes back with its columns and dtypes, and
leftover temp files (dot-prefixed) are never read as data.

One row per conversation: a conversation may have been run again (``tauray
sweep --retry-errors`` reruns infra-error units; each attempt is written by
its own flush, so its files carry a later sequence number). The attempt in the
latest file wins: readers drop the older conversation rows and the older
attempts' detail rows (a detail row counts when its file's sequence number is
after the previous attempt's and at most the winning attempt's). ``cells``
keeps the latest totals per (sweep, cell). Without reruns nothing is filtered.

dtypes: nullable bool columns come back as pandas ``boolean`` (True/False/NA)
and list columns as Python lists; everything else is pyarrow's default
conversion (int64, float64, str, datetime64[us, UTC]).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
from tauray.results.schemas import SCHEMAS, schema_for

_IGNORE_PREFIXES = [".", "_"]


def _table_dir(path: Path | str, table: str) -> Path:
    return Path(path) / table


def _data_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix == ".parquet" and not p.name.startswith(tuple(_IGNORE_PREFIXES))
    )


_PART = re.compile(r"^part-(?P<run>.+)-(?P<seq>\d{6,})-[0-9a-f]{8}\.parquet$")


def _file_key(file: Path) -> tuple[str, int]:
    m = _PART.match(file.name)
    return (m["run"], int(m["seq"])) if m else ("", -1)


def _with_seq(files: list[Path], columns: list[str]) -> pa.Table:
    """Columns of every file plus the run and sequence number of the file each row came from."""
    parts = []
    for f in files:
        t = ds.dataset(str(f), format="parquet").to_table(columns=columns)
        run, seq = _file_key(f)
        parts.append(t.append_column("_file_run", pa.array([run] * len(t), pa.string()))
                      .append_column("_seq", pa.array([seq] * len(t), pa.int64())))
    return pa.concat_tables(parts)


def _attempt_windows(path: Path | str) -> pd.DataFrame | None:
    """(run_id, conversation_id) → (prev_seq, win_seq) for conversations written more than
    once; None when every conversation has one row (the usual case: nothing to filter)."""
    files = _data_files(_table_dir(path, "conversations"))
    if not files:
        return None
    keys = _with_seq(files, ["run_id", "conversation_id"]).to_pandas()
    dup = keys.duplicated(["run_id", "conversation_id"], keep=False)
    if not dup.any():
        return None
    keys = keys[dup].sort_values("_seq")
    grouped = keys.groupby(["run_id", "conversation_id"])["_seq"]
    return pd.DataFrame({"win_seq": grouped.max(), "prev_seq": grouped.apply(lambda s: s.iloc[-2])}).reset_index()


def _latest_only(path: Path | str, table: str, files: list[Path]) -> pa.Table | None:
    """The table without superseded rows, or None when nothing needs filtering."""
    names = list(schema_for(table).names)
    if table == "cells":
        if len(files) < 2:
            return None
        full = _with_seq(files, names)
        keys = full.select(["sweep_id", "cell_id", "_seq"]).to_pandas()
        keep = keys["_seq"] == keys.groupby(["sweep_id", "cell_id"])["_seq"].transform("max")
        return full.filter(pa.array(keep.to_numpy())).select(names)
    if "conversation_id" not in names:
        return None
    windows = _attempt_windows(path)
    if windows is None:
        return None
    full = _with_seq(files, names)
    keys = full.select(["run_id", "conversation_id", "_seq"]).to_pandas()
    merged = keys.merge(windows, on=["run_id", "conversation_id"], how="left")
    if table == "conversations":
        keep = merged["win_seq"].isna() | (merged["_seq"] == merged["win_seq"])
    else:
        keep = merged["win_seq"].isna() | ((merged["_seq"] > merged["prev_seq"]) & (merged["_seq"] <= merged["win_seq"]))
    return full.filter(pa.array(keep.to_numpy())).select(names)


def list_tables(path: Path | str) -> list[str]:
    """Declared tables that have at least one data file in the run directory."""
    return [t for t in SCHEMAS if _data_files(_table_dir(path, t))]


def _filter_expression(schema: pa.Schema, filters: dict[str, Any]) -> ds.Expression | None:
    expr: ds.Expression | None = None
    for column, value in filters.items():
        if schema.get_field_index(column) < 0:
            raise KeyError(f"cannot filter on unknown column {column!r}; columns: {', '.join(schema.names)}")
        field = ds.field(column)
        if value is None:
            term = field.is_null()
        elif isinstance(value, (list, tuple, set, frozenset)):
            term = field.isin(list(value))
        else:
            term = field == value
        expr = term if expr is None else expr & term
    return expr


def _to_frame(arrow_table: pa.Table) -> pd.DataFrame:
    df = arrow_table.to_pandas()
    for field in arrow_table.schema:
        if pa.types.is_boolean(field.type) and field.nullable:
            df[field.name] = df[field.name].astype("boolean")
        elif pa.types.is_list(field.type):
            df[field.name] = pd.Series(
                [None if v is None else list(v) for v in df[field.name]], index=df.index, dtype=object
            )
    return df


def read_table(
    path: Path | str,
    table: str,
    filters: dict[str, Any] | None = None,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """Read one table of a run directory.

    ``filters`` maps column to value: equality, ``None`` for "is null", or a
    list/tuple/set for "is one of". ``columns`` selects and orders columns.
    """
    schema = schema_for(table)
    if columns is not None:
        unknown = [c for c in columns if schema.get_field_index(c) < 0]
        if unknown:
            raise KeyError(f"unknown columns {unknown} for table {table!r}; columns: {', '.join(schema.names)}")
    expr = _filter_expression(schema, filters or {})
    files = _data_files(_table_dir(path, table))
    if not files:
        empty = schema.empty_table()
        return _to_frame(empty.select(columns) if columns is not None else empty)
    latest = _latest_only(path, table, files)
    dataset = (ds.dataset(latest.cast(schema)) if latest is not None
               else ds.dataset([str(f) for f in files], schema=schema, format="parquet"))
    return _to_frame(dataset.to_table(columns=columns, filter=expr))


def read_conversations(path: Path | str, *, columns: list[str] | None = None, **filters: Any) -> pd.DataFrame:
    return read_table(path, "conversations", filters, columns)


def read_predicates(path: Path | str, *, columns: list[str] | None = None, **filters: Any) -> pd.DataFrame:
    return read_table(path, "predicate_verdicts", filters, columns)


def read_actions(path: Path | str, *, columns: list[str] | None = None, **filters: Any) -> pd.DataFrame:
    return read_table(path, "actions", filters, columns)


def read_messages(path: Path | str, *, columns: list[str] | None = None, **filters: Any) -> pd.DataFrame:
    return read_table(path, "messages", filters, columns)


def read_nl_assertions(path: Path | str, *, columns: list[str] | None = None, **filters: Any) -> pd.DataFrame:
    return read_table(path, "nl_assertion_verdicts", filters, columns)
