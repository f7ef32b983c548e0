"""Voice-activity detection on the line audio a duplex agent hears: which 20 ms frames hold speech.

* ``silero``: Silero VAD v6, the ONNX weights faster-whisper ships inside its package
  (``faster_whisper/assets/silero_vad_v6.onnx``), run with onnxruntime through faster-whisper's
  own wrapper. The model takes 16 kHz audio in 32 ms windows (512 samples); a frame is speech when
  the last window complete by the frame's end has a speech probability at or above the
  threshold (causal: a frame never looks past its own end by more than the window's reach).
* ``energy``: a frame is speech when its level is at or above a threshold in dBFS. Exact and
  instant; for the tone voice of the tests and the bench (tones.py), not for real speech in noise.
* ``webrtc``: WebRTC's VAD (the ``webrtcvad`` package, not a dependency of tauray): 20 ms frames
  at 8 kHz natively; ``threshold`` picks its aggressiveness (0-3).

Every VAD is deterministic and sees one utterance at a time from its own start (a chunk, in
stream.py), so what it says about a frame depends on that utterance's audio only.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Final, Literal, Protocol

import numpy as np

from tauray.actors.voice.duplex.errors import DuplexConfigError
from tauray.actors.voice.duplex.segments import FRAME_S
from tauray.actors.voice.line import LINE_RATE, resample

__all__ = ["VAD_KINDS", "VAD", "EnergyVAD", "SileroVAD", "VadKind", "WebRTCVAD", "make_vad", "silero_path"]

VadKind = Literal["silero", "energy", "webrtc"]
VAD_KINDS: Final[tuple[VadKind, ...]] = ("silero", "energy", "webrtc")
_SPF: Final = round(LINE_RATE * FRAME_S)  # samples of one frame at the line's 8 kHz


class VAD(Protocol):
    """Per-frame speech flags of line audio (int16 at 8 kHz, whole 20 ms frames)."""

    name: str

    def frames(self, samples: np.ndarray) -> np.ndarray: ...


class EnergyVAD:
    """Speech where a frame's RMS level is at or above ``threshold_db`` dBFS."""

    def __init__(self, threshold_db: float = -40.0) -> None:
        self.threshold_db = threshold_db
        self.name = f"energy@{threshold_db:g}dBFS"

    def frames(self, samples: np.ndarray) -> np.ndarray:
        n = samples.size // _SPF
        x = samples[:n * _SPF].astype(np.float64).reshape(n, _SPF) / 32768.0
        rms = np.sqrt(np.mean(x * x, axis=1))
        with np.errstate(divide="ignore"):
            level = 20 * np.log10(rms)
        return level >= self.threshold_db


def silero_path() -> str:
    """Where faster-whisper's packaged Silero VAD weights are (one line naming the install if not)."""
    if importlib.util.find_spec("faster_whisper") is None or importlib.util.find_spec("onnxruntime") is None:
        raise DuplexConfigError("vad 'silero' needs faster-whisper and onnxruntime (it reads the Silero weights "
                                "faster-whisper ships): pip install faster-whisper onnxruntime")
    from faster_whisper.utils import get_assets_path  # lazy: ~1 s to import faster_whisper

    return f"{get_assets_path()}/silero_vad_v6.onnx"


class SileroVAD:
    """Silero VAD v6 from faster-whisper's package; speech where its probability >= ``threshold``."""

    WINDOW: Final = 512  # samples at 16 kHz: 32 ms
    RATE: Final = 16000

    def __init__(self, threshold: float = 0.5) -> None:
        silero_path()
        from faster_whisper.vad import get_vad_model  # lazy; loads the ONNX session once per process

        self.threshold = threshold
        self.name = f"silero-v6@{threshold:g}"
        self._model = get_vad_model()

    def probabilities(self, samples: np.ndarray) -> np.ndarray:
        """Speech probability of each 32 ms window of the audio at 16 kHz."""
        audio = resample(samples.astype(np.float32) / 32768.0, LINE_RATE, self.RATE)
        audio = np.pad(audio, (0, -audio.size % self.WINDOW))
        if audio.size == 0:
            return np.zeros(0, dtype=np.float32)
        return np.asarray(self._model(audio), dtype=np.float32).reshape(-1)

    def frames(self, samples: np.ndarray) -> np.ndarray:
        n = samples.size // _SPF
        probs = self.probabilities(samples)
        window_ms = 1000 * self.WINDOW / self.RATE
        # Frame i ends at 20(i+1) ms; the last window complete by then.
        last = np.array([math.floor(20 * (i + 1) / window_ms) - 1 for i in range(n)], dtype=int)
        out = np.zeros(n, dtype=bool)
        ok = (last >= 0) & (last < probs.size)
        out[ok] = probs[last[ok]] >= self.threshold
        return out


class WebRTCVAD:
    """WebRTC's VAD at aggressiveness ``mode`` (0-3) on 20 ms frames at 8 kHz."""

    def __init__(self, mode: int = 2) -> None:
        try:
            import webrtcvad  # type: ignore[import-not-found]  # lazy: optional, not a dependency of tauray
        except ImportError:
            raise DuplexConfigError("vad 'webrtc' needs the webrtcvad package: pip install webrtcvad") from None
        if mode not in (0, 1, 2, 3):
            raise DuplexConfigError(f"vad 'webrtc' threshold is its aggressiveness 0-3 (got {mode})")
        self._vad = webrtcvad.Vad(mode)
        self.name = f"webrtc@{mode}"

    def frames(self, samples: np.ndarray) -> np.ndarray:
        n = samples.size // _SPF
        data = samples[:n * _SPF].astype("<i2").tobytes()
        return np.array([self._vad.is_speech(data[2 * _SPF * i:2 * _SPF * (i + 1)], LINE_RATE) for i in range(n)],
                        dtype=bool)


def make_vad(kind: str, threshold: float | None = None) -> VAD:
    """The VAD a pipeline names (its threshold: a probability for silero, dBFS for energy, the
    aggressiveness for webrtc; None: the default), or one line naming the kinds / the install."""
    if kind == "silero":
        return SileroVAD(0.5 if threshold is None else threshold)
    if kind == "energy":
        return EnergyVAD(-40.0 if threshold is None else threshold)
    if kind == "webrtc":
        return WebRTCVAD(2 if threshold is None else int(threshold))
    raise DuplexConfigError(f"vad {kind!r} is unknown; known: {', '.join(VAD_KINDS)}")
