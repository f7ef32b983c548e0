"""Twilio Media Streams, both ways: the websocket messages a phone provider sends a bot and
those a bot sends back, as frozen models with Twilio's field names, their encoding, and their
validation as one line naming the field.

From the caller's side (Twilio's role, which tauray plays on a live call): ``connected``, then
``start`` (the stream and call ids, the tracks, the custom parameters, the media format: μ-law,
8000 Hz, mono), ``media`` every 20 ms (``track``, ``chunk``, ``timestamp`` in ms from the stream's
start, ``payload``: base64 raw μ-law), ``mark`` when audio the bot queued before a mark has
played (or was cleared), ``dtmf``, ``stop``. Every message but ``connected`` carries
``sequenceNumber`` (a string counting up from "1") and ``streamSid``.

From the bot: ``media`` (``payload`` only), ``mark`` (a name to hear back once the audio before
it has played), ``clear`` (drop the audio queued and not yet played: barge-in).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tauray.actors.voice.live.errors import MediaStreamError

__all__ = ["Clear", "Connected", "Dtmf", "Mark", "Media", "MediaFormat", "Message", "Start", "StartInfo", "Stop",
           "clear", "connected", "decode", "encode", "mark", "media", "start", "stop"]

_SEQUENCE = r"^[0-9]+$"


class _Wire(BaseModel):
    # Twilio's camelCase names on the wire, Python's names in code; fields a provider adds are ignored.
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class Connected(_Wire):
    """The first message on the socket."""

    event: Literal["connected"] = Field(default="connected", description="Message type.")
    protocol: str = Field(default="Call", description="The protocol for the socket's lifetime.")
    version: str = Field(default="1.0.0", description="The protocol's semantic version.")


class MediaFormat(_Wire):
    """The audio of every ``media`` payload: the only format Media Streams use."""

    encoding: Literal["audio/x-mulaw"] = Field(default="audio/x-mulaw", description="G.711 μ-law.")
    sample_rate: Literal[8000] = Field(default=8000, alias="sampleRate", description="Samples a second.")
    channels: Literal[1] = Field(default=1, description="Mono.")


class StartInfo(_Wire):
    """The stream's metadata."""

    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")
    account_sid: str = Field(alias="accountSid", description="The account that created the stream.")
    call_sid: str = Field(alias="callSid", min_length=1, description="The call's id.")
    tracks: tuple[Literal["inbound", "outbound"], ...] = Field(
        default=("inbound",), description="The media flows the stream carries.")
    custom_parameters: dict[str, str] = Field(
        default_factory=dict, alias="customParameters",
        description="Parameters set for the stream (tauray: conversation_id, tool_server_url).")
    media_format: MediaFormat = Field(default_factory=MediaFormat, alias="mediaFormat", description="The audio format.")


class Start(_Wire):
    """Sent once, right after ``connected``."""

    event: Literal["start"] = Field(default="start", description="Message type.")
    sequence_number: str = Field(alias="sequenceNumber", pattern=_SEQUENCE, description="Message order, from '1'.")
    start: StartInfo = Field(description="The stream's metadata.")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")


class MediaChunk(_Wire):
    """One payload of audio."""

    track: Literal["inbound", "outbound"] | None = Field(default=None, description="Whose audio (caller's: inbound).")
    chunk: str | None = Field(default=None, pattern=_SEQUENCE, description="Chunk number, from '1'.")
    timestamp: str | None = Field(default=None, pattern=_SEQUENCE, description="Milliseconds from the stream's start.")
    payload: str = Field(description="Base64 raw μ-law, 8 kHz, mono.")

    @field_validator("payload")
    @classmethod
    def _base64(cls, value: str) -> str:
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("not base64") from None
        return value


class Media(_Wire):
    """Audio: the caller's every 20 ms, or the bot's in chunks of any length."""

    event: Literal["media"] = Field(default="media", description="Message type.")
    sequence_number: str | None = Field(default=None, alias="sequenceNumber", pattern=_SEQUENCE,
                                        description="Message order (absent from a bot's messages).")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")
    media: MediaChunk = Field(description="The audio.")

    def audio(self) -> bytes:
        """The raw μ-law bytes."""
        return base64.b64decode(self.media.payload)


class MarkName(_Wire):
    name: str = Field(min_length=1, description="The mark's name.")


class Mark(_Wire):
    """From the bot: a point in its queued audio; from the caller: that point has played (or was cleared)."""

    event: Literal["mark"] = Field(default="mark", description="Message type.")
    sequence_number: str | None = Field(default=None, alias="sequenceNumber", pattern=_SEQUENCE,
                                        description="Message order (absent from a bot's messages).")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")
    mark: MarkName = Field(description="The mark.")


class Clear(_Wire):
    """From the bot: drop its audio queued and not yet played."""

    event: Literal["clear"] = Field(default="clear", description="Message type.")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")


class DtmfDigit(_Wire):
    track: str = Field(default="inbound_track", description="Always the caller's track.")
    digit: str = Field(min_length=1, max_length=1, description="The key pressed.")


class Dtmf(_Wire):
    """A key the caller pressed."""

    event: Literal["dtmf"] = Field(default="dtmf", description="Message type.")
    sequence_number: str | None = Field(default=None, alias="sequenceNumber", pattern=_SEQUENCE,
                                        description="Message order.")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")
    dtmf: DtmfDigit = Field(description="The key.")


class StopInfo(_Wire):
    account_sid: str = Field(alias="accountSid", description="The account.")
    call_sid: str = Field(alias="callSid", description="The call.")


class Stop(_Wire):
    """The stream ended (the caller hung up); the socket closes after it."""

    event: Literal["stop"] = Field(default="stop", description="Message type.")
    sequence_number: str | None = Field(default=None, alias="sequenceNumber", pattern=_SEQUENCE,
                                        description="Message order.")
    stream_sid: str = Field(alias="streamSid", min_length=1, description="The stream's id.")
    stop: StopInfo = Field(description="Whose stream ended.")


Message = Connected | Start | Media | Mark | Clear | Dtmf | Stop
_BY_EVENT: dict[str, type[_Wire]] = {"connected": Connected, "start": Start, "media": Media, "mark": Mark,
                                     "clear": Clear, "dtmf": Dtmf, "stop": Stop}


def _one_line(event: str, exc: ValidationError) -> MediaStreamError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first.get("loc", ()))
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return MediaStreamError(f"media stream: {event}.{field}: {message}")


def decode(text: str | bytes) -> Message:
    """One websocket text message to its model; :class:`MediaStreamError` (one line) if it is not one."""
    try:
        data: Any = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise MediaStreamError("media stream: not a JSON message") from None
    if not isinstance(data, dict):
        raise MediaStreamError("media stream: a message must be a JSON object")
    event = data.get("event")
    if event is None:
        raise MediaStreamError("media stream: the message has no 'event' field")
    model = _BY_EVENT.get(str(event))
    if model is None:
        raise MediaStreamError(f"media stream: unknown event {str(event)[:40]!r}; known: {', '.join(sorted(_BY_EVENT))}")
    try:
        return model.model_validate(data)  # type: ignore[return-value]
    except ValidationError as exc:
        raise _one_line(str(event), exc) from None


def encode(message: Message) -> str:
    """A message as the websocket text Twilio's peers read (its field names, nothing unset)."""
    return message.model_dump_json(by_alias=True, exclude_none=True)


def connected() -> Connected:
    return Connected()


def start(stream_sid: str, call_sid: str, custom_parameters: dict[str, str], *, account_sid: str = "",
          sequence: int = 1) -> Start:
    info = StartInfo(stream_sid=stream_sid, account_sid=account_sid, call_sid=call_sid,
                     custom_parameters=dict(custom_parameters))
    return Start(sequence_number=str(sequence), start=info, stream_sid=stream_sid)


def media(stream_sid: str, audio: bytes, *, sequence: int | None = None, chunk: int | None = None,
          timestamp_ms: int | None = None) -> Media:
    """A media message; with ``chunk`` it is the caller's (track ``inbound``), without it a bot's."""
    payload = MediaChunk(track="inbound" if chunk is not None else None,
                         chunk=None if chunk is None else str(chunk),
                         timestamp=None if timestamp_ms is None else str(timestamp_ms),
                         payload=base64.b64encode(audio).decode("ascii"))
    return Media(sequence_number=None if sequence is None else str(sequence), stream_sid=stream_sid, media=payload)


def mark(stream_sid: str, name: str, *, sequence: int | None = None) -> Mark:
    return Mark(sequence_number=None if sequence is None else str(sequence), stream_sid=stream_sid,
                mark=MarkName(name=name))


def clear(stream_sid: str) -> Clear:
    return Clear(stream_sid=stream_sid)


def stop(stream_sid: str, call_sid: str, *, account_sid: str = "", sequence: int | None = None) -> Stop:
    return Stop(sequence_number=None if sequence is None else str(sequence), stream_sid=stream_sid,
                stop=StopInfo(account_sid=account_sid, call_sid=call_sid))
