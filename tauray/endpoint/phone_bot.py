"""The endpoint's phone bot: a scripted support agent on the phone-bot protocol (Twilio Media
Streams over a websocket at ``/phone-bot``), so the ``phone`` agent kind is tested without keys.

It does what a voice bot behind a phone number does: reads ``connected`` and ``start``, finds its
session from the start's custom parameters (``conversation_id``, ``tool_server_url``), opens an
MCP client on the tool server and offers its tools to the scripted agent
(:func:`~tauray.endpoint.scripted.scripted_agent`), greets, then hears the caller's 20 ms μ-law
frames: a level gate finds speech, ``end_of_turn_ms`` of silence ends a turn, the packaged
recogniser (``local/whisper-tiny.en``) hears it, the scripted agent answers (calling a tool through
the tool server when it chooses one) and espeak-ng speaks the answer, sent as media frames and a
mark. Caller speech over its unplayed audio for ``barge_in_ms`` clears it. When the caller says
goodbye it says goodbye and hangs up (closes the socket).

Recognition and synthesis run on worker threads, off the server's loop. Every wait is bounded.
The custom parameters are never logged (a real deployment's may hold secrets).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from aiohttp import WSMsgType, web

from tauray.actors.voice.engines import ESPEAK, make_tts
from tauray.actors.voice.line import resample
from tauray.actors.voice.live import media_stream as ms
from tauray.actors.voice.live.errors import MediaStreamError
from tauray.actors.voice.live.ulaw import FRAME_BYTES, FRAME_MS, from_ulaw, to_ulaw
from tauray.endpoint.audio_agent import _recogniser
from tauray.endpoint.scripted import scripted_agent

PHONE_BOT_PATH = "/phone-bot"
GOODBYE = "Thank you for calling. Goodbye."
_BYE = re.compile(r"\b(good ?bye|bye)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PhoneBotSettings:
    """The bot's ears and timing (fixed: a test stand-in, not a bot to tune)."""

    end_of_turn_ms: int = 700
    speech_dbfs: float = -38.0
    min_speech_ms: int = 200
    barge_in_ms: int = 300
    voice: str = "en-us+m7"
    rate_wpm: int = 170
    recogniser: str = "whisper-tiny.en"
    opening_timeout_s: float = 10.0
    idle_timeout_s: float = 120.0
    step_timeout_s: float = 60.0
    max_tool_rounds: int = 3


@dataclass(frozen=True)
class _Turns:
    user_turns: int = 0  # what BehaviourSettings asks of a behaviour; the agent never reads it


class _Bot:
    def __init__(self, ws: web.WebSocketResponse, settings: PhoneBotSettings):
        self.ws, self.settings = ws, settings
        self.stream_sid = ""
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.client: Any = None
        self.pending: set[str] = set()  # marks of replies not yet played
        self.replies = itertools.count(1)
        self.turns: asyncio.Queue[np.ndarray | None] = asyncio.Queue()
        self.heard: list[np.ndarray] = []
        self.speech_ms = self.silence_ms = self.over_ms = 0
        self.done = asyncio.Event()
        self.marked = asyncio.Event()  # set by the listening loop at each mark the caller answers

    async def run(self) -> None:
        opening = await self._opening()
        if opening is None:
            return
        params = opening.start.custom_parameters
        async with contextlib.AsyncExitStack() as stack:
            url = params.get("tool_server_url")
            if url:
                from mcp import Client  # lazy: optional extra tauray[live]; about 2 s to import

                self.client = await stack.enter_async_context(Client(url))
                listed = await asyncio.wait_for(self.client.list_tools(), self.settings.step_timeout_s)
                self.tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                                "parameters": t.input_schema}} for t in listed.tools]
            self.messages = [{"role": "system", "content": "You are a phone support agent."}]
            worker = asyncio.create_task(self._work())
            try:
                await self._answer()  # the greeting
                await self._listen()
            finally:
                await self.turns.put(None)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(worker, self.settings.step_timeout_s)
                worker.cancel()

    async def _opening(self) -> ms.Start | None:
        for want in (ms.Connected, ms.Start):
            message = await self._receive(self.settings.opening_timeout_s)
            if not isinstance(message, want):
                await self.ws.close(code=1002, message=b"expected connected, then start")
                return None
        assert isinstance(message, ms.Start)
        self.stream_sid = message.stream_sid
        return message

    async def _receive(self, timeout_s: float) -> ms.Message | None:
        try:
            frame = await self.ws.receive(timeout=timeout_s)
        except TimeoutError:
            return None
        if frame.type != WSMsgType.TEXT:
            return None
        try:
            return ms.decode(frame.data)
        except MediaStreamError as exc:
            await self.ws.close(code=1002, message=str(exc)[:120].encode())
            return None

    async def _listen(self) -> None:
        while not self.done.is_set() and not self.ws.closed:
            message = await self._receive(self.settings.idle_timeout_s)
            if message is None or isinstance(message, ms.Stop):
                return
            if isinstance(message, ms.Mark):
                self.pending.discard(message.mark.name)
                self.marked.set()
            elif isinstance(message, ms.Media):
                await self._hear(message.audio())

    async def _hear(self, frame: bytes) -> None:
        audio = from_ulaw(frame)
        level = 20 * np.log10(max(float(np.sqrt(np.mean(audio ** 2))) if audio.size else 0.0, 1e-9))
        speech = level >= self.settings.speech_dbfs
        if speech:
            self.speech_ms += FRAME_MS
            self.silence_ms = 0
            self.over_ms = self.over_ms + FRAME_MS if self.pending else 0
            if self.over_ms >= self.settings.barge_in_ms:  # the caller talks over unplayed audio: stop it
                await self._send(ms.clear(self.stream_sid))
                self.pending.clear()
                self.over_ms = 0
        elif self.speech_ms:
            self.silence_ms += FRAME_MS
        if self.speech_ms:
            self.heard.append(audio)
        if self.speech_ms and self.silence_ms >= self.settings.end_of_turn_ms:
            if self.speech_ms >= self.settings.min_speech_ms:
                await self.turns.put(np.concatenate(self.heard))
            self.heard, self.speech_ms, self.silence_ms = [], 0, 0

    async def _work(self) -> None:
        """The bot's turns, one at a time; a failure ends the call with its one line as the close reason."""
        try:
            await self._turns()
        except Exception as exc:  # the call ends; the caller sees the socket close with the reason
            reason = f"phone bot: {type(exc).__name__}: {exc}".splitlines()[0][:120]
            print(reason, file=sys.stderr, flush=True)
            await self.ws.close(code=1011, message=reason.encode())

    async def _turns(self) -> None:
        while (audio := await self.turns.get()) is not None:
            asr = await asyncio.to_thread(_recogniser, self.settings.recogniser)
            wide = resample(audio, 8000, 16000)
            text = (await asyncio.wait_for(asyncio.to_thread(asr.transcribe, wide), self.settings.step_timeout_s)).strip()
            if not text:
                continue
            self.messages.append({"role": "user", "content": text})
            if _BYE.search(text):
                await self._say(GOODBYE)
                await self._until_played()
                self.done.set()
                await self.ws.close()
                return
            await self._answer()

    async def _answer(self) -> None:
        for _ in range(self.settings.max_tool_rounds + 1):
            body = {"model": "scripted-agent", "messages": self.messages, **({"tools": self.tools} if self.tools else {})}
            reply = scripted_agent(body, _Turns())
            self.messages.append(reply.message)
            if reply.finish_reason != "tool_calls" or self.client is None:
                await self._say(str(reply.message.get("content") or ""))
                return
            for call in reply.message.get("tool_calls") or ():
                name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
                result = await asyncio.wait_for(self.client.call_tool(name, arguments), self.settings.step_timeout_s)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})

    async def _say(self, text: str) -> None:
        if not text:
            return
        tts = make_tts(ESPEAK)
        audio = await asyncio.wait_for(asyncio.to_thread(tts.synth, text, self.settings.voice,
                                                         self.settings.rate_wpm, 50, 0), self.settings.step_timeout_s)
        raw = to_ulaw(audio, tts.sample_rate)
        for at in range(0, len(raw), FRAME_BYTES):
            await self._send(ms.media(self.stream_sid, raw[at:at + FRAME_BYTES]))
        name = f"reply-{next(self.replies)}"
        self.pending.add(name)
        await self._send(ms.mark(self.stream_sid, name))

    async def _until_played(self) -> None:
        """Wait (bounded) until the caller has played every reply: the listening loop sees the marks."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.step_timeout_s
        while self.pending and not self.ws.closed and loop.time() < deadline:
            self.marked.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.marked.wait(), max(0.05, deadline - loop.time()))

    async def _send(self, message: ms.Message) -> None:
        if not self.ws.closed:
            await asyncio.wait_for(self.ws.send_str(ms.encode(message)), self.settings.step_timeout_s)


async def phone_bot(request: web.Request) -> web.WebSocketResponse:
    """One call: the websocket is the line."""
    ws = web.WebSocketResponse(max_msg_size=4 * 1024 * 1024)
    await ws.prepare(request)
    try:
        await _Bot(ws, PhoneBotSettings()).run()
    finally:
        if not ws.closed:
            await ws.close()
    return ws


def add_phone_bot_routes(app: web.Application) -> None:
    """Serve the phone bot at ``/phone-bot`` (a websocket: ``ws://127.0.0.1:PORT/phone-bot``)."""
    app.router.add_get(PHONE_BOT_PATH, phone_bot)
