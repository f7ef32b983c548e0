"""Speech work off the coordinator's event loop: :class:`SpeechWorker` actors that each hold
the channels of a run (one per profile, engines loaded once), and the :class:`SpeechClient` a
coordinator awaits.

Synthesis, effects and recognition are CPU-bound for seconds an utterance; on a coordinator's
loop they would stall every conversation it holds. The workers are Ray actors that reserve a
CPU each (or a GPU fraction for a GPU recogniser), so a pool sized by :func:`pool_size` spreads
over the cluster and the autoscaler sees the demand. Audio moves through Ray's object store:
a worker returns the utterance's record, an ``ObjectRef`` of its line audio and, when the
conversation's audio may be kept, an ``ObjectRef`` of its audio files, made exactly as the
in-process client makes them (:meth:`SpeechChannel.carry_kept`: both sides, FLAC, named by
content). The client holds a conversation's files until its verdict, like the in-process
client (``take_audio``); the kept ones go with the result to the driver's table writer, so a
worker never writes into the run folder (which may be on another node).
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

from tauray.actors.speech.audio_store import HeldAudio
from tauray.actors.speech.channel import SpeechChannel
from tauray.actors.speech.engines import SpeechModelSpec
from tauray.actors.speech.profiles import SpeechProfile, get_profile
from tauray.results.records.utterance import UtteranceRecord

CPUS_PER_WORKER = 1


class SpeechWorker:
    """One process's speech engines and channels (a Ray actor: :func:`remote_worker`)."""

    MAX_RESTARTS = 1
    """Times Ray restarts a worker that died (its engines are loaded again from the package)."""

    def __init__(self, *, tts: SpeechModelSpec | str | None = None, asr: SpeechModelSpec | str | None = None,
                 seed: int = 0, cpu_threads: int = 1) -> None:
        self._first = SpeechChannel("control", tts=tts, asr=asr, seed=seed, cpu_threads=cpu_threads)
        self._channels: dict[str, SpeechChannel] = {"control": self._first}
        self._seed = seed

    def channel(self, profile: str | SpeechProfile) -> SpeechChannel:
        """The channel of a profile (by name, or a custom level's own profile), built once."""
        name = profile if isinstance(profile, str) else profile.name
        if name not in self._channels:
            self._channels[name] = SpeechChannel(get_profile(profile) if isinstance(profile, str) else profile,
                                                 tts=self._first.tts, asr=self._first.asr, seed=self._seed)
        return self._channels[name]

    def carry(self, profile: str | SpeechProfile, text: str, *, keep: bool = False, audio: bool = True,
              unit_id: str, attempt: int = 0, turn: int, side: Literal["agent", "user"], clock_s: float = 0.0,
              task_id: str | None = None) -> tuple[Any, Any, Any]:
        """One utterance: (its record, an ObjectRef of its μ-law WAV bytes when ``audio`` (the
        listener takes audio), else None, an ObjectRef of its audio files when ``keep``, else None)."""
        import ray  # lazy: Ray is imported by the actor's process already; this module stays importable without it

        record, wav, files = self.channel(profile).carry_kept(text, keep=keep, unit_id=unit_id, attempt=attempt,
                                                              turn=turn, side=side, clock_s=clock_s, task_id=task_id)
        return record, ray.put(wav) if audio else None, ray.put(files) if files else None

    def ready(self) -> str:
        return f"{self._first.tts.name} + {self._first.asr.name}"


def remote_worker(*, gpu: float = 0.0, cpus: float = CPUS_PER_WORKER, worker: type = SpeechWorker) -> Any:
    """The Ray actor class of ``worker`` (:class:`SpeechWorker` or a subclass; ``cpus`` each, a
    GPU share for a GPU recogniser)."""
    import ray  # lazy: Ray: about 0.7 s to import

    return ray.remote(num_cpus=cpus, num_gpus=gpu, max_restarts=worker.MAX_RESTARTS)(worker)


def pool_size(reserved_cpus: float = 0.0, *, gpu: bool = False) -> tuple[int, float]:
    """(workers, CPUs each) for the cluster: one worker per whole CPU that is free now and not
    ``reserved_cpus`` (what the run's coordinators and hosts will take), or one per GPU.

    Never a pool that cannot be placed: where less than one CPU is left, one worker reserves
    what is left (down to none), so that a small cluster runs slower rather than waiting for
    ever for a CPU that the run's own actors hold.
    """
    import ray  # lazy: Ray: about 0.7 s to import

    resources = ray.cluster_resources()
    if gpu and resources.get("GPU", 0) >= 1:
        return int(resources["GPU"]), 0.0
    free = min(resources.get("CPU", 1) - reserved_cpus, ray.available_resources().get("CPU", 0.0))
    if free >= CPUS_PER_WORKER:
        return int(free // CPUS_PER_WORKER), float(CPUS_PER_WORKER)
    return 1, round(max(free, 0.0), 4)


class SpeechClient:
    """What a coordinator holds: handles of the pool's workers (picklable, so it travels to the
    coordinator actors) and, per conversation, its audio files until the verdict."""

    def __init__(self, workers: list[Any]) -> None:
        if not workers:
            raise ValueError("a speech client needs at least one worker")
        self.workers = list(workers)
        self._next = itertools.cycle(range(len(self.workers)))
        self.audio = HeldAudio()

    def __getstate__(self) -> dict[str, Any]:
        return {"workers": self.workers}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workers"])  # type: ignore[misc]

    async def carry(self, profile: str | SpeechProfile, text: str, *, keep: bool = False, audio: bool = True,
                    unit_id: str, attempt: int = 0, turn: int, side: Literal["agent", "user"], clock_s: float = 0.0,
                    task_id: str | None = None) -> tuple[UtteranceRecord, Any]:
        """Carry one utterance on the next worker (round robin); awaits without blocking the loop.
        Returns the record and, with ``audio``, the ObjectRef of the line audio (else None); with
        ``keep`` the audio files are held for :meth:`take_audio`."""
        worker = self.workers[next(self._next)]
        record, wav_ref, files_ref = await worker.carry.remote(profile, text, keep=keep, audio=audio, unit_id=unit_id,
                                                               attempt=attempt, turn=turn, side=side, clock_s=clock_s,
                                                               task_id=task_id)
        if files_ref is not None:
            self.audio.hold_all(unit_id, await files_ref)
        return record, wav_ref

    def take_audio(self, conversation: str) -> dict[str, bytes]:
        """The conversation's audio files (content hash -> FLAC bytes), handed over once."""
        return self.audio.take(conversation)


# How long start_pool waits for its workers to load their engines before it says why.
READY_TIMEOUT_S = 600.0


def start_pool(size: int | None = None, *, tts: SpeechModelSpec | str | None = None,
               asr: SpeechModelSpec | str | None = None, seed: int = 0, gpu: float = 0.0,
               reserved_cpus: float = 0.0, worker: tuple[type, dict[str, Any]] | None = None) -> SpeechClient:
    """Start ``size`` workers (default :func:`pool_size`, leaving ``reserved_cpus`` to the run's
    other actors), wait until each has loaded its engines, and return the client. Bad specs fail
    here, once, before any conversation starts; workers that cannot be placed fail in one line.
    ``worker``: (a :class:`SpeechWorker` subclass, its extra keyword arguments) instead of the
    plain worker (a benchmark's replay: ``pipeline/bench/voice_replay.py``)."""
    import ray  # lazy: Ray: about 0.7 s to import

    count, cpus = (size, float(CPUS_PER_WORKER)) if size else pool_size(reserved_cpus, gpu=gpu > 0)
    kind, extra = worker or (SpeechWorker, {})
    cls = remote_worker(gpu=gpu, cpus=cpus, worker=kind)
    workers = [cls.remote(tts=tts, asr=asr, seed=seed, **extra) for _ in range(count)]
    try:
        ray.get([w.ready.remote() for w in workers], timeout=READY_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        for w in workers:
            ray.kill(w)
        raise RuntimeError(f"{count} speech worker(s) of {cpus:g} CPU each were not ready within "
                           f"{READY_TIMEOUT_S:.0f} s: the cluster has {ray.available_resources().get('CPU', 0):g} "
                           f"CPUs free; give it more CPUs or lower cluster.actor_cpus") from None
    return SpeechClient(workers)
