"""Exactly once on disk, without Ray: what resume skips and reruns, attempts, cells totals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from tauray.pipeline.resume import resume_state
from tauray.results import CellRecord, TableWriter, cells_df, conversations_df, messages_df
from tests.results.test_tables import RUN, result


def test_resume_skips_done_units_and_retry_errors_reruns_infra_once(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
        w.add(result("c1", success=None, error_kind="infra", error_message="provider down"))
    assert resume_state(tmp_path, RUN).done == {"c0", "c1"}  # without --retry-errors both count as done
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert (st.done, st.to_retry, st.infra_rows, st.rows) == ({"c0"}, {"c1"}, 1, 2)
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c1", n_messages=1))
    conv = conversations_df(tmp_path)
    assert sorted(conv["unit_id"]) == ["c0", "c1"] and conv["error_kind"].isna().all()
    assert messages_df(tmp_path).groupby("unit_id", observed=True).size().to_dict() == {"c0": 3, "c1": 1}
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert st.to_retry == set() and st.attempts == 3 and st.rows == 2
    # plain pandas, filtered on the documented columns, agrees
    raw = pd.read_parquet(tmp_path / "conversations")
    newest = raw[raw["attempt"] == raw.groupby(["run_id", "unit_id"])["attempt"].transform("max")]
    assert len(raw) == 3 and sorted(newest["unit_id"]) == ["c0", "c1"]


def test_cells_keep_latest_totals(tmp_path):
    from tauray.pipeline.accounting import write_cells

    now = datetime.now(timezone.utc)

    def cell(done, at):
        return CellRecord(sweep_id="s", cell_id="c", agent_model="a", user_model="u", judge_configs=[], units=4,
                          done=done, success=0, failed=done, unscored=0, infra_errors=0, model_errors=0,
                          agent_prompt_tokens=0, agent_completion_tokens=0, user_prompt_tokens=0,
                          user_completion_tokens=0, judge_prompt_tokens=0, judge_completion_tokens=0, cost_usd=None,
                          updated_at=at)

    write_cells(tmp_path, "s", [cell(4, now)])
    write_cells(tmp_path, "s", [cell(2, now - timedelta(seconds=5))])  # an older total written later
    assert cells_df(tmp_path)["done"].tolist() == [4]
    assert len(cells_df(tmp_path, all_attempts=True)) == 2
