"""The driver's tables written off its loop (pipeline/writing.py): add returns at once, every
result lands exactly once, an interrupt during a write waits for the write, a failure
surfaces in the driver. Real conversation results (reference policies, in-process)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.pipeline.bench.engine import bench_scenarios
from tauray.pipeline.writing import BackgroundWriter
from tauray.results import conversations_df, messages_df
from tauray.results.tables import writer as writer_mod
from tests.units import make_units

RUN = "bg"


@pytest.fixture(scope="module")
def results():
    units = make_units(RUN, bench_scenarios()[:6], trials=2)

    async def main():
        agent, user = AgentHost(), UserSimHost()
        return [await run_conversation(u, agent, user) for u in units]

    out = asyncio.run(main())
    assert all(r.conversation.error_kind is None for r in out)
    return out


def _slow_commits(monkeypatch, seconds: float) -> tuple[threading.Event, list[tuple[str, float, float]]]:
    """Every table file takes ``seconds`` to commit; returns (a first write began, the writes)."""
    began, writes = threading.Event(), []
    real = writer_mod.commit_file

    def slow(final, table):
        start = time.monotonic()
        began.set()
        time.sleep(seconds)
        real(final, table)
        writes.append((threading.current_thread().name, start, time.monotonic()))

    monkeypatch.setattr(writer_mod, "commit_file", slow)
    return began, writes


def _once(out, results) -> None:
    conv = conversations_df(out)
    assert sorted(conv["conversation_id"]) == sorted(r.conversation.conversation_id for r in results)
    assert conv["conversation_id"].is_unique
    messages = messages_df(out)
    assert len(messages) == sum(len(r.messages) for r in results)


@pytest.mark.slow  # about 3 s on 2 cores: too long for the fast loop
def test_add_returns_while_the_thread_writes_and_close_writes_every_result_once(tmp_path, results, monkeypatch):
    _, writes = _slow_commits(monkeypatch, 0.05)
    w = BackgroundWriter(tmp_path, RUN, flush_rows=1)  # a flush (several slow files) per result
    start = time.monotonic()
    for r in results:
        w.add(r)
    handed_over = time.monotonic() - start
    w.close()
    written = time.monotonic() - start
    assert handed_over < 0.2 < written  # the caller did not wait for the files
    assert writes and {name for name, _, _ in writes} == {f"tauray-writer-{RUN}"}
    _once(tmp_path, results)
    assert w.stats.rows["conversations"] == len(results)


@pytest.fixture
def driver_sigint():
    """Python's own SIGINT handler, as a driver runs with; a test runner may have replaced it
    (pytest-xdist's workers ignore SIGINT). Whatever was there is put back afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.slow  # about 5 s on 2 cores: too long for the fast loop
def test_sigint_during_a_write_waits_for_it_and_the_rerun_adds_nothing_twice(tmp_path, results, monkeypatch, driver_sigint):
    began, writes = _slow_commits(monkeypatch, 0.3)
    w = BackgroundWriter(tmp_path, RUN, flush_rows=1)
    interrupted_at = None
    try:
        try:
            w.add(results[0])
            assert began.wait(5)
            os.kill(os.getpid(), signal.SIGINT)  # the driver is interrupted mid-write
            time.sleep(5)
        except KeyboardInterrupt:
            interrupted_at = time.monotonic()
        for r in results[1:3]:
            w.add(r)
    finally:
        w.close()
    assert interrupted_at is not None  # delivered, not swallowed ...
    first_write_end = min(end for _, _, end in writes)
    assert interrupted_at >= first_write_end  # ... once the write under way was done
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers put back
    _once(tmp_path, results[:3])
    with BackgroundWriter(tmp_path, RUN) as again:  # a resumed driver writes only what is missing
        for r in results[3:]:
            again.add(r)
    _once(tmp_path, results)


@pytest.mark.slow
def test_sigterm_during_a_write_ends_the_process_only_after_the_write(tmp_path, results):
    """SIGTERM's default action would kill the process mid-write; it is held until the write
    is done, then the process ends as SIGTERM ends it."""
    data = tmp_path / "results.json"
    data.write_text("[" + ",".join(r.model_dump_json() for r in results[:2]) + "]")
    script = textwrap.dedent(f"""
        import json, os, signal, sys, threading, time
        from tauray.pipeline.writing import BackgroundWriter
        from tauray.results.tables import writer as writer_mod
        from tauray.results.tables.records import ConversationResult
        rows = [ConversationResult.model_validate(r) for r in json.loads(open({str(data)!r}).read())]
        real, began = writer_mod.commit_file, threading.Event()
        def slow(final, table):
            began.set()
            time.sleep(0.3)
            real(final, table)
        writer_mod.commit_file = slow
        w = BackgroundWriter({str(tmp_path / "out")!r}, {RUN!r}, flush_rows=1)
        w.add(rows[0])
        began.wait(5)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        print("not terminated", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGTERM, proc.stderr[-2000:]
    conv = conversations_df(tmp_path / "out")  # the write under way was finished first
    assert list(conv["conversation_id"]) == [results[0].conversation.conversation_id]


def test_a_failure_in_the_thread_is_raised_in_the_driver(tmp_path, results):
    w = BackgroundWriter(tmp_path, RUN)
    w.add(results[0])
    w.add(results[1].model_copy(update={"conversation": results[1].conversation.model_copy(
        update={"run_id": "another-run"})}))
    with pytest.raises(ValueError, match="another-run"):
        for r in results[2:]:
            w.add(r)
            time.sleep(0.05)
        w.close()
    w.close()
    _once(tmp_path, results[:1])  # what came before the failure is on disk, once
