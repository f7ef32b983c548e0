"""Each conversation's newest stored audit gives its attribution columns (issue 27, second
mutation run: the join was reached only by the end-to-end audit tests, which start the
local endpoint and are outside the mutation pool, so every change to it survived). Here
the audit tables are written directly, as ``tauray audit`` stores them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from tauray.actors.audit.store import write_audit
from tauray.results import TableWriter, conversations_df
from tauray.results.tables.records import SimAttributionRecord
from tests.results.test_tables import RUN, result

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def _attribution(cid: str, attribution: str, at: datetime, attempt: int = 0, turn: int | None = 2,
                 finding: str | None = "loop@1") -> SimAttributionRecord:
    return SimAttributionRecord(run_id=RUN, conversation_id=cid, attempt=attempt, scenario=f"scn_{cid}",
                                audit_id=f"audit-{at:%H%M}", attribution=attribution, decisive_finding=finding,
                                decisive_class=None, decisive_turn=turn, reason="r", findings=1, user_findings=1,
                                success=True, detectors=["loop@1"], audited_at=at)


def _run(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
        w.add(result("c1"))
        w.add(result("c1", success=False))  # a retry: attempt 1 counts
    return tmp_path


def test_without_a_stored_audit_the_rows_keep_their_own_attribution(tmp_path):
    conv = conversations_df(_run(tmp_path)).set_index("unit_id")
    assert conv["attribution"].isna().all() and conv["decisive_turn"].isna().all()


def test_the_newest_audit_overlays_the_conversations_it_covers(tmp_path):
    run = _run(tmp_path)
    write_audit(run, RUN, [], [_attribution("c0", "simulator", T0),
                                                 _attribution("c1", "agent", T0, attempt=1)])
    write_audit(run, RUN, [], [_attribution("c0", "agent", T0 + timedelta(hours=1), turn=4,
                                                             finding="drift@2")])
    conv = conversations_df(run).set_index("unit_id")
    c0 = conv.loc["c0"]
    assert (c0["attribution"], c0["decisive_finding"], c0["decisive_turn"]) == ("agent", "drift@2", 4)
    # the newest audit did not cover c1: its own newest audit (the older one) still speaks for it
    assert conv.loc["c1", "attempt"] == 1 and conv.loc["c1", "attribution"] == "agent"
    assert list(conversations_df(run)["unit_id"]) == ["c0", "c1"]


def test_an_audit_applies_to_the_attempt_it_read(tmp_path):
    run = _run(tmp_path)
    write_audit(run, RUN, [], [_attribution("c0", "harness", T0, turn=None, finding=None),
                                                 _attribution("c1", "agent", T0, attempt=0)])
    conv = conversations_df(run).set_index("unit_id")
    assert conv.loc["c0", "attribution"] == "harness" and pd.isna(conv.loc["c0", "decisive_turn"])
    assert pd.isna(conv.loc["c1", "attribution"])  # the audit read attempt 0; attempt 1 counts
    every = conversations_df(run, all_attempts=True).set_index(["unit_id", "attempt"])
    assert every.loc[("c1", 0), "attribution"] == "agent" and pd.isna(every.loc[("c1", 1), "attribution"])


def test_an_audit_of_an_empty_run_changes_nothing(tmp_path):
    run = _run(tmp_path)
    write_audit(run, RUN, [], [])
    conv = conversations_df(run)
    assert conv["attribution"].isna().all() and len(conv) == 2


def test_a_run_of_one_conversation_is_overlaid_too(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    write_audit(tmp_path, RUN, [], [_attribution("c0", "simulator", T0)])
    assert conversations_df(tmp_path)["attribution"].tolist() == ["simulator"]


def test_two_rows_for_one_conversation_in_one_audit_the_last_written_counts(tmp_path):
    run = _run(tmp_path)
    write_audit(run, RUN, [], [_attribution("c0", "simulator", T0),
                                                 _attribution("c0", "agent", T0, turn=5)])
    conv = conversations_df(run)
    assert len(conv) == 2
    c0 = conv.set_index("unit_id").loc["c0"]
    assert (c0["attribution"], c0["decisive_turn"]) == ("agent", 5)
