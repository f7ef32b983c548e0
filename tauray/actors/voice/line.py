"""The telephone line every spoken profile goes through, as in τ-Voice: band-limited to
300–3400 Hz, resampled to 8 kHz, μ-law coded (G.711) and decoded on the far end.

Filtering and resampling are scipy.signal's (a Butterworth band-pass as second-order
sections, polyphase resampling); the μ-law codec is libsndfile's (through soundfile), whose
8 kHz μ-law WAV bytes are also what the audio store keeps: the line's own signal, lossless
with respect to what the recogniser heard, 8 KB a second.
"""

from __future__ import annotations

import io
from functools import cache
from math import gcd

import numpy as np

LINE_RATE = 8000
BAND_HZ = (300.0, 3400.0)


@cache
def _bandpass(rate: int) -> np.ndarray:
    from scipy.signal import butter  # lazy: optional extra tauray[voice]

    return butter(6, BAND_HZ, btype="bandpass", fs=rate, output="sos")


def resample(audio: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Polyphase resampling (scipy.signal.resample_poly), float32 out."""
    if rate_in == rate_out:
        return audio.astype(np.float32)
    from scipy.signal import resample_poly  # lazy: optional extra tauray[voice]

    g = gcd(rate_in, rate_out)
    return resample_poly(audio, rate_out // g, rate_in // g).astype(np.float32)


def ulaw_encode(audio_8k: np.ndarray) -> bytes:
    """8 kHz float audio to μ-law WAV bytes (libsndfile's G.711 codec)."""
    import soundfile  # lazy: optional extra tauray[voice]

    buffer = io.BytesIO()
    soundfile.write(buffer, np.clip(audio_8k, -1.0, 1.0), LINE_RATE, format="WAV", subtype="ULAW")
    return buffer.getvalue()


def ulaw_decode(wav: bytes) -> np.ndarray:
    """μ-law WAV bytes back to float32 audio at 8 kHz."""
    import soundfile  # lazy: optional extra tauray[voice]

    audio, rate = soundfile.read(io.BytesIO(wav), dtype="float32")
    assert rate == LINE_RATE, rate
    return audio


def telephone(audio: np.ndarray, rate: int) -> bytes:
    """Source audio through the line: band-pass, 8 kHz, μ-law; returns the coded WAV bytes."""
    from scipy.signal import sosfiltfilt  # lazy: optional extra tauray[voice]

    narrow = resample(audio, rate, LINE_RATE) if rate != LINE_RATE else audio.astype(np.float32)
    if narrow.size > 64:
        narrow = sosfiltfilt(_bandpass(LINE_RATE), narrow).astype(np.float32)
    peak = float(np.max(np.abs(narrow))) if narrow.size else 0.0
    if peak > 0.99:  # the line clips; keep the level just under full scale instead
        narrow = narrow * (0.99 / peak)
    return ulaw_encode(narrow)
