"""The coordinator's way to the speech channel: carry one utterance of a voice cell, off
the coordinator's event loop.

Synthesis and recognition are CPU-bound (espeak-ng, a CTranslate2 Whisper): run on the
asyncio loop they would stall every other conversation the coordinator holds. This client
hands each utterance to one worker thread of its own (the engines release the GIL while
they compute), so the loop only awaits. One engine pair is loaded per (tts, asr) and
shared by every profile's channel, so a sweep of six profiles holds one recogniser, not
six. Speech worker actors on other cores (``tauray.actors.speech.pool``) take the same
``carry`` call when a cluster has cores to spare; this one is what a coordinator uses
when none are given.
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


class ThreadSpeechClient:
    """Carries utterances on one worker thread, with one channel per (profile, tts, asr)."""

    def __init__(self, cpu_threads: int = 1) -> None:
        self.cpu_threads = cpu_threads
        self._engines: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._channels: dict[tuple[str, str, str], SpeechChannel] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speech")
        self.carried = 0
        self.audio = HeldAudio()  # each conversation's audio files until its verdict (rows.build_result)
        self.compute_s = 0.0  # wall time the worker thread spent, apart from the simulated clock

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
        self.compute_s += record.tts_seconds + record.effects_seconds + record.asr_seconds
        self.carried += 1
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

    def stats(self) -> dict[str, Any]:
        return {"carried": self.carried, "compute_s": round(self.compute_s, 3)}
