"""Voice against text: paired, task-clustered retention and the failure causes, on tables
built by hand (outcomes written apart from the code)."""

from __future__ import annotations

import math

import pandas as pd

from tauray.actors.voice.analysis import paired_retention, profile_table


def _conv(profile: str, oks: list[bool], ids_lost: list[int]) -> list[dict]:
    return [{"run_id": "r", "unit_id": f"{profile}-{i}", "attempt": 0, "speech_profile": profile,
             "scenario": f"s{i}", "trial": 0, "success": ok, "mean_wer": 0.0 if profile == "text" else 0.2,
             "identifiers_lost": lost, "identifiers_spoken": 1} for i, (ok, lost) in enumerate(zip(oks, ids_lost))]


def test_retention_is_paired_and_its_interval_brackets_it() -> None:
    r, lo, hi = paired_retention([1, 0, 1, 0], [1, 1, 1, 1])
    assert r == 0.5 and lo <= r <= hi
    assert math.isnan(paired_retention([1], [0])[0])


def test_profile_table_counts_failures_that_lost_an_identifier() -> None:
    conv = pd.DataFrame(_conv("text", [True] * 4, [0] * 4) + _conv("control", [True, False, False, True], [0, 1, 0, 0]))
    utt = pd.DataFrame([{"run_id": "r", "unit_id": "control-1", "attempt": 0, "side": "user", "wer": 0.3,
                         "identifiers_lost": 1, "spoken_text": "C, 1, 0, 0, 1"},
                        {"run_id": "r", "unit_id": "control-2", "attempt": 0, "side": "agent", "wer": 0.4,
                         "identifiers_lost": 0, "spoken_text": "Could you please toggle data on your phone"}])
    table = profile_table(conv, utt).set_index("profile")
    assert table.loc["text", "success"] == 1.0 and table.loc["text", "retention"] == 1.0
    c = table.loc["control"]
    assert c["success"] == 0.5 and c["retention"] == 0.5 and c["paired_tasks"] == 4
    assert c["failures"] == 2 and c["failures_with_lost_ids"] == 1 and c["failures_with_misheard_request"] == 1


def _cell(agent: str, twin: str, profile: str, oks: list[bool]) -> list[dict]:
    """One cell's rows: voice rows name their text twin (text_cell_id), text rows are the twin."""
    return [{"run_id": "r", "unit_id": f"{twin}-{profile}-{i}", "attempt": 0, "speech_profile": profile,
             "cell_id": twin if profile == "text" else f"{twin}-{profile}",
             "text_cell_id": None if profile == "text" else twin, "agent_model": agent, "user_model": "scripted",
             "judge_model": None, "scenario": f"s{i}", "trial": 0, "success": ok, "mean_wer": 0.1,
             "identifiers_lost": 0, "identifiers_spoken": 1} for i, ok in enumerate(oks)]


def test_cells_are_compared_with_their_own_text_twin() -> None:
    # agent a solves every task in text and half in voice; agent b solves none in text and
    # half in voice. Pooled by profile, both mix: success 0.5 and retention against the
    # first text row per task; per cell, a retains 0.5 and b has no text success to retain.
    rows = (_cell("a", "ca", "text", [True] * 4) + _cell("b", "cb", "text", [False] * 4)
            + _cell("a", "ca", "control", [True, True, False, False]) + _cell("b", "cb", "control", [True, True, False, False]))
    table = profile_table(pd.DataFrame(rows), pd.DataFrame())
    assert len(table) == 4  # (agent a, agent b) x (text, control)
    a = table[(table["agent_model"] == "a")].set_index("profile")
    b = table[(table["agent_model"] == "b")].set_index("profile")
    assert a.loc["text", "success"] == 1.0 and b.loc["text", "success"] == 0.0
    assert a.loc["control", "conversations"] == 4 and a.loc["control", "paired_tasks"] == 4
    assert a.loc["control", "retention"] == 0.5 and math.isnan(b.loc["control", "retention"])
    assert (table["user_model"] == "scripted").all()


def test_a_failure_where_the_agent_acted_on_a_misheard_identifier_counts_as_lost() -> None:
    conv = pd.DataFrame(_conv("text", [True, True], [0, 0]) + _conv("control", [False, True], [0, 0]))
    call = '[{"id": "oracle-end", "name": "end_conversation", "arguments": "{\\"reason\\": \\"acted on a misheard ' \
           'identifier: user_id heard as \'usr_1\'\\"}"}]'
    messages = pd.DataFrame([{"conversation_id": "control-0", "side": "agent", "role": "assistant", "content": None,
                              "tool_calls": call}])
    row = profile_table(conv, pd.DataFrame(), messages).set_index("profile").loc["control"]
    assert row["failures"] == 1 and row["failures_with_lost_ids"] == 1  # no utterance counted it: the mark does


def test_an_infra_row_with_no_verdict_does_not_break_the_table() -> None:
    # a voice sweep's infra row has success null (a nullable boolean column): `tauray report`
    # stopped on it with "cannot convert NA to integer" (2026-12-07)
    conv = pd.DataFrame(_conv("text", [True] * 3, [0] * 3) + _conv("control", [True, False, None], [0, 0, 0]))
    conv["success"] = conv["success"].astype("boolean")
    c = profile_table(conv, pd.DataFrame()).set_index("profile").loc["control"]
    assert c["conversations"] == 3 and round(c["success"], 3) == round(1 / 3, 3)
