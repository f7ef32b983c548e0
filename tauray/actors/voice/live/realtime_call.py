"""A realtime speech model as the far side of a live call: the same line on the wall clock as a
phone call (:class:`~.phone.PhoneCall`: a frame of the caller's audio out every 20 ms, a frame of
the agent's queued audio played, both lines kept frame-aligned, the harness's lateness measured),
spoken in a realtime protocol (:mod:`.realtime_openai`, :mod:`.realtime_gemini`) instead of Media
Streams.

* **Opening.** The socket opens with the key in a header, the server's ``session.created`` is
  awaited (bounded), then the session is configured and a first response asked for: the model
  greets, as a phone bot answers a call.
* **Audio.** Each caller frame goes out as ``input_audio_buffer.append``; the model's audio deltas
  are queued and played at 8 kHz, as a bot's media is.
* **Tools.** A finished function call runs through ``run_tool`` (the conversation's agent side:
  ``SideHost.run_tool``, recorded in ``actions`` with a sync after writes); its result goes back
  as a ``function_call_output`` item, then a new response is asked for.
* **Barge-in.** When the server hears the caller start (``speech_started``) while the model's
  audio is still queued, the queue is dropped (nothing more of it plays), the item playing is
  truncated at the milliseconds actually played, and a response still in progress is cancelled.
* **What the provider made of the call.** Its transcripts of the caller and of itself, with where
  they lie on the call; its usage per response, summed. A provider ``error`` event ends the call
  as a one-line fault (``provider_error``, the harness's side: rerun), except the benign races of
  a cancel. The key never reaches a line, a record or a log.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from websockets.exceptions import ConnectionClosed

from tauray.actors.voice.duplex.segments import Segment
from tauray.actors.voice.live import realtime_openai as rt
from tauray.actors.voice.live.errors import CallFault, MediaStreamError
from tauray.actors.voice.live.phone import CallRecord, PhoneCall, _close, open_socket, shown_url
from tauray.actors.voice.live.settings import PhoneSettings
from tauray.actors.voice.live.ulaw import FRAME_MS

__all__ = ["ProviderTranscript", "RealtimeCall", "RealtimeRecord", "open_session", "place_transcripts",
           "probe_session"]

BYTES_PER_MS = 8  # μ-law at 8 kHz
ToolRunner = Callable[[str, dict[str, Any]], Awaitable[Any]]  # (name, arguments) -> an object with text, error


class ProviderTranscript(BaseModel):
    """What the provider transcribed of one item: the caller's speech, or its own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    side: Literal["caller", "agent"] = Field(description="Whose words: the caller's (as the provider heard them) or "
                                             "the model's own (its transcript of what it said).")
    item_id: str = Field(description="The provider's conversation item.")
    text: str = Field(description="The transcript.")
    start_s: float | None = Field(None, description="Where the item's audio began on the call, seconds.")
    end_s: float | None = Field(None, description="Where it ended (the model's: as played), seconds.")
    truncated_ms: int | None = Field(None, description="The model's item cut by the caller at this many ms played.")


class RealtimeRecord(CallRecord):
    """A phone call's record, and what the realtime session adds."""

    protocol: str = Field(description="The realtime protocol spoken ('openai-realtime', 'gemini-live').")
    transcripts: tuple[ProviderTranscript, ...] = Field((), description="The provider's transcripts, in order.")
    usage: dict[str, int] = Field(default_factory=dict, description="Tokens over the session's responses: "
                                  "input/output × text/audio, cached input.")
    responses: int = Field(0, description="Responses the model finished (or that were cancelled).")
    tool_calls: int = Field(0, description="Function calls the model made.")
    truncations: int = Field(0, description="Times the caller cut the model's audio (truncate sent).")
    provider_errors: tuple[str, ...] = Field((), description="Benign error events the call went on after.")


class RealtimeCall(PhoneCall):
    """One realtime session on the wall clock. Use :meth:`open`; then as a :class:`PhoneCall`."""

    PEER, CALL = "realtime: the model at", "realtime: the session with"

    def __init__(self, ws: Any, url: str, conversation_id: str, settings: PhoneSettings, *, protocol: Any,
                 run_tool: ToolRunner | None, secret: str | None) -> None:
        super().__init__(ws, url, conversation_id, "", "", settings)
        self.protocol, self.run_tool, self._secret = protocol, run_tool, secret
        self._items: list[list[Any]] = []  # [item_id, start offset, end offset, first frame, last frame]
        self._cut: dict[str, int] = {}  # item -> ms played when the caller cut it
        self._dropped: set[str] = set()
        self._muted = False  # after a barge-in, until the next response: late deltas of the cut one are dropped
        self._responding = False
        self._spoken: dict[str, list[int | None]] = {}  # caller item -> [start ms, end ms]
        self._transcripts: list[tuple[str, str, str]] = []
        self._usage: dict[str, int] = {}
        self._responses = self._tool_calls = self._truncations = 0
        self._benign: list[str] = []
        self._tools: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, url: str, *, protocol: Any, key_header: str = "Authorization", key: str | None = None,
                   conversation_id: str, run_tool: ToolRunner | None = None,
                   settings: PhoneSettings | None = None) -> RealtimeCall:
        """Open the session, await ``session.created``, configure it and ask for the greeting."""
        settings, shown = settings or PhoneSettings(), shown_url(url)
        ws = await open_session(url, protocol=protocol, key_header=key_header, key=key, settings=settings)
        try:
            for message in protocol.opening():
                await asyncio.wait_for(ws.send(message), settings.send_timeout_s)
        except (ConnectionClosed, TimeoutError):
            await _close(ws, settings.close_timeout_s)
            raise CallFault("hung_up", f"realtime: the model at {shown} closed the session as it began") from None
        return cls(ws, shown, conversation_id, settings, protocol=protocol, run_tool=run_tool, secret=key)

    # --- the line --------------------------------------------------------------------------------
    def _frame_message(self, frame: bytes, k: int) -> str:
        return self.protocol.append(frame)

    def _stop_message(self) -> str | None:
        return None  # a session ends when its socket closes

    def _play_one(self) -> None:
        before = self._played_total
        super()._play_one()
        frame = self.frames - 1
        for item in self._items:
            if item[1] < self._played_total and item[2] > before:
                item[3] = frame if item[3] is None else item[3]
                item[4] = frame + 1

    # --- the server's events -----------------------------------------------------------------------
    async def _receive_loop(self) -> None:
        try:
            async for text in self._ws:
                if self.ended:
                    return
                try:
                    events = self.protocol.decode(text)
                except MediaStreamError as exc:
                    self._fail("wrong_protocol", f"{self.PEER} {self.url} does not speak the realtime protocol: "
                               f"{_scrub(str(exc), self._secret)}")
                    return
                for event in events if isinstance(events, list) else [events]:
                    self._on(event)
            self._closed_by_bot()
        except ConnectionClosed:
            self._closed_by_bot()

    def _on(self, event: Any) -> None:
        if isinstance(event, rt.AudioDelta):
            if self._muted or event.item_id in self._dropped or not event.audio:
                return
            if self._heard_first is None:
                self._heard_first = self._loop.time()
            last = self._items[-1] if self._items else None
            if last is not None and last[0] == event.item_id and last[2] == self._queued_total:
                last[2] += len(event.audio)
            else:
                self._items.append([event.item_id, self._queued_total, self._queued_total + len(event.audio), None,
                                    None])
            self._queue += event.audio
            self._queued_total += len(event.audio)
        elif isinstance(event, rt.SpeechStarted):
            if event.audio_start_ms >= 0:
                self._spoken[event.item_id] = [event.audio_start_ms, None]
            if self._queue:
                self._barge_in()
        elif isinstance(event, rt.SpeechStopped):
            self._spoken.setdefault(event.item_id, [None, None])[1] = event.audio_end_ms
        elif isinstance(event, rt.ResponseStarted):
            self._responding, self._muted = True, False
        elif isinstance(event, rt.ResponseDone):
            self._responding = False
            self._responses += 1
            for name, count in event.usage.items():
                self._usage[name] = self._usage.get(name, 0) + count
        elif isinstance(event, rt.Transcript):
            self._transcripts.append((event.side, event.item_id, event.text))
        elif isinstance(event, rt.FunctionCall):
            self._tool_calls += 1
            task = asyncio.create_task(self._tool(event))
            self._tools.add(task)
            task.add_done_callback(self._tools.discard)
        elif isinstance(event, rt.ProviderError):
            if event.code in rt.BENIGN_ERRORS:
                self._benign.append(event.code)
            else:
                self._fail("provider_error", _scrub(f"{self.PEER} {self.url} answered an error: "
                                                    f"{_error_words(event)}", self._secret))

    def _barge_in(self) -> None:
        """The caller started over the model's queued audio: stop it where it is, and tell the server."""
        played, messages = self._played_total, []
        for item_id, start, end, _, _ in self._items:
            if end > played and item_id not in self._cut:
                self._cut[item_id] = max(0, played - start) // BYTES_PER_MS
                self._dropped.add(item_id)
                messages.append(self.protocol.truncate(item_id, self._cut[item_id]))  # None: no such event
        for item in self._items:
            item[2] = min(item[2], played)
        self._items = [item for item in self._items if item[2] > item[1]]
        cancel = self.protocol.response_cancel() if self._responding else None
        if cancel is not None:
            messages.append(cancel)
            self._muted = True
        self._clears += 1
        self._truncations += 1
        self._queued_total -= len(self._queue)
        self._queue.clear()
        for message in messages:
            if message is not None:
                asyncio.ensure_future(self._send_quietly(message))

    async def _tool(self, call: rt.FunctionCall) -> None:
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            output = json.dumps({"error": "the arguments are not a JSON object"})
        elif self.run_tool is None:
            output = json.dumps({"error": "no tools in this session"})
        else:
            try:
                reply = await self.run_tool(call.name, arguments)
                output = str(getattr(reply, "text", reply))
            except Exception as exc:  # the model hears that its call failed; the conversation decides the rest
                output = json.dumps({"error": f"the tool could not be run ({type(exc).__name__})"})
        if not self.ended:
            for message in self.protocol.function_output(call.call_id, output):
                await self._send_quietly(message)

    # --- the record --------------------------------------------------------------------------------
    def record(self) -> RealtimeRecord:
        base = super().record()
        placed = {item[0]: item for item in self._items}
        transcripts = []
        for side, item_id, text in self._transcripts:
            if side == "agent":
                item = placed.get(item_id)
                start = None if item is None or item[3] is None else item[3] * FRAME_MS / 1000
                end = None if item is None or item[4] is None else item[4] * FRAME_MS / 1000
            else:
                start_ms, end_ms = self._spoken.get(item_id, [None, None])
                start = None if start_ms is None else start_ms / 1000
                end = None if end_ms is None else end_ms / 1000
            transcripts.append(ProviderTranscript(side=side, item_id=item_id, text=text, start_s=start, end_s=end,
                                                  truncated_ms=self._cut.get(item_id)))
        return RealtimeRecord(**dict(base), protocol=self.protocol.name, transcripts=tuple(transcripts),
                              usage=dict(self._usage), responses=self._responses, tool_calls=self._tool_calls,
                              truncations=self._truncations, provider_errors=tuple(self._benign))

    async def _shut(self) -> CallRecord:
        for task in list(self._tools):
            task.cancel()
        return await super()._shut()


async def open_session(url: str, *, protocol: Any, key_header: str, key: str | None,
                       settings: PhoneSettings) -> Any:
    """The session's websocket, open once the server said ``session.created`` (nothing sent yet);
    the :class:`CallFault` a call meets otherwise (``unreachable``, ``wrong_protocol``, ``no_answer``,
    ``hung_up``, ``provider_error``), its line without the key."""
    shown = shown_url(url)
    ws = await open_socket(url, settings, headers=protocol.headers(key_header, key),
                           words=("realtime", "the model", "the realtime protocol"))
    try:
        for message in protocol.before_created():  # a protocol whose client speaks first (Gemini's setup)
            await asyncio.wait_for(ws.send(message), settings.send_timeout_s)
        event = protocol.decode(await asyncio.wait_for(ws.recv(), settings.connect_timeout_s))
        event = event[0] if isinstance(event, list) else event
    except TimeoutError:
        await _close(ws, settings.close_timeout_s)
        raise CallFault("no_answer", f"realtime: the model at {shown} sent no session.created within "
                        f"{settings.connect_timeout_s:g} s") from None
    except ConnectionClosed:
        raise CallFault("hung_up", f"realtime: the model at {shown} closed the session before it began") from None
    except MediaStreamError as exc:
        await _close(ws, settings.close_timeout_s)
        raise CallFault("wrong_protocol", f"realtime: the peer at {shown} does not speak the realtime "
                        f"protocol: {_scrub(str(exc), key)}") from None
    if isinstance(event, rt.ProviderError):
        await _close(ws, settings.close_timeout_s)
        raise CallFault("provider_error", _scrub(f"realtime: the model at {shown} refused the session: "
                                                 f"{_error_words(event)}", key))
    if not isinstance(event, rt.SessionCreated):
        await _close(ws, settings.close_timeout_s)
        raise CallFault("wrong_protocol", f"realtime: the peer at {shown} does not speak the realtime protocol: "
                        f"its first event was {getattr(event, 'type', type(event).__name__)!r}, not "
                        "'session.created'")
    return ws


async def probe_session(url: str, *, protocol: Any, key_header: str, key: str | None,
                        settings: PhoneSettings) -> float:
    """Open a session and close it at ``session.created``, nothing sent: the seconds it took."""
    started = asyncio.get_running_loop().time()
    await _close(await open_session(url, protocol=protocol, key_header=key_header, key=key, settings=settings),
                 settings.close_timeout_s)
    return asyncio.get_running_loop().time() - started


def place_transcripts(segments: tuple[Segment, ...],
                      transcripts: tuple[ProviderTranscript, ...]) -> tuple[Segment, ...]:
    """The provider's transcripts on the timeline: the model's own words become its segments'
    ``text`` (what it said), its transcription of the caller the caller's segments' ``heard_text``
    (what the agent heard). Each transcript goes to the segment of its side it overlaps most."""
    said: dict[int, list[str]] = {}
    for t in transcripts:
        if t.start_s is None or not t.text.strip():
            continue
        end = t.end_s if t.end_s is not None else t.start_s + 0.02
        side = "agent" if t.side == "agent" else "user"
        best, overlap = None, 0.0
        for i, s in enumerate(segments):
            if s.side == side:
                shared = min(end, s.end_s) - max(t.start_s, s.start_s)
                if shared > overlap:
                    best, overlap = i, shared
        if best is not None:
            said.setdefault(best, []).append(t.text.strip())
    out = []
    for i, s in enumerate(segments):
        words = " ".join(said.get(i, []))
        if words and s.side == "agent":
            s = s.model_copy(update={"text": words})
        elif words:
            s = s.model_copy(update={"heard_text": words})
        out.append(s)
    return tuple(out)


def _error_words(event: rt.ProviderError) -> str:
    code = f" ({event.code})" if event.code else ""
    return f"{event.kind}{code}: {event.message}" if event.message else f"{event.kind}{code}"


def _scrub(line: str, secret: str | None) -> str:
    """A line with the key taken out, should a provider ever echo it."""
    return line.replace(secret, "***") if secret else line
