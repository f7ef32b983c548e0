"""A speech worker's side of a recogniser served on Ray Serve (``asr`` spec with ``serve``): each
utterance's audio goes to the run's Serve application through a handle, and its text comes
back. The application is started by :class:`tauray.actors.serving.recogniser.ServedRecogniser`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from tauray.actors.speech.spec import PACKAGED, SpeechModelSpec

PREFIX = "tauray-asr-"


def app_name(spec: SpeechModelSpec) -> str:
    """The Serve application that serves ``spec``: named by everything that decides what it hears
    and where it runs, so two runs that share one cannot mean different recognisers."""
    digest = hashlib.sha256(spec.model_dump_json(include={"model", "device", "beam_size", "hotwords",
                                                          "serve"}).encode()).hexdigest()
    return f"{PREFIX}{spec.model.removeprefix('local/')}-{digest[:10]}"


class ServedASR:
    """Recognition by the run's served recogniser (same model, same decoding as :class:`WhisperASR`)."""

    price: tuple[str, float] | None = ("none", 0.0)  # runs on the cluster: no money per call

    def __init__(self, spec: SpeechModelSpec, *, timeout_s: float = 600.0) -> None:
        self.spec = spec
        self.name = spec.model
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


__all__ = ["PREFIX", "ServedASR", "app_name"]
