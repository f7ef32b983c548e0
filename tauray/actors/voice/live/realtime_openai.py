"""OpenAI's Realtime event protocol (and Azure's deployment of it), the client's side: the events
tauray sends, and the server's events read into the few kinds a live call acts on.

litellm's realtime support is a relay for its proxy (``litellm.realtime_api``'s ``_arealtime``
takes the proxy's own FastAPI websocket and forwards it, "for proxy use only"): it has no client
that streams a call's audio and reads the events back, so the documented websocket protocol is
spoken here directly.

* **Where.** ``wss://api.openai.com/v1/realtime?model=<model>`` with ``Authorization: Bearer``;
  Azure's ``wss://<resource>.openai.azure.com/openai/realtime?api-version=...&deployment=...`` with
  an ``api-key`` header; any other base (the local endpoint's ``http://127.0.0.1:PORT/v1``) as
  OpenAI's. The key travels in a header only: never in a URL, a fault's line or a record.
* **The session** (``session.update``): the scenario's agent prompt as instructions, its agent tools
  as function tools (the schemas the text agent gets), μ-law 8 kHz both ways (``g711_ulaw``: the
  line's own frames, no resampling), server VAD, and the caller's audio transcribed. Both the beta
  shape (``OpenAI-Beta: realtime=v1``) and the GA shape (``session.type = "realtime"``) are written;
  server events are read under both namings (``response.audio.delta`` and
  ``response.output_audio.delta``).
* **Bad events** are one line (:class:`~.errors.MediaStreamError`): a frame that is not a JSON
  object, an event without ``type``, a known event missing a field it must carry.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

from tauray.actors.voice.live.errors import MediaStreamError

__all__ = ["AudioDelta", "FunctionCall", "Ignored", "OpenAIRealtime", "ProviderError", "ResponseDone",
           "ResponseStarted", "SessionCreated", "SpeechStarted", "SpeechStopped", "Transcript", "realtime_url", "ws_url"]

OPENAI_BASE = "https://api.openai.com/v1"
DEFAULT_AZURE_VERSION = "2024-10-01-preview"


# --- what the server says, as a call acts on it ------------------------------------------------------

@dataclass(frozen=True)
class SessionCreated:
    session_id: str


@dataclass(frozen=True)
class SpeechStarted:
    item_id: str
    audio_start_ms: int


@dataclass(frozen=True)
class SpeechStopped:
    item_id: str
    audio_end_ms: int


@dataclass(frozen=True)
class ResponseStarted:
    response_id: str


@dataclass(frozen=True)
class AudioDelta:
    item_id: str
    audio: bytes  # raw μ-law, 8 kHz


@dataclass(frozen=True)
class Transcript:
    side: Literal["caller", "agent"]  # caller: what the provider heard of the caller; agent: of itself
    item_id: str
    text: str


@dataclass(frozen=True)
class FunctionCall:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ResponseDone:
    response_id: str
    status: str
    usage: dict[str, int] = field(default_factory=dict)  # input/output × text/audio tokens, cached


@dataclass(frozen=True)
class ProviderError:
    kind: str
    code: str
    message: str


@dataclass(frozen=True)
class Ignored:
    type: str


Event = (SessionCreated | SpeechStarted | SpeechStopped | ResponseStarted | AudioDelta | Transcript | FunctionCall
         | ResponseDone | ProviderError | Ignored)

BENIGN_ERRORS = frozenset({"response_cancel_not_active", "conversation_already_has_active_response"})
"""Error codes a call goes on after (a cancel or a response racing the server's own)."""


def realtime_url(model: str, api_base: str | None, *, api_version: str | None = None) -> tuple[str, str]:
    """The websocket URL of ``model`` (a litellm string, ``openai/<model>`` or ``azure/<deployment>``)
    and the header that carries its key (``Authorization`` or ``api-key``)."""
    provider, _, name = model.partition("/")
    if provider == "azure":
        if not api_base:
            raise ValueError("an Azure realtime model needs api_base (https://<resource>.openai.azure.com)")
        base = ws_url(api_base).rstrip("/")
        query = urlencode({"api-version": api_version or DEFAULT_AZURE_VERSION, "deployment": name})
        return f"{base}/openai/realtime?{query}", "api-key"
    base = ws_url(api_base or OPENAI_BASE).rstrip("/")
    return f"{base}/realtime?{urlencode({'model': name})}", "Authorization"


def ws_url(base: str) -> str:
    """An http(s) base as its websocket URL (ws, wss); any other as it is."""
    scheme = urlsplit(base).scheme
    swap = {"http": "ws", "https": "wss"}
    return swap[scheme] + base[len(scheme):] if scheme in swap else base


class OpenAIRealtime:
    """The client's events for one session, and the server's read back (:meth:`decode`)."""

    name = "openai-realtime"

    def __init__(self, *, instructions: str, tools: list[dict[str, Any]], voice: str = "alloy",
                 transcription_model: str = "whisper-1", shape: Literal["beta", "ga"] = "beta",
                 vad: dict[str, Any] | None = None) -> None:
        self.instructions, self.tools, self.voice = instructions, tools, voice
        self.transcription_model, self.shape = transcription_model, shape
        self.vad = {"type": "server_vad", **(vad or {})}

    def headers(self, key_header: str, key: str | None) -> dict[str, str]:
        headers = {"OpenAI-Beta": "realtime=v1"} if self.shape == "beta" else {}
        if key:
            headers[key_header] = f"Bearer {key}" if key_header == "Authorization" else key
        return headers

    def function_tools(self) -> list[dict[str, Any]]:
        """The scenario's tools (``{name, description, parameters}``) as the session's function tools."""
        return [{"type": "function", "name": t["name"], "description": t.get("description", ""),
                 "parameters": t.get("parameters") or {"type": "object", "properties": {}}} for t in self.tools]

    # --- the client's events ---------------------------------------------------------------------
    def session_update(self) -> str:
        if self.shape == "ga":
            session: dict[str, Any] = {
                "type": "realtime", "instructions": self.instructions, "tools": self.function_tools(),
                "tool_choice": "auto", "audio": {
                    "input": {"format": {"type": "audio/pcmu"}, "turn_detection": self.vad,
                              "transcription": {"model": self.transcription_model}},
                    "output": {"format": {"type": "audio/pcmu"}, "voice": self.voice}}}
        else:
            session = {"modalities": ["audio", "text"], "instructions": self.instructions, "voice": self.voice,
                       "input_audio_format": "g711_ulaw", "output_audio_format": "g711_ulaw",
                       "input_audio_transcription": {"model": self.transcription_model},
                       "turn_detection": self.vad, "tools": self.function_tools(), "tool_choice": "auto"}
        return _event("session.update", session=session)

    def append(self, frame: bytes) -> str:
        return _event("input_audio_buffer.append", audio=base64.b64encode(frame).decode("ascii"))

    def before_created(self) -> list[str]:
        """What the client sends before the server's first event: nothing (the server speaks first)."""
        return []

    def opening(self) -> list[str]:
        """What follows ``session.created``: the session's settings, then a first response (the greeting)."""
        return [self.session_update(), self.response_create()]

    def response_create(self) -> str:
        return _event("response.create")

    def response_cancel(self) -> str:
        return _event("response.cancel")

    def truncate(self, item_id: str, audio_end_ms: int) -> str:
        return _event("conversation.item.truncate", item_id=item_id, content_index=0, audio_end_ms=int(audio_end_ms))

    def function_output(self, call_id: str, output: str) -> list[str]:
        """The tool's result as the protocol takes it back, and the request for the next response."""
        item = {"type": "function_call_output", "call_id": call_id, "output": output}
        return [_event("conversation.item.create", item=item), self.response_create()]

    # --- the server's events ---------------------------------------------------------------------
    def decode(self, text: str | bytes) -> Event:
        """One server event; :class:`MediaStreamError` (one line naming the field) when it is not one."""
        if isinstance(text, bytes):
            raise MediaStreamError("realtime: a binary frame, not a JSON event")
        try:
            event = json.loads(text)
        except ValueError:
            raise MediaStreamError("realtime: a frame that is not JSON") from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise MediaStreamError("realtime: the event has no 'type' field")
        kind = event["type"]
        try:
            return self._read(kind, event)
        except (KeyError, TypeError, ValueError) as exc:
            missing = exc.args[0] if isinstance(exc, KeyError) else type(exc).__name__
            raise MediaStreamError(f"realtime: {kind}: a bad or missing field {missing!r}") from None

    def _read(self, kind: str, e: dict[str, Any]) -> Event:
        if kind == "session.created":
            return SessionCreated(str(e["session"].get("id", "")))
        if kind == "input_audio_buffer.speech_started":
            return SpeechStarted(str(e.get("item_id", "")), int(e["audio_start_ms"]))
        if kind == "input_audio_buffer.speech_stopped":
            return SpeechStopped(str(e.get("item_id", "")), int(e["audio_end_ms"]))
        if kind == "response.created":
            return ResponseStarted(str(e["response"]["id"]))
        if kind in ("response.audio.delta", "response.output_audio.delta"):
            return AudioDelta(str(e["item_id"]), base64.b64decode(e["delta"], validate=True))
        if kind in ("response.audio_transcript.done", "response.output_audio_transcript.done"):
            return Transcript("agent", str(e["item_id"]), str(e["transcript"]))
        if kind == "conversation.item.input_audio_transcription.completed":
            return Transcript("caller", str(e["item_id"]), str(e["transcript"]))
        if kind == "response.function_call_arguments.done":
            return FunctionCall(str(e["call_id"]), str(e["name"]), str(e["arguments"]))
        if kind == "response.done":
            response = e["response"]
            return ResponseDone(str(response.get("id", "")), str(response.get("status", "")),
                                usage_counts(response.get("usage")))
        if kind == "error":
            error = e["error"] if isinstance(e.get("error"), dict) else {}
            message = str(error.get("message") or "").splitlines()[0] if error.get("message") else ""
            return ProviderError(str(error.get("type") or "error"), str(error.get("code") or ""), message[:300])
        return Ignored(kind)


def usage_counts(usage: Any) -> dict[str, int]:
    """``response.done``'s usage as flat counts: input/output text and audio tokens, cached input."""
    if not isinstance(usage, dict):
        return {}
    into, out = usage.get("input_token_details") or {}, usage.get("output_token_details") or {}
    counts = {"input_text_tokens": into.get("text_tokens"), "input_audio_tokens": into.get("audio_tokens"),
              "input_cached_tokens": into.get("cached_tokens"), "output_text_tokens": out.get("text_tokens"),
              "output_audio_tokens": out.get("audio_tokens")}
    found = {k: int(v) for k, v in counts.items() if isinstance(v, (int, float))}
    if not found:  # a server with totals only: count them as text
        found = {"input_text_tokens": int(usage.get("input_tokens") or 0),
                 "output_text_tokens": int(usage.get("output_tokens") or 0)}
    return found


def _event(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields}, separators=(",", ":"))
