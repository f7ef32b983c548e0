"""Analysis helpers over the tables the readers return (``tauray.results.tables.readers``):
arms to compare, one conversation's full record (:func:`transcript`) with the
difference of each side's final DB from gold, recomputed from the recorded
actions (design rule 3: grade after the fact from what was recorded).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from tauray.results.tables import readers
from tauray.scenarios import get_scenario, replay


def with_arms(conv: pd.DataFrame) -> pd.DataFrame:
    """Add ``arm``, the label an analysis compares: ``agent model | user model``; where one such
    pair spans several cells, what tells them apart, in words first: the speech profile
    ('oracle | scripted · control', the text twin '· text'), then the speech engines where one
    profile ran with several, the turn-taking ('· half', '· duplex') and the duplex pipeline's
    settings ('· end_of_turn_ms=300') where they differ, and the cell id only for what words do
    not separate (other options or judges); a copy of ``conv``."""
    df = conv.copy()
    label = df["agent_model"].astype(str) + " | " + df["user_model"].astype(str)
    cell = df["cell_id"].astype(object).where(df["cell_id"].notna(), df["run_id"])
    for column, default in (("speech_profile", "text"), ("speech_engines", "text"), ("turn_taking", ""),
                            ("duplex_pipeline", "")):
        if column in df.columns and len(df):
            value = df[column].astype(object).where(df[column].notna(), default).astype(str)
            if column == "turn_taking" and "speech_profile" in df.columns:  # a text row has no turn-taking
                value = value.where(df["speech_profile"].fillna("text").ne("text"), "")
            apart = value.groupby(label.values).transform("nunique").gt(1).to_numpy() & value.ne("").to_numpy()
            label = label.where(~apart, label + " · " + value)
    spans = pd.Series(cell.values, index=label.values).groupby(level=0).nunique()
    multi = label.map(spans).gt(1).to_numpy() if len(df) else []
    df["arm"] = [f"{b} [{str(c)[:8]}]" if m else b for b, c, m in zip(label, cell, multi)]
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


_NO_ROWS = pd.DataFrame(columns=["side", "field", "gold", "actual"])  # shared, never modified


def matches_gold(recorded: dict[str, str | None] | None, gold: dict[str, str | None] | None) -> bool:
    """Both sides' recorded final hashes equal gold's: the DBs are equal, nothing to diff."""
    return bool(recorded and gold) and all(recorded.get(s) is not None and recorded.get(s) == gold.get(s)
                                           for s in ("agent", "user"))


@lru_cache(maxsize=8192)
def _gold_dumps(scenario: str) -> tuple[dict[str, Any], dict[str, str | None]]:
    """Each side's gold DB (reference actions replayed) and its hash; one replay per
    scenario however many conversations or report pages need it."""

    gold, _ = replay(get_scenario(scenario))
    dumps = {side: (getattr(gold, side).dump() if getattr(gold, side) is not None else None)
             for side in ("agent", "user")}
    return dumps, gold.hashes()


def db_diff(scenario: str, actions: pd.DataFrame, recorded_hashes: dict[str, str | None] | None = None,
            gold_hashes: dict[str, str | None] | None = None) -> DbDiff:
    """Rebuild gold (reference actions, cached per scenario) and the conversation's
    final DBs (its recorded tool calls, each write followed by sync) and diff them
    per side. When the recorded final hashes equal the recorded gold hashes
    (``gold_hashes``) the DBs are equal and nothing is replayed."""

    columns = ["side", "field", "gold", "actual"]
    recorded = recorded_hashes or {}
    if matches_gold(recorded, gold_hashes):
        return DbDiff(_NO_ROWS, {}, recorded, note="Both final DBs equal gold (the recorded hashes match); not replayed.")
    try:
        gold, _ = _gold_dumps(scenario)
        live, _ = replay(get_scenario(scenario), _recorded_calls(actions))
    except Exception as exc:  # noqa: BLE001 - an unknown scenario or a broken replay is shown, not raised
        return DbDiff(pd.DataFrame(columns=columns), {}, recorded, note=f"{type(exc).__name__}: {exc}")
    rows = []
    for side in ("agent", "user"):
        g, a = gold[side], getattr(live, side)
        if g is None or a is None:
            continue
        for field, gv, av in diff_values(g, a.dump()):
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


def _is_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def recorded_hashes(conversation: dict[str, Any]) -> dict[str, str | None]:
    return {"agent": conversation.get("agent_db_hash"), "user": conversation.get("user_db_hash")}


def gold_hashes(conversation: dict[str, Any]) -> dict[str, str | None]:
    return {"agent": conversation.get("gold_agent_db_hash"), "user": conversation.get("gold_user_db_hash")}


def transcript(path: Path | str, conversation_id: str, run_id: str | None = None) -> Transcript:
    """One conversation (its newest attempt) of a run or sweep folder, by id (and run id
    when ids repeat across runs)."""
    conv = readers.conversations_df(path, run=run_id, conversation_id=conversation_id)
    if conv.empty:
        raise KeyError(f"no conversation {conversation_id!r} in {path}")
    if len(conv) > 1:
        raise KeyError(f"conversation {conversation_id!r} is in several runs "
                       f"({', '.join(map(str, conv['run_id']))}); pass run_id")
    row = {k: None if _is_missing(v) else v for k, v in conv.iloc[0].to_dict().items()}
    key = {"run": row["run_id"], "unit_id": row["unit_id"]}

    def detail(fn: Any, order: str | None) -> pd.DataFrame:
        df = fn(path, **key)
        return df.sort_values(order).reset_index(drop=True) if order else df

    actions = detail(readers.actions_df, "seq")
    return Transcript(
        conversation=row, messages=detail(readers.messages_df, "seq"), actions=actions,
        predicates=detail(readers.predicates_df, "index"), judge_verdicts=detail(readers.judge_verdicts_df, None),
        nl_assertions=detail(readers.nl_verdicts_df, None),
        db_diff=db_diff(row["scenario"], actions, recorded_hashes(row), gold_hashes(row)),
    )
