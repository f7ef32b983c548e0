"""Declared Arrow schemas of the result tables.

Declared by the record classes in ``records`` (the package) (field order, types and
nullability) and fixed at import, never inferred from the first batch of rows,
so a column that happens to be all-null in one file still has its real type
and every file of a table has the same schema.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from tauray.results.tables.records import TABLES, as_json_text

STR = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
STR_LIST = pa.list_(pa.string())
UTC_TS = pa.timestamp("us", tz="UTC")


def arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """Arrow type and nullability of one record field's annotation."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        annotation, origin = args[0], typing.get_origin(args[0])
    if origin is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
        origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        annotation = type(typing.get_args(annotation)[0])
    if origin is list and typing.get_args(annotation) == (str,):
        return STR_LIST, nullable
    simple = {str: STR, int: INT, float: FLOAT, bool: BOOL, datetime: UTC_TS}
    if annotation in simple:
        return simple[annotation], nullable
    raise TypeError(f"no Arrow type declared for {annotation!r}")


def record_schema(record: type[BaseModel]) -> pa.Schema:
    """The table schema declared by a record class: its fields, in order, with their
    types and nullability (a single source of truth for rows and files)."""
    fields = []
    for name, info in record.model_fields.items():
        type_, nullable = arrow_type(info.annotation)
        fields.append(pa.field(name, type_, nullable=nullable))
    return pa.schema(fields)


SCHEMAS: dict[str, pa.Schema] = {table: record_schema(record) for table, record in TABLES.items()}


def json_columns(table: str) -> list[str]:
    """Columns of ``table`` that hold JSON text (decoded by the readers on request)."""
    def is_json(annotation: Any) -> bool:
        for arg in (annotation, *typing.get_args(annotation)):
            if typing.get_origin(arg) is typing.Annotated and any(
                    getattr(m, "func", None) is as_json_text for m in arg.__metadata__):
                return True
        return False

    schema_for(table)
    record = TABLES[table]
    return [name for name, info in record.model_fields.items()
            if is_json(info.annotation) or any(getattr(m, "func", None) is as_json_text for m in info.metadata)]


class UnknownTableError(KeyError):
    """Raised for a table name that is not one of the declared tables."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


def schema_for(table: str) -> pa.Schema:
    """Declared schema of ``table``; fails loudly, naming the known tables."""
    try:
        return SCHEMAS[table]
    except KeyError:
        known = ", ".join(SCHEMAS)
        raise UnknownTableError(f"unknown table {table!r}; known tables: {known}") from None


def tables_markdown(tables: dict[str, Any], schemas: dict[str, pa.Schema]) -> str:
    """Markdown of ``tables`` (name to record class): each with its doc and columns."""
    lines = []
    for table, record in tables.items():
        lines.append(f"#### `{table}`\n\n{(record.__doc__ or '').strip()}\n")
        lines.append("| column | type | description |\n|---|---|---|")
        for field in schemas[table]:
            info = record.model_fields[field.name]
            kind = str(field.type).replace("timestamp[us, tz=UTC]", "timestamp (UTC)").replace(
                "list<item: string>", "list<string>")
            kind += "" if not field.nullable else ", nullable"
            lines.append(f"| `{field.name}` | {kind} | {info.description or ''} |")
        lines.append("")
    return "\n".join(lines)


def schema_markdown() -> str:
    """The tables as README documents them (a test keeps README in step with this)."""
    return tables_markdown(TABLES, SCHEMAS)


if __name__ == "__main__":
    print(schema_markdown())
