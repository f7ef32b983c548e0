"""The endpoint's realtime model on Gemini Live's protocol: the same scripted agent as
:mod:`.realtime_bot`'s (its core is :mod:`.realtime_core`), speaking ``BidiGenerateContent``'s server
side over a websocket at ``/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent``
(a ``gemini/<model>`` agent's ``api_base`` is that URL), so a Gemini agent is tested without a key.

* **Opening.** The client's first message must be ``setup`` (the model, ``responseModalities``
  ``["AUDIO"]``, the system instruction, ``functionDeclarations``), answered by ``setupComplete``.
* **Hearing.** ``realtimeInput.audio`` (or ``mediaChunks``), 16-bit PCM (``audio/pcm;rate=N``,
  16 kHz as the service takes), goes through the core's level gate; ``audioStreamEnd`` ends the
  caller's turn at once. Each heard turn is sent as ``serverContent.inputTranscription``, then a turn
  of the model's starts. ``clientContent`` turns are text from the client: ``turnComplete`` asks for
  a turn (the greeting, when the conversation has none).
* **Speaking.** ``serverContent.modelTurn`` inline audio parts (PCM, 24 kHz, base64, 100 ms a part at
  4x real time), the words as ``outputTranscription`` with the first part, then
  ``generationComplete``, and ``turnComplete`` with ``usageMetadata`` (the turn's own tokens, by
  modality in ``promptTokensDetails``/``responseTokensDetails``).
* **Tools.** A tool the script picks is a ``toolCall`` (``functionCalls`` with id, name and args,
  and the turn's ``usageMetadata``); the client's ``toolResponse`` (``functionResponses`` by id) is
  the tool's answer, and the model goes on by itself.
* **Barge-in.** Caller speech over a turn stops it: ``serverContent.interrupted`` (what was not sent
  is dropped here, as the service does), with the turn's usage so far.

A message that is not one of the client's, or a bad one, closes the session with a one-line reason
(1007, as the service closes on an invalid argument).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
from typing import Any

import numpy as np
from aiohttp import WSCloseCode, WSMsgType, web

from tauray.actors.voice.line import resample
from tauray.endpoint.phone_bot import PhoneBotSettings
from tauray.endpoint.realtime_core import ScriptedVoice

__all__ = ["GEMINI_PATH", "add_gemini_routes"]

GEMINI_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
OUT_RATE = 24000
PART_BYTES = OUT_RATE * 2 // 10  # 100 ms of 16-bit PCM
PART_PACE_S = 0.025  # a part every 25 ms: audio streamed at 4x real time


class BadMessage(ValueError):
    """A client message the service would refuse (one line: the close's reason)."""


class _GeminiSession(ScriptedVoice):
    def __init__(self, ws: web.WebSocketResponse, settings: PhoneBotSettings) -> None:
        super().__init__(settings)
        self.ws = ws
        self.send_lock = asyncio.Lock()
        self.ids = itertools.count(1)
        self.model = ""

    async def send(self, message: dict[str, Any]) -> None:
        if not self.ws.closed:
            async with self.send_lock:
                await asyncio.wait_for(self.ws.send_str(json.dumps(message)), self.settings.step_timeout_s)

    async def run(self) -> None:
        try:
            first = await self.ws.receive(timeout=self.settings.opening_timeout_s)
        except TimeoutError:
            return await self.ws.close(code=WSCloseCode.POLICY_VIOLATION, message=b"no setup message")
        worker = asyncio.create_task(self.hear_turns())
        try:
            self._setup(self._message(first))
            await self.send({"setupComplete": {}})
            while not self.ws.closed:
                try:
                    frame = await self.ws.receive(timeout=self.settings.idle_timeout_s)
                except TimeoutError:
                    return
                if frame.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                    return
                await self._on(self._message(frame))
        except BadMessage as exc:
            await self.ws.close(code=WSCloseCode.INVALID_TEXT, message=str(exc)[:120].encode())
        finally:
            await self.stop(worker)

    @staticmethod
    def _message(frame: Any) -> dict[str, Any]:
        if frame.type not in (WSMsgType.TEXT, WSMsgType.BINARY):  # the service takes JSON as either
            raise BadMessage("Request contains an invalid argument: not a JSON message.")
        try:
            message = json.loads(frame.data)
        except ValueError:
            raise BadMessage("Request contains an invalid argument: the message is not JSON.") from None
        if not isinstance(message, dict) or len(message) != 1:
            raise BadMessage("Request contains an invalid argument: a message has exactly one field.")
        return message

    def _setup(self, message: dict[str, Any]) -> None:
        setup = message.get("setup")
        if not isinstance(setup, dict) or not str(setup.get("model", "")).startswith("models/"):
            raise BadMessage("Request contains an invalid argument: the first message must be setup with a "
                             "model (models/...).")
        self.model = setup["model"]
        modalities = (setup.get("generationConfig") or {}).get("responseModalities") or ["AUDIO"]
        if modalities != ["AUDIO"]:
            raise BadMessage(f"Request contains an invalid argument: responseModalities {modalities} (this model "
                             "speaks AUDIO only).")
        text = "".join(str(p.get("text", "")) for p in (setup.get("systemInstruction") or {}).get("parts") or [])
        if text:
            self.messages[0] = {"role": "system", "content": text}
        self.tools = [{"type": "function", "function": {k: f.get(k) for k in ("name", "description", "parameters")}}
                      for tool in setup.get("tools") or [] for f in tool.get("functionDeclarations") or []]

    async def _on(self, message: dict[str, Any]) -> None:
        (kind, body), = message.items()
        if not isinstance(body, dict):
            raise BadMessage(f"Request contains an invalid argument: {kind} is not an object.")
        if kind == "setup":
            raise BadMessage("Request contains an invalid argument: setup was already sent.")
        if kind == "realtimeInput":
            for blob in ([body["audio"]] if "audio" in body else []) + list(body.get("mediaChunks") or []):
                await self.hear(*_pcm(blob))
            if body.get("audioStreamEnd"):
                await self.end_turn()
        elif kind == "clientContent":
            for turn in body.get("turns") or []:
                text = "".join(str(p.get("text", "")) for p in turn.get("parts") or [])
                if text and any(m["role"] == "assistant" for m in self.messages):  # not the greeting's cue
                    self.messages.append({"role": "user", "content": text})
            if body.get("turnComplete"):
                self.start_response()
        elif kind == "toolResponse":
            for answer in body.get("functionResponses") or []:
                if "id" not in answer:
                    raise BadMessage("Request contains an invalid argument: a functionResponse without its id.")
                self.messages.append({"role": "tool", "tool_call_id": str(answer["id"]),
                                      "content": json.dumps(answer.get("response"))})
            self.start_response()  # Gemini goes on by itself
        else:
            raise BadMessage(f"Request contains an invalid argument: unknown message {kind!r}.")

    async def on_heard(self, item: str, text: str) -> None:
        if text:
            await self.send({"serverContent": {"inputTranscription": {"text": text}}})

    async def respond(self) -> None:
        calls, text, usage = self.reply()
        if calls:
            await self.send({"toolCall": {"functionCalls": [
                {"id": c["id"], "name": c["function"]["name"], "args": json.loads(c["function"]["arguments"] or "{}")}
                for c in calls]}, "usageMetadata": _metadata(usage)})
            return
        message = self.said(text)
        pcm, sent = b"", 0
        try:
            audio, rate = await self.synth(text)
            pcm = (np.clip(resample(audio, rate, OUT_RATE), -1.0, 1.0) * 32767).astype("<i2").tobytes()
            for at in range(0, len(pcm), PART_BYTES):
                content: dict[str, Any] = {"modelTurn": {"parts": [{"inlineData": {
                    "mimeType": f"audio/pcm;rate={OUT_RATE}",
                    "data": base64.b64encode(pcm[at:at + PART_BYTES]).decode("ascii")}}]}}
                if not at:
                    content["outputTranscription"] = {"text": text}
                await self.send({"serverContent": content})
                sent = min(at + PART_BYTES, len(pcm))
                await asyncio.sleep(PART_PACE_S)  # a barge-in's cancel lands here
        except asyncio.CancelledError:
            words = text.split()
            message["content"] = " ".join(words[:round(len(words) * sent / max(len(pcm), 1))])  # what was sent
            usage["output_audio"] = self.spoken_tokens(sent * 1000 // (OUT_RATE * 2))
            await asyncio.shield(self.send({"serverContent": {"interrupted": True}, "usageMetadata": _metadata(usage)}))
            raise
        usage["output_audio"] = self.spoken_tokens(len(pcm) * 1000 // (OUT_RATE * 2))
        await self.send({"serverContent": {"generationComplete": True}})
        await self.send({"serverContent": {"turnComplete": True}, "usageMetadata": _metadata(usage)})


def _pcm(blob: Any) -> tuple[np.ndarray, int]:
    """A ``realtimeInput`` blob as float audio and its rate; :class:`BadMessage` when it is not PCM."""
    mime = str((blob or {}).get("mimeType", "")) if isinstance(blob, dict) else ""
    if not mime.startswith("audio/pcm"):
        raise BadMessage(f"Request contains an invalid argument: audio of mimeType {mime!r} (audio/pcm only).")
    try:
        rate = int(mime.partition("rate=")[2] or 16000)
        raw = base64.b64decode(blob["data"], validate=True)
    except (KeyError, ValueError, binascii.Error):
        raise BadMessage("Request contains an invalid argument: the audio's data or rate is bad.") from None
    return np.frombuffer(raw[:len(raw) // 2 * 2], "<i2").astype(np.float32) / 32768, rate


def _metadata(usage: dict[str, int]) -> dict[str, Any]:
    prompt = usage["input_text"] + usage["input_audio"]
    response = usage["output_text"] + usage["output_audio"]
    return {"promptTokenCount": prompt, "responseTokenCount": response, "totalTokenCount": prompt + response,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage["input_text"]},
                                    {"modality": "AUDIO", "tokenCount": usage["input_audio"]}],
            "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": usage["output_audio"]}]}


async def gemini_bot(request: web.Request) -> web.WebSocketResponse:
    """One Live session: the websocket is the session."""
    ws = web.WebSocketResponse(max_msg_size=4 * 1024 * 1024)
    await ws.prepare(request)
    try:
        await _GeminiSession(ws, PhoneBotSettings()).run()
    finally:
        if not ws.closed:
            await ws.close()
    return ws


def add_gemini_routes(app: web.Application) -> None:
    """Serve the realtime model on Gemini Live's protocol at ``ws://127.0.0.1:PORT`` + :data:`GEMINI_PATH`."""
    app.router.add_get(GEMINI_PATH, gemini_bot)
