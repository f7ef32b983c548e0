"""The caller's side of a live call to a phone bot: tauray plays the phone provider (Twilio's role
in Media Streams). It dials the bot's websocket, sends ``connected`` and ``start`` (the custom
parameters carry what a bot needs to find its session: the conversation id and the tool-server
URL), then every 20 ms on the wall clock sends one frame of the caller's audio (silence when the
caller is quiet, as a phone line does) and plays one frame of the bot's queued audio, answering
the bot's marks once the audio before them has played and dropping the queue on ``clear``.

Both lines are kept frame-aligned (``caller_line``, ``bot_line``: raw μ-law, 160 bytes a frame),
so the recording is what each side put on the line when. The harness's own lateness is measured
per frame (:mod:`.lateness`). Every wait has a timeout, and every way a call can fail is one line
(:class:`~.errors.CallFault`): a URL that cannot be reached, a peer speaking another protocol, a
bot that never answers, one that hangs up before saying anything, one that stops reading.
"""

from __future__ import annotations

import asyncio
import uuid
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from tauray.actors.voice.live import media_stream as ms
from tauray.actors.voice.live.errors import CallFault, FaultKind, MediaStreamError
from tauray.actors.voice.live.lateness import Lateness, LatenessMeter
from tauray.actors.voice.live.outgoing import OutgoingAudio
from tauray.actors.voice.live.settings import PhoneSettings
from tauray.actors.voice.live.ulaw import FRAME_BYTES, FRAME_MS, SILENCE_BYTE, to_ulaw

__all__ = ["CallRecord", "PhoneCall", "PhoneSettings", "open_socket", "probe", "shown_url"]

FRAME_S = FRAME_MS / 1000.0


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CallRecord(_Frozen):
    """What one live call left."""

    url: str = Field(description="The bot's URL as shown (no query, no credentials).")
    conversation_id: str = Field(description="The conversation the call belongs to.")
    stream_sid: str = Field(description="The stream's id sent in start.")
    call_sid: str = Field(description="The call's id sent in start.")
    ended_by: str = Field(description="'caller' (stop sent), 'bot' (it closed the socket) or 'fault'.")
    fault_kind: FaultKind | None = Field(default=None, description="Why the call failed, if it did.")
    fault: str | None = Field(default=None, description="The fault's one line, if the call failed.")
    lateness: Lateness = Field(description="The harness's frame-send lateness.")
    late: str | None = Field(default=None, description="Why the harness fell behind past its limit (an infra row).")
    caller_audio_s: float = Field(description="Seconds of the caller's speech sent (silence fill excluded).")
    bot_audio_s: float = Field(description="Seconds of the bot's audio played.")
    marks_answered: tuple[str, ...] = Field(description="The bot's marks answered, in order.")
    clears: int = Field(description="How many times the bot cleared its queued audio.")
    caller_line: bytes = Field(repr=False, description="Raw μ-law the caller sent, frame by frame.")
    bot_line: bytes = Field(repr=False, description="Raw μ-law of the bot as played, frame-aligned with caller_line.")


def shown_url(url: str) -> str:
    """A URL as it may be shown or logged: scheme, host, port and path; never a query or credentials."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<a malformed URL>"
    return f"{parts.scheme}://{host}{port}{parts.path}"


class PhoneCall:
    """One call in progress. Use :meth:`dial`; then :meth:`say`, :meth:`wait_bot_turn`,
    :meth:`hang_up` or :meth:`wait_ended`."""

    PEER, CALL = "phone: the bot at", "phone: the call to"  # how faults name the peer (a realtime session's differ)

    def __init__(self, ws: ClientConnection, url: str, conversation_id: str, stream_sid: str, call_sid: str,
                 settings: PhoneSettings):
        self._ws, self.url, self.conversation_id = ws, url, conversation_id
        self.stream_sid, self.call_sid, self.settings = stream_sid, call_sid, settings
        self._loop = asyncio.get_running_loop()
        self._sequence = 1  # start was 1
        self._out = OutgoingAudio()  # the caller's queued speech
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []  # wait_frames: (frames, future)
        self._queue = bytearray()  # the bot's audio not yet played
        self._queued_total = 0  # bytes of bot audio ever queued (marks are offsets in it)
        self._played_total = 0
        self._marks: list[tuple[int, str]] = []
        self._answered: list[str] = []
        self._clears = 0
        self._caller_line, self._bot_line = bytearray(), bytearray()
        self._bot_present: list[bool] = []
        self._caller_bytes = 0
        self._meter = LatenessMeter(FRAME_S)
        self._heard_first: float | None = None
        self._answer_by = self._loop.time() + settings.answer_timeout_s
        self._ended = asyncio.Event()
        self._frame_sent = asyncio.Event()
        self._ended_by = ""
        self._fault: CallFault | None = None
        self._t0 = self._loop.time()
        self._tasks = [asyncio.create_task(self._send_loop()), asyncio.create_task(self._receive_loop())]

    # ------------------------------------------------------------------ dialling
    @classmethod
    async def dial(cls, url: str, *, conversation_id: str, tool_server_url: str,
                   parameters: dict[str, str] | None = None, settings: PhoneSettings | None = None) -> PhoneCall:
        """Open the socket, send connected and start; the call runs from here on the wall clock."""
        settings = settings or PhoneSettings()
        shown = shown_url(url)
        ws = await open_socket(url, settings)
        stream_sid, call_sid = f"MZ{uuid.uuid4().hex}", f"CA{uuid.uuid4().hex}"
        params = {"conversation_id": conversation_id, "tool_server_url": tool_server_url, **(parameters or {})}
        try:
            await asyncio.wait_for(ws.send(ms.encode(ms.connected())), settings.send_timeout_s)
            await asyncio.wait_for(ws.send(ms.encode(ms.start(stream_sid, call_sid, params))), settings.send_timeout_s)
        except (ConnectionClosed, TimeoutError):
            await _close(ws, settings.close_timeout_s)
            raise CallFault("hung_up", f"phone: the bot at {shown} hung up before saying anything "
                            "(the socket closed as the call started)") from None
        return cls(ws, shown, conversation_id, stream_sid, call_sid, settings)

    # ------------------------------------------------------------------ the caller's side
    def say(self, audio: np.ndarray, rate: int) -> None:
        """Queue the caller's speech (float audio at any rate); it goes out frame by frame."""
        self.say_ulaw(to_ulaw(audio, rate))

    def say_ulaw(self, raw: bytes) -> None:
        self._out.append(raw)
        self._queued(raw)

    def place_ulaw(self, frame: int, raw: bytes) -> int:
        """Queue the caller's speech (raw μ-law) to start at the call's frame ``frame``, silence
        before it; a frame already sent (or covered by queued speech) moves it to the first free
        frame. Returns the frame where it starts (see :class:`~.outgoing.OutgoingAudio`)."""
        at = self._out.place(frame, raw)
        self._queued(raw)
        return at

    def cut_caller(self, frame: int) -> int:
        """Drop the caller's queued audio from frame ``frame`` on (frames sent stay sent); returns
        the frame from which the caller is silent on the line."""
        return self._out.cut(frame)

    def _queued(self, raw: bytes) -> None:
        if raw and self._heard_first is None:  # waiting for the bot's first words counts from the end of these
            ahead = self._out.queued_frames * FRAME_S
            self._answer_by = max(self._answer_by, self._loop.time() + ahead + self.settings.answer_timeout_s)

    @property
    def speaking(self) -> bool:
        """Whether the caller still has speech queued."""
        return self._out.speaking

    @property
    def frames(self) -> int:
        return len(self._bot_present)

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    async def wait_frames(self, frames: int, timeout_s: float) -> bool:
        """Wait until ``frames`` frames have gone out (each plays one frame of the bot) or the call
        has ended; False when ``timeout_s`` passed first."""
        if self.frames >= frames or self.ended:
            return True
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append((frames, waiter))
        try:
            await asyncio.wait_for(waiter, timeout_s)
            return True
        except TimeoutError:
            return False
        finally:
            self._waiters = [(n, w) for n, w in self._waiters if w is not waiter]

    def _wake(self, every: bool = False) -> None:
        for n, waiter in self._waiters:
            if (every or n <= self.frames) and not waiter.done():
                waiter.set_result(None)

    def bot_audio(self, start_frame: int, end_frame: int | None = None) -> bytes:
        """The bot's line (raw μ-law as played) between two frames."""
        end = self.frames if end_frame is None else end_frame
        return bytes(self._bot_line[start_frame * FRAME_BYTES:end * FRAME_BYTES])

    async def wait_bot_turn(self, *, silence_s: float = 1.0, timeout_s: float = 30.0) -> tuple[int, int]:
        """Wait until the bot has spoken after the caller's queued speech and then been silent for
        ``silence_s``: the turn's first and end frames (see :meth:`bot_audio`). Raises the call's
        fault, or ``CallFault('no_answer')`` after ``timeout_s``."""
        deadline = self._loop.time() + timeout_s
        quiet = max(1, round(silence_s / FRAME_S))
        while True:
            self._raise_if_failed()
            if not self.speaking:
                since = self._speech_end_frame
                spoke = [i for i in range(since, self.frames) if self._bot_present[i]]
                if spoke and (self.ended or (self.frames - (spoke[-1] + 1) >= quiet and not self._queue)):
                    return spoke[0], spoke[-1] + 1  # a turn the bot ended by hanging up is still its turn
                if self.ended:
                    raise CallFault("hung_up", f"{self.PEER} {self.url} hung up while the caller waited for it")
            elif self.ended:
                raise CallFault("hung_up", f"{self.PEER} {self.url} hung up while the caller was speaking")
            if self._loop.time() > deadline:
                raise CallFault("no_answer", f"{self.PEER} {self.url} did not finish a turn within {timeout_s:g} s")
            self._frame_sent.clear()
            try:
                await asyncio.wait_for(self._frame_sent.wait(), max(0.1, 5 * FRAME_S))
            except TimeoutError:
                pass

    async def hang_up(self) -> CallRecord:
        """Send stop and close the socket (the caller hangs up); the call's record."""
        if not self.ended:
            self._finish("caller")
            sender = self._tasks[0]
            sender.cancel()  # stop is the last message of the stream: no frame may follow it
            await asyncio.gather(sender, return_exceptions=True)
            try:
                goodbye = self._stop_message()
                if goodbye is not None:
                    await asyncio.wait_for(self._ws.send(goodbye), self.settings.send_timeout_s)
            except (ConnectionClosed, TimeoutError):
                pass
        return await self._shut()

    async def wait_ended(self, timeout_s: float | None = None) -> CallRecord:
        """Wait for the bot to end the call (or a fault, or ``max_call_s``); the record. A fault raises."""
        try:
            await asyncio.wait_for(self._ended.wait(), timeout_s or self.settings.max_call_s)
        except TimeoutError:
            self._fail("timeout", f"{self.CALL} {self.url} went on past {timeout_s or self.settings.max_call_s:g} s")
        record = await self._shut()
        self._raise_if_failed()
        return record

    def record(self) -> CallRecord:
        lateness = self._meter.summary()
        return CallRecord(
            url=self.url, conversation_id=self.conversation_id, stream_sid=self.stream_sid, call_sid=self.call_sid,
            ended_by=self._ended_by or "caller", fault_kind=self._fault.kind if self._fault else None,
            fault=str(self._fault) if self._fault else None, lateness=lateness,
            late=lateness.breach(self.settings.lateness_limit),
            caller_audio_s=round(self._caller_bytes / FRAME_BYTES * FRAME_S, 3),
            bot_audio_s=round(self._played_total / FRAME_BYTES * FRAME_S, 3),
            marks_answered=tuple(self._answered), clears=self._clears,
            caller_line=bytes(self._caller_line), bot_line=bytes(self._bot_line))

    # ------------------------------------------------------------------ the loops
    _speech_end_frame = 0

    async def _send_loop(self) -> None:
        k = 0
        try:
            while not self.ended:
                delay = self._t0 + k * FRAME_S - self._loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if self.ended:
                    return
                frame, speech = self._out.take()
                if speech:
                    self._caller_bytes += speech
                    self._speech_end_frame = k + 1
                message = self._frame_message(frame, k)
                at = self._loop.time() - self._t0  # when it went out; counted once the send is done
                try:
                    await asyncio.wait_for(self._ws.send(message), self.settings.send_timeout_s)
                except TimeoutError:
                    self._fail("no_answer", f"{self.PEER} {self.url} stopped taking the call's audio "
                               f"(a frame waited {self.settings.send_timeout_s:g} s)")
                    return
                except ConnectionClosed:
                    self._closed_by_bot()
                    return
                self._meter.sent(at)
                self._caller_line += frame
                self._play_one()
                self._frame_sent.set()
                self._wake()
                k += 1
                now = self._loop.time()
                if self._heard_first is None and now > self._answer_by:
                    waited = self.settings.answer_timeout_s
                    self._fail("no_answer", f"{self.PEER} {self.url} said nothing within {waited:g} s")
                elif now - self._t0 > self.settings.max_call_s:
                    self._fail("timeout", f"{self.CALL} {self.url} went on past {self.settings.max_call_s:g} s")
        except asyncio.CancelledError:
            raise

    def _stop_message(self) -> str | None:
        """The caller's last message as it hangs up (``stop``), if the protocol has one."""
        self._sequence += 1
        return ms.encode(ms.stop(self.stream_sid, self.call_sid, sequence=self._sequence))

    def _frame_message(self, frame: bytes, k: int) -> str:
        """The message carrying the caller's frame ``k`` (a media-stream ``media`` here)."""
        self._sequence += 1
        return ms.encode(ms.media(self.stream_sid, frame, sequence=self._sequence, chunk=k + 1, timestamp_ms=k * FRAME_MS))

    def _play_one(self) -> None:
        chunk = bytes(self._queue[:FRAME_BYTES])
        del self._queue[:FRAME_BYTES]
        self._played_total += len(chunk)
        self._bot_present.append(bool(chunk))
        self._bot_line += chunk + bytes([SILENCE_BYTE]) * (FRAME_BYTES - len(chunk))
        self._answer_marks(lambda offset: offset <= self._played_total)

    def _answer_marks(self, played) -> None:
        due = [name for offset, name in self._marks if played(offset)]
        self._marks = [(offset, name) for offset, name in self._marks if not played(offset)]
        for name in due:
            self._answered.append(name)
            self._sequence += 1
            message = ms.encode(ms.mark(self.stream_sid, name, sequence=self._sequence))
            asyncio.ensure_future(self._send_quietly(message))

    async def _send_quietly(self, message: str) -> None:
        try:
            await asyncio.wait_for(self._ws.send(message), self.settings.send_timeout_s)
        except (ConnectionClosed, TimeoutError):
            pass

    async def _receive_loop(self) -> None:
        try:
            async for text in self._ws:
                if self.ended:
                    return
                if isinstance(text, bytes):
                    self._fail("wrong_protocol", f"{self.PEER} {self.url} does not speak the media-stream "
                               "protocol: it sent a binary frame")
                    return
                try:
                    message = ms.decode(text)
                except MediaStreamError as exc:
                    self._fail("wrong_protocol", f"{self.PEER} {self.url} does not speak the media-stream "
                               f"protocol: {exc}")
                    return
                if not isinstance(message, (ms.Media, ms.Mark, ms.Clear)):
                    self._fail("wrong_protocol", f"{self.PEER} {self.url} does not speak the media-stream "
                               f"protocol: a bot does not send '{message.event}'")
                    return
                if message.stream_sid != self.stream_sid:
                    self._fail("wrong_protocol", f"{self.PEER} {self.url} sent '{message.event}' for another "
                               "stream than this call's")
                    return
                if isinstance(message, ms.Media):
                    audio = message.audio()
                    if audio and self._heard_first is None:
                        self._heard_first = self._loop.time()
                    self._queue += audio
                    self._queued_total += len(audio)
                elif isinstance(message, ms.Mark):
                    self._marks.append((self._queued_total, message.mark.name))
                else:
                    self._clears += 1
                    self._queued_total -= len(self._queue)
                    self._queue.clear()
                    self._answer_marks(lambda offset: True)
            self._closed_by_bot()
        except ConnectionClosed:
            self._closed_by_bot()

    # ------------------------------------------------------------------ ending
    def _closed_by_bot(self) -> None:
        if self.ended:
            return
        if self._heard_first is None:
            after = self._loop.time() - self._t0
            self._fail("hung_up", f"{self.PEER} {self.url} hung up before saying anything ({after:.2f} s into "
                       "the call)")
        else:
            self._finish("bot")

    def _fail(self, kind: FaultKind, message: str) -> None:
        if not self.ended:
            self._fault = CallFault(kind, message)
            self._finish("fault")

    def _finish(self, by: str) -> None:
        if not self.ended:
            self._ended_by = by
            self._ended.set()
            self._frame_sent.set()
            self._wake(every=True)

    def _raise_if_failed(self) -> None:
        if self._fault is not None:
            raise CallFault(self._fault.kind, str(self._fault))

    async def _shut(self) -> CallRecord:
        for task in self._tasks:
            if task is not asyncio.current_task() and not task.done():
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await _close(self._ws, self.settings.close_timeout_s)
        return self.record()


async def open_socket(url: str, settings: PhoneSettings, *, headers: dict[str, str] | None = None,
                      words: tuple[str, str, str] = ("phone", "the bot", "the media-stream protocol")) -> ClientConnection:
    """The bot's websocket, open (nothing sent on it yet); a :class:`CallFault` of kind
    ``unreachable`` or ``wrong_protocol`` when it cannot be opened. ``headers`` (a realtime model's
    key) never reach a fault's line; ``words`` name the caller, the peer and its protocol there."""
    shown, (who, peer, protocol) = shown_url(url), words
    try:
        # No permessage-deflate: phone providers send plain frames, and compressing 50 frames a second
        # per call costs the pacing loop CPU for nothing.
        ws = await connect(url, open_timeout=settings.connect_timeout_s, close_timeout=settings.close_timeout_s,
                           max_size=2 ** 22, compression=None, additional_headers=headers)
    except InvalidURI:
        raise CallFault("unreachable", f"{who}: {shown} is not a websocket URL (ws:// or wss://)") from None
    except InvalidStatus as exc:
        raise CallFault("wrong_protocol", f"{who}: the peer at {shown} does not speak {protocol}: "
                        f"it answered HTTP {exc.response.status_code}, not a websocket upgrade") from None
    except InvalidHandshake as exc:
        raise CallFault("wrong_protocol", f"{who}: the peer at {shown} does not speak {protocol}: "
                        f"the websocket handshake failed ({type(exc).__name__})") from None
    except TimeoutError:
        raise CallFault("unreachable", f"{who}: cannot reach {peer} at {shown}: no websocket within "
                        f"{settings.connect_timeout_s:g} s") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CallFault("unreachable", f"{who}: cannot reach {peer} at {shown}: {reason}") from None
    return ws


async def probe(url: str, settings: PhoneSettings | None = None) -> float:
    """Open the bot's websocket and close it again, no call placed (``tauray models check``, a
    sweep's probe): the seconds it took, or the :class:`CallFault` ``unreachable`` or
    ``wrong_protocol`` that a call would have met."""
    settings = settings or PhoneSettings()
    started = asyncio.get_running_loop().time()
    await _close(await open_socket(url, settings), settings.close_timeout_s)
    return asyncio.get_running_loop().time() - started


async def _close(ws: ClientConnection, timeout_s: float) -> None:
    try:
        await asyncio.wait_for(ws.close(), timeout_s)
    except (TimeoutError, ConnectionClosed, OSError):
        pass
