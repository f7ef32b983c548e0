"""A phone bot as the agent of a duplex sweep, end to end through the real CLI: the endpoint's
phone bot (a child process: espeak-ng, Whisper, the scripted agent) called by the scripted
caller on the wall clock, its tool call landing in the tables as a model's would, the call's
segments, recording and lateness on its row; and a bot that cannot be reached (the sweep's probe
skipped), an infrastructure row that --retry-errors reruns.

Slow: Ray, child processes, and a real call of about 15 s. The lateness limit is relaxed, as in
tests/voice/test_live_call_loop_calls.py: this machine is shared, so whether the harness kept the
default limit is recorded, not asserted.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from tauray.pipeline.resume import resume_state
from tauray.results import actions_df, conversations_df, messages_df, segments_df
from tauray.results.tables.layout import LABELS_SUFFIX, audio_path

pytest.importorskip("websockets", reason="the optional extra tauray[live]")
pytest.importorskip("mcp", reason="the optional extra tauray[live]")
pytest.importorskip("faster_whisper", reason="the optional extra tauray[voice]")

pytestmark = pytest.mark.slow

SWEEP = """
    name = "live-e2e"
    agents = ["bot", "gone"]
    users = ["scripted"]

    [models.bot]
    model = "phone/endpoint-bot"
    phone = {{url = "ws://127.0.0.1:{port}/phone-bot", answer_timeout_s = 30, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [models.gone]
    model = "phone/gone"
    phone = {{url = "ws://127.0.0.1:{closed}/phone-bot", connect_timeout_s = 2}}

    [[scenarios]]
    domain = "mock"
    patterns = ["tau2_mock__impossible_task_1"]

    [cluster]
    actor_cpus = 0.0

    [voice]
    profiles = ["control"]
    turn_taking = ["duplex"]
    tts = "local/espeak-ng"
    asr = "local/whisper-tiny.en"
    keep_audio = "all"
    duplex_rules = {{interrupt_probability = 0.0, backchannel_probability = 0.0, vocal_tic_per_min = 0.0, out_of_turn_per_min = 0.0, tic_before_turn_probability = 0.0}}
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sweep(path: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(out), "--json",
                           "--no-progress", *flags], capture_output=True, text=True, timeout=300)


def test_a_phone_bot_is_an_agent_of_a_duplex_sweep(tmp_path: Path, endpoint) -> None:
    path = tmp_path / "live.toml"
    path.write_text(textwrap.dedent(SWEEP).format(port=endpoint.port, closed=_closed_port()))

    started = time.perf_counter()
    done = _sweep(path, tmp_path / "out", "--no-probe")  # the probe would refuse 'gone' (tests/voice/test_live_agent.py)
    wall = time.perf_counter() - started
    assert done.returncode == 1 and "1 infra and 0 internal error rows" in done.stderr, \
        done.stdout[-2000:] + done.stderr[-4000:]
    out = tmp_path / "out"
    conv = conversations_df(out).set_index("agent_model")
    bot, gone = conv.loc["phone/endpoint-bot"], conv.loc["phone/gone"]
    print(f"\nsweep {wall:.1f} s; call {bot['duplex_duration_s']:.1f} s, {bot['termination_reason']}, ended by "
          f"{bot['live_ended_by']}; lateness p50 {bot['live_lateness_p50_ms']} ms, p99 {bot['live_lateness_p99_ms']} "
          f"ms, max {bot['live_lateness_max_ms']} ms, gap {bot['live_longest_gap_ms']} ms; caller moves "
          f"{bot['live_caller_moves']} (max {bot['live_caller_move_max_s']} s); tick lag p50 "
          f"{bot['live_tick_lag_p50_s']} s, max {bot['live_tick_lag_max_s']} s")

    # The call: scored as any agent's (the mock task is not solvable by a bot that only looks things up).
    assert bot["agent_kind"] == "phone" and bot["turn_taking"] == "duplex" and bot["duplex_timing"] == "live"
    assert pd.isna(bot["error_kind"]) and pd.isna(bot["live_fault_kind"])
    assert bot["success"] in (True, False) and bot["termination_reason"] in ("user_stop", "bot_hung_up")
    assert bot["live_ended_by"] in ("caller", "bot") and bot["live_frames"] > 250  # over 5 s of call
    assert bot["live_frames"] == round(bot["duplex_duration_s"] / 0.02)
    for column in ("live_lateness_p50_ms", "live_lateness_p99_ms", "live_lateness_max_ms", "live_longest_gap_ms",
                   "live_tick_lag_p50_s", "live_tick_lag_max_s", "live_caller_move_max_s"):
        assert bot[column] >= 0, column
    assert bot["live_longest_gap_ms"] >= 19 and bot["live_caller_moves"] >= 0
    # The bot's tool call, over MCP, in actions and messages as a model's call would be.
    actions = actions_df(out)
    calls = actions[(actions["unit_id"] == bot["unit_id"]) & (actions["kind"] == "tool_call")]
    assert len(calls) >= 1 and set(calls["side"]) == {"agent"} and calls["tool"].iloc[0] == "get_users"
    assert "user_1" in calls["result"].iloc[0] and bot["agent_tool_calls"] == len(calls)
    messages = messages_df(out)
    said = messages[messages["unit_id"] == bot["unit_id"]]
    assert said["tool_call_id"].dropna().str.startswith("live-").all() and (said["role"] == "tool").sum() == len(calls)
    # The bot's words, as the caller heard them, on the agent's side of the transcript: its greeting first.
    spoken = said[(said["side"] == "agent") & (said["role"] == "assistant") & said["tool_calls"].isna()]
    assert len(spoken) >= 2 and any(w in spoken["content"].iloc[0].lower() for w in ("help", "assist", "service"))
    # The call's timeline and recording, kept.
    segments = segments_df(out)
    mine = segments[segments["unit_id"] == bot["unit_id"]]
    assert len(mine) == bot["segments"] >= 3 and set(mine["side"]) == {"agent", "user"}
    assert any("help" in t or "assist" in t or "service" in t for t in mine["heard_text"].str.lower())
    assert audio_path(out, bot["recording_sha256"]).read_bytes()[:4] == b"fLaC"
    assert audio_path(out, f"{bot['labels_sha256']}{LABELS_SUFFIX}").exists()

    # The bot nobody answers: an infrastructure row, rerun by --retry-errors.
    assert gone["error_kind"] == "infra" and gone["termination_reason"] == "infra_error"
    assert gone["error_message"].startswith("phone: cannot reach the bot at ws://127.0.0.1:")
    assert gone["live_fault_kind"] == "unreachable" and gone["live_ended_by"] == "none" and gone["segments"] == 0
    assert pd.isna(gone["recording_sha256"]) and pd.isna(gone["labels_sha256"])  # no call, no file named
    assert gone["unit_id"] in resume_state(out, "live-e2e", retry_errors=True).to_retry
