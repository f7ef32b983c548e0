"""The caller's side of a live call (Twilio's role): it dials a bot's websocket on 127.0.0.1, sends
connected and start with the custom parameters, streams its audio in 20 ms frames on the wall
clock, plays the bot's audio as Twilio would (marks answered when played, clear drops the rest),
records its own lateness, and turns each fault into one line. The bots here are small in-process
websocket servers, so every test is quick and stops by itself."""

from __future__ import annotations

import asyncio
import json
import socket

import numpy as np
import pytest

pytest.importorskip("websockets", reason="the optional extra tauray[live]")
from websockets.asyncio.server import serve

from tauray.actors.voice.live import media_stream as ms
from tauray.actors.voice.live.errors import CallFault
from tauray.actors.voice.live.lateness import Lateness, LatenessLimit, LatenessMeter
from tauray.actors.voice.live.phone import PhoneCall, PhoneSettings
from tauray.actors.voice.live.ulaw import FRAME_BYTES

QUICK = PhoneSettings(connect_timeout_s=1.0, answer_timeout_s=1.0, close_timeout_s=0.5, max_call_s=5.0)


def run(coro, timeout=8.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def _serve(handler):
    server = await serve(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/bot"


async def _opening(ws):
    first, second = ms.decode(await ws.recv()), ms.decode(await ws.recv())
    assert isinstance(first, ms.Connected) and isinstance(second, ms.Start)
    return second


def test_a_call_carries_its_parameters_and_audio_both_ways():
    seen: dict = {"caller": [], "marks": []}

    async def bot(ws):
        start = await _opening(ws)
        seen["params"] = start.start.custom_parameters
        sid = start.stream_sid
        for _ in range(2):
            await ws.send(ms.encode(ms.media(sid, b"\x10" * 400)))  # 2 × 50 ms: not frame-sized
        await ws.send(ms.encode(ms.mark(sid, "greeting")))
        while len(seen["caller"]) < 15 or not seen["marks"]:
            msg = ms.decode(await ws.recv())
            if isinstance(msg, ms.Media):
                seen["caller"].append(msg)
            elif isinstance(msg, ms.Mark):
                seen["marks"].append((msg.mark.name, len(seen["caller"])))
        await ws.close()

    async def main():
        server, url = await _serve(bot)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="conv-7", tool_server_url="http://127.0.0.1:1/mcp/conv-7",
                                        settings=QUICK)
            call.say(np.full(800, 0.5, np.float32), 8000)  # 0.1 s of the caller's audio
            return await call.wait_ended()

    record = run(main())
    assert seen["params"] == {"conversation_id": "conv-7", "tool_server_url": "http://127.0.0.1:1/mcp/conv-7"}
    frames = seen["caller"]
    assert [m.media.chunk for m in frames] == [str(i) for i in range(1, len(frames) + 1)]
    assert [m.media.timestamp for m in frames[:3]] == ["0", "20", "40"]
    assert [int(m.sequence_number) for m in frames[:2]] == [2, 3]  # start was 1
    assert all(len(m.audio()) == FRAME_BYTES and m.media.track == "inbound" for m in frames)
    assert frames[0].audio() != frames[-1].audio()  # speech, then silence
    name, after = seen["marks"][0]
    assert name == "greeting" and after >= 5  # answered once its 100 ms had played
    assert record.ended_by == "bot" and record.fault is None
    assert record.bot_audio_s == pytest.approx(0.1) and record.caller_audio_s == pytest.approx(0.1)
    assert record.marks_answered == ("greeting",)
    lateness = record.lateness  # how late depends on the machine's load: its bounds, not its size
    assert lateness.frames >= 15 and 0 <= lateness.p50_ms <= lateness.p99_ms <= lateness.max_ms
    assert len(call_line := record.bot_line) == len(record.caller_line) == record.lateness.frames * FRAME_BYTES
    assert call_line[:800] == b"\x10" * 800


def test_clear_drops_the_unplayed_audio_and_answers_its_mark():
    got: list = []

    async def bot(ws):
        sid = (await _opening(ws)).stream_sid
        await ws.send(ms.encode(ms.media(sid, b"\x10" * 16000)))  # 2 s
        await ws.send(ms.encode(ms.mark(sid, "reply-1")))
        for _ in range(10):  # the caller plays a frame of the queue with each frame it sends
            assert isinstance(ms.decode(await ws.recv()), ms.Media)
        await ws.send(ms.encode(ms.clear(sid)))
        while not got:
            msg = ms.decode(await ws.recv())
            if isinstance(msg, ms.Mark):
                got.append(msg.mark.name)
        await ws.close()

    async def main():
        server, url = await _serve(bot)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://127.0.0.1:1/mcp/c",
                                        settings=QUICK)
            return await call.wait_ended()

    record = run(main())
    assert got == ["reply-1"] and record.clears == 1
    assert 0.0 < record.bot_audio_s < 1.9  # some played, the rest of the 2 s dropped


def test_the_caller_hangs_up_with_stop():
    got: list = []

    async def bot(ws):
        sid = (await _opening(ws)).stream_sid
        await ws.send(ms.encode(ms.media(sid, b"\x10" * 160)))
        async for text in ws:
            got.append(ms.decode(text))

    async def main():
        server, url = await _serve(bot)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x", settings=QUICK)
            await call.wait_bot_turn(silence_s=0.1, timeout_s=2.0)
            record = await call.hang_up()
            await asyncio.sleep(0.05)
            return record

    record = run(main())
    assert isinstance(got[-1], ms.Stop) and record.ended_by == "caller"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fault(coro) -> CallFault:
    with pytest.raises(CallFault) as caught:
        run(coro)
    assert "\n" not in str(caught.value)
    return caught.value


def test_an_unreachable_bot_is_one_line_without_the_urls_secrets():
    url = f"ws://127.0.0.1:{_free_port()}/bot?token=s3cret"
    fault = _fault(PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x", settings=QUICK))
    assert fault.kind == "unreachable" and fault.infra
    assert str(fault).startswith(f"phone: cannot reach the bot at ws://127.0.0.1:{url.split(':')[2].split('/')[0]}/bot")
    assert "s3cret" not in str(fault)


def test_a_peer_that_is_not_a_websocket_is_another_protocol():
    async def http(reader, writer):
        await reader.read(1024)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nhi")
        await writer.drain()
        writer.close()

    async def main():
        server = await asyncio.start_server(http, "127.0.0.1", 0)
        async with server:
            port = server.sockets[0].getsockname()[1]
            await PhoneCall.dial(f"ws://127.0.0.1:{port}/", conversation_id="c", tool_server_url="http://x",
                                 settings=QUICK)

    fault = _fault(main())
    assert fault.kind == "wrong_protocol" and "HTTP 200" in str(fault)


def test_a_bot_speaking_another_websocket_protocol_is_named():
    async def realtime(ws):  # an OpenAI-Realtime-style server, not a media-stream bot
        await ws.send(json.dumps({"type": "session.created", "session": {}}))
        async for _ in ws:
            pass

    async def main():
        server, url = await _serve(realtime)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x", settings=QUICK)
            await call.wait_ended()

    fault = _fault(main())
    assert fault.kind == "wrong_protocol"
    assert "does not speak the media-stream protocol" in str(fault) and "no 'event' field" in str(fault)


def test_a_bot_that_never_answers_times_out():
    async def mute(ws):
        async for _ in ws:
            pass

    async def main():
        server, url = await _serve(mute)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x",
                                        settings=QUICK.model_copy(update={"answer_timeout_s": 0.3}))
            await call.wait_ended()

    fault = _fault(main())
    assert fault.kind == "no_answer" and "said nothing within 0.3 s" in str(fault)


def test_a_bot_that_hangs_up_at_once_is_named():
    async def rude(ws):
        await _opening(ws)
        await ws.close()

    async def main():
        server, url = await _serve(rude)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x", settings=QUICK)
            await call.wait_ended()

    fault = _fault(main())
    assert fault.kind == "hung_up" and "hung up before saying anything" in str(fault)


def test_lateness_summary_and_its_limit():
    meter = LatenessMeter(frame_s=0.02)
    for k in range(100):
        meter.sent(k * 0.02 + (0.05 if k == 50 else 0.001))
    summary = meter.summary()
    assert summary.frames == 100 and summary.p50_ms == pytest.approx(1.0)
    assert summary.max_ms == pytest.approx(50.0) and summary.longest_gap_ms == pytest.approx(69.0)
    assert summary.breach(LatenessLimit(p99_ms=60, longest_gap_ms=200)) is None
    reason = summary.breach(LatenessLimit(p99_ms=60, longest_gap_ms=60))
    assert reason == "the harness fell behind: longest gap between frames 69 ms (limit 60 ms)"
    assert Lateness.empty().frames == 0


def test_a_turn_the_bot_ends_by_hanging_up_is_still_its_turn():
    async def brief(ws):
        sid = (await _opening(ws)).stream_sid
        await ws.send(ms.encode(ms.media(sid, b"\x10" * 800)))
        await asyncio.sleep(0.2)
        await ws.close()

    async def main():
        server, url = await _serve(brief)
        async with server:
            call = await PhoneCall.dial(url, conversation_id="c", tool_server_url="http://x", settings=QUICK)
            first, end = await call.wait_bot_turn(silence_s=5.0, timeout_s=3.0)
            return call.bot_audio(first, end), await call.wait_ended()

    audio, record = run(main())
    assert audio == b"\x10" * 800 and record.ended_by == "bot"
