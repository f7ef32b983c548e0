"""The way to the speech channel: carry one utterance of a voice cell, off every event loop.

The host of the side that speaks carries its words (:class:`Speaker`, held per conversation
by ``actors/hosts.py``): the step that produced the words returns what the channel made of
them, so the coordinator makes no speech call of its own, only one host call per turn, as in
a text cell. The coordinator chooses the client (the run's Ray pool, else this thread
client) and hands it to the speaking hosts when the conversation opens.

Synthesis and recognition are CPU-bound (espeak-ng, a CTranslate2 Whisper): run on an
asyncio loop they would stall every other conversation it holds. This client
hands each utterance to one worker thread of its own (the engines release the GIL while
they compute), so the loop only awaits. One engine pair is loaded per (tts, asr) and
shared by every profile's channel, so a sweep of six profiles holds one recogniser, not
six. Speech worker actors on other cores (``tauray.actors.speech.pool``) take the same
``carry`` call when a cluster has cores to spare; this one is what a process uses when
none are given. Sent to another process (a host actor), it arrives as that process's own
thread client (:func:`process_client`): engines are loaded once per process, not per call.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tauray.actors.speech.audio_store import HeldAudio
from tauray.actors.speech.channel import SpeechChannel
from tauray.actors.speech.engines import make_asr, make_tts
from tauray.actors.unit import VoiceSettings
from tauray.results.records.utterance import UtteranceRecord
from tauray.scenarios.conventions import STOP_TOKENS

_PROCESS_CLIENTS: dict[int, ThreadSpeechClient] = {}


def process_client(cpu_threads: int = 1) -> ThreadSpeechClient:
    """This process's thread client (one per ``cpu_threads``): where a pickled one lands."""
    if cpu_threads not in _PROCESS_CLIENTS:
        _PROCESS_CLIENTS[cpu_threads] = ThreadSpeechClient(cpu_threads)
    return _PROCESS_CLIENTS[cpu_threads]


class ThreadSpeechClient:
    """Carries utterances on one worker thread, with one channel per (profile, tts, asr)."""

    def __init__(self, cpu_threads: int = 1) -> None:
        self.cpu_threads = cpu_threads
        self._engines: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._channels: dict[tuple[str, str, str], SpeechChannel] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speech")
        self.audio = HeldAudio()  # each conversation's audio files until its verdict (rows.build_result)

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return process_client, (self.cpu_threads,)

    def channel(self, voice: VoiceSettings) -> SpeechChannel:
        """The channel of ``voice``'s profile and engines (built on the worker thread's first use)."""
        key = (voice.profile, voice.tts, voice.asr)
        if key not in self._channels:
            engines = self._engines.get((voice.tts, voice.asr))
            if engines is None:
                engines = self._engines[(voice.tts, voice.asr)] = (
                    make_tts(voice.tts), make_asr(voice.asr, cpu_threads=self.cpu_threads))
            self._channels[key] = SpeechChannel(voice.custom or voice.profile, tts=engines[0], asr=engines[1])
        return self._channels[key]

    def _carry(self, text: str, kwargs: dict[str, Any], voice: VoiceSettings) -> tuple[UtteranceRecord, bytes]:
        record, wav, files = self.channel(voice).carry_kept(text, keep=voice.keep_audio != "none", **kwargs)
        self.audio.hold_all(kwargs["unit_id"], files)  # both sides, held until the verdict decides
        return record, wav

    async def carry(self, text: str, *, unit_id: str, attempt: int, turn: int, side: str, clock_s: float,
                    voice: VoiceSettings, task_id: str | None = None) -> tuple[UtteranceRecord, bytes]:
        """One utterance across ``voice``'s channel: its record and its line audio."""
        kwargs = dict(unit_id=unit_id, attempt=attempt, turn=turn, side=side, clock_s=clock_s, task_id=task_id)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._carry, text, kwargs, voice)

    def take_audio(self, conversation: str) -> dict[str, bytes]:
        """The conversation's audio files (content hash -> FLAC bytes), handed over once."""
        return self.audio.take(conversation)


class Speaker:
    """One side of one voice conversation as its host speaks it: carries each utterance the
    side says across ``speech`` (a thread client or the Ray pool's client) and gives back the
    conversation's audio files when the side closes."""

    def __init__(self, speech: Any, voice: VoiceSettings, *, unit_id: str, attempt: int, side: str,
                 task_id: str) -> None:
        self.speech, self.voice, self.side = speech, voice, side
        self.keys = dict(unit_id=unit_id, attempt=attempt, task_id=task_id)

    def says_aloud(self, text: str) -> bool:
        """Whether ``text`` crosses the channel: words, and not the user simulator's stop."""
        return bool(text.strip()) and not (self.side == "user" and any(t in text for t in STOP_TOKENS))

    async def carry(self, text: str, *, turn: int, clock_s: float) -> tuple[UtteranceRecord, Any]:
        """``text`` across the channel: (its record, its line audio or the audio's ObjectRef where
        the listener is an audio-in agent, else None: the audio does not travel for nothing)."""
        record, audio = await self.speech.carry(text, turn=turn, side=self.side, clock_s=clock_s,
                                                voice=self.voice, **self.keys)
        return record, audio if self.voice.heard_as_audio(self.side) else None

    def take_audio(self) -> dict[str, bytes]:
        take = getattr(self.speech, "take_audio", None)
        return take(self.keys["unit_id"]) if take is not None else {}
