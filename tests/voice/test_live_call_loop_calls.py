"""Duplex conversations with a live phone bot as the agent, on the wall clock (run_live).

* A tone bot in this process (websockets on 127.0.0.1): it greets, hears the caller's tone words
  through the line (a level gate, 700 ms of silence ends a turn, the tone recogniser), answers, and
  hangs up after a goodbye. The tone voice is heard back exactly, so what the caller heard is known
  word for word, and the segments can be checked against the recording frame by frame.
The endpoint's phone bot (espeak-ng, Whisper on both sides, its tools over MCP) is called end to end
by tests/voice/test_live_sweep.py, as the agent of a sweep.

Slow: each is a real call of several seconds.

Lateness limits are relaxed in these calls' PhoneSettings: this machine is shared and loaded (see
docs/live-agents.md, "Measured here"), so whether the harness kept the default limit is recorded,
not asserted.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence

import numpy as np
import pytest

pytest.importorskip("websockets", reason="the optional extra tauray[live]")
pytest.importorskip("soundfile", reason="the optional extra tauray[voice]")
import soundfile
from websockets.asyncio.server import serve

from tauray.actors.voice.duplex.talk import Message
from tauray.actors.voice.duplex.tones import ToneCodec
from tauray.actors.voice.line import resample
from tauray.actors.voice.live import media_stream as ms
from tauray.actors.voice.live.call_loop import LiveResult, run_live
from tauray.actors.voice.live.lateness import LatenessLimit
from tauray.actors.voice.live.phone import PhoneSettings
from tauray.actors.voice.live.ulaw import FRAME_BYTES, from_ulaw, to_ulaw

pytestmark = pytest.mark.slow

RELAXED = PhoneSettings(answer_timeout_s=30.0, max_call_s=90.0, lateness_limit=LatenessLimit(p99_ms=5000.0,
                                                                                            longest_gap_ms=5000.0))
QUIET = {"interrupt_probability": 0.0, "backchannel_probability": 0.0, "vocal_tic_per_min": 0.0,
         "out_of_turn_per_min": 0.0, "tic_before_turn_probability": 0.0, "checkin_after_s": 20.0}


def scripted(lines: Sequence[str]):
    def policy(history: Sequence[Message]) -> str:
        return lines[min(sum(1 for m in history if m.role == "user"), len(lines) - 1)]
    return policy


def _speech_frames(samples: np.ndarray) -> np.ndarray:
    n = samples.size // 160
    x = samples[:n * 160].astype(np.float64).reshape(n, 160) / 32768.0
    with np.errstate(divide="ignore"):
        return 20 * np.log10(np.sqrt(np.mean(x * x, axis=1))) >= -40.0


def _channels(result: LiveResult) -> tuple[np.ndarray, np.ndarray]:
    audio, rate = soundfile.read(io.BytesIO(result.recording), dtype="int16")
    assert rate == 8000 and audio.shape == (round(result.duration_s / 0.02) * 160, 2)
    return audio[:, 0], audio[:, 1]


# --- a tone bot in this process ------------------------------------------------------------------

def tone_bot(codec: ToneCodec, heard: list[str]):
    tts, asr = codec.tts(), codec.asr()

    async def bot(ws):
        await ws.recv()  # connected
        sid = ms.decode(await ws.recv()).stream_sid

        async def say(text: str) -> None:
            await ws.send(ms.encode(ms.media(sid, to_ulaw(tts.synth(text), tts.sample_rate))))

        await say("hello how can i help")
        turn, speech, silence = [], 0, 0
        async for text in ws:
            message = ms.decode(text)
            if not isinstance(message, ms.Media):
                continue
            audio = from_ulaw(message.audio())
            loud = 20 * np.log10(max(float(np.sqrt(np.mean(audio ** 2))), 1e-9)) >= -40.0
            speech, silence = (speech + 1, 0) if loud else (speech, silence + 1 if speech else 0)
            if speech:
                turn.append(audio)
            if speech and silence >= 35:  # 700 ms of silence ends the caller's turn
                words = asr.transcribe(resample(np.concatenate(turn), 8000, codec.rate))
                heard.append(words)
                turn, speech, silence = [], 0, 0
                if "goodbye" in words:
                    await say("goodbye")
                    await asyncio.sleep(0.6)  # its 0.24 s played out, then the bot hangs up
                    await ws.close()
                    return
                await say("okay i can help with that")
    return bot


def _tone_call(lines: Sequence[str], rules: dict | None = None, max_s: float = 40.0) -> tuple[LiveResult, list[str]]:
    codec, heard = ToneCodec(), []

    async def main():
        server = await serve(tone_bot(codec, heard), "127.0.0.1", 0, max_queue=None)  # the bot reads on while it closes
        async with server:
            url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/bot"
            return await run_live(url, caller_policy=scripted(lines), tts=codec.tts(), asr=codec.asr(),
                                  rules={**QUIET, **(rules or {})}, clock={"max_duration_s": max_s}, phone=RELAXED,
                                  unit_id="tone-1",
                                  conversation_id="conv-tone")

    return asyncio.run(asyncio.wait_for(main(), 90)), heard


def test_a_duplex_call_to_a_tone_bot_the_caller_hangs_up_and_the_timeline_is_the_recording():
    result, bot_heard = _tone_call(["my phone is broken", "thank you that is all ###STOP###"])
    assert result.ended == "caller_hung_up" and result.ended_by == "caller" and result.fault is None
    # What the caller heard of the bot, word for word, and what the bot heard of the caller.
    assert [m.content for m in result.caller_history] == ["hello how can i help", "my phone is broken",
                                                          "okay i can help with that", "thank you that is all"]
    assert bot_heard == ["my phone is broken"]
    assert [(s.side, s.kind) for s in result.segments] == [("agent", "speech"), ("user", "speech"),
                                                           ("agent", "speech"), ("user", "speech")]
    assert [s.heard_text for s in result.segments if s.side == "agent"] == ["hello how can i help",
                                                                             "okay i can help with that"]
    assert result.agent_replies == 2 and result.caller_counts["turns"] == 2
    # The caller answered the bot's silence of 1 s, as its rules say; the bot answered in 0.7 s and more.
    m = result.metrics
    assert m.response_rate.n == 1 and m.response_rate.value == 1.0
    assert 0.7 <= m.response_latency_s.value <= 2.5
    # The timeline is the recording: each side's speech frames lie exactly in its segments.
    left, right = _channels(result)
    for side, samples in (("user", left), ("agent", right)):
        frames = np.zeros(samples.size // 160, dtype=bool)
        for s in result.segments:
            if s.side == side:
                frames[s.frames[0]:s.frames[1]] = True
        loud = _speech_frames(samples)
        assert loud.any() and not (loud & ~frames).any(), side  # no speech outside a segment
        assert all(loud[s.frames[0]] for s in result.segments if s.side == side), side  # each starts in speech
    assert result.lateness.frames * FRAME_BYTES == left.size
    assert result.compute_s["tts"] > 0 and result.tick_lag_max_s >= 0.0
    print(f"\ntone call: {result.duration_s:.2f} s, lateness p50 {result.lateness.p50_ms:.1f} ms, p99 "
          f"{result.lateness.p99_ms:.1f} ms, gap {result.lateness.longest_gap_ms:.0f} ms; caller moves "
          f"{result.caller_moves} (max {result.caller_move_max_s:.2f} s); tick lag p50 {result.tick_lag_p50_s:.2f} s, "
          f"max {result.tick_lag_max_s:.2f} s")


def test_the_bot_hanging_up_ends_the_call():
    result, bot_heard = _tone_call(["my phone is broken", "thank you goodbye"])
    assert bot_heard == ["my phone is broken", "thank you goodbye"]
    assert result.ended == "bot_hung_up" and result.ended_by == "bot" and result.fault is None
    last = result.segments[-1]  # the bot's goodbye reached the caller's stream before the bot hung up
    assert (last.side, last.heard_text) == ("agent", "goodbye")


def test_a_goodbye_running_past_the_longest_call_is_cut_there():
    words = " ".join(f"word{i}" for i in range(20))  # 6 s of tones, in a call of 2 s
    result, _ = _tone_call([f"{words} ###STOP###"], rules={"opening": "caller"}, max_s=2.0)
    assert result.ended == "max_duration" and result.ended_by == "caller"
    assert 2.0 <= result.duration_s <= 2.1 and result.steps == 10  # hung up once the line had played 2 s
    caller = [s for s in result.segments if s.side == "user"]
    assert len(caller) == 1 and caller[0].end_s == result.duration_s  # cut where the call ended
    assert caller[0].start_s == result.caller_move_max_s  # planned at 0, it went out once synthesised


# --- the endpoint's phone bot ---------------------------------------------------------------------
