"""The endpoint's audio-in agent: a scripted support agent that hears the caller's audio.

A request to ``audio-agent`` (``audio-agent:whisper-base`` picks a packaged recogniser; by
default the channel's default, ``DEFAULT_ASR``) must carry the caller's last words as
``input_audio`` message parts, as litellm sends them to a model that takes audio; a last
caller message without audio is refused with a 400, as a provider refuses a request that
does not fit its model. The parts are recognised with the same packaged recogniser the
speech channel uses (:mod:`tauray.actors.voice.engines`), replaced by the text, and the
scripted agent (:func:`~tauray.endpoint.scripted.scripted_agent`) answers on that text;
its spoken replies start by reading back what it heard ("I heard: ..."), so a test sees
what reached the agent through the audio. So an audio-in cell runs offline end to end.

Recognition is CPU-bound and runs in the request (about a second an utterance on one
core): this endpoint is a test stand-in, not a server to measure latency on.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np

from tauray.actors.voice.engines import DEFAULT_ASR, SAMPLE_RATE, make_asr
from tauray.actors.voice.heard import audio_parts
from tauray.actors.voice.line import resample
from tauray.endpoint.replies import BehaviourError, BehaviourSettings, Reply, model_param, request_messages
from tauray.endpoint.scripted import scripted_agent

HEARD_PREFIX = "I heard: "
"""How the audio agent's spoken replies start: the read-back of what it recognised."""

_RECOGNISERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _recogniser(param: str | None) -> Any:
    """The packaged recogniser a request names (loaded once per endpoint process)."""
    name = f"local/{param}" if param else DEFAULT_ASR
    with _LOCK:
        if name not in _RECOGNISERS:
            try:
                _RECOGNISERS[name] = make_asr(name)
            except (ValueError, ImportError) as exc:
                raise BehaviourError(400, f"audio-agent: {exc}", code="unknown_recogniser") from None
        return _RECOGNISERS[name]


def decode(wav: bytes) -> np.ndarray:
    """One WAV part (any rate, PCM or μ-law) as mono float32 at the recognisers' 16 kHz."""
    import soundfile  # lazy: optional extra tauray[voice]

    try:
        audio, rate = soundfile.read(io.BytesIO(wav), dtype="float32")
    except Exception as exc:  # libsndfile's own message says what is wrong with the bytes
        raise BehaviourError(400, f"the audio is not a readable WAV: {exc}") from None
    if audio.ndim > 1:
        audio = audio.mean(axis=1)
    return resample(np.asarray(audio, dtype=np.float32), rate, SAMPLE_RATE)


def transcribe(wav: bytes, asr: Any) -> str:
    """One WAV part to text (:func:`decode`, then the recogniser)."""
    try:
        audio = decode(wav)
    except BehaviourError as exc:
        raise BehaviourError(400, f"audio-agent: input_audio: {exc.message}") from None
    return asr.transcribe(audio).strip()


def audio_agent(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The scripted agent, on the recognised text of the caller's audio parts."""
    messages = request_messages(body)
    last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if last_user is None or not _parts(messages[last_user]):
        raise BehaviourError(400, "audio-agent: the caller's last message carries no input_audio part "
                             "(an audio-in agent hears the call, it does not read it)", code="no_audio")
    asr = _recogniser(model_param(body))
    heard: list[str] = []
    texts: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        parts = _parts(m)
        if parts:
            words = " ".join(transcribe(wav, asr) for wav in parts)
            if i == last_user:
                heard.append(words)
            m = {**m, "content": words}
        texts.append(m)
    reply = scripted_agent({**body, "messages": texts}, settings)
    if reply.finish_reason == "stop" and reply.message.get("content"):
        said = f"{HEARD_PREFIX}{' '.join(heard)}. {reply.message['content']}"
        reply = Reply({**reply.message, "content": said}, reply.finish_reason, reply.empty_choices)
    return reply


def _parts(message: dict[str, Any]) -> list[bytes]:
    try:
        return audio_parts(message.get("content"))
    except ValueError as exc:
        raise BehaviourError(400, f"audio-agent: messages: {exc}") from None


AUDIO_BEHAVIOURS = {"audio-agent": audio_agent}
"""The audio behaviours, registered in :data:`tauray.endpoint.behaviours.BEHAVIOURS`."""
