"""A real bot no one here wrote the framework of: a pipecat phone bot built from pipecat's own parts,
offline, the agent of a tauray duplex sweep end to end (its tool calls in actions, its verdict in
the tables). The parts are pipecat's:

- its FastAPI websocket transport with its Twilio serializer;
- Silero VAD (and smart-turn) from the wheel;
- Whisper STT on tauray's packaged tiny.en folder;
- its OpenAI LLM service on the local endpoint's scripted agent;
- a speech service over espeak-ng (pipecat has none, so it is written here);
- its MCP client on tauray's tool server.

The bot runs in a child process (``python -m tests.voice.test_live_pipecat PORT ENDPOINT``) so that
its pipeline does not share the caller's pacing loop. Needs the optional extra ``tauray[pipecat]``;
skipped without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

pytest.importorskip("pipecat", reason="the optional extra tauray[pipecat]")
pytest.importorskip("mcp", reason="the optional extra tauray[live]")

from tauray.actors.voice.engines import ESPEAK, make_tts
from tauray.actors.voice.line import resample
from tauray.results import actions_df, conversations_df, messages_df, predicates_df, segments_df
from tauray.results.tables.layout import audio_path
from tauray.results.tables.readers import plain_records


def serve(port: int, endpoint: str) -> None:
    """The pipecat bot: one call per websocket at ``/ws``."""
    import uvicorn  # lazy: the bot's process only
    from fastapi import FastAPI, WebSocket  # lazy: the bot's process only
    from mcp.client.session_group import StreamableHttpParameters  # lazy: the bot's process only
    from pipecat.audio.vad.silero import SileroVADAnalyzer  # lazy: the bot's process only
    from pipecat.frames.frames import LLMRunFrame, TTSAudioRawFrame  # lazy: the bot's process only
    from pipecat.pipeline.pipeline import Pipeline  # lazy: the bot's process only
    from pipecat.pipeline.runner import PipelineRunner  # lazy: the bot's process only
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker  # lazy: the bot's process only
    from pipecat.processors.aggregators.llm_context import LLMContext  # lazy: the bot's process only
    from pipecat.processors.aggregators.llm_response_universal import (  # lazy: the bot's process only
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.serializers.twilio import TwilioFrameSerializer  # lazy: the bot's process only
    from pipecat.services.mcp_service import MCPClient  # lazy: the bot's process only
    from pipecat.services.openai.llm import OpenAILLMService  # lazy: the bot's process only
    from pipecat.services.tts_service import TTSService  # lazy: the bot's process only
    from pipecat.services.whisper.stt import WhisperSTTService  # lazy: the bot's process only
    from pipecat.transports.websocket.fastapi import (  # lazy: the bot's process only
        FastAPIWebsocketParams,
        FastAPIWebsocketTransport,
    )

    from tauray.actors.voice.engines.whisper import model_dir  # lazy: the bot's process only

    class EspeakTTSService(TTSService):
        """espeak-ng through tauray's engine, as a pipecat speech service."""

        def __init__(self, **kwargs):
            super().__init__(push_start_frame=True, push_stop_frames=True, **kwargs)
            self._tts = make_tts(ESPEAK)

        def can_generate_metrics(self) -> bool:
            return False

        async def run_tts(self, text: str, context_id: str):
            audio = await asyncio.to_thread(self._tts.synth, text, "en-us+m7", 170, 50, 0)
            pcm = np.clip(resample(audio, self._tts.sample_rate, self.sample_rate), -1, 1)
            yield TTSAudioRawFrame(audio=(pcm * 32767).astype(np.int16).tobytes(), sample_rate=self.sample_rate,
                                   num_channels=1, context_id=context_id)

    app = FastAPI()

    async def call(websocket: WebSocket):
        await websocket.accept()
        connected, start = json.loads(await websocket.receive_text()), json.loads(await websocket.receive_text())
        assert connected["event"] == "connected" and start["event"] == "start"
        params = start["start"]["customParameters"]
        serializer = TwilioFrameSerializer(stream_sid=start["start"]["streamSid"],
                                           params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
        transport = FastAPIWebsocketTransport(websocket, FastAPIWebsocketParams(
            audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=serializer))
        stt = WhisperSTTService(settings=WhisperSTTService.Settings(model=str(model_dir("local/whisper-tiny.en"))),
                                device="cpu", compute_type="int8")
        llm = OpenAILLMService(api_key="unused", base_url=endpoint,
                               settings=OpenAILLMService.Settings(model="scripted-agent"))
        async with MCPClient(server_params=StreamableHttpParameters(url=params["tool_server_url"])) as mcp:
            context = LLMContext(messages=[{"role": "system", "content": "You are a phone support agent."}],
                                 tools=await mcp.register_tools(llm))
            user, assistant = LLMContextAggregatorPair(
                context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer()))
            pipeline = Pipeline([transport.input(), stt, user, llm, EspeakTTSService(), transport.output(), assistant])
            # Whisper hears 16 kHz: the serializer resamples the line's 8 kHz to the pipeline's input rate.
            worker = PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=16000,
                                                                    audio_out_sample_rate=8000))

            @transport.event_handler("on_client_connected")
            async def greet(transport, client):
                await worker.queue_frames([LLMRunFrame()])

            @transport.event_handler("on_client_disconnected")
            async def gone(transport, client):
                await worker.cancel()

            await PipelineRunner(handle_sigint=False).run(worker)

    call.__annotations__["websocket"] = WebSocket  # the class itself: FastAPI cannot resolve a local name's string
    app.add_api_websocket_route("/ws", call)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def pipecat_bot(endpoint_url: str, timeout_s: float = 180.0) -> Iterator[str]:
    """The bot in a child process, listening on a free loopback port: yields its URL."""
    import socket

    port = _free_port()
    bot = subprocess.Popen([sys.executable, "-m", "tests.voice.test_live_pipecat", str(port), endpoint_url],
                           env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout_s
        while True:  # pipecat's imports take a while: wait until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
                break
            except OSError:
                if bot.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the pipecat bot did not listen on {port} (exit {bot.poll()})") from None
                time.sleep(0.5)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        bot.terminate()
        bot.wait(20)


SWEEP = """
    name = "pipecat-e2e"
    agents = ["pipecat"]
    users = ["scripted"]

    [models.pipecat]
    model = "phone/pipecat-bot"
    phone = {{url = "{url}", answer_timeout_s = 60, lateness_limit = {{p99_ms = 5000, longest_gap_ms = 5000}}}}

    [[scenarios]]
    domain = "mock"
    patterns = ["tau2_mock__create_task_1_with_env_assertions"]

    [cluster]
    actor_cpus = 0.0

    [voice]
    profiles = ["control"]
    turn_taking = ["duplex"]
    tts = "local/espeak-ng"
    asr = "local/whisper-tiny.en"
    keep_audio = "all"
    duplex_rules = {{interrupt_probability = 0.0, backchannel_probability = 0.0, vocal_tic_per_min = 0.0, out_of_turn_per_min = 0.0, tic_before_turn_probability = 0.0, checkin_after_s = 20.0, hangup_after_s = 30.0}}
"""


# The caller waits 20 s for the bot before it checks in, and 30 s more before it hangs up: on a busy
# machine pipecat's own Whisper and turn model answered after the default 8 s, and the caller hung up.
@pytest.mark.slow  # a child process (the bot), the endpoint, Ray, Whisper and pipecat's imports
def test_a_sweep_calls_a_pipecat_bot_whose_tool_calls_and_verdicts_land(endpoint, tmp_path):
    path = tmp_path / "pipecat.toml"
    with pipecat_bot(endpoint.base_url) as url:
        path.write_text(textwrap.dedent(SWEEP).format(url=url))
        done = subprocess.run([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(tmp_path / "out"),
                               "--json", "--no-progress"], capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    out = tmp_path / "out"
    (row,) = plain_records(conversations_df(out))
    said = messages_df(out)
    spoken = said[(said["side"] == "agent") & (said["role"] == "assistant") & said["tool_calls"].isna()]
    calls = actions_df(out).query("kind == 'tool_call'")
    print(f"\npipecat sweep: call {row['duplex_duration_s']:.1f} s, {row['termination_reason']}; bot said (heard) "
          f"{list(spoken['content'])}; tools {list(calls['tool'])}; lateness p50 {row['live_lateness_p50_ms']} ms, "
          f"p99 {row['live_lateness_p99_ms']} ms, gap {row['live_longest_gap_ms']} ms")
    assert row["agent_kind"] == "phone" and row["error_kind"] is None and row["live_fault_kind"] is None
    assert row["termination_reason"] in ("user_stop", "bot_hung_up", "caller_hung_up")
    # its MCP client called tauray's tool server: the call is in actions and messages as a model's would be
    assert len(calls) >= 1 and set(calls["side"]) == {"agent"} and calls["tool"].iloc[0].startswith(("get_", "check_"))
    assert row["agent_tool_calls"] == len(calls)
    # the bot's greeting, as the caller heard it, opens the agent's side of the transcript
    assert any(w in spoken["content"].iloc[0].lower() for w in ("service", "help", "assist", "support"))
    # the verdict: scored as any agent's, the task's predicates each with a row (a bot that only looks
    # things up does not create the task: not a success, and the row says why)
    assert row["success"] is False and len(predicates_df(out)) == row["predicates_total"] > 0
    assert len(segments_df(out)) == row["segments"] >= 3
    assert audio_path(out, row["recording_sha256"]).read_bytes()[:4] == b"fLaC"


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2])
