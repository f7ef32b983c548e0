"""The one reader API over a run or sweep folder (filters, dtypes), arms, and the DB difference from gold."""

from __future__ import annotations

import pandas as pd
import pytest

from tauray.results import actions_df, conversations_df, judge_verdicts_df, messages_df, run_dirs
from tauray.results.stats import analysis
from tauray.results.tables.schemas import schema_for

from .conftest import TRIALS


def test_sweep_dir_reads_every_run_with_declared_dtypes(fixture_sweep, tmp_path):
    dirs = run_dirs(fixture_sweep)
    assert [d.name for d in dirs] == ["oracle", "oracle-llmuser", "quiet", "scripted"]
    conv = conversations_df(fixture_sweep)
    assert len(conv) == sum(len(conversations_df(d)) for d in dirs) == 4 * 8 * TRIALS
    assert list(conv.columns) == [*schema_for("conversations").names, "attribution", "decisive_finding", "decisive_turn"]
    assert str(conv["success"].dtype) == "boolean" and str(conv["started_at"].dtype) == "datetime64[us, UTC]"
    assert conv["trial"].dtype == "int64" and isinstance(conv["gating_signals"].iloc[0], list)
    assert all(isinstance(conv[c].dtype, pd.CategoricalDtype) for c in ("agent_model", "scenario", "error_kind"))
    assert (conv["attempt"] == 0).all() and (conv["unit_id"] == conv["conversation_id"]).all()
    assert run_dirs(fixture_sweep / "quiet") == [fixture_sweep / "quiet"]
    empty = conversations_df(fixture_sweep, sweep="no-such-sweep")
    assert empty.empty and str(empty["success"].dtype) == "boolean"
    with pytest.raises(FileNotFoundError, match="neither a run directory"):
        run_dirs(tmp_path)


def test_filters_on_sweep_cell_model_and_scenario_glob(fixture_sweep):
    conv = conversations_df(fixture_sweep)
    quiet = conversations_df(fixture_sweep, sweep="quiet")  # each run is a sweep of its own name
    assert len(quiet) == (conv["run_id"] == "quiet").sum() > 0 and set(quiet["sweep_id"]) == {"quiet"}
    oracle = conversations_df(fixture_sweep, model="oracle")
    assert len(oracle) == 32 and set(oracle["user_model"]) == {"scripted", "openai/scripted-user"}
    quiet_cell = conv.loc[conv["run_id"] == "quiet", "cell_id"].iloc[0]
    assert set(conversations_df(fixture_sweep, cell=quiet_cell)["run_id"]) == {"quiet"}
    wf = conversations_df(fixture_sweep, scenario="tau2_telecom_workflow__*")
    assert len(wf) == 32 and set(wf["policy_variant"]) == {"workflow"}
    two = conversations_df(fixture_sweep, model=["oracle", "openai/scripted-agent"], scenario="*mms*")
    assert len(two) == 3 * 2 * TRIALS
    # detail tables filter through their conversations
    acts = actions_df(fixture_sweep, model="openai/scripted-agent-quiet")
    assert len(acts) and set(acts["run_id"]) == {"quiet"}
    assert str(acts["error"].dtype) == "bool"
    msgs = messages_df(fixture_sweep, cell=quiet_cell, scenario="*mms*")
    assert set(msgs["conversation_id"]) <= set(conv.loc[conv["run_id"] == "quiet", "conversation_id"])
    jv = judge_verdicts_df(fixture_sweep, model="oracle")
    assert set(jv["run_id"]) == {"oracle", "oracle-llmuser"} and jv["judge_config_id"].nunique() == 2
    decoded = actions_df(fixture_sweep, model="oracle", decode_json=True, kind="tool_call")
    assert all(isinstance(a, dict) for a in decoded["arguments"])


def test_arms_label_agent_and_user_model(fixture_sweep):
    arms = analysis.with_arms(conversations_df(fixture_sweep))["arm"]
    assert set(arms) == {"oracle | scripted", "oracle | openai/scripted-user",
                         "openai/scripted-agent | openai/scripted-user",
                         "openai/scripted-agent-quiet | openai/scripted-user"}


def test_voice_arms_say_profile_and_engines_before_any_cell_id():
    # one agent | user pair over a text cell, two profiles, and one profile under two
    # synthesisers: words tell every arm apart, and no cell id is shown (until 2026-12 two such
    # arms read "oracle | scripted [0ad56e47]" and "[928a4e35]")
    rows = [("t", None, None), ("c1", "control", "local/neural + local/whisper-tiny.en"),
            ("r1", "regular", "local/neural + local/whisper-tiny.en"),
            ("c2", "control", "local/espeak-ng + local/whisper-tiny.en")]
    conv = pd.DataFrame({"agent_model": "oracle", "user_model": "scripted", "run_id": "v",
                         "cell_id": [r[0] for r in rows], "speech_profile": [r[1] for r in rows],
                         "speech_engines": [r[2] for r in rows]})
    assert list(analysis.with_arms(conv)["arm"]) == [
        "oracle | scripted · text",
        "oracle | scripted · control · local/neural + local/whisper-tiny.en",
        "oracle | scripted · regular",
        "oracle | scripted · control · local/espeak-ng + local/whisper-tiny.en"]
    # two cells the words cannot separate (a judge, an option) keep the cell id
    same = conv.iloc[[1, 1]].assign(cell_id=["c1", "c9"])
    assert list(analysis.with_arms(same)["arm"]) == ["oracle | scripted [c1]", "oracle | scripted [c9]"]


def test_replayed_actions_rebuild_the_recorded_final_dbs(fixture_sweep):
    conv = conversations_df(fixture_sweep)
    actions = actions_df(fixture_sweep)
    for row in conv.to_dict("records"):
        acts = actions[(actions["run_id"] == row["run_id"]) & (actions["conversation_id"] == row["conversation_id"])]
        diff = analysis.db_diff(row["scenario"], acts, analysis.recorded_hashes(row))
        assert diff.note is None and diff.reproduced, row["conversation_id"]
        # no difference from gold exactly when the recorded hashes equal gold's
        same = row["agent_db_hash"] == row["gold_agent_db_hash"] and row["user_db_hash"] == row["gold_user_db_hash"]
        assert diff.rows.empty == same


def test_transcript_of_a_failed_conversation(fixture_sweep):
    from .figures import failed_telecom_conversation

    row = failed_telecom_conversation(fixture_sweep)
    t = analysis.transcript(fixture_sweep, row["conversation_id"])
    assert t.conversation["run_id"] == "oracle-llmuser" and t.messages["seq"].is_monotonic_increasing
    failed = t.predicates[~t.predicates["met"]]
    assert failed[["side", "function"]].values.tolist() == [["user", "assert_service_status"]]
    user = t.db_diff.rows[t.db_diff.rows["side"] == "user"].set_index("field")
    assert user.loc["device.airplane_mode", ["gold", "actual"]].tolist() == ["false", "true"]
    assert t.db_diff.rows[t.db_diff.rows["side"] == "agent"].empty
    assert len(t.judge_verdicts) == 4  # fixture data: 1 strict sample + 3 lenient samples
    with pytest.raises(KeyError, match="no conversation"):
        analysis.transcript(fixture_sweep, "nope")


def test_diff_values_paths():
    gold = {"a": {"b": 1, "c": [1, 2]}, "d": None}
    actual = {"a": {"b": 2, "c": [1]}, "e": 3, "d": None}
    assert analysis.diff_values(gold, actual) == [("a.b", 1, 2), ("a.c[1]", 2, "(absent)"), ("e", "(absent)", 3)]
    assert pd.DataFrame(analysis.diff_values(gold, gold)).empty


def test_duplex_arms_say_turn_taking_and_pipeline():
    # a text twin, a half-duplex cell and two duplex pipelines of one profile: words tell them
    # apart (helper-reported: half and duplex arms both read "oracle | scripted [cell]")
    rows = [("t", None, "half", None), ("h", "control", "half", None),
            ("d3", "control", "duplex", "end_of_turn_ms=300"), ("d9", "control", "duplex", "end_of_turn_ms=900")]
    conv = pd.DataFrame({"agent_model": "oracle", "user_model": "scripted", "run_id": "v",
                         "cell_id": [r[0] for r in rows], "speech_profile": [r[1] for r in rows],
                         "speech_engines": "local/neural + local/whisper-tiny.en",
                         "turn_taking": [r[2] for r in rows], "duplex_pipeline": [r[3] for r in rows]})
    assert list(analysis.with_arms(conv)["arm"]) == [
        "oracle | scripted · text",
        "oracle | scripted · control · half",
        "oracle | scripted · control · duplex · end_of_turn_ms=300",
        "oracle | scripted · control · duplex · end_of_turn_ms=900"]
