"""The endpoint's speech routes, answering as OpenAI's audio API documents them, so a hosted
``tts``/``asr`` spec (litellm ``speech`` and ``transcription``) runs offline end to end:

* ``POST /v1/audio/speech``: JSON ``{"model", "input", "voice", "response_format", "speed"}``;
  answers the audio bytes (``audio/wav``, 16-bit PCM) of ``input`` spoken by espeak-ng in the
  espeak voice the OpenAI voice name maps to (:data:`VOICES`), at ``speed`` × 170 words a minute.
  Only ``wav`` and ``pcm`` are produced; another format, an unknown voice or an empty input is a
  400 in OpenAI's error shape.
* ``POST /v1/audio/transcriptions``: multipart form with ``file`` (any WAV libsndfile reads),
  ``model``, optional ``language`` and ``response_format`` (``json`` by default, ``text``,
  ``verbose_json`` with the audio's ``duration``); the audio is recognised with the packaged
  recogniser of the speech channel (``local/whisper-tiny.en``).

The endpoint's quota (``--quota-rpm``) meters these requests like chat calls (a 429 with
``retry-after``); synthesis and recognition run on a worker thread, off the server's loop.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from aiohttp import web

from tauray.actors.voice.engines import SAMPLE_RATE, EspeakTTS
from tauray.endpoint.audio_agent import _recogniser, decode
from tauray.endpoint.replies import BehaviourError

# OpenAI's voice names, spoken by espeak-ng voices of ours (a fixed map: the same name always
# gives the same voice).
VOICES: Final = {"alloy": "en-us+f2", "ash": "en-us+m7", "ballad": "en+m2", "coral": "en-us+f3", "echo": "en-us+m4",
                 "fable": "en+f3", "onyx": "en-us+m2", "nova": "en-us+f4", "sage": "en-us+klatt",
                 "shimmer": "en-us+f5", "verse": "en-us+m7"}
BASE_WPM: Final = 170


def _error(status: int, message: str, param: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    return web.json_response(body, status=status)


def _synthesise(text: str, voice: str, speed: float) -> tuple[np.ndarray, int]:
    tts = EspeakTTS()
    return tts.synth(text, voice, int(round(BASE_WPM * speed)), 50, 0), tts.sample_rate


def _recognise(data: bytes) -> tuple[str, float]:
    audio = decode(data)
    return _recogniser(None).transcribe(audio), audio.size / SAMPLE_RATE


def _admit(state: Any, model: str) -> web.Response | None:
    """The endpoint's quota for one request: None when admitted, else the 429 to send."""
    if not state.quota.active:
        return None
    admitted, wait = state.quota.admit(model, 0, 0)
    if admitted is not None:
        state.quota.settle(admitted, 0)
        return None
    refused, headers = state.quota.refusal(model, wait)  # retry-after and the rate-limit headers, as on chat
    return web.json_response(refused, status=429, headers=headers)


def speech_handler(state_of: Callable[[web.Request], Any]) -> Callable[[web.Request], Any]:
    """``POST /audio/speech`` (see the module docstring)."""

    async def speech(request: web.Request) -> web.StreamResponse:
        state = state_of(request)
        state.requests += 1
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "Request body is not valid JSON.")
        model, text = str(body.get("model", "")), body.get("input")
        voice, fmt = body.get("voice") or "alloy", body.get("response_format") or "mp3"
        if not isinstance(text, str) or not text.strip():
            return _error(400, "'input' must be a non-empty string.", "input")
        if voice not in VOICES:
            return _error(400, f"Unknown voice {voice!r}; this test endpoint has {', '.join(VOICES)}.", "voice")
        if fmt not in ("wav", "pcm"):
            return _error(400, f"response_format {fmt!r} is not produced here; ask for 'wav' or 'pcm'.",
                          "response_format")
        speed = float(body.get("speed") or 1.0)
        if not 0.25 <= speed <= 4.0:
            return _error(400, f"speed {speed} is out of range 0.25..4.0.", "speed")
        refused = _admit(state, model)
        if refused is not None:
            return refused
        state.by_behaviour[f"audio/speech:{model}"] += 1
        audio, rate = await asyncio.to_thread(_synthesise, text, VOICES[voice], speed)
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2")
        if fmt == "pcm":
            return web.Response(body=pcm.tobytes(), content_type="audio/pcm")
        import soundfile  # lazy: optional extra tauray[voice] (the endpoint serves text without it)

        buffer = io.BytesIO()
        soundfile.write(buffer, pcm, rate, format="WAV", subtype="PCM_16")
        return web.Response(body=buffer.getvalue(), content_type="audio/wav")

    return speech


def transcription_handler(state_of: Callable[[web.Request], Any]) -> Callable[[web.Request], Any]:
    """``POST /audio/transcriptions`` (see the module docstring)."""

    async def transcriptions(request: web.Request) -> web.StreamResponse:
        state = state_of(request)
        state.requests += 1
        try:
            form = await request.post()
        except ValueError:
            return _error(400, "Expected a multipart/form-data body.")
        upload, model = form.get("file"), str(form.get("model") or "")
        if upload is None or not hasattr(upload, "file"):
            return _error(400, "'file' is required (the audio, as a file part).", "file")
        fmt = str(form.get("response_format") or "json")
        if fmt not in ("json", "text", "verbose_json"):
            return _error(400, f"response_format {fmt!r} is not produced here.", "response_format")
        refused = _admit(state, model)
        if refused is not None:
            return refused
        state.by_behaviour[f"audio/transcriptions:{model}"] += 1
        try:
            text, duration = await asyncio.to_thread(_recognise, upload.file.read())
        except BehaviourError as exc:  # unreadable bytes (libsndfile's own words), or no recogniser
            return _error(exc.status, f"The audio file could not be transcribed: {exc.message}", "file")
        if fmt == "text":
            return web.Response(text=text, content_type="text/plain")
        if fmt == "verbose_json":
            return web.json_response({"task": "transcribe", "language": str(form.get("language") or "english"),
                                      "duration": round(duration, 3), "text": text, "segments": []})
        return web.json_response({"text": text})

    return transcriptions


def add_audio_routes(router: web.UrlDispatcher, prefix: str, state_of: Callable[[web.Request], Any]) -> None:
    """Register both routes under ``prefix`` (``/v1`` and the bare root, as the chat route is)."""
    router.add_post(f"{prefix}/audio/speech", speech_handler(state_of))
    router.add_post(f"{prefix}/audio/transcriptions", transcription_handler(state_of))


__all__ = ["VOICES", "add_audio_routes"]
