"""Gemini Live's protocol (``BidiGenerateContent`` over a websocket), the client's side: the same
events a live call acts on as :mod:`.realtime_openai`'s, so :class:`~.realtime_call.RealtimeCall`
speaks either.

* **Where.** ``wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.
  GenerativeService.BidiGenerateContent``, the key in the ``x-goog-api-key`` header (never the
  URL's ``key=``: a URL is shown in lines).
* **Opening.** The client speaks first: ``setup`` (the model, audio out, the scenario's prompt as
  the system instruction, its tools as function declarations, both transcriptions on); the
  server's ``setupComplete`` is the session's start. A first client turn asks for the greeting.
* **Audio.** Each 20 ms μ-law frame of the line goes out as ``realtimeInput.audio``, 16-bit PCM at
  16 kHz; ``serverContent.modelTurn`` audio (PCM, 24 kHz) comes back as the line's μ-law.
* **Tools.** ``toolCall.functionCalls`` are the function calls; ``toolResponse`` answers them by id
  and name (Gemini goes on by itself: no request for a new response).
* **Barge-in.** ``serverContent.interrupted`` means the server heard the caller and dropped what
  it had not sent: the queue is dropped here. Gemini has no truncate event.
* **Transcripts and usage.** ``inputTranscription``/``outputTranscription`` fragments are joined per
  turn and given at the turn's end; ``usageMetadata`` is counted by modality.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from tauray.actors.voice.line import resample
from tauray.actors.voice.live import realtime_openai as rt
from tauray.actors.voice.live.errors import MediaStreamError
from tauray.actors.voice.live.ulaw import from_ulaw, to_ulaw

__all__ = ["GEMINI_URL", "GeminiLive"]

GEMINI_URL = ("wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService."
              "BidiGenerateContent")
GREETING = "(The call is connected. Greet the caller.)"


class GeminiLive:
    """The client's messages for one Gemini Live session, and the server's read back."""

    name = "gemini-live"

    def __init__(self, *, model: str, instructions: str, tools: list[dict[str, Any]], voice: str | None = None,
                 greet: bool = True) -> None:
        self.model = model if model.startswith("models/") else f"models/{model}"
        self.instructions, self.tools, self.voice, self.greet = instructions, tools, voice, greet
        self._turn = 0
        self._said: list[str] = []
        self._heard: list[str] = []
        self._names: dict[str, str] = {}  # call id -> function name (a response names both)

    def headers(self, key_header: str, key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": key} if key else {}

    # --- the client's messages ---------------------------------------------------------------------
    def before_created(self) -> list[str]:
        config: dict[str, Any] = {"responseModalities": ["AUDIO"]}
        if self.voice:
            config["speechConfig"] = {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": self.voice}}}
        setup = {"model": self.model, "generationConfig": config,
                 "systemInstruction": {"parts": [{"text": self.instructions}]},
                 "inputAudioTranscription": {}, "outputAudioTranscription": {}}
        if self.tools:
            setup["tools"] = [{"functionDeclarations": [
                {"name": t["name"], "description": t.get("description", ""),
                 "parameters": t.get("parameters") or {"type": "object", "properties": {}}} for t in self.tools]}]
        return [json.dumps({"setup": setup})]

    def opening(self) -> list[str]:
        if not self.greet:
            return []
        return [json.dumps({"clientContent": {"turns": [{"role": "user", "parts": [{"text": GREETING}]}],
                                              "turnComplete": True}})]

    def append(self, frame: bytes) -> str:
        wide = resample(from_ulaw(frame), 8000, 16000)
        pcm = (np.clip(wide, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        return json.dumps({"realtimeInput": {"audio": {"data": base64.b64encode(pcm).decode("ascii"),
                                                       "mimeType": "audio/pcm;rate=16000"}}})

    def response_cancel(self) -> None:
        return None  # the server stops its turn itself when it hears the caller

    def truncate(self, item_id: str, audio_end_ms: int) -> None:
        return None  # no such event: what was not sent is dropped by the server

    def function_output(self, call_id: str, output: str) -> list[str]:
        response = {"id": call_id, "name": self._names.get(call_id, ""), "response": {"result": output}}
        return [json.dumps({"toolResponse": {"functionResponses": [response]}})]

    # --- the server's messages -----------------------------------------------------------------------
    def decode(self, text: str | bytes) -> list[Any]:
        """One server message as the events it carries (several at once: audio, a transcript, the
        turn's end); :class:`MediaStreamError` (one line) when it is not a Live message."""
        try:
            message = json.loads(text)
        except ValueError:
            raise MediaStreamError("gemini live: a frame that is not JSON") from None
        if not isinstance(message, dict) or not message:
            raise MediaStreamError("gemini live: the message is not a JSON object with a field")
        try:
            return self._read(message)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = exc.args[0] if isinstance(exc, KeyError) else type(exc).__name__
            raise MediaStreamError(f"gemini live: {next(iter(message))}: a bad or missing field {what!r}") from None

    def _read(self, m: dict[str, Any]) -> list[Any]:
        events: list[Any] = []
        if "setupComplete" in m:
            events.append(rt.SessionCreated(""))
        if "toolCall" in m:
            for call in m["toolCall"]["functionCalls"]:
                self._names[str(call["id"])] = str(call["name"])
                events.append(rt.FunctionCall(str(call["id"]), str(call["name"]), json.dumps(call.get("args") or {})))
        content = m.get("serverContent") or {}
        item = f"turn_{self._turn}"
        if content.get("interrupted"):
            events.append(rt.SpeechStarted(f"caller_{self._turn}", -1))  # when is not said
        for part in (content.get("modelTurn") or {}).get("parts") or []:
            data = part.get("inlineData") or {}
            if str(data.get("mimeType", "")).startswith("audio/pcm"):
                rate = int(str(data["mimeType"]).partition("rate=")[2] or 24000)
                pcm = np.frombuffer(base64.b64decode(data["data"], validate=True), "<i2").astype(np.float32) / 32768
                events.append(rt.AudioDelta(item, to_ulaw(pcm, rate)))
        if (content.get("inputTranscription") or {}).get("text"):
            self._heard.append(content["inputTranscription"]["text"])
        if (content.get("outputTranscription") or {}).get("text"):
            self._said.append(content["outputTranscription"]["text"])
        if content.get("turnComplete") or content.get("interrupted"):
            if self._heard:
                events.append(rt.Transcript("caller", f"caller_{self._turn}", "".join(self._heard).strip()))
            if self._said:
                events.append(rt.Transcript("agent", item, "".join(self._said).strip()))
            self._heard, self._said = [], []
            self._turn += 1
        if "usageMetadata" in m:
            events.append(rt.ResponseDone(item, "completed", _usage(m["usageMetadata"])))
        return events or [rt.Ignored(next(iter(m)))]


def _usage(meta: dict[str, Any]) -> dict[str, int]:
    """``usageMetadata`` by modality: input/output × text/audio tokens. A side without its details
    (``promptTokensDetails``/``responseTokensDetails``) is counted from its total, as text."""
    counts: dict[str, int] = {}
    for field, total, side in (("promptTokensDetails", "promptTokenCount", "input"),
                               ("responseTokensDetails", "responseTokenCount", "output")):
        details = meta.get(field) or []
        for detail in details:
            kind = "audio" if str(detail.get("modality", "")).upper() == "AUDIO" else "text"
            name = f"{side}_{kind}_tokens"
            counts[name] = counts.get(name, 0) + int(detail.get("tokenCount") or 0)
        if not details and int(meta.get(total) or 0):
            counts[f"{side}_text_tokens"] = int(meta[total])
    return counts
