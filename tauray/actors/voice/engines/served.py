"""A recogniser served on Ray Serve for one run (an ``asr`` spec with a ``serve`` block): the
deployment, and a speech worker's side of it.

Without ``serve`` every speech worker loads its own recogniser (one per CPU, or a GPU share
each). With it, the run deploys one Serve application, :class:`RecogniserReplica` ×
``replicas``, placed by ``num_cpus``/``num_gpus``/``resources`` as a served chat model is, and
the speech workers send it each utterance's audio through a Serve handle (:class:`ServedASR`:
Ray's object store, no HTTP, no re-encoding): the recogniser scales with its replicas, the
workers with the CPUs that synthesis and the line effects need, and a GPU node serves every
worker of the cluster.

The application is named after what it hears with and where it runs (:func:`app_name`), so
every worker finds it without being told; :class:`ServedRecogniser` brings it up (bounded by
``startup_timeout_s``, with Serve's reason when it fails) and down again, and shuts Serve down
only when it started it.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
from typing import Any

import numpy as np

from tauray.actors.serving.lifecycle import ServeRun, ServeStartError, deploy, placement, start_serve
from tauray.actors.serving.spec import replica_options
from tauray.actors.voice.engines.whisper import whisper_for
from tauray.actors.voice.spec import DECODING, PACKAGED, SpeechModelSpec

PREFIX = "tauray-asr-"


def app_name(spec: SpeechModelSpec) -> str:
    """The Serve application that serves ``spec``: named by everything that decides what it hears
    and where it runs, so two runs that share one cannot mean different recognisers."""
    digest = hashlib.sha256(spec.model_dump_json(include={"model", "device", *DECODING, "serve"}).encode()).hexdigest()
    return f"{PREFIX}{spec.model.removeprefix('local/')}-{digest[:10]}"


class ServedASR:
    """Recognition by the run's served recogniser (same model, same decoding as :class:`WhisperASR`)."""

    price: tuple[str, float] | None = ("none", 0.0)  # runs on the cluster: no money per call

    def __init__(self, spec: SpeechModelSpec, *, timeout_s: float = 600.0) -> None:
        self.spec = spec
        self.name = spec.model
        self.decoding = spec.decoding()
        self.english_only = PACKAGED[spec.model].english_only
        self.app = app_name(spec)
        self.timeout_s = timeout_s
        self._handle: Any = None

    def _app(self) -> Any:
        if self._handle is None:
            from ray import serve  # lazy: only a worker of a run with a served recogniser needs Serve

            self._handle = serve.get_app_handle(self.app)
        return self._handle

    def transcribe(self, audio: np.ndarray) -> str:
        """Text of float32 mono audio at 16 kHz ('' for silence), from a replica."""
        if audio.size == 0:
            return ""
        return str(self._app().transcribe.remote(audio.astype(np.float32)).result(timeout_s=self.timeout_s))


class RecogniserReplica:
    """One Serve replica: the packaged Whisper model, decoding one utterance at a time (off the
    replica's event loop, so Serve's health checks are answered while it decodes)."""

    def __init__(self, spec_json: str) -> None:
        spec = SpeechModelSpec.model_validate_json(spec_json)
        assert spec.serve is not None
        self._asr = whisper_for(spec, cpu_threads=max(1, int(spec.serve.num_cpus)))

    async def transcribe(self, audio: np.ndarray) -> str:
        return await asyncio.to_thread(self._asr.transcribe, audio)


def recogniser_app(spec: SpeechModelSpec) -> Any:
    """The Serve application for ``spec`` (not yet running)."""
    from ray import serve

    serving = spec.serve
    assert serving is not None
    deployment = serve.deployment(
        RecogniserReplica, name="recogniser", num_replicas=serving.replicas,
        ray_actor_options=replica_options(serving), max_ongoing_requests=serving.max_ongoing_requests,
        graceful_shutdown_timeout_s=5.0, graceful_shutdown_wait_loop_s=0.5,
    )
    return deployment.bind(spec.model_dump_json())


class ServedRecogniser(ServeRun):
    """The run's served recogniser; a context manager. ``start()`` returns the application's name."""

    def __init__(self, spec: SpeechModelSpec) -> None:
        if spec.serve is None:
            raise ValueError(f"asr model {spec.model!r} has no serve block")
        super().__init__()
        self.spec = spec
        self.app = app_name(spec)

    def start(self) -> str:
        serving = self.spec.serve
        assert serving is not None
        atexit.register(self.stop)
        try:
            _port, self._own_serve = start_serve()
            self._apps = [self.app]  # deleted by stop() however the start ends
            deploy(self.app, recogniser_app(self.spec), None, f"served recogniser {self.spec.model!r}",
                   placement(serving), serving.startup_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self.app


__all__ = ["PREFIX", "RecogniserReplica", "ServeStartError", "ServedASR", "ServedRecogniser", "app_name",
           "recogniser_app"]
