"""Live agents as the agents of one duplex sweep, end to end through the real CLI, on the wall clock:

* the endpoint's phone bot (Twilio Media Streams; espeak-ng, Whisper, the scripted agent), its tool
  call over MCP landing in the tables as a model's would, the call's segments, recording and
  lateness on its row;
* the endpoint's scripted realtime model (OpenAI's Realtime events over a websocket; Whisper hears,
  espeak-ng speaks), its function call in the tables, the provider's transcripts on the segments
  beside what the caller heard, its tokens and cost on the row;
* a bot and a realtime model nobody answers (the sweep's probe skipped): infrastructure rows that
  --retry-errors reruns.

* the same scripted model on Gemini Live's protocol (``BidiGenerateContent``): its tool call, its
  words on the agent's segments, its usage by modality on the row.

One sweep holds all five cells (the three calls run at once: ``live_calls_per_node = 3``): one CLI
start, one Ray, one endpoint.
And the endpoint's side of the realtime protocol: truncation, cancel, and bad events answered as
OpenAI does.

Slow: Ray, child processes, and three real calls of about 15-20 s each. The lateness limit is relaxed,
as in tests/voice/test_live_call_loop_calls.py: this machine is shared, so whether the harness kept
the default limit is recorded, not asserted.
"""

from __future__ import annotations

import asyncio
import json
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
    agents = ["bot", "rt", "gone", "rt-gone", "gem"]
    users = ["scripted"]

    [models.bot]
    model = "phone/endpoint-bot"
    phone = {{url = "ws://127.0.0.1:{port}/phone-bot", answer_timeout_s = 30, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [models.gone]
    model = "phone/gone"
    phone = {{url = "ws://127.0.0.1:{closed}/phone-bot", connect_timeout_s = 2}}

    [models.rt]
    model = "openai/gpt-realtime"
    api_base = "http://127.0.0.1:{port}/v1"
    realtime = {{answer_timeout_s = 30, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [models.gem]
    model = "gemini/gemini-live-2.5-flash-preview-native-audio-09-2025"
    api_base = "http://127.0.0.1:{port}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    realtime = {{answer_timeout_s = 30, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [models.rt-gone]
    model = "openai/gpt-realtime-mini"
    api_base = "http://127.0.0.1:{closed}/v1"
    realtime = {{connect_timeout_s = 2}}

    [[scenarios]]
    domain = "mock"
    patterns = ["tau2_mock__impossible_task_1"]

    [cluster]
    actor_cpus = 0.0
    live_calls_per_node = 3  # the three calls at once: the sweep takes no longer for the third

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


@pytest.fixture(scope="module")
def live_sweep(tmp_path_factory: pytest.TempPathFactory, endpoint) -> tuple[Path, pd.DataFrame]:
    """The sweep, run once: its folder and its conversations by agent model."""
    tmp = tmp_path_factory.mktemp("live")
    path = tmp / "live.toml"
    path.write_text(textwrap.dedent(SWEEP).format(port=endpoint.port, closed=_closed_port()))
    started = time.perf_counter()
    # --no-probe: the probe would refuse the two nobody answers (tests/voice/test_live_agent.py)
    done = subprocess.run([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(tmp / "out"), "--json",
                           "--no-progress", "--no-probe"], capture_output=True, text=True, timeout=300)
    print(f"\nsweep {time.perf_counter() - started:.1f} s")
    assert done.returncode == 1 and "2 infra and 0 internal error rows" in done.stderr, \
        done.stdout[-2000:] + done.stderr[-4000:]
    return tmp / "out", conversations_df(tmp / "out").set_index("agent_model")


def test_a_phone_bot_is_an_agent_of_a_duplex_sweep(live_sweep) -> None:
    out, conv = live_sweep
    bot, gone = conv.loc["phone/endpoint-bot"], conv.loc["phone/gone"]
    print(f"\ncall {bot['duplex_duration_s']:.1f} s, {bot['termination_reason']}, ended by "
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


def test_a_realtime_model_is_an_agent_of_a_duplex_sweep(live_sweep) -> None:
    out, conv = live_sweep
    rt, gone = conv.loc["openai/gpt-realtime"], conv.loc["openai/gpt-realtime-mini"]
    print(f"\ncall {rt['duplex_duration_s']:.1f} s, {rt['termination_reason']}; lateness p99 "
          f"{rt['live_lateness_p99_ms']} ms, gap {rt['live_longest_gap_ms']} ms; response latency "
          f"{rt['duplex_response_latency_s']}; tokens in {rt['agent_prompt_tokens']} out {rt['agent_completion_tokens']},"
          f" ${rt['agent_cost_usd']}")

    # The call: a realtime agent on the wall clock, scored as any agent's.
    assert rt["agent_kind"] == "realtime" and rt["duplex_pipeline"] == "live realtime model"
    assert rt["live_protocol"] == "openai-realtime" and rt["duplex_timing"] == "live"
    assert pd.isna(rt["error_kind"]) and rt["termination_reason"] in ("user_stop", "caller_hung_up")
    assert rt["live_frames"] > 250 and rt["live_truncations"] == 0
    # Its usage: the endpoint counts 10 input audio tokens a second heard, 20 output a second spoken.
    assert rt["live_input_audio_tokens"] > 0 and rt["live_output_audio_tokens"] >= 20 * 3  # a greeting and a reply
    assert rt["agent_completion_tokens"] == rt["live_output_audio_tokens"] + rt["live_output_text_tokens"]
    assert rt["agent_cost_usd"] > 0  # litellm prices gpt-realtime's audio tokens
    # Its function call, answered through the protocol, in actions and messages as a model's would be.
    actions = actions_df(out)
    calls = actions[(actions["unit_id"] == rt["unit_id"]) & (actions["kind"] == "tool_call")]
    assert list(calls["tool"]) == ["get_users"] and "user_1" in calls["result"].iloc[0]
    said = messages_df(out)
    said = said[said["unit_id"] == rt["unit_id"]]
    assert (said["role"] == "tool").sum() == 1
    # The provider's transcripts beside what the caller said and heard.
    mine = segments_df(out)
    mine = mine[mine["unit_id"] == rt["unit_id"]]
    agent, user = mine[mine["side"] == "agent"], mine[mine["side"] == "user"]
    greeting = ("help", "assist", "service", "support")
    assert any(w in agent["text"].iloc[0].lower() for w in greeting)  # its own words (the greeting's transcript)
    assert any(w in h.lower() for h in agent["heard_text"] for w in greeting)  # the caller's recogniser heard it
    assert any(h for h in user["heard_text"])  # the provider's transcription of the caller
    assert any(u and any(w in u.lower() for w in ("task", "help", "need")) for u in user["heard_text"])

    # A realtime model nobody answers: an infrastructure row, its line without a key.
    assert gone["error_kind"] == "infra" and gone["live_fault_kind"] == "unreachable"
    assert gone["error_message"].startswith("realtime: cannot reach the model at ws://127.0.0.1:")


def test_a_gemini_live_model_is_an_agent_of_a_duplex_sweep(live_sweep) -> None:
    out, conv = live_sweep
    gem = conv.loc["gemini/gemini-live-2.5-flash-preview-native-audio-09-2025"]
    print(f"\ncall {gem['duplex_duration_s']:.1f} s, {gem['termination_reason']}; lateness p99 "
          f"{gem['live_lateness_p99_ms']} ms, gap {gem['live_longest_gap_ms']} ms; tool calls {gem['agent_tool_calls']};"
          f" tokens in {gem['agent_prompt_tokens']} out {gem['agent_completion_tokens']}, ${gem['agent_cost_usd']}")

    # The call: the same scripted model on Gemini Live's protocol, scored as any agent's.
    assert gem["agent_kind"] == "realtime" and gem["live_protocol"] == "gemini-live"
    assert gem["duplex_pipeline"] == "live realtime model" and gem["duplex_timing"] == "live"
    assert pd.isna(gem["error_kind"]) and pd.isna(gem["live_fault_kind"])
    assert gem["termination_reason"] in ("user_stop", "caller_hung_up") and gem["live_frames"] > 250
    # Its usage, by modality from usageMetadata, summed over its turns (20 output audio tokens a second).
    assert gem["live_input_audio_tokens"] > 0 and gem["live_output_audio_tokens"] >= 20 * 3
    assert gem["agent_completion_tokens"] == gem["live_output_audio_tokens"] and gem["agent_cost_usd"] > 0
    # Its toolCall, answered by toolResponse, in actions and messages as a model's would be.
    actions = actions_df(out)
    calls = actions[(actions["unit_id"] == gem["unit_id"]) & (actions["kind"] == "tool_call")]
    assert list(calls["tool"]) == ["get_users"] and "user_1" in calls["result"].iloc[0]
    said = messages_df(out)
    assert (said[said["unit_id"] == gem["unit_id"]]["role"] == "tool").sum() == 1
    # Its outputTranscription on its own segments (the caller's inputTranscription has no time: not placed).
    mine = segments_df(out)
    agent = mine[(mine["unit_id"] == gem["unit_id"]) & (mine["side"] == "agent")]
    greeting = ("help", "assist", "service", "support")
    assert any(w in agent["text"].iloc[0].lower() for w in greeting)
    assert any(w in h.lower() for h in agent["heard_text"] for w in greeting)  # the caller's recogniser heard it


def test_the_endpoints_realtime_model_honours_truncate_and_cancel_and_answers_bad_events(endpoint) -> None:
    from websockets.asyncio.client import connect

    async def main() -> dict[str, list[dict]]:
        seen: dict[str, list[dict]] = {}

        async def until(ws, kind: str) -> dict:
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), 60))
                seen.setdefault(event["type"], []).append(event)
                if event["type"] == kind:
                    return event

        async with connect(f"ws://127.0.0.1:{endpoint.port}/v1/realtime?model=gpt-realtime") as ws:
            await until(ws, "session.created")
            await ws.send(json.dumps({"type": "session.update", "session": {"input_audio_format": "pcm16"}}))
            await until(ws, "error")
            await ws.send(json.dumps({"type": "session.update", "session": {
                "instructions": "Be brief.", "input_audio_format": "g711_ulaw", "output_audio_format": "g711_ulaw",
                "tools": []}}))
            await until(ws, "session.updated")
            await ws.send(json.dumps({"type": "response.create"}))
            done = await until(ws, "response.done")
            item = seen["response.audio.delta"][0]["item_id"]
            await ws.send(json.dumps({"type": "conversation.item.truncate", "item_id": item, "content_index": 0,
                                      "audio_end_ms": 500}))
            await until(ws, "conversation.item.truncated")
            await ws.send(json.dumps({"type": "conversation.item.truncate", "item_id": item, "content_index": 0,
                                      "audio_end_ms": 10 ** 7}))
            await until(ws, "error")
            await ws.send(json.dumps({"type": "response.cancel"}))
            await until(ws, "error")
            await ws.send(json.dumps({"type": "response.create"}))  # a second response, cancelled while it speaks
            await until(ws, "response.audio.delta")  # it has begun to speak (audio comes at 4x real time)
            await ws.send(json.dumps({"type": "response.cancel"}))
            cancelled = await until(ws, "response.done")
            await ws.send(json.dumps({"type": "no.such.event"}))
            await until(ws, "error")
            seen["first_done"], seen["cancelled"] = [done], [cancelled]
        return seen

    seen = asyncio.run(main())
    codes = [e["error"]["code"] for e in seen["error"]]
    assert codes == ["invalid_value", "invalid_value", "response_cancel_not_active", "unknown_event"]
    assert seen["first_done"][0]["response"]["status"] == "completed"
    assert seen["first_done"][0]["response"]["usage"]["output_token_details"]["audio_tokens"] > 0
    assert seen["conversation.item.truncated"][0]["audio_end_ms"] == 500
    assert seen["response.audio_transcript.done"][0]["transcript"].strip() != ""  # the greeting (its words vary with the digest)
    assert seen["cancelled"][0]["response"]["status"] == "cancelled"
