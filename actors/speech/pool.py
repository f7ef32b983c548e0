"""Speech work off the coordinator's event loop: :class:`SpeechWorker` actors that each hold
the channels of a run (one per profile, engines loaded once), and the :class:`SpeechClient` a
coordinator awaits.

Synthesis, effects and recognition are CPU-bound for seconds an utterance; on a coordinator's
loop they would stall every conversation it holds. The workers are Ray actors that reserve a
CPU each (or a GPU fraction for a GPU recogniser), so a pool sized by :func:`pool_size` spreads
over the cluster and the autoscaler sees the demand. Audio moves through Ray's object store:
a worker returns the utterance's record and an ``ObjectRef`` of its line audio (never the
bytes inline in the reply); under the ``failed`` keep policy the client holds the refs of a
conversation until its verdict and then has a worker write the failed ones to the run folder.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

from tauray.actors.speech.audio_store import AudioStore, KeepPolicy, audio_hash
from tauray.actors.speech.channel import SpeechChannel
from tauray.actors.speech.engines import SpeechModelSpec
from tauray.actors.speech.profiles import get_profile
from tauray.results.records.utterance import UtteranceRecord

CPUS_PER_WORKER = 1


class SpeechWorker:
    """One process's speech engines and channels (a Ray actor: :func:`remote_worker`)."""

    def __init__(self, *, tts: SpeechModelSpec | str | None = None, asr: SpeechModelSpec | str | None = None,
                 seed: int = 0, run_dir: str | None = None, keep: KeepPolicy = "none", cpu_threads: int = 1) -> None:
        self._first = SpeechChannel("control", tts=tts, asr=asr, seed=seed, cpu_threads=cpu_threads)
        self._channels: dict[str, SpeechChannel] = {"control": self._first}
        self._seed = seed
        self._store = AudioStore(run_dir, keep) if run_dir else None

    def channel(self, profile: str) -> SpeechChannel:
        if profile not in self._channels:
            self._channels[profile] = SpeechChannel(get_profile(profile), tts=self._first.tts, asr=self._first.asr,
                                                    seed=self._seed)
        return self._channels[profile]

    def carry(self, profile: str, text: str, *, unit_id: str, attempt: int = 0, turn: int,
              side: Literal["agent", "user"], clock_s: float = 0.0, task_id: str | None = None) -> tuple[Any, Any]:
        """One utterance: (its record, an ObjectRef of its μ-law WAV bytes). Under ``all`` the audio
        is written here; the record's ``audio_ref`` is its content hash unless the policy is ``none``."""
        import ray  # lazy: Ray is imported by the actor's process already; this module stays importable without it

        record, wav = self.channel(profile).carry(text, unit_id=unit_id, attempt=attempt, turn=turn, side=side,
                                                  clock_s=clock_s, task_id=task_id)
        if self._store is not None and self._store.keep != "none":
            ref = self._store.put(unit_id, wav) if self._store.keep == "all" else audio_hash(wav)
            record = record.model_copy(update={"audio_ref": ref})
        return record, ray.put(wav)

    def store(self, *wavs: bytes) -> int:
        """Write audio to the run folder (refs passed as arguments arrive resolved)."""
        if self._store is None:
            return 0
        for wav in wavs:
            self._store._write(audio_hash(wav), wav)
        return len(wavs)

    def ready(self) -> str:
        return f"{self._first.tts.name} + {self._first.asr.name}"


def remote_worker(*, gpu: float = 0.0, cpus: float = CPUS_PER_WORKER) -> Any:
    """The Ray actor class of :class:`SpeechWorker` (``cpus`` each; a GPU share for a GPU recogniser)."""
    import ray  # lazy: Ray: about 0.7 s to import

    return ray.remote(num_cpus=cpus, num_gpus=gpu, max_restarts=1)(SpeechWorker)


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
    coordinator actors) and, per conversation, the audio refs held for the keep policy."""

    def __init__(self, workers: list[Any], *, keep: KeepPolicy = "none") -> None:
        if not workers:
            raise ValueError("a speech client needs at least one worker")
        self.workers = list(workers)
        self.keep = keep
        self._next = itertools.cycle(range(len(self.workers)))
        self._held: dict[str, list[Any]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"workers": self.workers, "keep": self.keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workers"], keep=state["keep"])  # type: ignore[misc]

    async def carry(self, profile: str, text: str, *, unit_id: str, attempt: int = 0, turn: int,
                    side: Literal["agent", "user"], clock_s: float = 0.0,
                    task_id: str | None = None) -> tuple[UtteranceRecord, Any]:
        """Carry one utterance on the next worker (round robin); awaits without blocking the loop.
        Returns the record and the ObjectRef of the line audio."""
        worker = self.workers[next(self._next)]
        record, wav_ref = await worker.carry.remote(profile, text, unit_id=unit_id, attempt=attempt, turn=turn,
                                                    side=side, clock_s=clock_s, task_id=task_id)
        if self.keep == "failed":
            self._held.setdefault(unit_id, []).append(wav_ref)
        return record, wav_ref

    async def finish(self, unit_id: str, *, failed: bool) -> int:
        """A conversation ended: under ``failed``, have a worker write its audio if it failed."""
        held = self._held.pop(unit_id, [])
        if self.keep != "failed" or not failed or not held:
            return 0
        return int(await self.workers[next(self._next)].store.remote(*held))


# How long start_pool waits for its workers to load their engines before it says why.
READY_TIMEOUT_S = 600.0


def start_pool(size: int | None = None, *, tts: SpeechModelSpec | str | None = None,
               asr: SpeechModelSpec | str | None = None, seed: int = 0, run_dir: Path | str | None = None,
               keep: KeepPolicy = "none", gpu: float = 0.0, reserved_cpus: float = 0.0) -> SpeechClient:
    """Start ``size`` workers (default :func:`pool_size`, leaving ``reserved_cpus`` to the run's
    other actors), wait until each has loaded its engines, and return the client. Bad specs fail
    here, once, before any conversation starts; workers that cannot be placed fail in one line."""
    import ray  # lazy: Ray: about 0.7 s to import

    count, cpus = (size, float(CPUS_PER_WORKER)) if size else pool_size(reserved_cpus, gpu=gpu > 0)
    cls = remote_worker(gpu=gpu, cpus=cpus)
    workers = [cls.remote(tts=tts, asr=asr, seed=seed, run_dir=str(run_dir) if run_dir else None, keep=keep)
               for _ in range(count)]
    try:
        ray.get([w.ready.remote() for w in workers], timeout=READY_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        for w in workers:
            ray.kill(w)
        raise RuntimeError(f"{count} speech worker(s) of {cpus:g} CPU each were not ready within "
                           f"{READY_TIMEOUT_S:.0f} s: the cluster has {ray.available_resources().get('CPU', 0):g} "
                           f"CPUs free; give it more CPUs or lower cluster.actor_cpus") from None
    return SpeechClient(workers, keep=keep)
