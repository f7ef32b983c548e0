"""The Twilio Media Streams messages, both ways: encode, decode, validation as one line naming
the field, and μ-law frames through tauray's line codec."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from tauray.actors.voice.live import media_stream as ms
from tauray.actors.voice.live.errors import MediaStreamError
from tauray.actors.voice.live.ulaw import FRAME_BYTES, SILENCE_BYTE, from_ulaw, split_frames, to_ulaw

START = {"event": "start", "sequenceNumber": "1", "streamSid": "MZ01",
         "start": {"streamSid": "MZ01", "accountSid": "AC01", "callSid": "CA01", "tracks": ["inbound"],
                   "customParameters": {"conversation_id": "c-1", "tool_server_url": "http://127.0.0.1:9/mcp/c-1"},
                   "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}}


def test_twilio_documented_messages_decode_to_their_models():
    assert isinstance(ms.decode('{"event": "connected", "protocol": "Call", "version": "1.0.0"}'), ms.Connected)
    start = ms.decode(json.dumps(START))
    assert isinstance(start, ms.Start)
    assert start.start.custom_parameters["conversation_id"] == "c-1"
    assert start.start.media_format.sample_rate == 8000 and start.stream_sid == "MZ01"
    media = ms.decode(json.dumps({"event": "media", "sequenceNumber": "3", "streamSid": "MZ01",
                                  "media": {"track": "inbound", "chunk": "2", "timestamp": "20",
                                            "payload": base64.b64encode(b"\xff" * 160).decode()}}))
    assert isinstance(media, ms.Media) and media.audio() == b"\xff" * 160 and media.media.chunk == "2"
    stop = ms.decode('{"event": "stop", "sequenceNumber": "9", "streamSid": "MZ01", '
                     '"stop": {"accountSid": "AC01", "callSid": "CA01"}}')
    assert isinstance(stop, ms.Stop) and stop.stop.call_sid == "CA01"
    # what a bot sends back: media without track/chunk/timestamp, a mark, a clear
    assert isinstance(ms.decode('{"event": "mark", "streamSid": "MZ01", "mark": {"name": "r1"}}'), ms.Mark)
    assert isinstance(ms.decode('{"event": "clear", "streamSid": "MZ01"}'), ms.Clear)
    assert isinstance(ms.decode('{"event": "dtmf", "streamSid": "MZ01", "sequenceNumber": "5", '
                                '"dtmf": {"track": "inbound_track", "digit": "1"}}'), ms.Dtmf)


def test_encode_writes_twilio_field_names_and_round_trips():
    start = ms.decode(json.dumps(START))
    assert json.loads(ms.encode(start)) == START
    frame = ms.media("MZ01", b"\x01\x02", sequence=4, chunk=3, timestamp_ms=40)
    wire = json.loads(ms.encode(frame))
    assert wire == {"event": "media", "sequenceNumber": "4", "streamSid": "MZ01",
                    "media": {"track": "inbound", "chunk": "3", "timestamp": "40", "payload": "AQI="}}
    assert ms.decode(ms.encode(frame)) == frame
    out = json.loads(ms.encode(ms.media("MZ01", b"\x00")))  # a bot's media: payload only
    assert out == {"event": "media", "streamSid": "MZ01", "media": {"payload": "AA=="}}


@pytest.mark.parametrize("text, says", [
    ("not json", "media stream: not a JSON message"),
    ('["event"]', "media stream: a message must be a JSON object"),
    ('{"protocol": "Call"}', "media stream: the message has no 'event' field"),
    ('{"event": "hello"}', "media stream: unknown event 'hello'; known: clear, connected, dtmf, mark, media, start, stop"),
    ('{"event": "media", "streamSid": "MZ01", "media": {"payload": "%%%"}}', "media stream: media.media.payload: "),
    ('{"event": "media", "streamSid": "MZ01"}', "media stream: media.media: Field required"),
    ('{"event": "mark", "streamSid": "MZ01", "mark": {}}', "media stream: mark.mark.name: Field required"),
    ('{"event": "media", "sequenceNumber": "x", "streamSid": "MZ01", "media": {"payload": ""}}',
     "media stream: media.sequenceNumber: "),
])
def test_bad_messages_are_one_line_naming_the_field(text, says):
    with pytest.raises(MediaStreamError) as caught:
        ms.decode(text)
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value)


def test_a_start_in_another_audio_format_is_refused_naming_the_field():
    bad = json.loads(json.dumps(START))
    bad["start"]["mediaFormat"]["sampleRate"] = 16000
    with pytest.raises(MediaStreamError, match=r"^media stream: start\.start\.mediaFormat\.sampleRate: "):
        ms.decode(json.dumps(bad))


def test_custom_parameter_values_never_appear_in_errors():
    bad = json.loads(json.dumps(START))
    bad["start"]["customParameters"] = {"token": "s3cret-value", "n": 5}
    with pytest.raises(MediaStreamError) as caught:
        ms.decode(json.dumps(bad))
    assert "s3cret" not in str(caught.value) and "customParameters" in str(caught.value)


def test_ulaw_frames_round_trip_through_the_line_codec():
    t = np.arange(8000) / 8000
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    raw = to_ulaw(tone, 8000)
    assert len(raw) == 8000  # one byte a sample, no header
    frames = split_frames(raw + b"\x00" * 10)
    assert len(frames) == 51 and all(len(f) == FRAME_BYTES for f in frames)
    assert frames[-1][10:] == bytes([SILENCE_BYTE]) * (FRAME_BYTES - 10)
    back = from_ulaw(raw)
    assert back.dtype == np.float32 and back.size == 8000
    assert float(np.max(np.abs(back - tone))) < 0.02  # μ-law's quantisation at this level
    assert float(np.max(np.abs(from_ulaw(bytes([SILENCE_BYTE]) * 160)))) < 1e-3
    assert to_ulaw(np.zeros(16000, np.float32), 16000) == bytes([SILENCE_BYTE]) * 8000
