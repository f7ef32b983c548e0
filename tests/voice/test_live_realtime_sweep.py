"""A realtime model as the agent of a duplex sweep, end to end through the real CLI: the endpoint's
scripted realtime model (OpenAI's Realtime events over a websocket; Whisper hears, espeak-ng
speaks) called by the scripted caller on the wall clock; its function call landing in the tables
as a model's tool call would, the provider's transcripts on the segments beside what the caller
heard, its tokens and cost on the row; a realtime model nobody answers, an infrastructure row.
And the endpoint's side of the protocol: truncation, cancel, and bad events answered as OpenAI does.

Slow: Ray, a child process, and a real call of about 20 s. The lateness limit is relaxed, as in
tests/voice/test_live_sweep.py: this machine is shared.
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

from tauray.results import actions_df, conversations_df, messages_df, segments_df

pytest.importorskip("websockets", reason="the optional extra tauray[live]")
pytest.importorskip("faster_whisper", reason="the optional extra tauray[voice]")

pytestmark = pytest.mark.slow

SWEEP = """
    name = "realtime-e2e"
    agents = ["rt", "gone"]
    users = ["scripted"]

    [models.rt]
    model = "openai/gpt-realtime"
    api_base = "http://127.0.0.1:{port}/v1"
    realtime = {{answer_timeout_s = 30, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [models.gone]
    model = "openai/gpt-realtime-mini"
    api_base = "http://127.0.0.1:{closed}/v1"
    realtime = {{connect_timeout_s = 2}}

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
    keep_audio = "none"
    duplex_rules = {{interrupt_probability = 0.0, backchannel_probability = 0.0, vocal_tic_per_min = 0.0, out_of_turn_per_min = 0.0, tic_before_turn_probability = 0.0}}
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_realtime_model_is_an_agent_of_a_duplex_sweep(tmp_path: Path, endpoint) -> None:
    path = tmp_path / "rt.toml"
    path.write_text(textwrap.dedent(SWEEP).format(port=endpoint.port, closed=_closed_port()))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(tmp_path / "out"),
                           "--json", "--no-progress", "--no-probe"], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    assert done.returncode == 1 and "1 infra and 0 internal error rows" in done.stderr, \
        done.stdout[-2000:] + done.stderr[-4000:]
    out = tmp_path / "out"
    conv = conversations_df(out).set_index("agent_model")
    rt, gone = conv.loc["openai/gpt-realtime"], conv.loc["openai/gpt-realtime-mini"]
    print(f"\nsweep {wall:.1f} s; call {rt['duplex_duration_s']:.1f} s, {rt['termination_reason']}; lateness p99 "
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
