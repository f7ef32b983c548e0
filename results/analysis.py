"""Analysis readers: the result tables of one run directory or of a whole
sweep (a folder of run directories) as pandas DataFrames, with filters.

Built on ``readers.read_table``, so every frame has the declared dtypes
(nullable ``boolean`` for verdict columns, lists for list columns) even when a
table is missing or empty. Detail tables (messages, actions, verdicts) are
filtered by sweep, cell and model through the conversations they belong to,
since only the conversation row carries those columns.

Also here: one conversation's full record (:func:`load_transcript`) with the
difference of each side's final DB from gold, recomputed from the recorded
actions (design rule 3: grade after the fact from what was recorded).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tauray.results.readers import read_table
from tauray.results.schemas import SCHEMAS, schema_for

Filter = str | Iterable[str] | None

_CONV_KEY = ["run_id", "conversation_id"]


def is_run_dir(path: Path | str) -> bool:
    """A run directory holds at least one table folder."""
    p = Path(path)
    return p.is_dir() and any((p / t).is_dir() for t in SCHEMAS)


def run_dirs(path: Path | str) -> list[Path]:
    """The run directories under ``path``: itself when it is one, else its
    sub-folders that are (a sweep directory), sorted by name."""
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"no such directory: {p}")
    if is_run_dir(p):
        return [p]
    found = sorted(c for c in p.iterdir() if not c.name.startswith((".", "_")) and is_run_dir(c))
    if not found:
        tables = ", ".join(SCHEMAS)
        raise FileNotFoundError(f"{p} is neither a run directory (with table folders: {tables}) "
                                "nor a folder of run directories")
    return found


def _as_list(value: Filter) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return frames[0]
    if len(non_empty) == 1:
        return non_empty[0].reset_index(drop=True)
    return pd.concat(non_empty, ignore_index=True)


def _glob_mask(names: pd.Series, patterns: list[str]) -> pd.Series:
    return names.map(lambda n: any(fnmatch.fnmatchcase(str(n), p) for p in patterns)).astype(bool)


def load_table(path: Path | str, table: str, *, sweep: Filter = None, cell: Filter = None, model: Filter = None,
               scenario: Filter = None, run: Filter = None, columns: list[str] | None = None) -> pd.DataFrame:
    """One table over a run or sweep directory.

    Filters (each a value or a list of accepted values): ``sweep`` (sweep_id),
    ``cell`` (cell_id), ``model`` (agent model), ``run`` (run_id) and
    ``scenario`` (glob patterns on the scenario name).
    """
    schema = schema_for(table)
    direct = {"sweep_id": _as_list(sweep), "cell_id": _as_list(cell), "agent_model": _as_list(model),
              "run_id": _as_list(run)}
    pushdown = {c: v for c, v in direct.items() if v is not None and c in schema.names}
    via_conversations = {c: v for c, v in direct.items() if v is not None and c not in schema.names}
    frames = [read_table(d, table, filters=pushdown) for d in run_dirs(path)]
    df = _concat(frames)
    patterns = _as_list(scenario)
    if patterns is not None and "scenario" in df.columns and len(df):
        df = df[_glob_mask(df["scenario"], patterns)].reset_index(drop=True)
    if via_conversations and len(df):
        keys = load_table(path, "conversations", sweep=sweep, cell=cell, model=model, run=run,
                          scenario=scenario, columns=_CONV_KEY)
        df = df.merge(keys, on=_CONV_KEY, how="inner")
    if columns is not None:
        df = df[columns]
    return df


def load_conversations(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "conversations", **filters)


def load_predicates(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "predicate_verdicts", **filters)


def load_actions(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "actions", **filters)


def load_messages(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "messages", **filters)


def load_nl_assertions(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "nl_assertion_verdicts", **filters)


def load_judge_verdicts(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "judge_verdicts", **filters)


def load_cells(path: Path | str, **filters: Any) -> pd.DataFrame:
    return load_table(path, "cells", **filters)


def with_arms(conv: pd.DataFrame) -> pd.DataFrame:
    """Add ``arm``, the label an analysis compares: ``agent model | user model``,
    with the cell id appended where one such pair spans several cells (other
    options or judges); a copy of ``conv``."""
    df = conv.copy()
    base = df["agent_model"].astype(str) + " | " + df["user_model"].astype(str)
    cell = df["cell_id"].astype(object).where(df["cell_id"].notna(), df["run_id"])
    spans = pd.Series(cell.values, index=base.values).groupby(level=0).nunique()
    multi = base.map(spans).gt(1).to_numpy() if len(df) else []
    df["arm"] = [f"{b} [{str(c)[:8]}]" if m else b for b, c, m in zip(base, cell, multi)]
    return df


# --- DB difference from gold ---------------------------------------------------------


@dataclass(frozen=True)
class DbDiff:
    """Each side's final DB against gold, field by field."""

    rows: pd.DataFrame  # side, field, gold, actual (values as JSON text)
    replayed_hashes: dict[str, str | None]  # hashes of the DBs rebuilt from the recorded actions
    recorded_hashes: dict[str, str | None]  # hashes the conversation row recorded
    note: str | None = None  # why no diff could be computed, if so

    @property
    def reproduced(self) -> bool:
        """Whether replaying the recorded actions rebuilt the recorded final DBs."""
        return all(self.recorded_hashes.get(s) in (None, h) for s, h in self.replayed_hashes.items())


def diff_values(gold: Any, actual: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """Leaf-level differences of two JSON-like values, as (path, gold, actual)."""
    if isinstance(gold, dict) and isinstance(actual, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(gold) + [k for k in actual if k not in gold]:
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in actual:
                out.append((path, gold[key], "(absent)"))
            elif key not in gold:
                out.append((path, "(absent)", actual[key]))
            elif gold[key] != actual[key]:
                out.extend(diff_values(gold[key], actual[key], path))
        return out
    if isinstance(gold, list) and isinstance(actual, list):
        out = []
        for i in range(max(len(gold), len(actual))):
            path = f"{prefix}[{i}]"
            if i >= len(actual):
                out.append((path, gold[i], "(absent)"))
            elif i >= len(gold):
                out.append((path, "(absent)", actual[i]))
            elif gold[i] != actual[i]:
                out.extend(diff_values(gold[i], actual[i], path))
        return out
    return [] if gold == actual else [(prefix, gold, actual)]


def _recorded_calls(actions: pd.DataFrame) -> list[tuple[str, str, dict[str, Any]]]:
    calls = actions[actions["kind"] == "tool_call"].sort_values("seq")
    out = []
    for row in calls.itertuples(index=False):
        try:
            args = json.loads(row.arguments) if isinstance(row.arguments, str) else {}
        except ValueError:
            args = {}
        out.append((row.side, row.tool, args if isinstance(args, dict) else {}))
    return out


def db_diff(scenario: str, actions: pd.DataFrame, recorded_hashes: dict[str, str | None] | None = None) -> DbDiff:
    """Rebuild gold (reference actions) and the conversation's final DBs (its
    recorded tool calls, each write followed by sync) and diff them per side."""
    from tauray.scenarios import get_scenario, replay

    columns = ["side", "field", "gold", "actual"]
    recorded = recorded_hashes or {}
    try:
        scen = get_scenario(scenario)
        gold, _ = replay(scen)
        live, _ = replay(scen, _recorded_calls(actions))
    except Exception as exc:  # noqa: BLE001 - an unknown scenario or a broken replay is shown, not raised
        return DbDiff(pd.DataFrame(columns=columns), {}, recorded, note=f"{type(exc).__name__}: {exc}")
    rows = []
    for side in ("agent", "user"):
        g, a = getattr(gold, side), getattr(live, side)
        if g is None or a is None:
            continue
        for field, gv, av in diff_values(g.dump(), a.dump()):
            rows.append((side, field, json.dumps(gv, default=str), json.dumps(av, default=str)))
    return DbDiff(pd.DataFrame(rows, columns=columns), live.hashes(), recorded)


# --- one conversation ----------------------------------------------------------------


@dataclass(frozen=True)
class Transcript:
    """Everything recorded about one conversation, plus its DB difference from gold."""

    conversation: dict[str, Any]
    messages: pd.DataFrame
    actions: pd.DataFrame
    predicates: pd.DataFrame
    judge_verdicts: pd.DataFrame
    nl_assertions: pd.DataFrame
    db_diff: DbDiff


def recorded_hashes(conversation: dict[str, Any]) -> dict[str, str | None]:
    return {"agent": conversation.get("agent_db_hash"), "user": conversation.get("user_db_hash")}


def load_transcript(path: Path | str, conversation_id: str, run_id: str | None = None) -> Transcript:
    """One conversation of a run or sweep directory, by id (and run id when ids repeat across runs)."""
    conv = load_conversations(path, run=run_id)
    conv = conv[conv["conversation_id"] == conversation_id]
    if conv.empty:
        raise KeyError(f"no conversation {conversation_id!r} in {path}")
    if len(conv) > 1:
        raise KeyError(f"conversation {conversation_id!r} is in several runs "
                       f"({', '.join(conv['run_id'])}); pass run_id")
    row = conv.iloc[0].to_dict()

    def detail(table: str, order: str | None) -> pd.DataFrame:
        frames = [read_table(d, table, filters={"run_id": row["run_id"], "conversation_id": conversation_id})
                  for d in run_dirs(path)]
        df = _concat(frames)
        return df.sort_values(order).reset_index(drop=True) if order else df

    actions = detail("actions", "seq")
    return Transcript(
        conversation=row, messages=detail("messages", "seq"), actions=actions,
        predicates=detail("predicate_verdicts", "index"), judge_verdicts=detail("judge_verdicts", None),
        nl_assertions=detail("nl_assertion_verdicts", None),
        db_diff=db_diff(row["scenario"], actions, recorded_hashes(row)),
    )
