"""Exactly once on disk, without Ray: orphan files of a killed flush, superseded attempts."""

from __future__ import annotations

import pandas as pd

from tauray.pipeline.resume import ORPHAN_PREFIX, cleanup_orphans, resume_state
from tauray.results import TableWriter, read_actions, read_conversations, read_messages, read_table
from tauray.results.records import CellRecord
from tests.results.test_tables import RUN, result


def _kill_mid_flush(out):
    """What SIGKILL between the detail files and the conversations file of a flush leaves."""
    with TableWriter(out, RUN) as w:
        w.add(result("c0"))
    with TableWriter(out, RUN) as w:
        w.add(result("c1", n_messages=4))
    last = max((out / "conversations").glob("part-*.parquet"))
    last.unlink()


def test_orphans_of_a_killed_flush_are_moved_aside_and_rerun_once(tmp_path):
    _kill_mid_flush(tmp_path)
    assert resume_state(tmp_path, RUN).done == {"c0"}
    moved = cleanup_orphans(tmp_path)
    assert len(moved) == 3 and all(p.name.startswith(ORPHAN_PREFIX) for p in moved)
    assert cleanup_orphans(tmp_path) == []  # idempotent
    with TableWriter(tmp_path, RUN) as w:  # the rerun of c1
        w.add(result("c1", n_messages=4))
    assert sorted(read_conversations(tmp_path)["conversation_id"]) == ["c0", "c1"]
    msgs = read_messages(tmp_path)
    assert msgs.groupby("conversation_id").size().to_dict() == {"c0": 3, "c1": 4}
    # plain pandas agrees: orphans are skipped by name
    assert len(pd.read_parquet(tmp_path / "messages")) == 7
    assert len(pd.read_parquet(tmp_path / "actions")) == 4


def test_retry_supersedes_infra_row_and_its_details(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
        w.add(result("c1", error_kind="infra", error_message="429", success=None, termination_reason="infra_error"))
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert st.done == {"c0"} and st.to_retry == {"c1"} and st.infra_rows == 1
    assert resume_state(tmp_path, RUN).done == {"c0", "c1"}  # without --retry-errors both count as done
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c1", n_messages=5).model_copy(update={"actions": []}))
    conv = read_conversations(tmp_path)
    assert conv["conversation_id"].is_unique and len(conv) == 2
    assert pd.isna(conv.set_index("conversation_id").loc["c1", "error_kind"])
    msgs = read_messages(tmp_path)
    assert msgs.groupby("conversation_id").size().to_dict() == {"c0": 3, "c1": 5}
    acts = read_actions(tmp_path)  # the new attempt had none: the old attempt's must not show
    assert acts.groupby("conversation_id").size().to_dict() == {"c0": 2}
    assert len(read_conversations(tmp_path, conversation_id="c1")) == 1
    assert resume_state(tmp_path, RUN, retry_errors=True).to_retry == set()


def test_cells_keep_latest_totals(tmp_path):
    from datetime import datetime, timezone

    from tauray.pipeline.accounting import write_cells

    def cell(done):
        return CellRecord(sweep_id="s", cell_id="c", agent_model="a", user_model="u", judge_configs=[], units=4,
                          done=done, success=0, failed=done, unscored=0, infra_errors=0, model_errors=0,
                          agent_prompt_tokens=0, agent_completion_tokens=0, user_prompt_tokens=0,
                          user_completion_tokens=0, judge_prompt_tokens=0, judge_completion_tokens=0, cost_usd=None,
                          updated_at=datetime.now(timezone.utc))

    write_cells(tmp_path, "s", [cell(2)])
    write_cells(tmp_path, "s", [cell(4)])
    assert read_table(tmp_path, "cells")["done"].tolist() == [4]
