"""How a Ray run's speaking hosts reach the speech pool (``tauray.actors.speech.pool``).

The driver starts the run's :class:`~tauray.actors.speech.pool.SpeechWorker` actors (one per
CPU of the cluster) and registers their client in a named actor, :class:`SpeechDirectory`,
one per run. A coordinator hands the hosts of a voice conversation only the run's name
(:class:`PoolRef`); the host of each side that speaks aloud looks the directory up (off its
event loop) and carries that side's utterances on the pool through :class:`PooledSpeech`, in
the step that said them, so no speech call runs on the coordinator's loop and the audio comes
back as an ``ObjectRef`` of the object store. Without a directory (a run started without Ray
workers, or a coordinator used in process) the host uses its process's ``ThreadSpeechClient``.

The directory is looked up by name on every voice conversation (a GCS call, on a thread),
and its client cached by the directory's actor id: a later run under the same name, with
the same kept hosts, gets the new pool, never the stopped one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tauray.actors.speech.pool import start_pool
from tauray.actors.speech.spec import SpeechModelSpec, as_spec
from tauray.actors.unit import VoiceSettings
from tauray.actors.voice_client import process_client

NAMESPACE = "tauray"


def directory_name(run_id: str) -> str:
    """The named actor holding run ``run_id``'s speech pool client."""
    return f"tauray-speech-{run_id}"


class SpeechDirectory:
    """A run's speech pool client, held where every speaking host can find it (a named actor)."""

    def __init__(self, client: Any, engines: tuple[Any, Any]) -> None:
        self._client = client
        self._engines = engines

    def client(self) -> tuple[Any, tuple[str, str]]:
        return self._client, self._engines


class PooledSpeech:
    """A speaking host's speech client on the pool: the ``ThreadSpeechClient`` call, carried
    by the pool's workers (the audio as an ``ObjectRef``)."""

    def __init__(self, client: Any, engines: tuple[Any, Any]) -> None:
        self.client = client
        self.engines = (as_spec(engines[0], "tts"), as_spec(engines[1], "asr"))  # specs (a model string: its spec)

    async def carry(self, text: str, *, unit_id: str, attempt: int, turn: int, side: str, clock_s: float,
                    voice: VoiceSettings, task_id: str | None = None) -> tuple[Any, Any]:
        if (voice.tts, voice.asr) != self.engines:  # one pool per run, with the run's engines
            raise RuntimeError(f"the speech pool runs {self.engines}, the unit asks for {(voice.tts, voice.asr)}")
        # the line audio comes back (by reference) only where the listener takes audio
        return await self.client.carry(voice.custom or voice.profile, text, keep=voice.keep_audio != "none",
                                       audio=voice.heard_as_audio(side), unit_id=unit_id,
                                       attempt=attempt, turn=turn, side=side, clock_s=clock_s, task_id=task_id)

    def take_audio(self, conversation: str) -> dict[str, bytes]:
        """The conversation's audio files, handed over once (``actors/rows.py`` keeps them by policy)."""
        return self.client.take_audio(conversation)


class PoolLookup:
    """A host's cache of the runs' pooled clients, keyed by each directory's actor id."""

    def __init__(self) -> None:
        self._by_directory: dict[str, PooledSpeech] = {}

    async def find(self, run_id: str) -> PooledSpeech | None:
        """The pooled client of run ``run_id``, or None when the run has no speech pool."""
        import ray  # lazy: Ray: only inside a Ray worker, where it is imported already

        if not ray.is_initialized():
            return None
        try:
            directory = await asyncio.to_thread(ray.get_actor, directory_name(run_id), NAMESPACE)
        except ValueError:  # no such actor: this run has no pool
            return None
        key = directory._actor_id.hex()
        if key not in self._by_directory:
            client, engines = await directory.client.remote()
            if key not in self._by_directory:  # another conversation may have cached it while this one awaited
                self._by_directory = {key: PooledSpeech(client, tuple(engines))}  # older runs' pools are stopped
        return self._by_directory[key]


class PoolRef:
    """What a coordinator hands the speaking hosts of a voice conversation: the run's name, no
    handles. The host finds the run's pool itself (:func:`speech_client`), so the coordinator's
    loop neither looks the pool up nor pickles its client per conversation."""

    __slots__ = ("run_id",)

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return PoolRef, (self.run_id,)

    def __repr__(self) -> str:
        return f"PoolRef({self.run_id!r})"


_LOOKUP = PoolLookup()  # this process's pooled clients (a host's), by directory


async def speech_client(speech: Any) -> Any:
    """The client a speaking host carries utterances on: ``speech`` itself (a client a test
    or script gave), or for a :class:`PoolRef` the run's pool, else this process's thread
    client (no pool: a run without Ray workers, or a coordinator used in process)."""
    if not isinstance(speech, PoolRef):
        return speech
    return await _LOOKUP.find(speech.run_id) or process_client()


def start_run_pool(run_id: str, *, tts: SpeechModelSpec, asr: SpeechModelSpec, seed: int = 0,
                   reserved_cpus: float = 0.0, worker: tuple[type, dict[str, Any]] | None = None) -> Any:
    """Start run ``run_id``'s speech workers (one per CPU that the run's other actors, which take
    ``reserved_cpus``, leave; one per GPU for a recogniser on ``cuda``) and their directory;
    returns what :func:`stop_run_pool` takes. Bad engine specs fail here, once, before any
    conversation. A recogniser with ``serve`` is deployed on Ray Serve first (its replicas take
    their own CPUs or GPUs); the workers then send it their audio and hold no recogniser.
    ``worker``: what :func:`~tauray.actors.speech.pool.start_pool` starts instead of the plain worker."""
    import ray  # lazy: Ray: about 0.7 s to import

    served = None
    if asr.serve is not None:
        from tauray.actors.serving.recogniser import ServedRecogniser  # lazy: Ray Serve, only when asked for

        served = ServedRecogniser(asr)
        served.start()
        reserved_cpus += asr.serve.replicas * asr.serve.num_cpus
    try:
        gpu = 1.0 if asr.device == "cuda" and served is None else 0.0
        client = start_pool(tts=tts, asr=asr, seed=seed, gpu=gpu, reserved_cpus=reserved_cpus, worker=worker)
        directory = ray.remote(num_cpus=0)(SpeechDirectory).options(
            name=directory_name(run_id), namespace=NAMESPACE).remote(client, (tts, asr))
        ray.get(directory.client.remote())
    except BaseException:
        if served is not None:
            served.stop()
        raise
    return client, directory, served


def stop_run_pool(started: Any) -> None:
    """Stop the workers, the directory and the served recogniser :func:`start_run_pool` started."""
    import ray  # lazy: Ray: about 0.7 s to import

    client, directory, served = started
    for actor in [directory, *client.workers]:
        try:
            ray.kill(actor)
        except Exception:  # already gone
            pass
    if served is not None:
        served.stop()
