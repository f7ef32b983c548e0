"""A real bot no one here wrote the framework of: a pipecat phone bot built from pipecat's own parts,
offline, called by tauray's caller end to end. The parts are pipecat's:

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
import time

import numpy as np
import pytest

pytest.importorskip("pipecat", reason="the optional extra tauray[pipecat]")
pytest.importorskip("mcp", reason="the optional extra tauray[live]")

from tauray.actors.voice.engines import ESPEAK, make_asr, make_tts
from tauray.actors.voice.line import resample
from tauray.actors.voice.live.errors import CallFault
from tauray.actors.voice.live.phone import PhoneCall, PhoneSettings
from tauray.actors.voice.live.tool_server import ToolServer, state_callback
from tauray.actors.voice.live.ulaw import from_ulaw, to_ulaw
from tauray.scenarios import default_registry, fresh_state, select_scenarios


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


@pytest.mark.slow  # a child process (the bot), the endpoint, Whisper and pipecat's imports (about 30 s here)
def test_a_pipecat_bot_answers_calls_a_tool_over_mcp_and_is_heard(endpoint):
    scenario = default_registry().get(select_scenarios(None, domain="telecom", split="base")[0].name)
    state, outcomes = fresh_state(scenario), []
    tts = make_tts(ESPEAK)
    problem = to_ulaw(tts.synth("Hi, my mobile data stopped working this morning.", "en-us+f2", 170, 50, 0),
                      tts.sample_rate)
    port = _free_port()
    bot = subprocess.Popen([sys.executable, "-m", "tests.voice.test_live_pipecat", str(port), endpoint.base_url],
                           env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def main():
        async with ToolServer() as tools:
            url = tools.register("pipecat-1", scenario.agent_tools, state_callback(state, outcomes))
            deadline = time.monotonic() + 180
            while True:  # the bot's imports take a while: dial until it listens
                try:
                    call = await PhoneCall.dial(f"ws://127.0.0.1:{port}/ws", conversation_id="pipecat-1",
                                                tool_server_url=url,
                                                settings=PhoneSettings(answer_timeout_s=90, max_call_s=240))
                    break
                except CallFault as fault:
                    if fault.kind != "unreachable" or time.monotonic() > deadline or bot.poll() is not None:
                        raise
                    await asyncio.sleep(1.0)
            try:
                greeting = call.bot_audio(*await call.wait_bot_turn(silence_s=1.5, timeout_s=90))
                call.say_ulaw(problem)
                answer = call.bot_audio(*await call.wait_bot_turn(silence_s=1.5, timeout_s=90))
            finally:
                record = await call.hang_up()
            return greeting, answer, record

    try:
        greeting, answer, record = asyncio.run(asyncio.wait_for(main(), 400))
    finally:
        bot.terminate()
        bot.wait(20)
    asr = make_asr("local/whisper-tiny.en")
    heard = [asr.transcribe(resample(from_ulaw(a), 8000, 16000)).lower() for a in (greeting, answer)]
    print(f"\npipecat bot: heard {heard}; tools {[o.name for o in outcomes]}; clears {record.clears}; lateness "
          f"p50 {record.lateness.p50_ms:.1f} ms p99 {record.lateness.p99_ms:.1f} ms gap {record.lateness.longest_gap_ms:.0f} ms")
    assert any(w in heard[0] for w in ("service", "help", "assist", "support")), heard
    assert outcomes and outcomes[0].name.startswith(("get_", "check_"))  # its MCP client called tauray's tool server
    # one of the scripted agent's three answers after a tool (tauray/endpoint/scripted.py), as Whisper heard it
    assert any(w in heard[1] for w in ("system", "details", "account", "order", "waiting", "information", "file")), heard
    assert record.fault is None and record.ended_by == "caller"


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2])
