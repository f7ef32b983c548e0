"""Result tables: records, declared schemas, the atomic writer and the readers."""

from __future__ import annotations

import json
import types
import typing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from pydantic import ValidationError

from tauray.results import (
    SCHEMAS,
    TABLES,
    ActionRecord,
    ConversationRecord,
    ConversationResult,
    MessageRecord,
    NLAssertionRecord,
    PredicateRecord,
    TableWriter,
    UnknownTableError,
    actions_df,
    conversations_df,
    list_tables,
    messages_df,
    nl_verdicts_df,
    predicates_df,
    records_by_table,
    schema_for,
    table_df,
    write_records,
)
from tauray.results.tables import writer as writer_mod

RUN = "run-test"
T0 = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


# ---------------------------------------------------------------- builders


def conversation(cid: str, **over) -> ConversationRecord:
    base = dict(
        run_id=RUN, sweep_id="sw1", cell_id=None, conversation_id=cid, scenario=f"scn_{cid}",
        domain="telecom", upstream_id="u1", policy_variant="default", issue_type="mobile_data",
        persona=None, agent_model="agent-m", agent_kind="llm", user_model="user-m", user_kind="llm",
        judge_model=None, trial=0, seed=7, termination_reason="user_stop", success=True,
        success_reason="all gating signals passed", gating_signals=["db_state_assertion", "action_match"],
        excluded_signals=[], signal_db_state_assertion=True, signal_nl_assertion=None,
        signal_db_state_match=False, signal_action_match=True, signal_communicate=None,
        signal_judge_passed=None, db_state_match=False, action_match=True, predicates_total=2,
        predicates_met=2, turns=5, agent_tool_calls=2, user_tool_calls=1, tool_errors=0,
        malformed_tool_calls=0, sync_events=1, agent_llm_calls=4, user_llm_calls=3,
        agent_prompt_tokens=1000, agent_completion_tokens=100, agent_cost_usd=0.01,
        user_prompt_tokens=800, user_completion_tokens=80, user_cost_usd=None,
        judge_prompt_tokens=0, judge_completion_tokens=0, judge_cost_usd=None,
        started_at=T0, duration_s=1.5, error_kind=None, error_message=None,
        agent_db_hash="a1", user_db_hash="u1", gold_agent_db_hash="a1", gold_user_db_hash=None,
        tauray_version="0.1.0", upstream_version="26.3",
    )
    base.update(over)
    return ConversationRecord(**base)


def result(cid: str, n_messages: int = 3, **over) -> ConversationResult:
    conv = conversation(cid, **over)
    key = dict(run_id=conv.run_id, conversation_id=cid, scenario=conv.scenario)
    predicates = [
        PredicateRecord(**key, index=i, side="user", function="assert_data_on",
                        arguments={"on": True, "i": i}, expected=True,
                        actual=None if i else "True", met=i == 0, error="boom" if i else None)
        for i in range(2)
    ]
    actions = [
        ActionRecord(**key, seq=0, turn=1, side="agent", kind="tool_call", tool="get_line",
                     arguments={"line": "555"}, result="ok", error=False, is_write=False,
                     matched_action_id=None, sync_agent=None, sync_user=None),
        ActionRecord(**key, seq=1, turn=2, side="user", kind="sync", tool=None, arguments=None,
                     result=None, error=False, is_write=True, matched_action_id="ref-1",
                     sync_agent='{"roaming": true}', sync_user={"sim": "active"}),
    ]
    messages = [
        MessageRecord(**key, seq=i, turn=i // 2, side="agent" if i % 2 else "user",
                      role="assistant" if i % 2 else "user", content=f"m{i}",
                      tool_calls=[{"id": "c1", "name": "get_line", "arguments": {"line": "555"}}] if i == 1 else None,
                      tool_call_id=None, created_at=T0 + timedelta(seconds=i))
        for i in range(n_messages)
    ]
    return ConversationResult(conversation=conv, predicates=predicates, actions=actions, messages=messages)


# Provenance columns of judge rows (what shaped the judge request), fixed for these fixtures.
JUDGE_PROVENANCE = dict(
    judge_api_base=None, judge_temperature=None, judge_seed=None, judge_max_tokens=None, judge_extra_params="{}",
    structured="auto", response_format_sent=False, nl_pack=None, nl_pack_hash=None, context_hash="ctx",
    scored_samples=1, item_samples=1, unscored_share=0.0,
)


def nl_row(cid: str, i: int, met: bool | None) -> dict:
    row = dict(
        run_id=RUN, conversation_id=cid, scenario=f"scn_{cid}", judge_model="judge-m", prompt_id="nl",
        prompt_version="1", prompt_hash="h", judge_config_id="j", transcript_hash="t", sample_index=0,
        assertion_index=i, assertion=f"said {i}", met=met, majority=met, agreement=1.0 if met is not None else None,
        unscored_reason=None if met is not None else "unparseable", reasoning="r",
        raw_output="{}", prompt_tokens=10, completion_tokens=2, cost_usd=None, latency_s=0.2,
        created_at=T0,
    )
    return {**row, **{k: v for k, v in JUDGE_PROVENANCE.items() if k in NLAssertionRecord.model_fields}}


def visible_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


# ---------------------------------------------------------------- schemas


_ARROW_OF = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: pa.timestamp("us", tz="UTC"),
}


def _expected_field(name: str, annotation) -> pa.Field:
    nullable = False
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args:
        nullable = True
        (annotation,) = [a for a in args if a is not type(None)]
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        annotation = type(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return pa.field(name, pa.list_(_ARROW_OF[item]), nullable=nullable)
    return pa.field(name, _ARROW_OF[annotation], nullable=nullable)


@pytest.mark.parametrize("table", list(TABLES))
def test_declared_schema_matches_record_fields(table):
    record = TABLES[table]
    hints = typing.get_type_hints(record, include_extras=True)
    expected = pa.schema([_expected_field(n, hints[n]) for n in record.model_fields])
    declared = schema_for(table)
    assert declared.names == list(record.model_fields)
    for want, got in zip(expected, declared):
        assert (got.name, got.type, got.nullable) == (want.name, want.type, want.nullable)


def test_tables_and_schemas_cover_the_same_names():
    assert list(TABLES) == list(SCHEMAS) == [
        "conversations", "predicate_verdicts", "actions", "messages", "nl_assertion_verdicts", "judge_verdicts",
        "sim_findings", "sim_attributions", "cells", "utterances", "segments",
    ]
    assert set(records_by_table(result("c0"))) == set(TABLES) - {"cells"}  # cells: per-sweep totals


def test_unknown_table_error_lists_known_tables(tmp_path):
    for call in (lambda: schema_for("convos"), lambda: table_df(tmp_path, "convos")):
        with pytest.raises(UnknownTableError) as info:
            call()
        message = str(info.value)
        assert "convos" in message
        assert all(name in message for name in SCHEMAS)


# ---------------------------------------------------------------- records


def test_records_are_frozen_strict_and_normalise_values():
    conv = conversation("c0")
    with pytest.raises(ValidationError):
        conv.turns = 3
    with pytest.raises(ValidationError):
        conversation("c0", surprise=1)
    with pytest.raises(ValidationError):
        conversation("c0", started_at=datetime(2025, 1, 1))  # naive
    with pytest.raises(ValidationError):
        conversation("c0", agent_kind="human")
    local = datetime(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    assert conversation("c0", started_at=local).started_at == datetime(2025, 1, 1, 10, tzinfo=UTC)
    assert conversation("c0", started_at=local).started_at.utcoffset() == timedelta(0)

    res = result("c0")
    assert json.loads(res.predicates[0].arguments) == {"on": True, "i": 0}
    assert json.loads(res.actions[1].sync_user) == {"sim": "active"}
    key = dict(run_id=RUN, conversation_id="c0", scenario="s")
    with pytest.raises(ValidationError, match="JSON"):
        PredicateRecord(**key, index=0, side="user", function="f", arguments="{not json",
                        expected=True, actual=None, met=False, error=None)
    with pytest.raises(ValidationError, match="id, name and arguments"):
        MessageRecord(**key, seq=0, turn=0, side="agent", role="assistant", content=None,
                      tool_calls=[{"name": "x"}], tool_call_id=None, created_at=T0)


def test_result_rejects_rows_of_another_conversation():
    good = result("c0")
    with pytest.raises(ValidationError, match="does not belong"):
        ConversationResult(conversation=good.conversation, predicates=[],
                           actions=list(result("c1").actions), messages=[])


# ---------------------------------------------------------------- round trip


def test_round_trip_through_writer_and_both_readers(tmp_path):
    results = [result(f"c{i}", n_messages=3 + i) for i in range(5)]
    results[2] = result("c2", success=None, signal_action_match=None, agent_cost_usd=None,
                        gating_signals=[], error_kind="model", error_message="bad reply")
    with TableWriter(tmp_path, RUN, flush_rows=4, flush_seconds=3600) as writer:
        for r in results:
            writer.add(r)
    stats = writer.stats
    assert stats.rows["conversations"] == 5
    assert stats.rows["messages"] == sum(len(r.messages) for r in results)
    assert stats.files["messages"] >= 3 and stats.files["conversations"] >= 2
    assert len(visible_files(tmp_path / "messages")) == stats.files["messages"]
    assert all(p.name.startswith(f"part-{RUN}-") and p.suffix == ".parquet"
               for p in visible_files(tmp_path / "messages"))
    assert stats.files["nl_assertion_verdicts"] == 0
    assert list_tables(tmp_path) == ["conversations", "predicate_verdicts", "actions", "messages"]

    conv = conversations_df(tmp_path).sort_values("conversation_id").reset_index(drop=True)
    # the conversations, then their newest audit's columns (none here: not audited)
    assert list(conv.columns) == [*ConversationRecord.model_fields, "attribution", "decisive_finding", "decisive_turn"]
    assert conv["attribution"].isna().all()
    assert conv["conversation_id"].tolist() == [f"c{i}" for i in range(5)]
    assert str(conv["turns"].dtype) == "int64"
    assert str(conv["duration_s"].dtype) == "float64"
    assert str(conv["success"].dtype) == "boolean"
    assert conv["success"].isna().tolist() == [False, False, True, False, False]
    assert conv.loc[0, "success"] == True
    assert pd.isna(conv.loc[2, "agent_cost_usd"]) and conv.loc[0, "agent_cost_usd"] == 0.01
    assert isinstance(conv["started_at"].dtype, pd.DatetimeTZDtype)
    assert str(conv["started_at"].dt.tz) == "UTC"
    assert conv.loc[0, "started_at"] == pd.Timestamp(T0)
    assert conv.loc[0, "gating_signals"] == ["db_state_assertion", "action_match"]
    assert conv.loc[2, "gating_signals"] == [] and conv.loc[2, "excluded_signals"] == []
    assert conv.loc[2, "error_kind"] == "model"
    assert pd.isna(conv.loc[0, "cell_id"])

    # Plain pandas on the table folder sees exactly the same rows.
    plain = pd.read_parquet(tmp_path / "conversations").sort_values("conversation_id").reset_index(drop=True)
    assert list(plain.columns) == list(conv.columns)[:-3]  # the reader adds the audit's three
    assert plain["conversation_id"].tolist() == conv["conversation_id"].tolist()
    assert plain["success"].tolist()[:3] == [True, True, None]
    assert str(plain["started_at"].dt.tz) == "UTC"
    assert list(plain.loc[0, "gating_signals"]) == ["db_state_assertion", "action_match"]

    msgs = messages_df(tmp_path)
    assert len(msgs) == sum(len(r.messages) for r in results)
    assert set(msgs["role"]) == {"assistant", "user"}
    with_calls = msgs[msgs["tool_calls"].notna()]
    assert len(with_calls) == 5
    assert json.loads(with_calls.iloc[0]["tool_calls"])[0]["name"] == "get_line"
    assert str(msgs["created_at"].dt.tz) == "UTC"

    preds = predicates_df(tmp_path, conversation_id="c3")
    assert preds["index"].tolist() == [0, 1] and preds["met"].tolist() == [True, False]
    assert str(preds["met"].dtype) == "bool" and str(preds["index"].dtype) == "int64"
    assert json.loads(preds.loc[0, "arguments"]) == {"on": True, "i": 0}

    acts = actions_df(tmp_path, kind="sync")
    assert len(acts) == 5 and acts["tool"].isna().all()
    assert json.loads(acts.iloc[0]["sync_agent"]) == {"roaming": True}


def test_filters_and_columns(tmp_path):
    with TableWriter(tmp_path, RUN) as writer:
        for i in range(4):
            writer.add(result(f"c{i}", success=None if i == 3 else i % 2 == 0))
    assert conversations_df(tmp_path, success=True)["conversation_id"].tolist() == ["c0", "c2"]
    assert conversations_df(tmp_path, success=None)["conversation_id"].tolist() == ["c3"]
    assert sorted(conversations_df(tmp_path, conversation_id=["c1", "c3"])["conversation_id"]) == ["c1", "c3"]
    assert conversations_df(tmp_path, scenario="scn_c1", success=True).empty
    sub = conversations_df(tmp_path, columns=["scenario", "turns"], agent_kind="llm")
    assert list(sub.columns) == ["scenario", "turns"] and len(sub) == 4
    with pytest.raises(KeyError, match="unknown column 'nope'"):
        conversations_df(tmp_path, nope=1)
    with pytest.raises(KeyError, match="unknown columns"):
        conversations_df(tmp_path, columns=["nope"])


# ---------------------------------------------------------------- crash safety


def test_leftover_temp_file_is_ignored_by_both_readers(tmp_path):
    with TableWriter(tmp_path, RUN) as writer:
        writer.add(result("c0"))
    for table in ("conversations", "messages"):
        (tmp_path / table / f".part-{RUN}-000099-deadbeef.parquet.tmp").write_bytes(b"PAR1 garbage \x00\x01")
    assert len(conversations_df(tmp_path)) == 1
    assert len(messages_df(tmp_path)) == 3
    assert len(pd.read_parquet(tmp_path / "conversations")) == 1
    assert len(pd.read_parquet(tmp_path / "messages")) == 3
    # Unknown-name garbage would not be skipped, which is why the prefix matters.
    assert not any(p.name.endswith(".tmp") for p in visible_files(tmp_path / "conversations"))


def test_conversations_are_written_last_in_each_flush(tmp_path, monkeypatch):
    order: list[str] = []
    real_write = writer_mod.pq.write_table

    def spy(table, where, *args, **kwargs):
        name = Path(getattr(where, "name", where))
        assert name.name.startswith(".") and name.name.endswith(".tmp")  # temp file first
        order.append(name.parent.name)
        return real_write(table, where, *args, **kwargs)

    monkeypatch.setattr(writer_mod.pq, "write_table", spy)
    writer = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    base = result("c0")
    writer.add(base.model_copy(update={"nl_assertions": [NLAssertionRecord(**nl_row("c0", 0, True))]}))
    writer.add(result("c1"))
    assert order == []  # nothing due yet: add only buffers
    writer.flush()
    assert order == ["predicate_verdicts", "actions", "messages", "nl_assertion_verdicts", "conversations"]
    order.clear()
    writer.add(result("c2"))
    writer.close()
    assert order[-1] == "conversations" and len(order) == 4
    # Files of one flush share a sequence number.
    seqs = {p.name.split("-")[-2] for p in (tmp_path).glob("*/part-*.parquet")}
    assert seqs == {"000000", "000001"}


def test_failed_flush_never_writes_conversations_before_details(tmp_path, monkeypatch):
    real_write = writer_mod.pq.write_table

    def failing(table, where, *args, **kwargs):
        if Path(where.name).parent.name == "messages":
            raise OSError("disk full")
        return real_write(table, where, *args, **kwargs)

    writer = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    writer.add(result("c0"))
    monkeypatch.setattr(writer_mod.pq, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    assert conversations_df(tmp_path).empty
    assert actions_df(tmp_path).empty  # no conversation row for the attempt: its details do not count yet
    assert len(actions_df(tmp_path, all_attempts=True)) == 2  # committed before the failure
    assert not list((tmp_path / "messages").glob(".*.tmp"))  # temp file cleaned up
    monkeypatch.setattr(writer_mod.pq, "write_table", real_write)
    writer.close()
    assert len(conversations_df(tmp_path)) == 1
    assert len(messages_df(tmp_path)) == 3
    assert len(actions_df(tmp_path, all_attempts=True)) == 2  # not written twice
    assert len(actions_df(tmp_path)) == 2


def test_time_based_flush_and_writer_guards(tmp_path):
    writer = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=0.0)
    writer.add(result("c0"))
    assert writer.pending_rows == 0 and len(conversations_df(tmp_path)) == 1
    with pytest.raises(ValueError, match="belongs to run"):
        writer.add(result("c1", run_id="other-run"))
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add(result("c2"))
    with pytest.raises(ValueError):
        TableWriter(tmp_path, "a/b")


def test_second_writer_continues_sequence_numbers(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c1"))
    names = sorted(p.name for p in visible_files(tmp_path / "conversations"))
    assert [n.split("-")[-2] for n in names] == ["000000", "000001"]
    assert len(conversations_df(tmp_path)) == 2


# ---------------------------------------------------------------- write_records and empty runs


def test_write_rows_appends_validated_rows(tmp_path):
    with TableWriter(tmp_path, RUN) as w:  # the conversations the verdicts belong to
        w.add(result("c0"))
        w.add(result("c1"))
    path = write_records(tmp_path, "nl_assertion_verdicts", [nl_row("c0", 0, True), nl_row("c0", 1, None)], RUN)
    assert path is not None and path.parent == tmp_path / "nl_assertion_verdicts"
    write_records(tmp_path, "nl_assertion_verdicts", [NLAssertionRecord(**nl_row("c1", 0, False))], RUN)
    assert write_records(tmp_path, "nl_assertion_verdicts", [], RUN) is None
    nl = nl_verdicts_df(tmp_path).sort_values(["conversation_id", "assertion_index"])
    met = nl["met"].tolist()
    assert met[0] is True and pd.isna(met[1]) and met[2] is False
    assert str(nl["met"].dtype) == "boolean"
    assert nl.loc[nl["met"].isna(), "unscored_reason"].tolist() == ["unparseable"]
    with pytest.raises(ValidationError):
        write_records(tmp_path, "nl_assertion_verdicts", [{**nl_row("c0", 0, True), "extra": 1}], RUN)
    with pytest.raises(ValueError, match="expected"):
        write_records(tmp_path, "nl_assertion_verdicts", [nl_row("c0", 0, True)], "other-run")
    with pytest.raises(UnknownTableError):
        write_records(tmp_path, "verdicts", [nl_row("c0", 0, True)], RUN)


def test_empty_run_dir_gives_empty_frames_with_columns(tmp_path):
    assert list_tables(tmp_path) == []
    for table, record in TABLES.items():
        df = table_df(tmp_path, table)
        audit = ["attribution", "decisive_finding", "decisive_turn"] if table == "conversations" else []
        assert df.empty and list(df.columns) == [*record.model_fields, *audit]
    conv = conversations_df(tmp_path, scenario="x")
    assert str(conv["turns"].dtype) == "int64"
    assert str(conv["success"].dtype) == "boolean"
    assert str(conv["started_at"].dt.tz) == "UTC"
    (tmp_path / "messages").mkdir()
    assert messages_df(tmp_path).empty and list_tables(tmp_path) == []
