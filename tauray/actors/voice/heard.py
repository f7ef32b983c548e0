"""What an audio-in agent gets of a caller's utterance: the line audio itself, as a litellm
audio message part, instead of the recogniser's text.

A cascaded agent reads what the recogniser made of the caller; an audio-in agent (a model
litellm says accepts audio, ``supports_audio_input``) hears the call: the same line audio
the recogniser got (8 kHz, after the telephone line and every effect), sent as the chat
message part litellm passes to such models::

    {"type": "input_audio", "input_audio": {"data": <base64 WAV>, "format": "wav"}}

The line codes audio as μ-law; the part carries it decoded to 16-bit PCM WAV at the line's
8 kHz (what audio models take as ``wav``; nothing is lost, μ-law decodes exactly to PCM).
The coordinator hands the agent's host a :class:`HeardAudio` (the μ-law bytes, compact);
the message part is built on the host, where the view is kept (:func:`message_content`),
so no base64 encoding runs on the coordinator's loop.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from pydantic import Field

from tauray.actors.voice.config import VoiceSettings
from tauray.scenarios.model import Frozen

AUDIO_FORMAT = "wav"
"""The ``format`` of every audio part tauray sends (PCM16 WAV)."""


class HeardAudio(Frozen):
    """A caller's utterance as an audio-in agent receives it: the line audio, not the text."""

    wav: bytes = Field(description="The line audio of the utterance: 8 kHz μ-law WAV bytes, as the line carried it.")
    recognised: str = Field(description="What the recogniser made of the same audio; kept for the record (the "
                            "utterance row), never shown to the agent.")


def pcm_wav(ulaw_wav: bytes) -> bytes:
    """μ-law line audio to 16-bit PCM WAV at the same rate (libsndfile through ``soundfile``)."""
    import soundfile  # lazy: optional extra tauray[voice]

    audio, rate = soundfile.read(io.BytesIO(ulaw_wav), dtype="int16")
    buffer = io.BytesIO()
    soundfile.write(buffer, audio, rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def audio_part(ulaw_wav: bytes) -> dict[str, Any]:
    """The litellm/OpenAI chat message part that carries ``ulaw_wav`` to an audio-in model."""
    data = base64.b64encode(pcm_wav(ulaw_wav)).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": AUDIO_FORMAT}}


def message_content(incoming: str | HeardAudio) -> str | list[dict[str, Any]]:
    """A heard message's ``content`` in a side's view: text as it is; audio as one audio part."""
    if isinstance(incoming, HeardAudio):
        return [audio_part(incoming.wav)]
    return incoming


def audio_parts(content: Any) -> list[bytes]:
    """The WAV bytes of every ``input_audio`` part in a message's content (none for plain text);
    a part that is not base64 WAV is refused with a one-line error naming it."""
    if not isinstance(content, list):
        return []
    found: list[bytes] = []
    for i, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "input_audio":
            continue
        audio = part.get("input_audio") or {}
        if audio.get("format") != AUDIO_FORMAT:
            raise ValueError(f"content[{i}].input_audio.format: expected 'wav', got {audio.get('format')!r}")
        try:
            found.append(base64.b64decode(audio.get("data") or "", validate=True))
        except (ValueError, TypeError):
            raise ValueError(f"content[{i}].input_audio.data: not base64") from None
    return found


async def deliver(voice: VoiceSettings, side: str, carried: Any) -> tuple[Any, str | HeardAudio]:
    """What the listener of one carried utterance gets, and its row: the recognised text, or
    (the caller's words to an audio-in agent) the line audio, the row saying it was heard as
    audio. ``carried`` is a speech client's ``(record, audio)``: the audio as bytes, or the Ray
    pool's ObjectRef of them (awaited only here, where an agent needs the audio)."""
    record, wav = carried if isinstance(carried, tuple) else (carried, None)
    if voice.heard_as_audio(side):
        if wav is None:
            raise RuntimeError("an audio-in agent's speech client returned no line audio")
        if not isinstance(wav, bytes):  # an ObjectRef of the pool's object store
            wav = await wav
        return record.model_copy(update={"heard_as": "audio"}), HeardAudio(wav=wav, recognised=record.heard_text)
    return record, record.heard_text
