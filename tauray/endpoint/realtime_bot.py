"""The endpoint's realtime model: a scripted agent speaking OpenAI's Realtime event protocol over a
websocket at ``/v1/realtime`` (and Azure's ``/openai/realtime``), so a realtime model as the agent
is tested without keys.

It plays the server's side of the protocol (hearing, the script and speaking are
:mod:`.realtime_core`'s, shared with Gemini Live's server in :mod:`.realtime_gemini_bot`):

* ``session.created`` first; ``session.update`` takes the instructions, the function tools and the
  audio formats (μ-law only: ``g711_ulaw``, or ``audio/pcmu`` in the GA shape), answered by
  ``session.updated``.
* **Hearing.** ``input_audio_buffer.append`` frames are its line. A level gate (the phone bot's)
  stands in for server VAD: ``input_audio_buffer.speech_started`` (with the item and the ms on the
  buffer's timeline), and after 700 ms of silence ``speech_stopped``, ``committed`` and
  ``conversation.item.created``. The packaged recogniser (``local/whisper-tiny.en``) hears the turn:
  ``conversation.item.input_audio_transcription.completed``. Then a response, as server VAD makes one.
* **Answering.** The endpoint's scripted agent answers from the conversation and the session's
  tools. A tool it picks is a function call (``response.function_call_arguments.done``, then
  ``response.done``); the client's ``function_call_output`` item and ``response.create`` bring the
  answer. Words are spoken through espeak-ng: ``response.audio.delta`` (μ-law, 100 ms a delta, at
  4x real time),
  ``response.audio_transcript.delta``/``done``, ``response.done`` with usage (the endpoint's counts:
  10 input audio tokens a second heard, 20 output audio tokens a second spoken, a text token per
  4 characters).
* **Barge-in.** Caller speech while a response is running cancels it (``response.done``, status
  ``cancelled``), as server VAD does; ``response.cancel`` does the same, or answers
  ``response_cancel_not_active``. ``conversation.item.truncate`` cuts the item's words to the share
  of its audio played (``conversation.item.truncated``): what the agent remembers having said.

An event it does not know, or a bad one, is answered with an ``error`` event, as OpenAI does.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from typing import Any

from aiohttp import WSMsgType, web

from tauray.actors.voice.live.ulaw import from_ulaw, to_ulaw
from tauray.endpoint.phone_bot import PhoneBotSettings
from tauray.endpoint.realtime_core import ScriptedVoice
from tauray.endpoint.realtime_gemini_bot import add_gemini_routes

REALTIME_PATHS = ("/v1/realtime", "/realtime", "/openai/realtime")
DELTA_BYTES = 800  # 100 ms of μ-law
DELTA_PACE_S = 0.025  # a delta every 25 ms: audio streamed at 4x real time
ULAW_FORMATS = ("g711_ulaw", "audio/pcmu")


class _Session(ScriptedVoice):
    def __init__(self, ws: web.WebSocketResponse, settings: PhoneBotSettings) -> None:
        super().__init__(settings)
        self.ws = ws
        self.send_lock = asyncio.Lock()
        self.ids = itertools.count(1)
        self.said_items: dict[str, dict[str, Any]] = {}  # assistant item -> its message and audio length

    def new_id(self, kind: str) -> str:
        return f"{kind}_{next(self.ids):06d}"

    async def send(self, kind: str, **fields: Any) -> None:
        if not self.ws.closed:
            async with self.send_lock:
                await asyncio.wait_for(self.ws.send_str(json.dumps({"type": kind, "event_id": self.new_id("event"),
                                                                    **fields})), self.settings.step_timeout_s)

    async def error(self, message: str, code: str, kind: str = "invalid_request_error") -> None:
        await self.send("error", error={"type": kind, "code": code, "message": message})

    async def run(self) -> None:
        await self.send("session.created", session={"id": self.new_id("sess"), "object": "realtime.session"})
        worker = asyncio.create_task(self.hear_turns())
        try:
            while not self.ws.closed:
                try:
                    frame = await self.ws.receive(timeout=self.settings.idle_timeout_s)
                except TimeoutError:
                    return
                if frame.type != WSMsgType.TEXT:
                    return
                try:
                    event = json.loads(frame.data)
                    kind = event["type"]
                except (ValueError, KeyError, TypeError):
                    await self.error("the event is not a JSON object with a 'type'", "invalid_event")
                    continue
                await self._on(kind, event)
        finally:
            await self.stop(worker)

    async def _on(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "session.update":
            await self._configure(event.get("session") or {})
        elif kind == "input_audio_buffer.append":
            try:
                audio = base64.b64decode(event["audio"], validate=True)
            except (KeyError, ValueError, TypeError):
                await self.error("input_audio_buffer.append: 'audio' is not base64", "invalid_value")
                return
            await self.hear(from_ulaw(audio), 8000)
        elif kind == "response.create":
            if not self.start_response():
                await self.error("a response is already in progress", "conversation_already_has_active_response")
        elif kind == "response.cancel":
            if not await self.cancel():
                await self.error("no response is in progress", "response_cancel_not_active")
        elif kind == "conversation.item.create":
            item = event.get("item") or {}
            if item.get("type") != "function_call_output" or "call_id" not in item:
                await self.error("conversation.item.create: only function_call_output items here", "invalid_value")
                return
            self.messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": str(item.get("output"))})
            await self.send("conversation.item.created", item={"id": self.new_id("item"), **item})
        elif kind == "conversation.item.truncate":
            await self._truncate(event)
        else:
            await self.error(f"unknown event type {kind!r}", "unknown_event")

    async def _configure(self, session: dict[str, Any]) -> None:
        formats = [session.get("input_audio_format"), session.get("output_audio_format")]
        audio = session.get("audio") or {}
        formats += [((audio.get(way) or {}).get("format") or {}).get("type") for way in ("input", "output")]
        bad = [f for f in formats if f is not None and f not in ULAW_FORMATS]
        if bad:
            await self.error(f"this endpoint speaks μ-law only, not {bad[0]!r}", "invalid_value")
            return
        if session.get("instructions"):
            self.messages[0] = {"role": "system", "content": str(session["instructions"])}
        if "tools" in session:
            self.tools = [{"type": "function", "function": {k: t.get(k) for k in ("name", "description", "parameters")}}
                          for t in session.get("tools") or [] if t.get("type") == "function"]
        await self.send("session.updated", session={"instructions": self.messages[0]["content"],
                                                    "tools": session.get("tools", [])})

    async def on_speech_started(self, at_ms: int) -> None:
        self.item = self.new_id("item")
        await self.send("input_audio_buffer.speech_started", audio_start_ms=at_ms, item_id=self.item)

    async def on_speech_stopped(self, end_ms: int) -> None:
        await self.send("input_audio_buffer.speech_stopped", audio_end_ms=end_ms, item_id=self.item)
        await self.send("input_audio_buffer.committed", item_id=self.item)
        await self.send("conversation.item.created", item={"id": self.item, "type": "message", "role": "user",
                                                           "content": [{"type": "input_audio"}]})

    async def on_heard(self, item: str, text: str) -> None:
        await self.send("conversation.item.input_audio_transcription.completed", item_id=item, content_index=0,
                        transcript=text)

    async def respond(self) -> None:
        response_id = self.new_id("resp")
        await self.send("response.created", response={"id": response_id, "status": "in_progress"})
        calls, text, usage = self.reply()
        if calls:
            output = []
            for call in calls:
                item = {"id": self.new_id("item"), "type": "function_call", "call_id": call["id"],
                        "name": call["function"]["name"], "arguments": call["function"]["arguments"]}
                output.append(item)
                await self.send("response.output_item.added", response_id=response_id, item=item)
                await self.send("response.function_call_arguments.done", response_id=response_id,
                                item_id=item["id"], call_id=item["call_id"], name=item["name"],
                                arguments=item["arguments"])
            await self._done(response_id, "completed", output, usage)
            return
        await self._speak(response_id, text, usage)

    async def _speak(self, response_id: str, text: str, usage: dict[str, int]) -> None:
        item = self.new_id("item")
        said = self.said_items[item] = {"message": self.said(text), "text": text, "ms": 0}
        sent = 0
        try:
            await self.send("response.output_item.added", response_id=response_id,
                            item={"id": item, "type": "message", "role": "assistant"})
            raw = to_ulaw(*await self.synth(text))
            said["ms"] = len(raw) // 8
            await self.send("response.audio_transcript.delta", response_id=response_id, item_id=item, delta=text)
            for at in range(0, len(raw), DELTA_BYTES):
                await self.send("response.audio.delta", response_id=response_id, item_id=item, content_index=0,
                                delta=base64.b64encode(raw[at:at + DELTA_BYTES]).decode("ascii"))
                sent = at + DELTA_BYTES
                await asyncio.sleep(DELTA_PACE_S)  # faster than real time, as a provider streams; a cancel lands here
            await self.send("response.audio.done", response_id=response_id, item_id=item)
            await self.send("response.audio_transcript.done", response_id=response_id, item_id=item, transcript=text)
        except asyncio.CancelledError:
            usage["output_audio"] = self.spoken_tokens(min(sent // 8, said["ms"]))
            await asyncio.shield(self._done(response_id, "cancelled", [], usage))
            raise
        usage["output_audio"], usage["output_text"] = self.spoken_tokens(said["ms"]), len(text) // 4
        await self._done(response_id, "completed", [{"id": item, "type": "message", "role": "assistant"}], usage)

    async def _done(self, response_id: str, status: str, output: list[Any], usage: dict[str, int]) -> None:
        inputs, outputs = usage["input_text"] + usage["input_audio"], usage["output_text"] + usage["output_audio"]
        await self.send("response.done", response={
            "id": response_id, "status": status, "output": output, "usage": {
                "total_tokens": inputs + outputs, "input_tokens": inputs, "output_tokens": outputs,
                "input_token_details": {"text_tokens": usage["input_text"], "audio_tokens": usage["input_audio"],
                                        "cached_tokens": 0},
                "output_token_details": {"text_tokens": usage["output_text"], "audio_tokens": usage["output_audio"]}}})

    async def _truncate(self, event: dict[str, Any]) -> None:
        said = self.said_items.get(str(event.get("item_id")))
        end_ms = event.get("audio_end_ms")
        if said is None or not isinstance(end_ms, int) or end_ms < 0:
            await self.error("conversation.item.truncate: no such assistant item, or a bad audio_end_ms",
                             "invalid_value")
            return
        if said["ms"] and end_ms > said["ms"]:
            await self.error(f"audio_end_ms {end_ms} is past the item's audio ({said['ms']} ms)", "invalid_value")
            return
        words = said["text"].split()
        kept = words[:round(len(words) * end_ms / said["ms"])] if said["ms"] else []
        said["message"]["content"] = " ".join(kept)  # the agent remembers only what was heard
        await self.send("conversation.item.truncated", item_id=event["item_id"], content_index=0, audio_end_ms=end_ms)


async def realtime_bot(request: web.Request) -> web.WebSocketResponse:
    """One realtime session: the websocket is the session."""
    ws = web.WebSocketResponse(max_msg_size=4 * 1024 * 1024)
    await ws.prepare(request)
    try:
        await _Session(ws, PhoneBotSettings()).run()
    finally:
        if not ws.closed:
            await ws.close()
    return ws


def add_realtime_routes(app: web.Application) -> None:
    """Serve the realtime model at ``/v1/realtime`` (``ws://127.0.0.1:PORT/v1/realtime?model=...``),
    ``/realtime`` and Azure's ``/openai/realtime``; and on Gemini Live's protocol at its path
    (:mod:`.realtime_gemini_bot`)."""
    for path in REALTIME_PATHS:
        app.router.add_get(path, realtime_bot)
    add_gemini_routes(app)
