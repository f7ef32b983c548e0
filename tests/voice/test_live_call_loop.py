"""The duplex loop with a live phone bot as the agent (tauray/actors/voice/live/call_loop.py), in
parts: the caller's audio placed at absolute frames and cut at a frame (outgoing.py), the caller's
stream put on the line and moved where the line could not follow (call_loop.to_line), and the bot's
line read into the agent's stream, its speech into chunks and replies (bot_stream.py). All on
hand-built audio, without sockets, except the dial that cannot reach its bot. The conversations on
the wall clock are in tests/voice/test_live_call_loop_calls.py (slow)."""

from __future__ import annotations

import asyncio
import socket

import numpy as np
import pytest

from tauray.actors.voice.duplex.clock import ComputeLedger
from tauray.actors.voice.duplex.errors import DuplexConfigError
from tauray.actors.voice.duplex.stream import Chunk, Stream
from tauray.actors.voice.live.bot_stream import PhoneAgent, PhoneAgentSettings
from tauray.actors.voice.live.outgoing import OutgoingAudio
from tauray.actors.voice.live.ulaw import FRAME_BYTES, SILENCE_BYTE, SILENCE_FRAME, decode_samples, encode_samples

pytest.importorskip("soundfile", reason="the optional extra tauray[voice]")

SPEECH = bytes([0x20]) * FRAME_BYTES  # a loud frame (about -9 dBFS)


def _frames(raw: bytes) -> list[bytes]:
    return [raw[i:i + FRAME_BYTES] for i in range(0, len(raw), FRAME_BYTES)]


def _tone(frames: int, level: float = 0.3, pitch: float = 700.0) -> np.ndarray:
    """Line samples as μ-law decodes them (so they go out and come back exactly)."""
    n = np.arange(frames * FRAME_BYTES)
    audio = (level * 32767 * np.sin(2 * np.pi * pitch * n / 8000)).astype(np.int16)
    return decode_samples(encode_samples(audio))


# --- the caller's audio at absolute frames ------------------------------------------------------

def test_audio_placed_at_a_later_frame_has_silence_before_it_that_is_not_speech():
    out = OutgoingAudio()
    assert out.place(3, SPEECH * 2) == 3
    assert out.queued_frames == 5 and out.speaking
    taken = [out.take() for _ in range(6)]
    assert [speech for _, speech in taken] == [0, 0, 0, FRAME_BYTES, FRAME_BYTES, 0]
    assert [frame for frame, _ in taken] == [SILENCE_FRAME] * 3 + [SPEECH] * 2 + [SILENCE_FRAME]
    assert out.next_frame == 6 and not out.speaking


def test_audio_placed_at_a_frame_already_sent_starts_at_the_next_frame_not_yet_sent():
    out = OutgoingAudio()
    for _ in range(7):
        out.take()
    assert out.place(4, SPEECH) == 7  # frames 4-6 have gone out: the chunk moves to 7
    assert out.take() == (SPEECH, FRAME_BYTES)


def test_audio_placed_over_queued_audio_follows_it_and_a_partial_frame_is_padded():
    out = OutgoingAudio()
    out.append(SPEECH[:100])  # say(): bytes as given, 100 of a frame
    assert out.place(0, SPEECH) == 1  # frame 0 holds the first utterance: the next goes to frame 1
    first, speech = out.take()
    assert first == SPEECH[:100] + bytes([SILENCE_BYTE]) * 60 and speech == 100
    assert out.take() == (SPEECH, FRAME_BYTES)
    assert out.place(5, SPEECH[:50]) == 5
    assert [out.take()[1] for _ in range(4)] == [0, 0, 0, 50]


def test_a_cut_drops_what_is_queued_from_its_frame_but_never_a_frame_already_sent():
    out = OutgoingAudio()
    out.place(0, SPEECH * 10)
    out.take(), out.take()
    assert out.cut(5) == 5  # frames 2-4 stay queued, 5-9 go
    assert [out.take()[1] for _ in range(4)] == [FRAME_BYTES] * 3 + [0]
    out.place(10, SPEECH * 10)
    for _ in range(6):
        out.take()  # frames 6-9 (the silence before it), then 10 and 11
    assert out.next_frame == 12
    assert out.cut(8) == 12  # the frames from 8 to 11 went out already: silent from 12
    assert not out.speaking and out.take() == (SILENCE_FRAME, 0)


# --- the caller's stream onto the line ----------------------------------------------------------

class _Line:
    """A call's caller side without a socket: frames leave when the test says so."""

    def __init__(self) -> None:
        self.out = OutgoingAudio()
        self.sent = bytearray()

    def send(self, until: int) -> None:
        while self.out.next_frame < until:
            self.sent += self.out.take()[0]

    def place_ulaw(self, frame: int, raw: bytes) -> int:
        return self.out.place(frame, raw)

    def cut_caller(self, frame: int) -> int:
        return self.out.cut(frame)


def _chunk(start: int, frames: int, pitch: float = 700.0) -> Chunk:
    return Chunk("user", "speech", start, _tone(frames, pitch=pitch), "", ())


def test_a_chunk_made_after_its_frame_went_by_moves_to_the_next_frame_and_the_line_matches_the_stream():
    from tauray.actors.voice.live.call_loop import changes, snapshot, to_line

    stream, line = Stream("user"), _Line()
    before = snapshot(stream)
    first = stream.add(_chunk(5, 10))
    second = stream.add(_chunk(15, 6, pitch=900.0))  # touching: a tic, then the turn
    line.send(8)  # synthesis took 8 frames of real time
    moved = to_line(line, stream, changes(stream, before))
    assert [(c.start, c.end, by) for c, by in moved] == [(8, 18, 3), (18, 24, 3)]
    assert [id(c) for c, _ in moved] == [id(first), id(second)]
    line.send(30)
    assert decode_samples(bytes(line.sent)).tolist() == stream.samples(30).tolist()


def test_a_cut_the_line_reaches_late_keeps_the_frames_sent_in_the_stream():
    from tauray.actors.voice.live.call_loop import changes, snapshot, to_line

    stream, line = Stream("user"), _Line()
    before = snapshot(stream)
    turn, more = stream.add(_chunk(0, 14)), stream.add(_chunk(14, 16, pitch=900.0))
    to_line(line, stream, changes(stream, before))
    line.send(10)
    before = snapshot(stream)
    stream.stop(8, 12)  # the caller yields at frame 12: the turn is cut there and the next chunk dropped
    assert [(c.start, c.end) for c in stream.chunks] == [(0, 12)]
    line.send(15)  # the cut reaches the line at frame 15
    assert to_line(line, stream, changes(stream, before)) == []
    assert [(c.start, c.end, c.cut_at) for c in stream.chunks] == [(0, 14, 8), (14, 15, 8)]
    assert turn.end == 14 and more.end == 15
    line.send(25)
    assert decode_samples(bytes(line.sent)).tolist() == stream.samples(25).tolist()


# --- the bot's line into the agent's stream -----------------------------------------------------

class _BotLine:
    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.frames = len(raw) // FRAME_BYTES

    def bot_audio(self, start_frame: int, end_frame: int | None = None) -> bytes:
        end = self.frames if end_frame is None else end_frame
        return self.raw[start_frame * FRAME_BYTES:end * FRAME_BYTES]


# frames: silence 0-4, speech 5-29, a 100 ms pause (30-34), speech 35-49, 800 ms of silence (50-89),
# speech 90-99, a 600 ms pause (100-129), speech 130-139, silence 140-149
LAYOUT = [(0, 5), (1, 25), (0, 5), (1, 15), (0, 40), (1, 10), (0, 30), (1, 10), (0, 10)]


def _bot_raw() -> bytes:
    tone = _frames(encode_samples(_tone(150)))
    raw, at = b"", 0
    for speech, n in LAYOUT:
        raw += b"".join(tone[at:at + n]) if speech else SILENCE_FRAME * n
        at += n
    return raw


def _agent(raw: bytes, **settings) -> PhoneAgent:
    return PhoneAgent(_BotLine(raw), PhoneAgentSettings(**settings), ledger=ComputeLedger())


def _spans(agent: PhoneAgent) -> list[tuple[int, int, int]]:
    return [(c.start, c.end, c.reply) for c in agent.stream.chunks]


@pytest.mark.parametrize("tick", [1, 7, 10, 150])
def test_the_bots_line_becomes_chunks_bridged_over_short_pauses_and_replies_split_by_silence(tick):
    raw = _bot_raw()
    agent, caller = _agent(raw), Stream("user")
    for t in range(tick, 150 + tick, tick):
        asyncio.run(agent.on_tick(min(t, 150), caller))
    # The 100 ms pause is inside the speech; 600 ms of silence ends a chunk but not the reply; 800 ms does.
    assert _spans(agent) == [(5, 50, 0), (90, 100, 1), (130, 140, 1)]
    assert agent.replies == 2
    first = agent.stream.chunks[0]
    assert first.text == "" and first.kind == "speech"
    assert first.samples.tolist() == decode_samples(raw[5 * FRAME_BYTES:50 * FRAME_BYTES]).tolist()


def test_the_stream_holds_only_what_was_played_before_the_tick_and_a_pause_is_bridged_once_speech_resumes():
    agent, caller = _agent(_bot_raw()), Stream("user")
    asyncio.run(agent.on_tick(32, caller))
    assert _spans(agent) == [(5, 30, 0)]  # at 32 the bot has been quiet two frames: not speaking at 31
    assert agent.stream.stretch(31) is None
    asyncio.run(agent.on_tick(40, caller))
    assert _spans(agent) == [(5, 40, 0)]
    agent.line.frames = 45  # the call has played less than the tick asks for: read what was played
    asyncio.run(agent.on_tick(60, caller))
    assert _spans(agent) == [(5, 45, 0)] and agent.processed == 45


@pytest.mark.parametrize("kind, reply", [("speech", 1), ("backchannel", 0)])
def test_the_caller_speaking_in_a_pause_splits_the_bots_speech_and_a_turn_starts_a_reply(kind, reply):
    agent, caller = _agent(_bot_raw()), Stream("user")
    caller.add(Chunk("user", kind, 31, _tone(2), "", ()))
    asyncio.run(agent.on_tick(60, caller))
    assert _spans(agent) == [(5, 30, 0), (35, 50, reply)]


def test_settings_are_checked_in_one_line():
    from tauray.actors.voice.duplex.errors import DuplexConfigError

    with pytest.raises(DuplexConfigError, match="bridge_ms"):
        PhoneAgentSettings.parse({"bridge_ms": 900, "reply_gap_ms": 700})
    with pytest.raises(DuplexConfigError, match="phone_agent: unknown parameter 'silence_ms'"):
        PhoneAgentSettings.parse({"silence_ms": 700})


# --- the loop's refusals and a dial that fails ---------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_caller_that_would_read_a_live_bots_words_is_refused_in_one_line():
    from tauray.actors.voice.live.call_loop import run_live_sync

    with pytest.raises(DuplexConfigError, match=r"hears='channel', not 'text'") as caught:
        run_live_sync("ws://127.0.0.1:9/bot", caller_policy=lambda h: "hi", tts=None, asr=None,
                      rules={"hears": "text"})
    assert "\n" not in str(caught.value)


def test_a_bot_that_cannot_be_reached_leaves_a_result_with_the_infra_fault():
    pytest.importorskip("websockets", reason="the optional extra tauray[live]")
    from tauray.actors.voice.duplex.tones import ToneCodec
    from tauray.actors.voice.live.call_loop import run_live_sync
    from tauray.actors.voice.live.phone import PhoneSettings

    codec = ToneCodec()
    url = f"ws://127.0.0.1:{_free_port()}/bot?token=s3cret"
    result = run_live_sync(url, caller_policy=lambda h: "hi", tts=codec.tts(), asr=codec.asr(),
                           phone=PhoneSettings(connect_timeout_s=1.0))
    assert result.ended == "fault" and result.fault_kind == "unreachable" and result.infra
    assert result.fault.startswith("phone: cannot reach the bot at ws://127.0.0.1:") and "s3cret" not in result.fault
    assert result.ended_by == "none" and result.duration_s == 0.0 and result.segments == () and result.recording == b""
    assert result.metrics.response_rate.n == 0
