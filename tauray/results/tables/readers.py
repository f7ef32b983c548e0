"""The one way in: each result table of a run or sweep folder as a DataFrame.

One function per table (``conversations_df``, ``messages_df``, ``actions_df``,
``predicates_df``, ``nl_verdicts_df``, ``judge_verdicts_df``, ``sim_findings_df``,
``sim_attributions_df``, ``cells_df``), each taking a run directory or a folder of
run directories.

Which rows count is decided by columns, never by file names, so plain pandas
can do the same (``docs/tables.md``):

* a conversation row counts when its ``attempt`` is the highest of its
  ``(run_id, unit_id)``;
* a detail or judge row counts when its ``(run_id, unit_id, attempt)`` is a
  counting conversation row (rows of older attempts, and of an attempt whose
  conversation row never landed because the driver was killed mid-flush, are
  left out); re-judge rows carry the attempt they judged and the
  ``transcript_hash`` of the transcript they read;
* an audit row (``sim_findings``, ``sim_attributions``) counts when its
  conversation row counts and its ``audit_id`` is its conversation's newest audit
  (the attribution row with the latest ``audited_at``): the in-loop audit's rows
  until a ``tauray audit`` appends newer ones. ``conversations_df`` adds that
  audit's ``attribution``, ``decisive_finding`` and ``decisive_turn`` columns;
* a ``cells`` row counts when its ``updated_at`` is the latest of its
  ``(sweep_id, cell_id)``.

``all_attempts=True`` returns every row as stored. Low-cardinality text
columns come back as pandas ``category``, nullable verdicts as ``boolean``,
list columns as lists; JSON text columns are decoded with ``decode_json=True``.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from tauray.results.tables.layout import child_run_dirs, data_files, table_dir
from tauray.results.tables.records import TABLES
from tauray.results.tables.schemas import SCHEMAS, json_columns, schema_for

Filter = str | Iterable[str] | None

KEY = ["run_id", "unit_id"]
ATTEMPT_KEY = ["run_id", "unit_id", "attempt"]

# Text columns with few distinct values: category dtype (smaller, faster groupby).
CATEGORICAL = frozenset({
    "run_id", "sweep_id", "cell_id", "scenario", "domain", "upstream_id", "policy_variant", "issue_type",
    "persona", "agent_model", "agent_kind", "user_model", "user_kind", "judge_model", "termination_reason",
    "error_kind", "success_reason", "tauray_version", "upstream_version", "side", "role", "kind", "tool",
    "function", "prompt_id", "prompt_version", "prompt_hash", "judge_config_id", "assertion", "unscored_reason",
    "gold_agent_db_hash", "gold_user_db_hash", "matched_action_id", "attribution", "decisive_finding",
    "audit_id", "detector", "fault_class", "blamed_side", "effect", "tier", "decisive_class",
    "profile", "tts_model", "asr_model", "asr_decoding", "voice", "turn_taking", "duplex_pipeline_id",
    "duplex_timing", "duplex_ended",
})


# --- files ----------------------------------------------------------------------------------


def list_tables(path: Path | str) -> list[str]:
    """Declared tables that have at least one data file under ``path``."""
    dirs = child_run_dirs(path)
    return [t for t in SCHEMAS if any(data_files(table_dir(d, t)) for d in dirs)]


def scan(dirs: list[Path], table: str, columns: list[str] | None = None,
         filter: ds.Expression | None = None) -> pa.Table:
    """Rows of ``table`` from every file under ``dirs``, with the declared schema."""
    schema = schema_for(table)
    files = [str(f) for d in dirs for f in data_files(table_dir(d, table))]
    if not files:
        empty = schema.empty_table()
        return empty.select(columns) if columns is not None else empty
    wanted = columns if columns is not None else schema.names
    # Files written before the unit_id/attempt columns existed read as
    # attempt 0 of the unit named by their conversation id.
    # (a table born with unit ids, like utterances, has no conversation id to fall back on)
    legacy = "unit_id" in wanted and "conversation_id" in schema.names
    need = list(dict.fromkeys([*wanted, *(["conversation_id"] if legacy else [])]))
    t = ds.dataset(files, schema=schema, format="parquet").to_table(columns=need, filter=filter)
    if legacy and t["unit_id"].null_count:
        t = t.set_column(t.schema.get_field_index("unit_id"), "unit_id",
                         pc.coalesce(t["unit_id"], t["conversation_id"]))
    if "attempt" in t.column_names and t["attempt"].null_count:
        t = t.set_column(t.schema.get_field_index("attempt"), "attempt",
                         pc.coalesce(t["attempt"], pa.scalar(0, pa.int64())))
    return t.select(wanted)


# --- filters --------------------------------------------------------------------------------

_NAMED = {"sweep": "sweep_id", "cell": "cell_id", "model": "agent_model", "run": "run_id"}


def _as_list(value: Filter) -> list[Any] | None:
    if value is None:
        return None
    return [value] if isinstance(value, (str, bool, int, float)) else list(value)


def _expression(schema: pa.Schema, equals: dict[str, Any]) -> ds.Expression | None:
    expr: ds.Expression | None = None
    for column, value in equals.items():
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


def _glob(frame: pd.DataFrame, patterns: list[str] | None) -> pd.DataFrame:
    if patterns is None or frame.empty:
        return frame
    names = pd.Series(frame["scenario"].astype(str).unique())
    keep = set(names[names.map(lambda n: any(fnmatch.fnmatchcase(n, p) for p in patterns))])
    return frame[frame["scenario"].astype(str).isin(keep)]


# --- frames ---------------------------------------------------------------------------------


def _to_frame(t: pa.Table, decode_json: bool, table: str) -> pd.DataFrame:
    df = t.to_pandas()
    for field in t.schema:
        name = field.name
        if pa.types.is_boolean(field.type) and field.nullable:
            df[name] = df[name].astype("boolean")
        elif pa.types.is_list(field.type):
            df[name] = pd.Series([None if v is None else list(v) for v in df[name]], index=df.index, dtype=object)
        elif name in CATEGORICAL and pa.types.is_string(field.type):
            df[name] = df[name].astype("category")
    if decode_json:
        for name in json_columns(table):
            if name in df.columns:
                df[name] = pd.Series([None if not isinstance(v, str) else json.loads(v) for v in df[name]],
                                     index=df.index, dtype=object)
    return df


# Columns that name one row of each table. A row is never written twice for a
# key (the writer's batches are idempotent); readers drop exact key repeats
# anyway, so a compaction caught between its rename and its unlink reads the same.
NATURAL_KEY: dict[str, list[str]] = {
    "conversations": ATTEMPT_KEY,
    "predicate_verdicts": [*ATTEMPT_KEY, "index"],
    "actions": [*ATTEMPT_KEY, "seq"],
    "messages": [*ATTEMPT_KEY, "seq"],
    "nl_assertion_verdicts": [*ATTEMPT_KEY, "judge_config_id", "transcript_hash", "sample_index", "assertion_index"],
    "judge_verdicts": [*ATTEMPT_KEY, "judge_config_id", "transcript_hash", "sample_index"],
    "sim_findings": [*ATTEMPT_KEY, "audit_id", "detector", "detector_version", "fault_class", "message_seq",
                     "evidence"],
    "sim_attributions": [*ATTEMPT_KEY, "audit_id"],
    "cells": ["sweep_id", "cell_id", "updated_at"],
    "utterances": [*ATTEMPT_KEY, "turn", "side", "start_s"],
    "segments": [*ATTEMPT_KEY, "index"],
}
assert set(NATURAL_KEY) == set(TABLES)


def _latest_mask(keys: pd.DataFrame, by: list[str], order: str) -> pa.Array:
    """True on the rows whose ``order`` is the highest of their ``by`` group (one per group)."""
    if keys.empty:
        return pa.array([], pa.bool_())
    top = keys[order] == keys.groupby(by, observed=True, sort=False)[order].transform("max")
    return pa.array((top & ~keys.duplicated([*by, order], keep="last")).to_numpy())


def _newest(conv: pa.Table) -> pa.Table:
    """The conversation rows of each unit's newest attempt (one per unit), in stored order."""
    return conv.filter(_latest_mask(conv.select(ATTEMPT_KEY).to_pandas(), KEY, "attempt"))


def _unique(t: pa.Table, table: str) -> pa.Table:
    keys = t.select(NATURAL_KEY[table]).to_pandas()
    dup = keys.duplicated(keep="last")
    return t.filter(pa.array(~dup.to_numpy())) if dup.any() else t


def counted_rows(dirs: list[Path], table: str, *, all_attempts: bool = False,
                 unit_filters: dict[str, list[Any]] | None = None) -> pa.Table:
    """The rows of ``table`` under ``dirs`` that count (see the module docstring), as Arrow;
    every stored row with ``all_attempts``. ``unit_filters``: per-unit columns
    (run_id, sweep_id, cell_id, agent_model), applied through the conversations."""
    schema = schema_for(table)
    unit_filters = unit_filters or {}
    own = {c: v for c, v in unit_filters.items() if c in schema.names}
    via_conv = {c: v for c, v in unit_filters.items() if c not in schema.names}
    t = scan(dirs, table, None, _expression(schema, own))
    if table == "cells":
        if not all_attempts:
            t = _unique(t, table)
            t = t.filter(_latest_mask(t.select(["sweep_id", "cell_id", "updated_at"]).to_pandas(),
                                      ["sweep_id", "cell_id"], "updated_at"))
        return t
    if table == "conversations":
        return _newest(t) if not all_attempts else t
    if not all_attempts or via_conv:
        conv_filter = _expression(SCHEMAS["conversations"], {**via_conv, **{c: v for c, v in own.items()
                                                                            if c == "run_id"}})
        conv = scan(dirs, "conversations", ATTEMPT_KEY if not all_attempts else KEY, conv_filter)
        conv = _newest(conv) if not all_attempts else conv
        on = ATTEMPT_KEY if not all_attempts else KEY
        keys = conv.select(on).to_pandas().drop_duplicates()
        rows = t.select(on).to_pandas().reset_index()
        t = t.take(pa.array(rows.merge(keys, on=on, how="inner")["index"].to_numpy()))
        if not all_attempts:
            t = _unique(t, table)
    return t


# --- the audit: each conversation's newest audit -------------------------------------------------

AUDIT_COLUMNS = ("attribution", "decisive_finding", "decisive_turn")
AUDITED = [*ATTEMPT_KEY, "audit_id"]


def _newest_audits(dirs: list[Path]) -> pa.Table:
    """The attribution row of each conversation attempt's newest audit (latest ``audited_at``,
    then ``audit_id``): every stored attempt, so callers join on the attempts they keep."""
    t = _unique(counted_rows(dirs, "sim_attributions", all_attempts=True), "sim_attributions")
    if t.num_rows == 0:
        return t
    keys = t.select([*AUDITED, "audited_at"]).to_pandas()
    order = keys.sort_values(["audited_at", "audit_id"], kind="stable").groupby(ATTEMPT_KEY, sort=False).tail(1)
    return t.take(pa.array(sorted(order.index)))


def _keep_audited(t: pa.Table, audits: pa.Table) -> pa.Table:
    """The rows of ``t`` whose (attempt, audit_id) is in ``audits``."""
    if t.num_rows == 0:
        return t
    rows = t.select(AUDITED).to_pandas().reset_index()
    keep = rows.merge(audits.select(AUDITED).to_pandas(), on=AUDITED, how="inner")["index"].sort_values()
    return t.take(pa.array(keep.to_numpy()))


def _with_audit(dirs: list[Path], conv: pa.Table) -> pa.Table:
    """The conversations with their newest audit's attribution columns (null when not audited)."""
    audits = _newest_audits(dirs)
    types = {name: SCHEMAS["sim_attributions"].field(name).type for name in AUDIT_COLUMNS}
    if audits.num_rows == 0 or conv.num_rows == 0:
        columns = {name: pa.nulls(conv.num_rows, types[name]) for name in AUDIT_COLUMNS}
    else:
        keys = conv.select(ATTEMPT_KEY).to_pandas()
        found = audits.select([*ATTEMPT_KEY, *AUDIT_COLUMNS]).to_pandas()
        merged = keys.merge(found, on=ATTEMPT_KEY, how="left")
        columns = {name: pa.array(merged[name].astype(object).where(merged[name].notna(), None).tolist(),
                                  type=types[name]) for name in AUDIT_COLUMNS}
    for name, values in columns.items():
        conv = conv.append_column(pa.field(name, types[name], nullable=True), values)
    return conv


def _readable(table: str) -> pa.Schema:
    """The columns a reader of ``table`` returns (the conversations gain the audit's)."""
    schema = schema_for(table)
    if table == "conversations":
        for name in AUDIT_COLUMNS:
            schema = schema.append(pa.field(name, SCHEMAS["sim_attributions"].field(name).type, nullable=True))
    return schema


def _read(path: Path | str, table: str, *, all_attempts: bool, columns: list[str] | None, decode_json: bool,
          sweep: Filter, cell: Filter, model: Filter, run: Filter, scenario: Filter,
          equals: dict[str, Any]) -> pd.DataFrame:
    schema = _readable(table)
    if columns is not None:
        unknown = [c for c in columns if schema.get_field_index(c) < 0]
        if unknown:
            raise KeyError(f"unknown columns {unknown} for table {table!r}; columns: {', '.join(schema.names)}")
    bad = [c for c in equals if c not in schema.names]
    if bad:
        raise KeyError(f"cannot filter on unknown column {bad[0]!r}; columns: {', '.join(schema.names)}")
    given = {"sweep": sweep, "cell": cell, "model": model, "run": run}
    named = {_NAMED[k]: _as_list(v) for k, v in given.items() if v is not None}
    # Per-unit columns (sweep, cell, model, run) filter before the newest
    # attempt is chosen; other columns after, so that e.g. error_kind="infra"
    # never brings back a superseded attempt.
    # Readers are lenient where run_dirs is strict: a folder nothing was written to yet
    # (or that does not exist) reads as empty tables with their declared columns.
    dirs = child_run_dirs(path)
    t = counted_rows(dirs, table, all_attempts=all_attempts, unit_filters=named)
    if table == "conversations":
        t = _with_audit(dirs, t)
    elif table in ("sim_findings", "sim_attributions") and not all_attempts:
        t = _keep_audited(t, _newest_audits(dirs))
    if equals:
        t = t.filter(_expression(schema, equals))
    df = _glob(_to_frame(t, decode_json, table), _as_list(scenario)).reset_index(drop=True)
    return df[columns] if columns is not None else df


def _api(table: str, doc: str) -> Any:
    def reader(path: Path | str, *, all_attempts: bool = False, columns: list[str] | None = None,
               decode_json: bool = False, sweep: Filter = None, cell: Filter = None, model: Filter = None,
               run: Filter = None, scenario: Filter = None, **equals: Any) -> pd.DataFrame:
        return _read(path, table, all_attempts=all_attempts, columns=columns, decode_json=decode_json,
                     sweep=sweep, cell=cell, model=model, run=run, scenario=scenario, equals=equals)

    reader.__doc__ = f"""{doc}

    ``path``: a run directory or a folder of run directories. Rows of each
    unit's newest attempt only, unless ``all_attempts=True``. Filters:
    ``sweep``, ``cell``, ``model`` (agent model) and ``run`` take a value or a
    list; ``scenario`` takes glob patterns; any other column by keyword
    (equality, ``None`` for null, a list for "one of"). Detail tables are
    filtered by sweep, cell and model through their conversations.
    ``columns`` selects columns; ``decode_json`` parses JSON text columns."""
    reader.__name__ = reader.__qualname__ = TABLE_FUNCTIONS[table]
    return reader


TABLE_FUNCTIONS = {
    "conversations": "conversations_df", "messages": "messages_df", "actions": "actions_df",
    "predicate_verdicts": "predicates_df", "nl_assertion_verdicts": "nl_verdicts_df",
    "judge_verdicts": "judge_verdicts_df", "sim_findings": "sim_findings_df",
    "sim_attributions": "sim_attributions_df", "cells": "cells_df", "utterances": "utterances_df",
    "segments": "segments_df",
}
assert set(TABLE_FUNCTIONS) == set(TABLES)

conversations_df = _api("conversations", "One row per conversation (unit): how it ended, scored and cost.")
messages_df = _api("messages", "Transcript messages, in ``seq`` order within a conversation.")
actions_df = _api("actions", "Tool calls and state syncs, in ``seq`` order within a conversation.")
predicates_df = _api("predicate_verdicts", "State predicates checked at the end of each conversation.")
nl_verdicts_df = _api("nl_assertion_verdicts", "Judge verdicts on natural-language assertions (one row per sample).")
judge_verdicts_df = _api("judge_verdicts", "Judges' overall verdicts (one row per sample).")
sim_findings_df = _api("sim_findings", "The audit's findings (faults of either side), of each conversation's "
                       "newest audit (every audit with ``all_attempts=True``).")
sim_attributions_df = _api("sim_attributions", "Who failed, one row per conversation, from its newest audit "
                           "(every audit with ``all_attempts=True``).")
cells_df = _api("cells", "Totals per sweep cell (latest per cell).")
utterances_df = _api("utterances", "Utterances carried over the speech channel (voice cells): what was said and "
                     "what was heard, per turn and side, in the order spoken.")
segments_df = _api("segments", "Speech segments of duplex calls: one row per stretch of one side's speech on the "
                   "simulated clock (kind, start and end, overlap, cut, words spoken and cut, text said and "
                   "heard), in timeline order (``index``).")


def plain_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts, missing values (None, NaN, NA, NaT) as None, categoricals and nullable
    dtypes included. Column by column, which is far faster than ``to_dict('records')`` on
    categorical frames."""
    cols = list(frame.columns)
    values = [[None if _missing(v) else v for v in frame[c].astype(object).tolist()] for c in cols]
    return [dict(zip(cols, row)) for row in zip(*values)] if cols else [{} for _ in range(len(frame))]


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def table_df(path: Path | str, table: str, **kwargs: Any) -> pd.DataFrame:
    """Any table by its name (the same as its function above)."""
    schema_for(table)
    return globals()[TABLE_FUNCTIONS[table]](path, **kwargs)
