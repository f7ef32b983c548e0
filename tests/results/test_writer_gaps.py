"""Writer behaviour the mutation run found unpinned (issue 27).

Each test here failed on the mutant named in its docstring (mutmut or by hand)."""

from __future__ import annotations

import pandas as pd
import pytest

from tauray.results import TableWriter, actions_df, conversations_df, messages_df, predicates_df
from tauray.results.tables import writer as writer_mod
from tests.results.test_tables import RUN, result


def _fail_once_on(monkeypatch, table: str) -> None:
    """The next write into ``table`` raises (a full disk, say); later writes go through."""
    real_write = writer_mod.pq.write_table
    state = {"failed": False}

    def write(arrow, where, *args, **kwargs):
        from pathlib import Path

        if not state["failed"] and Path(where.name).parent.name == table:
            state["failed"] = True
            raise OSError("disk full")
        return real_write(arrow, where, *args, **kwargs)

    monkeypatch.setattr(writer_mod.pq, "write_table", write)


def test_rows_added_after_an_interrupted_flush_join_the_pending_batch_not_replace_it(tmp_path, monkeypatch):
    """Kills: the flush moving the buffers into a new pending batch while an interrupted
    one is still pending (``if self._pending is None and ...`` loses its first half), which
    silently dropped every row of the interrupted batch."""
    w = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    w.add(result("c0"))
    _fail_once_on(monkeypatch, "messages")
    with pytest.raises(OSError, match="disk full"):
        w.flush()
    assert w.pending_rows == 3 + 1  # c0's messages and conversation (predicates, actions went in)
    w.add(result("c1", n_messages=5))
    w.flush()
    # Documented: a flush commits the pending batch *then* the buffers, so nothing waits for close.
    assert w.pending_rows == 0
    assert sorted(conversations_df(tmp_path)["unit_id"]) == ["c0", "c1"]
    w.close()
    assert sorted(conversations_df(tmp_path)["unit_id"]) == ["c0", "c1"]
    assert len(messages_df(tmp_path)) == 3 + 5
    assert len(actions_df(tmp_path)) == 2 + 2
    assert len(predicates_df(tmp_path)) == 2 + 2
    # Nothing twice: the plain files hold exactly those rows.
    assert len(pd.read_parquet(tmp_path / "predicate_verdicts")) == 4
    assert len(pd.read_parquet(tmp_path / "messages")) == 8
    assert w.stats.rows["messages"] == 8 and w.stats.rows["conversations"] == 2


def test_the_same_unit_added_twice_to_one_writer_is_two_attempts(tmp_path):
    """Kills: ``add`` not recording the attempt it stamped (both adds became attempt 0,
    so the retry's rows mixed with the first try's under one key)."""
    with TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600) as w:
        assert w.add(result("c0", success=None, error_kind="infra", error_message="down")) == 0
        assert w.next_attempt("c0") == 1
        assert w.add(result("c0", n_messages=5)) == 1
        assert w.next_attempt("c0") == 2
    every = conversations_df(tmp_path, all_attempts=True)
    assert sorted(every["attempt"]) == [0, 1]
    latest = conversations_df(tmp_path)
    assert list(latest["attempt"]) == [1] and latest["success"].iloc[0] == True  # noqa: E712
    assert len(messages_df(tmp_path)) == 5  # only the retry's messages count
    assert len(messages_df(tmp_path, all_attempts=True)) == 3 + 5
    # A new writer on the same folder carries on from what is on disk.
    with TableWriter(tmp_path, RUN) as w:
        assert w.next_attempt("c0") == 2 and w.next_attempt("c9") == 0


def test_a_flush_is_due_at_exactly_flush_rows_rows_in_one_table(tmp_path):
    """Each result adds 3 messages; with flush_rows=6 the second add reaches 6 and flushes."""
    w = TableWriter(tmp_path, RUN, flush_rows=6, flush_seconds=3600)
    w.add(result("c0"))
    assert w.pending_rows == 1 + 2 + 2 + 3 and w.stats.total_files == 0
    w.add(result("c1"))
    assert w.pending_rows == 0 and w.stats.rows["messages"] == 6
    assert w.stats.total_files == 4 and w.stats.files == {
        "predicate_verdicts": 1, "actions": 1, "messages": 1, "nl_assertion_verdicts": 0, "judge_verdicts": 0,
        "sim_findings": 0, "sim_attributions": 0, "utterances": 0, "segments": 0, "conversations": 1}
    w.close()
    w.close()  # closing twice is harmless
    with pytest.raises(ValueError, match="flush_rows must be at least 1"):
        TableWriter(tmp_path, RUN, flush_rows=0)
    with pytest.raises(ValueError, match="flush_seconds must not be negative"):
        TableWriter(tmp_path, RUN, flush_seconds=-1)
    with TableWriter(tmp_path, RUN, flush_rows=1):  # the refused writers released the folder's lock
        pass


def test_attempts_continue_past_detail_rows_of_a_killed_flush(tmp_path, monkeypatch):
    """A flush that died after the details and before the conversation row: the next
    writer numbers the unit's next attempt past those details."""
    w = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    w.add(result("c0"))
    _fail_once_on(monkeypatch, "conversations")
    with pytest.raises(OSError):
        w.flush()
    w._lock.release()  # the process "dies" here: nothing else of this writer runs
    with TableWriter(tmp_path, RUN) as again:
        assert again.next_attempt("c0") == 1
        assert again.add(result("c0", n_messages=1)) == 1
    assert len(messages_df(tmp_path)) == 1 and len(messages_df(tmp_path, all_attempts=True)) == 4
    assert conversations_df(tmp_path)["attempt"].tolist() == [1]
