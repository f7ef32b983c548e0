"""Attempts as data, writes that survive interrupts, one writer per folder (issue 13).

Each must-show test here was first run against the code before this change and
failed there (re-judge rows moved aside by resume, re-judge of a retried unit
dropped by the readers, duplicated rows after an interrupted flush, a second
driver accepted)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from tauray.pipeline.resume import resume_state
from tauray.results import (
    RunLockedError,
    TableWriter,
    conversations_df,
    judge_verdicts_df,
    messages_df,
    predicates_df,
    write_records,
)
from tauray.results.tables import writer as writer_mod
from tests.results.test_tables import RUN, nl_row, result

ATTEMPT_KEY = ["run_id", "unit_id", "attempt"]


def judge_row(cid: str, sample: int = 0, attempt: int = 0, passed: bool | None = True) -> dict:
    row = nl_row(cid, 0, True)
    for k in ("assertion_index", "assertion", "met"):
        row.pop(k)
    return {**row, "sample_index": sample, "attempt": attempt, "passed": passed}


def plain(run_dir, table: str) -> pd.DataFrame:
    """The documented plain-pandas filter (docs/tables.md)."""
    conv = pd.read_parquet(run_dir / "conversations")
    conv = conv[conv["attempt"] == conv.groupby(["run_id", "unit_id"])["attempt"].transform("max")]
    if table == "conversations":
        return conv
    return pd.read_parquet(run_dir / table).merge(conv[ATTEMPT_KEY], on=ATTEMPT_KEY)


# ---------------------------------------------------------------- attempts


def test_retry_is_a_new_attempt_and_supersedes_every_table(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        assert w.add(result("c0")) == 0
        assert w.add(result("c1", n_messages=5, success=None, error_kind="infra", error_message="down")) == 0
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert st.to_retry == {"c1"} and st.done == {"c0"}
    with TableWriter(tmp_path, RUN) as w:  # --retry-errors
        assert w.add(result("c1", n_messages=2)) == 1
    conv = conversations_df(tmp_path).sort_values("unit_id")
    assert conv["attempt"].tolist() == [0, 1] and conv["error_kind"].isna().all()
    msgs = messages_df(tmp_path)
    assert msgs.groupby("unit_id", observed=True).size().to_dict() == {"c0": 3, "c1": 2}
    assert len(messages_df(tmp_path, all_attempts=True)) == 3 + 5 + 2
    assert conversations_df(tmp_path, error_kind="infra").empty  # a filter never brings back a superseded attempt
    for table, frame in (("conversations", conv), ("messages", msgs)):
        assert len(plain(tmp_path, table)) == len(frame)


def test_internal_errors_are_retried_model_errors_are_not(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0", success=None, error_kind="internal", error_message="bug"))
        w.add(result("c1", success=None, error_kind="model", error_message="context window"))
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert st.to_retry == {"c0"} and st.done == {"c1"}


def test_killed_flush_leaves_details_that_never_count_and_the_rerun_numbers_past_them(tmp_path, monkeypatch):
    real_replace = os.replace

    def killed(src, dst):  # the driver dies right before the conversations file lands
        if "conversations" in str(dst):
            raise SystemExit("killed")
        return real_replace(src, dst)

    w = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    w.add(result("c0"))
    monkeypatch.setattr(writer_mod.os, "replace", killed)
    with pytest.raises(SystemExit):
        w.flush()
    w._lock.release()  # the dead driver's lock goes with its process
    monkeypatch.setattr(writer_mod.os, "replace", real_replace)
    assert conversations_df(tmp_path).empty and messages_df(tmp_path).empty
    assert len(messages_df(tmp_path, all_attempts=True)) == 3
    with TableWriter(tmp_path, RUN) as w:  # resume
        assert w.add(result("c0")) == 1
    assert len(messages_df(tmp_path)) == 3 and len(plain(tmp_path, "messages")) == 3


def test_rejudge_then_resume_keeps_judge_rows(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    write_records(tmp_path, "judge_verdicts", [judge_row("c0", 0), judge_row("c0", 1)], RUN)  # tauray judge
    resume_state(tmp_path, RUN, retry_errors=True)  # sweep --resume, then its writer
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c1"))
    assert len(judge_verdicts_df(tmp_path)) == 2
    assert len(plain(tmp_path, "judge_verdicts")) == 2


def _run_real(tmp_path, units):
    from tauray.actors.conversation import run_conversation
    from tauray.actors.hosts import AgentHost, UserSimHost

    agent, user = AgentHost(), UserSimHost()

    async def main():
        return await asyncio.gather(*(run_conversation(u, agent, user) for u in units))

    return asyncio.run(main())


def test_rejudge_of_a_retried_unit_is_read_back(tmp_path, endpoint, capsys, cli_json, monkeypatch):
    from tauray.scenarios import select_scenarios
    from tests.units import make_units

    names = [e.name for e in select_scenarios(domain="telecom", split="small", variant="manual")][:2]
    units = make_units("rj", names, 1, {"model": "oracle"}, {"model": "scripted"})
    results = _run_real(tmp_path, units)
    first = results[0]
    down = first.model_copy(update={"conversation": first.conversation.model_copy(
        update={"success": None, "error_kind": "infra", "error_message": "provider down"})})
    with TableWriter(tmp_path, "rj") as w:
        w.add(down)
        w.add(results[1])
    with TableWriter(tmp_path, "rj") as w:  # --retry-errors reruns the infra row
        assert w.add(first) == 1
    monkeypatch.setenv("OPENAI_API_BASE", endpoint.base_url)
    summary = cli_json("judge", str(tmp_path), "--judge-model", "openai/judge-good", "--prompt", "overall-plain")
    assert summary["rows"]["judge_verdicts"] == 2
    jv = judge_verdicts_df(tmp_path).set_index("unit_id")
    assert len(jv) == 2 and jv.loc[first.conversation.unit_id, "attempt"] == 1
    assert len(plain(tmp_path, "judge_verdicts")) == 2
    # a resume next, then judging again: nothing lost, nothing new to judge
    with TableWriter(tmp_path, "rj"):
        pass
    again = cli_json("judge", str(tmp_path), "--judge-model", "openai/judge-good", "--prompt", "overall-plain")
    assert again["rows"]["judge_verdicts"] == 0
    assert len(judge_verdicts_df(tmp_path)) == 2


# ---------------------------------------------------------------- interrupts


@pytest.mark.slow  # about 10 s on 2 cores: too long for the fast loop
def test_interrupt_at_every_line_of_a_flush_loses_and_doubles_nothing(tmp_path):
    """A KeyboardInterrupt raised at each line the flush executes, in turn (the
    writer's module only), then close() as the ``with`` block would."""
    target = writer_mod.__file__
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    n = 0
    try:
        while True:
            n += 1
            out = tmp_path / f"try{n}"
            w = TableWriter(out, RUN, flush_rows=10_000, flush_seconds=3600)
            w.add(result("c0"))
            w.add(result("c1"))
            seen = 0
            fired = False

            def tracer(frame, event, arg):
                nonlocal seen, fired
                if frame.f_code.co_filename == target and event == "line":
                    seen += 1
                    if seen == n and not fired:
                        fired = True
                        raise KeyboardInterrupt
                return tracer

            sys.settrace(tracer)
            try:
                w.flush()
            except KeyboardInterrupt:
                pass
            finally:
                sys.settrace(None)
                for s, h in saved.items():
                    signal.signal(s, h)
            w.close()
            conv = conversations_df(out, all_attempts=True)
            assert sorted(conv["unit_id"]) == ["c0", "c1"], n
            assert len(messages_df(out, all_attempts=True)) == 6, n
            assert len(predicates_df(out, all_attempts=True)) == 4, n
            assert len(pd.read_parquet(out / "predicate_verdicts")) == 4, n
            if not fired:
                break
    finally:
        sys.settrace(None)
    assert n > 30  # every line of the flush path was hit once


def test_sigint_during_a_flush_is_delivered_after_the_commit(tmp_path, monkeypatch):
    # Python keeps SIGINT ignored when it starts ignored (a background job of a non-interactive
    # shell, as CI may start the suite); the writer hands the signal back to whatever handler
    # was there, so the test puts Python's own Ctrl-C handler in place first.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _sigint_during_a_flush(tmp_path, monkeypatch)
    finally:
        signal.signal(signal.SIGINT, previous)


def _sigint_during_a_flush(tmp_path, monkeypatch):
    real_replace = os.replace
    calls = []

    def replace_and_signal(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the flush
        return real_replace(src, dst)

    w = TableWriter(tmp_path, RUN, flush_rows=10_000, flush_seconds=3600)
    w.add(result("c0"))
    monkeypatch.setattr(writer_mod.os, "replace", replace_and_signal)
    with pytest.raises(KeyboardInterrupt):
        w.flush()
    assert w.pending_rows == 0  # the flush finished first
    w.close()
    assert len(conversations_df(tmp_path)) == 1 and len(messages_df(tmp_path)) == 3


# ---------------------------------------------------------------- one writer per folder

_HOLD = """
import sys, time
from tauray.results import TableWriter
w = TableWriter(sys.argv[1], "run-test")
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.slow
def test_second_driver_on_the_same_dir_is_refused_then_a_dead_holder_is_taken_over(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", _HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        with pytest.raises(RunLockedError, match=rf"pid {p.pid} on \S+ since 20\d\d-"):
            TableWriter(tmp_path, RUN)
        with pytest.raises(RunLockedError):
            write_records(tmp_path, "judge_verdicts", [judge_row("c0")], RUN)  # tauray judge too
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    holder = json.loads((tmp_path / ".tauray.lock").read_text())
    assert holder["pid"] == p.pid  # the dead process's lock file is still there ...
    with TableWriter(tmp_path, RUN) as w:  # ... and is taken over
        w.add(result("c0"))
        assert json.loads((tmp_path / ".tauray.lock").read_text())["pid"] == os.getpid()
    assert len(conversations_df(tmp_path)) == 1


def test_temp_leftovers_are_removed_on_open(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    junk = tmp_path / "messages" / f".part-{RUN}-000007-deadbeef.parquet.ab12.tmp"
    junk.write_bytes(b"PAR1 half a file")
    with TableWriter(tmp_path, RUN) as w:
        assert w.temp_files_removed == 1
    assert not junk.exists()


def test_compact_drops_superseded_rows_and_keeps_reads(tmp_path):
    from tauray.results.tables.compact import compact

    with TableWriter(tmp_path, RUN, flush_rows=3) as w:
        for i in range(4):
            w.add(result(f"c{i}", success=None, error_kind="infra", error_message="x") if i == 2 else result(f"c{i}"))
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c2", n_messages=1))
    write_records(tmp_path, "judge_verdicts", [judge_row("c0"), judge_row("c2", attempt=0)], RUN)  # the latter superseded
    before = {t: f(tmp_path) for t, f in (("conversations", conversations_df), ("messages", messages_df),
                                          ("judge_verdicts", judge_verdicts_df))}
    summary = compact(tmp_path)
    assert summary.rows_dropped["messages"] == 3 and summary.rows_dropped["judge_verdicts"] == 1
    for table, df in before.items():
        after = {"conversations": conversations_df, "messages": messages_df,
                 "judge_verdicts": judge_verdicts_df}[table](tmp_path)
        key = ["unit_id", "seq"] if table == "messages" else ["unit_id"]
        pd.testing.assert_frame_equal(after.sort_values(key).reset_index(drop=True),
                                      df.sort_values(key).reset_index(drop=True), check_categorical=False)
        assert len([p for p in (tmp_path / table).iterdir() if not p.name.startswith((".", "_"))]) == 1
        assert len(pd.read_parquet(tmp_path / table)) == len(df)  # plain pandas: nothing superseded left
