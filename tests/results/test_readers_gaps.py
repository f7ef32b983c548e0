"""Readers on what the other tests never store (issue 27): a sweep folder of runs,
filters that reach detail rows through their conversations, legacy files without
unit ids, a file present twice, JSON decoding and every dtype rule."""

from __future__ import annotations

import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tauray.results import TableWriter, actions_df, conversations_df, messages_df, predicates_df
from tauray.results.tables.readers import list_tables, table_df
from tests.results.test_tables import RUN, result

OTHER = "run-b"


@pytest.fixture()
def sweep(tmp_path):
    """A sweep folder with two runs; in run-test, c1 has a retry (attempt 1)."""
    with TableWriter(tmp_path / "a", RUN) as w:
        w.add(result("c0"))
        w.add(result("c1", success=None, error_kind="infra", error_message="down"))
        w.add(result("c1", n_messages=5, scenario="scn_other"))
    with TableWriter(tmp_path / "b", OTHER) as w:
        w.add(result("c7", run_id=OTHER, n_messages=2, agent_model="agent-x"))
    (tmp_path / ".hidden").mkdir()
    return tmp_path


def test_a_sweep_folder_reads_every_run_and_filters_by_run_model_and_scenario(sweep):
    conv = conversations_df(sweep)
    assert sorted(conv["unit_id"]) == ["c0", "c1", "c7"]
    assert list_tables(sweep) == ["conversations", "predicate_verdicts", "actions", "messages"]
    assert conversations_df(sweep, run=OTHER)["unit_id"].tolist() == ["c7"]
    assert sorted(conversations_df(sweep, run=[RUN, OTHER])["unit_id"]) == ["c0", "c1", "c7"]
    assert conversations_df(sweep, model="agent-x")["unit_id"].tolist() == ["c7"]
    assert sorted(conversations_df(sweep, model=["agent-m"])["unit_id"]) == ["c0", "c1"]
    assert conversations_df(sweep, scenario="scn_o*")["unit_id"].tolist() == ["c1"]
    assert sorted(conversations_df(sweep, scenario=["scn_c0", "scn_c7"])["unit_id"]) == ["c0", "c7"]
    # a column filter applies after the newest attempt is chosen: c1's superseded infra row stays out
    assert conversations_df(sweep, error_kind="infra").empty
    assert conversations_df(sweep, error_kind="infra", all_attempts=True)["unit_id"].tolist() == ["c1"]
    assert len(conversations_df(sweep, model="agent-m", all_attempts=True)) == 3


def test_detail_rows_are_filtered_through_their_conversations(sweep):
    msgs = messages_df(sweep, model="agent-m")
    assert msgs.groupby("unit_id", observed=True).size().to_dict() == {"c0": 3, "c1": 5}
    assert messages_df(sweep, model="agent-x")["unit_id"].tolist() == ["c7", "c7"]
    assert len(messages_df(sweep, run=RUN)) == 3 + 5
    every = messages_df(sweep, run=RUN, all_attempts=True)
    assert len(every) == 3 + 3 + 5 and sorted(every["attempt"].unique()) == [0, 1]
    assert len(messages_df(sweep, model="agent-m", all_attempts=True)) == 3 + 3 + 5  # c1's every attempt
    assert len(actions_df(sweep, model="nobody")) == 0
    assert table_df(sweep, "messages", run=OTHER).equals(messages_df(sweep, run=OTHER))
    with pytest.raises(KeyError):
        table_df(sweep, "nope")


def test_dtypes_and_json_decoding(sweep):
    conv = conversations_df(sweep)
    assert str(conv["agent_model"].dtype) == "category" and str(conv["success"].dtype) == "boolean"
    assert not isinstance(conv["conversation_id"].dtype, pd.CategoricalDtype)  # many values: plain text
    preds = predicates_df(sweep, run=RUN, decode_json=True)
    assert preds.loc[0, "arguments"] == {"on": True, "i": 0}
    assert predicates_df(sweep, run=RUN).loc[0, "arguments"] == '{"on": true, "i": 0}'
    acts = actions_df(sweep, run=OTHER, decode_json=True, kind="tool_call")
    assert acts.loc[0, "arguments"] == {"line": "555"} and acts.loc[0, "result"] == "ok"


def test_a_file_present_twice_reads_once(sweep):
    """A compaction caught between its rename and its unlink leaves a file twice."""
    folder = sweep / "b" / "messages"
    [part] = [p for p in folder.iterdir() if p.name.startswith("part-")]
    shutil.copy(part, folder / part.name.replace("part-", "part-copy-"))
    assert len(pd.read_parquet(folder)) == 4  # plain pandas sees both
    assert len(messages_df(sweep, run=OTHER)) == 2
    assert len(messages_df(sweep, run=OTHER, all_attempts=True)) == 4  # as stored


def test_files_from_before_unit_ids_read_as_attempt_zero_of_their_conversation(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    for table in ("conversations", "messages"):
        folder = tmp_path / table
        [part] = [p for p in folder.iterdir() if p.name.startswith("part-")]
        old = pq.read_table(part)
        old = old.set_column(old.schema.get_field_index("unit_id"), "unit_id", pa.nulls(len(old), pa.string()))
        old = old.set_column(old.schema.get_field_index("attempt"), "attempt", pa.nulls(len(old), pa.int64()))
        pq.write_table(old, part)
    conv = conversations_df(tmp_path)
    assert conv[["unit_id", "attempt"]].values.tolist() == [["c0", 0]]
    assert len(messages_df(tmp_path)) == 3 and set(messages_df(tmp_path)["attempt"]) == {0}
    assert conversations_df(tmp_path, columns=["unit_id"])["unit_id"].tolist() == ["c0"]


def test_a_folder_with_nothing_yet_reads_as_empty_tables(tmp_path):
    assert conversations_df(tmp_path / "missing").empty and list_tables(tmp_path) == []
    assert list(messages_df(tmp_path).columns) == list(messages_df(tmp_path / "missing").columns)
