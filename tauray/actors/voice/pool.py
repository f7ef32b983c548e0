"""A run's speech pool: :class:`SpeechWorker` actors that carry utterances off every event loop,
the :class:`SpeechPool` a speaking host awaits, and how a host finds its run's pool by name.

Synthesis, effects and recognition are CPU-bound for seconds an utterance; on a host's or a
coordinator's loop they would stall every conversation it holds. The workers are Ray actors
that reserve a CPU each (or a GPU share for a GPU recogniser), so a pool sized by
:func:`pool_size` spreads over the cluster and the autoscaler sees the demand. Each holds one
channel per profile with its engines loaded once.

The driver starts the run's pool (:func:`start_run_pool`) and registers it in a named actor,
:class:`SpeechDirectory`, one per run. A coordinator hands the hosts of a voice conversation
only the run's name (:class:`PoolRef`); the host of each side that speaks aloud looks the
directory up (off its loop, cached by the directory's actor id: a later run under the same
name gets the new pool, never a stopped one) and carries that side's utterances on the pool in
the step that said them. Audio moves through Ray's object store: a worker returns the
utterance's record, an ``ObjectRef`` of its line audio where the listener takes audio, and an
``ObjectRef`` of its audio files where they may be kept; the pool holds a conversation's files
until its verdict (``take_audio``), so a worker never writes into the run folder (which may be
on another node).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from tauray.actors.voice.audio_store import HeldAudio
from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.config import VoiceSettings
from tauray.actors.voice.profiles import SpeechProfile, get_profile
from tauray.actors.voice.spec import SpeechModelSpec, as_spec
from tauray.results.tables.records.utterance import UtteranceRecord

CPUS_PER_WORKER = 1
NAMESPACE = "tauray"
READY_TIMEOUT_S = 600.0
"""How long :func:`start_pool` waits for its workers to load their engines before it says why."""


class SpeechWorker:
    """One process's speech engines and channels (a Ray actor: :func:`remote_worker`)."""

    MAX_RESTARTS = 1
    """Times Ray restarts a worker that died (its engines are loaded again from the package)."""

    def __init__(self, *, tts: SpeechModelSpec | str | None = None, asr: SpeechModelSpec | str | None = None,
                 seed: int = 0, cpu_threads: int = 1) -> None:
        self._first = SpeechChannel("control", tts=tts, asr=asr, seed=seed, cpu_threads=cpu_threads)
        self._channels: dict[SpeechProfile, SpeechChannel] = {self._first.profile: self._first}
        self._seed = seed

    def channel(self, profile: SpeechProfile | str) -> SpeechChannel:
        """The channel of a profile (a name: the built-in one), built once."""
        prof = get_profile(profile) if isinstance(profile, str) else profile
        if prof not in self._channels:
            self._channels[prof] = SpeechChannel(prof, tts=self._first.tts, asr=self._first.asr, seed=self._seed)
        return self._channels[prof]

    def carry(self, profile: SpeechProfile | str, text: str, *, keep: bool = False, audio: bool = True,
              unit_id: str, attempt: int = 0, turn: int, side: str, clock_s: float = 0.0,
              task_id: str | None = None) -> tuple[UtteranceRecord, Any, Any]:
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


class SpeechPool:
    """The workers of one pool, as a speaking host carries utterances on them (round robin), with
    each conversation's audio files held until its verdict. Picklable: it travels by its handles."""

    def __init__(self, workers: list[Any], engines: tuple[SpeechModelSpec | str, SpeechModelSpec | str]) -> None:
        if not workers:
            raise ValueError("a speech pool needs at least one worker")
        self.workers = list(workers)
        self.engines = (as_spec(engines[0], "tts"), as_spec(engines[1], "asr"))  # a model string: its spec
        self._next = itertools.cycle(range(len(self.workers)))
        self.audio = HeldAudio()

    def __getstate__(self) -> dict[str, Any]:
        return {"workers": self.workers, "engines": self.engines}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workers"], state["engines"])  # type: ignore[misc]

    async def carry(self, text: str, *, voice: VoiceSettings, unit_id: str, attempt: int, turn: int, side: str,
                    clock_s: float, task_id: str | None = None) -> tuple[UtteranceRecord, Any]:
        """One utterance of ``voice``'s cell on the next worker: its record and, where the listener
        takes audio, the ObjectRef of its line audio (else None)."""
        if (voice.tts, voice.asr) != self.engines:  # one pool per run, with the run's engines
            raise RuntimeError(f"the speech pool runs {self.engines}, the unit asks for {(voice.tts, voice.asr)}")
        worker = self.workers[next(self._next)]
        record, wav_ref, files_ref = await worker.carry.remote(
            voice.profile, text, keep=voice.keep_audio != "none", audio=voice.heard_as_audio(side), unit_id=unit_id,
            attempt=attempt, turn=turn, side=side, clock_s=clock_s, task_id=task_id)
        if files_ref is not None:
            self.audio.hold_all(unit_id, await files_ref)
        return record, wav_ref

    def take_audio(self, conversation: str) -> dict[str, bytes]:
        """The conversation's audio files (content hash -> FLAC bytes), handed over once."""
        return self.audio.take(conversation)


def start_pool(size: int | None = None, *, tts: SpeechModelSpec | str | None = None,
               asr: SpeechModelSpec | str | None = None, seed: int = 0, gpu: float = 0.0,
               reserved_cpus: float = 0.0, worker: type = SpeechWorker) -> SpeechPool:
    """Start ``size`` workers (default :func:`pool_size`, leaving ``reserved_cpus`` to the run's
    other actors), wait until each has loaded its engines, and return the pool. Bad specs fail
    here, once, before any conversation starts; workers that cannot be placed fail in one line.
    ``worker``: a :class:`SpeechWorker` subclass to start instead (a run's ``Hooks``)."""
    import ray  # lazy: Ray: about 0.7 s to import

    count, cpus = (size, float(CPUS_PER_WORKER)) if size else pool_size(reserved_cpus, gpu=gpu > 0)
    cls = remote_worker(gpu=gpu, cpus=cpus, worker=worker)
    workers = [cls.remote(tts=tts, asr=asr, seed=seed) for _ in range(count)]
    try:
        ray.get([w.ready.remote() for w in workers], timeout=READY_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        for w in workers:
            ray.kill(w)
        raise RuntimeError(f"{count} speech worker(s) of {cpus:g} CPU each were not ready within "
                           f"{READY_TIMEOUT_S:.0f} s: the cluster has {ray.available_resources().get('CPU', 0):g} "
                           f"CPUs free; give it more CPUs or lower cluster.actor_cpus") from None
    return SpeechPool(workers, (as_spec(tts, "tts"), as_spec(asr, "asr")))


# --- finding a run's pool ------------------------------------------------------------------


def directory_name(run_id: str) -> str:
    """The named actor holding run ``run_id``'s speech pool."""
    return f"tauray-speech-{run_id}"


class SpeechDirectory:
    """A run's speech pool, held where every speaking host can find it (a named actor)."""

    def __init__(self, pool: SpeechPool) -> None:
        self._pool = pool

    def pool(self) -> SpeechPool:
        return self._pool


class PoolRef:
    """What a coordinator hands the speaking hosts of a voice conversation: the run's name, no
    handles. The host finds the run's pool itself (:func:`find_pool`), so the coordinator's
    loop neither looks the pool up nor pickles it per conversation."""

    __slots__ = ("run_id",)

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return PoolRef, (self.run_id,)

    def __repr__(self) -> str:
        return f"PoolRef({self.run_id!r})"


_FOUND: dict[str, SpeechPool] = {}  # this process's pools (a host's), by their directory's actor id


async def find_pool(ref: PoolRef) -> SpeechPool | None:
    """Run ``ref.run_id``'s pool, or None when the run has none (no Ray, or no directory)."""
    import ray  # lazy: Ray: only inside a Ray worker, where it is imported already

    if not ray.is_initialized():
        return None
    try:
        directory = await asyncio.to_thread(ray.get_actor, directory_name(ref.run_id), NAMESPACE)
    except ValueError:  # no such actor: this run has no pool
        return None
    key = directory._actor_id.hex()
    if key not in _FOUND:
        pool = await directory.pool.remote()
        if key not in _FOUND:  # another conversation may have cached it while this one awaited
            _FOUND.clear()  # older runs' pools are stopped
            _FOUND[key] = pool
    return _FOUND[key]


def start_run_pool(run_id: str, *, tts: SpeechModelSpec, asr: SpeechModelSpec, seed: int = 0,
                   reserved_cpus: float = 0.0, worker: type | None = None) -> Any:
    """Start run ``run_id``'s speech workers (one per CPU that the run's other actors, which take
    ``reserved_cpus``, leave; one per GPU for a recogniser on ``cuda``) and their directory;
    returns what :func:`stop_run_pool` takes. Bad engine specs fail here, once, before any
    conversation. A recogniser with ``serve`` is deployed on Ray Serve first (its replicas take
    their own CPUs or GPUs); the workers then send it their audio and hold no recogniser."""
    import ray  # lazy: Ray: about 0.7 s to import

    served = None
    if asr.serve is not None:
        from tauray.actors.voice.engines.served import ServedRecogniser  # lazy: Ray Serve, only when asked for

        served = ServedRecogniser(asr)
        served.start()
        reserved_cpus += asr.serve.replicas * asr.serve.num_cpus
    try:
        gpu = 1.0 if asr.device == "cuda" and served is None else 0.0
        pool = start_pool(tts=tts, asr=asr, seed=seed, gpu=gpu, reserved_cpus=reserved_cpus,
                          worker=worker or SpeechWorker)
        directory = ray.remote(num_cpus=0)(SpeechDirectory).options(
            name=directory_name(run_id), namespace=NAMESPACE).remote(pool)
        ray.get(directory.pool.remote())
    except BaseException:
        if served is not None:
            served.stop()
        raise
    return pool, directory, served


def stop_run_pool(started: Any) -> None:
    """Stop the workers, the directory and the served recogniser :func:`start_run_pool` started."""
    import ray  # lazy: Ray: about 0.7 s to import

    pool, directory, served = started
    for actor in [directory, *pool.workers]:
        try:
            ray.kill(actor)
        except Exception:  # already gone
            pass
    if served is not None:
        served.stop()


__all__ = ["PoolRef", "SpeechDirectory", "SpeechPool", "SpeechWorker", "find_pool", "pool_size", "remote_worker",
           "start_pool", "start_run_pool", "stop_run_pool"]
