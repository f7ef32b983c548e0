"""The speech pool on Ray: a coordinator-style caller awaits utterances; the line audio comes
back as an ObjectRef, and the audio files (both sides, FLAC, content-addressed) are exactly the
ones the in-process client keeps, handed over with the conversation's result."""

from __future__ import annotations

import asyncio
import pickle

import pytest

from tauray.actors.voice.audio_store import audio_hash
from tauray.actors.voice.config import VoiceSettings
from tauray.actors.voice.pool import SpeechPool, start_pool
from tauray.actors.voice.speaker import LocalSpeech

pytest.importorskip("faster_whisper")
pytestmark = pytest.mark.slow

_TEXT = "Hello, my line id is L, 1, 0, 0, 2."


def _voice(keep: str, audio_in: bool) -> VoiceSettings:
    return VoiceSettings(profile="control", tts="local/espeak-ng", asr="local/whisper-tiny.en", keep_audio=keep,
                         audio_in=audio_in)


def _said(client, keep: str, unit: str = "u-1", audio_in: bool = True):
    return asyncio.run(client.carry(_TEXT, unit_id=unit, attempt=0, turn=0, side="user", clock_s=0.0,
                                    voice=_voice(keep, audio_in), task_id="task-1"))


_TIMES = {"tts_seconds", "effects_seconds", "asr_seconds"}


def test_the_pool_keeps_what_the_in_process_client_keeps(ray_local) -> None:
    thread = LocalSpeech()
    record, wav = _said(thread, "all")
    files = thread.take_audio("u-1")
    pooled = start_pool(1, tts="local/espeak-ng", asr="local/whisper-tiny.en")
    try:
        got, ref = _said(pooled, "all")
        assert isinstance(ref, ray_local.ObjectRef) and ray_local.get(ref) == wav  # the line audio, by reference
        assert got.model_dump(exclude=_TIMES) == record.model_dump(exclude=_TIMES)  # same refs, same text heard
        assert got.audio_ref and got.spoken_audio_ref and got.audio_ref != got.spoken_audio_ref
        assert pooled.take_audio("u-1") == files  # both sides, FLAC, named by content
        assert set(files) == {got.audio_ref, got.spoken_audio_ref}
        assert all(audio_hash(data) == ref for ref, data in files.items())
        assert pooled.take_audio("u-1") == {}  # handed over once
        none, no_ref = _said(pooled, "none", unit="u-2", audio_in=False)
        assert none.audio_ref is None and none.spoken_audio_ref is None and pooled.take_audio("u-2") == {}
        assert no_ref is None  # a listener that reads text gets no audio by reference
        assert isinstance(pickle.loads(pickle.dumps(pooled)), SpeechPool)
    finally:
        for worker in pooled.workers:
            ray_local.kill(worker)
