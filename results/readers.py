"""Reading result tables of a run directory into pandas.

Reads go through ``pyarrow.dataset`` with the declared schema, so a table
that is missing or empty still comes back with its columns and dtypes, and
leftover temp files (dot-prefixed) are never read as data.

dtypes: nullable bool columns come back as pandas ``boolean`` (True/False/NA)
and list columns as Python lists; everything else is pyarrow's default
conversion (int64, float64, str, datetime64[us, UTC]).
"""

from __future__ import annotations

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
    dataset = ds.dataset([str(f) for f in files], schema=schema, format="parquet")
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
