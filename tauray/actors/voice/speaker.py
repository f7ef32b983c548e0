"""One side of a voice conversation as its host speaks it: :class:`Speaker` carries each utterance
the side says across the channel, in the step that said it, so the coordinator makes no speech
call of its own, only one host call per turn, as in a text cell.

It carries on the run's speech pool (:class:`~tauray.actors.voice.pool.SpeechPool`, found by
the run's name) or, where there is none (a run without Ray workers, a coordinator used in
process, a test), on this process's :class:`LocalSpeech`. Synthesis and recognition are
CPU-bound (onnxruntime voices, a CTranslate2 Whisper): run on an asyncio loop they would stall every
other conversation it holds, so :class:`LocalSpeech` hands each utterance to one worker thread
of its own (the engines release the GIL while they compute) and the loop only awaits. One
engine pair is loaded per (tts, asr) and shared by every profile's channel, so a sweep of six
profiles holds one recogniser, not six. Sent to another process, a :class:`LocalSpeech`
arrives as that process's own (:func:`local_speech`): engines are loaded once per process.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from tauray.actors.voice.audio_store import HeldAudio
from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.config import VoiceSettings
from tauray.actors.voice.engines import make_asr, make_tts
from tauray.actors.voice.pool import PoolRef, find_pool
from tauray.actors.voice.spec import SpeechModelSpec
from tauray.results.tables.records.utterance import UtteranceRecord
from tauray.scenarios.conventions import STOP_TOKENS


class Speech(Protocol):
    """Where a speaker carries its utterances: :class:`LocalSpeech` or the run's ``SpeechPool``."""

    async def carry(self, text: str, *, voice: VoiceSettings, unit_id: str, attempt: int, turn: int, side: str,
                    clock_s: float, task_id: str | None = None) -> tuple[UtteranceRecord, Any]: ...

    def take_audio(self, conversation: str) -> dict[str, bytes]: ...


_LOCAL: dict[int, LocalSpeech] = {}


def local_speech(cpu_threads: int = 1) -> LocalSpeech:
    """This process's :class:`LocalSpeech` (one per ``cpu_threads``): where a pickled one lands."""
    if cpu_threads not in _LOCAL:
        _LOCAL[cpu_threads] = LocalSpeech(cpu_threads)
    return _LOCAL[cpu_threads]


class LocalSpeech:
    """Carries utterances on one worker thread of this process, with one channel per (profile, tts, asr)."""

    def __init__(self, cpu_threads: int = 1) -> None:
        self.cpu_threads = cpu_threads
        self._engines: dict[tuple[SpeechModelSpec, SpeechModelSpec], tuple[Any, Any]] = {}
        self._channels: dict[tuple[Any, ...], SpeechChannel] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speech")
        self.audio = HeldAudio()  # each conversation's audio files until its verdict (actors/records.py)

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return local_speech, (self.cpu_threads,)

    def use_engines(self, tts_spec: SpeechModelSpec, asr_spec: SpeechModelSpec, tts: Any, asr: Any) -> None:
        """Carry the utterances of cells with these specs on these engines (the bench's tone voice)."""
        self._engines[(tts_spec, asr_spec)] = (tts, asr)

    def channel(self, voice: VoiceSettings) -> SpeechChannel:
        """The channel of ``voice``'s profile and engines (built on the worker thread's first use)."""
        key = (voice.profile, voice.tts, voice.asr)
        if key not in self._channels:
            engines = self._engines.get((voice.tts, voice.asr))
            if engines is None:
                engines = self._engines[(voice.tts, voice.asr)] = (
                    make_tts(voice.tts), make_asr(voice.asr, cpu_threads=self.cpu_threads))
            self._channels[key] = SpeechChannel(voice.profile, tts=engines[0], asr=engines[1])
        return self._channels[key]

    def _carry(self, text: str, kwargs: dict[str, Any], voice: VoiceSettings) -> tuple[UtteranceRecord, bytes]:
        record, wav, files = self.channel(voice).carry_kept(text, keep=voice.keep_audio != "none", **kwargs)
        self.audio.hold_all(kwargs["unit_id"], files)  # both sides, held until the verdict decides
        return record, wav

    async def carry(self, text: str, *, voice: VoiceSettings, unit_id: str, attempt: int, turn: int, side: str,
                    clock_s: float, task_id: str | None = None) -> tuple[UtteranceRecord, bytes]:
        """One utterance across ``voice``'s channel: its record and its line audio."""
        kwargs = dict(unit_id=unit_id, attempt=attempt, turn=turn, side=side, clock_s=clock_s, task_id=task_id)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._carry, text, kwargs, voice)

    def take_audio(self, conversation: str) -> dict[str, bytes]:
        """The conversation's audio files (content hash -> FLAC bytes), handed over once."""
        return self.audio.take(conversation)


async def speech_for(speech: PoolRef | Speech) -> Speech:
    """What a speaking host carries on: ``speech`` itself (a test's or script's), or for a
    :class:`~tauray.actors.voice.pool.PoolRef` the run's pool, else this process's
    :class:`LocalSpeech` (no pool: a run without Ray workers, or a coordinator used in process)."""
    if not isinstance(speech, PoolRef):
        return speech
    return await find_pool(speech) or local_speech()


class Speaker:
    """One side of one voice conversation as its host speaks it: carries each utterance the
    side says across ``speech`` and gives back the conversation's audio files when the side
    closes."""

    def __init__(self, speech: Speech, voice: VoiceSettings, *, unit_id: str, attempt: int, side: str,
                 task_id: str) -> None:
        self.speech, self.voice, self.side = speech, voice, side
        self.keys = dict(unit_id=unit_id, attempt=attempt, task_id=task_id)

    def says_aloud(self, text: str) -> bool:
        """Whether ``text`` crosses the channel: words, and not the user simulator's stop."""
        return bool(text.strip()) and not (self.side == "user" and any(t in text for t in STOP_TOKENS))

    async def carry(self, text: str, *, turn: int, clock_s: float) -> tuple[UtteranceRecord, Any]:
        """``text`` across the channel: (its record, its line audio or the audio's ObjectRef where
        the listener is an audio-in agent, else None: the audio does not travel for nothing)."""
        record, audio = await self.speech.carry(text, voice=self.voice, turn=turn, side=self.side, clock_s=clock_s,
                                                **self.keys)
        return record, audio if self.voice.heard_as_audio(self.side) else None

    def take_audio(self) -> dict[str, bytes]:
        return self.speech.take_audio(self.keys["unit_id"])


__all__ = ["LocalSpeech", "Speaker", "Speech", "local_speech", "speech_for"]
