"""Gemini Live's protocol (:mod:`tauray.actors.voice.live.realtime_gemini`) on a call's line,
against a small loopback fake of the service in this process: setup with the tools, the line's
audio out as 16 kHz PCM, 24 kHz PCM back onto the line, a tool call answered by id and name, an
interruption dropping the queue, transcripts joined per turn, usage by modality."""

from __future__ import annotations

import asyncio
import base64
import json

import numpy as np
import pytest

from tauray.actors.voice.live import realtime_openai as rt
from tauray.actors.voice.live.errors import MediaStreamError
from tauray.actors.voice.live.realtime_gemini import GeminiLive
from tauray.actors.voice.live.settings import PhoneSettings
from tauray.actors.voice.live.ulaw import to_ulaw

pytest.importorskip("websockets", reason="the optional extra tauray[live]")

from websockets.asyncio.server import serve  # noqa: E402

from tauray.actors.voice.live.realtime_call import RealtimeCall  # noqa: E402

KEY = "AIza-test-key-0123456789"


def _pcm24(seconds: float) -> str:
    t = np.arange(int(24000 * seconds)) / 24000
    return base64.b64encode((0.3 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2").tobytes()).decode()


def _audio(seconds: float) -> str:
    return json.dumps({"serverContent": {"modelTurn": {"parts": [
        {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": _pcm24(seconds)}}]}}})


def _protocol() -> GeminiLive:
    return GeminiLive(model="gemini-live-2.5-flash", instructions="You are the agent.",
                      tools=[{"name": "get_users", "description": "List users.",
                              "parameters": {"type": "object", "properties": {}}}])


def test_a_gemini_live_session_on_the_line_with_a_tool_call_and_an_interruption():
    got: list[dict] = []
    headers: list[str | None] = []
    tools: list[tuple[str, dict]] = []

    async def handler(ws):
        headers.append(ws.request.headers.get("x-goog-api-key"))
        setup = json.loads(await ws.recv())
        got.append(setup)
        await ws.send(json.dumps({"setupComplete": {}}))

        async def listen():
            async for text in ws:
                got.append(json.loads(text))
        listener = asyncio.create_task(listen())
        await asyncio.sleep(0.1)
        await ws.send(_audio(0.5))
        await ws.send(json.dumps({"serverContent": {"outputTranscription": {"text": "Hello "}}}))
        await ws.send(json.dumps({"serverContent": {"outputTranscription": {"text": "there."}, "turnComplete": True},
                                  "usageMetadata": {"promptTokenCount": 30, "responseTokenCount": 40,
                                                    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 20},
                                                                            {"modality": "AUDIO", "tokenCount": 10}],
                                                    "responseTokensDetails": [{"modality": "AUDIO",
                                                                               "tokenCount": 40}]}}))
        await ws.send(json.dumps({"toolCall": {"functionCalls": [{"id": "fc1", "name": "get_users", "args": {}}]}}))
        for _ in range(40):
            if any("toolResponse" in m for m in got):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.6)  # the greeting has played
        await ws.send(_audio(8.0))  # far more than plays before the cut, however late this machine runs
        await asyncio.sleep(0.5)
        await ws.send(json.dumps({"serverContent": {"interrupted": True,
                                                    "inputTranscription": {"text": "hold on"}}}))
        await ws.send(_audio(0.3))  # the next turn's audio plays
        await asyncio.sleep(0.8)
        listener.cancel()
        await ws.close()

    class Reply:
        text, error = '[{"user_id": "user_1"}]', False

    async def run_tool(name, arguments):
        tools.append((name, arguments))
        return Reply()

    async def main():
        to_ulaw(np.zeros(2400, np.float32), 24000)  # the resampler loaded before the call (run_live warms it up)
        async with serve(handler, "127.0.0.1", 0) as server:
            url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/ws/BidiGenerateContent"
            call = await RealtimeCall.open(url, protocol=_protocol(), key_header="x-goog-api-key", key=KEY,
                                           conversation_id="c", run_tool=run_tool, settings=PhoneSettings())
            return await call.wait_ended(10)

    record = asyncio.run(main())
    setup = got[0]["setup"]
    assert setup["model"] == "models/gemini-live-2.5-flash" and setup["generationConfig"]["responseModalities"] == \
        ["AUDIO"]
    assert setup["systemInstruction"]["parts"][0]["text"] == "You are the agent."
    assert setup["tools"][0]["functionDeclarations"][0]["name"] == "get_users"
    assert headers == [KEY] and "clientContent" in got[1]  # the key in a header; then the greeting is asked for
    frames = [m["realtimeInput"]["audio"] for m in got if "realtimeInput" in m]
    assert len(frames) > 50 and {f["mimeType"] for f in frames} == {"audio/pcm;rate=16000"}
    assert {len(base64.b64decode(f["data"])) for f in frames} == {640}  # 20 ms at 16 kHz, 16-bit
    assert tools == [("get_users", {})]
    (answer,) = [m["toolResponse"] for m in got if "toolResponse" in m]
    assert answer == {"functionResponses": [{"id": "fc1", "name": "get_users",
                                             "response": {"result": '[{"user_id": "user_1"}]'}}]}
    assert 0.3 <= record.bot_audio_s < 5.0  # the greeting, some of the 8 s turn before the cut, the 0.3 s after
    assert record.clears == 1 and record.truncations == 1  # dropped here; Gemini has no truncate event
    assert [(t.side, t.text) for t in record.transcripts] == [("agent", "Hello there."), ("caller", "hold on")]
    assert record.usage == {"input_text_tokens": 20, "input_audio_tokens": 10, "output_audio_tokens": 40}
    assert record.ended_by == "bot" and record.protocol == "gemini-live"


def test_a_bad_gemini_message_is_one_line():
    for bad, line in [("nope", "gemini live: a frame that is not JSON"), ("{}", "not a JSON object with a field"),
                      (json.dumps({"toolCall": {"functionCalls": [{"name": "x"}]}}),
                       "gemini live: toolCall: a bad or missing field 'id'")]:
        with pytest.raises(MediaStreamError, match=line):
            _protocol().decode(bad)
    assert _protocol().decode(json.dumps({"goAway": {"timeLeft": "10s"}})) == [rt.Ignored("goAway")]


def test_a_gemini_model_is_a_realtime_agent_probed_by_its_setup():
    from tauray.actors.llm.spec import ModelSpec
    from tauray.actors.voice.live.agent import probe_phones
    from tauray.actors.voice.live.realtime_agent import realtime_agent
    from tauray.actors.voice.live.realtime_gemini import GEMINI_URL

    spec = ModelSpec.model_validate({"model": "gemini/gemini-live-2.5-flash-preview-native-audio-09-2025",
                                     "realtime": {"voice": "Puck"}})
    agent = realtime_agent(spec)
    assert agent.url() == (GEMINI_URL, "x-goog-api-key") and isinstance(agent.protocol("p", []), GeminiLive)
    assert agent.prices_per_token()["output_audio_tokens"] > 0  # litellm prices its audio

    async def handler(ws):
        setup = json.loads(await ws.recv())
        if "setup" in setup:
            await ws.send(json.dumps({"setupComplete": {}}))
        await ws.wait_closed()

    async def main():
        async with serve(handler, "127.0.0.1", 0) as server:
            fake = spec.model_copy(update={"api_base": f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/ws"})
            return await asyncio.to_thread(probe_phones, [fake])

    (check,) = asyncio.run(main())
    assert check.ok and "opened (session.created) and closed" in check.line and "(litellm)" in check.line


def test_the_endpoints_gemini_live_model_speaks_hears_calls_a_tool_is_interrupted_and_refuses_bad_messages(endpoint):
    """The endpoint's side of BidiGenerateContent: setupComplete, the greeting as 24 kHz parts with its
    transcription and usage, the caller's speech heard (audioStreamEnd), a toolCall answered by
    toolResponse, speech over its turn interrupting it, and a bad message closing with one line."""
    pytest.importorskip("faster_whisper", reason="the optional extra tauray[voice]")
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from tauray.actors.voice.engines import ESPEAK, make_tts
    from tauray.actors.voice.line import resample
    from tauray.endpoint.realtime_gemini_bot import GEMINI_PATH

    tts = make_tts(ESPEAK)
    words = resample(tts.synth("I need help with my task please.", "en-us", 160, 50, 0), tts.sample_rate, 16000)
    pcm = (np.clip(words, -1, 1) * 32767).astype("<i2").tobytes()

    def audio(chunk: bytes) -> str:
        return json.dumps({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000",
                                                       "data": base64.b64encode(chunk).decode()}}})

    async def until(ws, seen: list[dict], field: str) -> dict:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 60))
            seen.append(message)
            if field in message or field in message.get("serverContent", {}):
                return message

    async def main():
        url = f"ws://127.0.0.1:{endpoint.port}{GEMINI_PATH}"
        seen: list[dict] = []
        async with connect(url) as ws:  # a first message that is not setup
            await ws.send(json.dumps({"realtimeInput": {}}))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
        async with connect(url) as ws:
            await ws.send(json.dumps({"setup": {"model": "models/gemini-live-2.5-flash", "generationConfig": {
                "responseModalities": ["AUDIO"]}, "systemInstruction": {"parts": [{"text": "Be brief."}]},
                "tools": [{"functionDeclarations": [{"name": "get_users", "description": "List users.",
                                                     "parameters": {"type": "object", "properties": {}}}]}]}}))
            await until(ws, seen, "setupComplete")
            await ws.send(json.dumps({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Greet."}]}],
                                                        "turnComplete": True}}))
            greeting = await until(ws, seen, "turnComplete")
            for at in range(0, len(pcm), 640):
                await ws.send(audio(pcm[at:at + 640]))
            await ws.send(json.dumps({"realtimeInput": {"audioStreamEnd": True}}))
            heard = await until(ws, seen, "inputTranscription")
            call = await until(ws, seen, "toolCall")
            (fc,) = call["toolCall"]["functionCalls"]
            await ws.send(json.dumps({"toolResponse": {"functionResponses": [
                {"id": fc["id"], "name": fc["name"], "response": {"result": "user_1"}}]}}))
            await until(ws, seen, "modelTurn")
            for at in range(0, 640 * 10, 640):  # 200 ms of speech over its answer
                await ws.send(audio(pcm[8000 + at:8000 + at + 640]))
            interrupted = await until(ws, seen, "interrupted")
            await ws.send(json.dumps({"noSuchMessage": {}}))
            with pytest.raises(ConnectionClosed) as bad:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
        return closed.value, greeting, heard, fc, interrupted, bad.value, seen

    closed, greeting, heard, fc, interrupted, bad, seen = asyncio.run(main())
    assert closed.rcvd.code == 1007 and "the first message must be setup" in closed.rcvd.reason
    parts = [p["inlineData"] for m in seen for p in m.get("serverContent", {}).get("modelTurn", {}).get("parts", [])]
    assert {p["mimeType"] for p in parts} == {"audio/pcm;rate=24000"} and len(base64.b64decode(parts[0]["data"])) == 4800
    said = [m["serverContent"]["outputTranscription"]["text"] for m in seen if "outputTranscription" in
            m.get("serverContent", {})]
    assert any(w in said[0].lower() for w in ("help", "assist", "service", "support"))  # the greeting
    assert any("generationComplete" in m.get("serverContent", {}) for m in seen)
    usage = greeting["usageMetadata"]
    assert usage["responseTokensDetails"][0] == {"modality": "AUDIO", "tokenCount": usage["responseTokenCount"]}
    assert usage["responseTokenCount"] >= 20  # 20 a second spoken: a greeting of over a second
    assert "task" in heard["serverContent"]["inputTranscription"]["text"].lower()
    assert fc["name"] == "get_users" and fc["args"] == {}
    assert interrupted["usageMetadata"]["promptTokensDetails"][1]["modality"] == "AUDIO"
    assert bad.rcvd.code == 1007 and bad.rcvd.reason == "Request contains an invalid argument: unknown message " \
        "'noSuchMessage'."


def test_a_side_of_gemini_usage_without_details_is_counted_from_its_total():
    from tauray.actors.voice.live.realtime_gemini import _usage

    # a tool call's usageMetadata may give the response's count without its modalities: not lost
    assert _usage({"promptTokenCount": 15, "responseTokenCount": 7, "promptTokensDetails": [
        {"modality": "AUDIO", "tokenCount": 5}, {"modality": "TEXT", "tokenCount": 10}]}) == \
        {"input_audio_tokens": 5, "input_text_tokens": 10, "output_text_tokens": 7}
    assert _usage({"promptTokenCount": 3}) == {"input_text_tokens": 3}
