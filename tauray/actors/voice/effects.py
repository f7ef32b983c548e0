"""Source effects on the caller's speech, before the line (τ-Voice's audio factors): background
noise at an SNR that drifts, Poisson noise bursts, one muffled stretch, Gilbert–Elliott frame
drops, and out-of-turn sounds inserted in the audio.

No package ships recorded noise, so noise is synthesised: coloured noise (white, pink,
brown: shaped in the frequency domain with numpy's FFT) and babble (other voices of the
caller's synthesiser saying unrelated sentences, summed; the channel makes it). The muffling low-pass is
scipy.signal's Butterworth. Every draw comes from the generator the channel seeds per
utterance, and each effect returns what it drew, for the utterance's record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tauray.actors.voice.profiles import BurstParams, DropParams, MuffleParams, NoiseParams


def _power(x: np.ndarray) -> float:
    return float(np.mean(x.astype(np.float64) ** 2)) if x.size else 0.0


def coloured_noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """White, pink (1/f) or brown (1/f²) noise of unit power."""
    white = rng.standard_normal(n)
    if kind != "white" and n > 1:
        spectrum = np.fft.rfft(white)
        f = np.fft.rfftfreq(n)
        f[0] = f[1]
        spectrum /= np.sqrt(f) if kind == "pink" else f
        white = np.fft.irfft(spectrum, n)
    return (white / np.sqrt(_power(white) or 1.0)).astype(np.float32)


def _fit(noise: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    if noise.size >= n:
        start = int(rng.integers(0, noise.size - n + 1))
        return noise[start:start + n]
    return np.resize(noise, n)


def add_noise(audio: np.ndarray, rate: int, params: NoiseParams, kind: str, rng: np.random.Generator,
              babble: np.ndarray | None) -> tuple[np.ndarray, dict[str, Any]]:
    """Background noise under the whole utterance at ``snr_db`` drifting linearly by up to ±drift."""
    n = audio.size
    base = babble if kind == "babble" and babble is not None and babble.size else coloured_noise(kind, n, rng)
    noise = _fit(base, n, rng)
    noise = noise / np.sqrt(_power(noise) or 1.0)
    start = params.snr_db + float(rng.uniform(-params.drift_db, params.drift_db))
    end = params.snr_db + float(rng.uniform(-params.drift_db, params.drift_db))
    snr = np.linspace(start, end, n)
    gain = np.sqrt(_power(audio) / 10 ** (snr / 10))
    return (audio + noise * gain).astype(np.float32), {"kind": kind, "snr_db_start": round(start, 2),
                                                       "snr_db_end": round(end, 2)}


def add_bursts(audio: np.ndarray, rate: int, params: BurstParams, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """A Poisson number of bursts (rate per minute × length), at uniform times and SNRs."""
    seconds = audio.size / rate
    count = int(rng.poisson(params.rate_per_min * seconds / 60.0))
    out, drawn, width = audio.copy(), [], int(params.seconds * rate)
    signal = _power(audio)
    for _ in range(count):
        at = int(rng.integers(0, max(1, audio.size - width)))
        snr = float(rng.uniform(params.snr_db_low, params.snr_db_high))
        burst = coloured_noise("white", min(width, audio.size - at), rng) * np.hanning(min(width, audio.size - at))
        out[at:at + burst.size] += burst * np.sqrt(signal / 10 ** (snr / 10)) * np.sqrt(2.0)
        drawn.append({"at_s": round(at / rate, 3), "snr_db": round(snr, 2)})
    return out, drawn


def muffle(audio: np.ndarray, rate: int, params: MuffleParams, rng: np.random.Generator) -> tuple[np.ndarray, dict | None]:
    """With probability ``probability``, one stretch low-passed at ``cutoff_hz``."""
    if rng.random() >= params.probability or audio.size == 0:
        return audio, None
    from scipy.signal import butter, sosfilt  # lazy: optional extra tauray[voice]

    width = min(audio.size, int(params.seconds * rate))
    at = int(rng.integers(0, audio.size - width + 1))
    sos = butter(4, params.cutoff_hz, btype="lowpass", fs=rate, output="sos")
    out = audio.copy()
    out[at:at + width] = sosfilt(sos, audio[at:at + width])
    return out, {"at_s": round(at / rate, 3), "seconds": params.seconds, "cutoff_hz": params.cutoff_hz}


def gilbert_elliott(frames: int, params: DropParams, rng: np.random.Generator) -> np.ndarray:
    """Which frames are lost: a two-state Markov chain whose bad state loses every frame. The
    mean burst is 1/r frames (r: bad→good) and the stationary loss p/(p+r) = ``loss``."""
    burst_frames = max(1.0, params.mean_burst_ms / params.frame_ms)
    r = 1.0 / burst_frames
    p = params.loss * r / (1.0 - params.loss)
    lost = np.zeros(frames, dtype=bool)
    bad = rng.random() < params.loss
    draws = rng.random(frames)
    for i in range(frames):
        lost[i] = bad
        bad = draws[i] >= r if bad else draws[i] < p
    return lost


def drop_frames(audio: np.ndarray, rate: int, params: DropParams, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """Silence the lost frames (a packet-loss gap, no concealment)."""
    width = max(1, int(params.frame_ms * rate / 1000))
    frames = -(-audio.size // width)
    lost = gilbert_elliott(frames, params, rng)
    out = audio.copy()
    for i in np.flatnonzero(lost):
        out[i * width:(i + 1) * width] = 0.0
    return out, {"frames": frames, "lost": int(lost.sum())}


def cough(rate: int, rng: np.random.Generator) -> np.ndarray:
    """A synthetic cough: two short bursts of band-limited noise with a fast attack."""
    parts = []
    for length in (0.18, 0.12):
        n = int(length * rate)
        env = np.exp(-np.linspace(0, 6, n)) * np.minimum(1.0, np.linspace(0, 20, n))
        parts += [coloured_noise("pink", n, rng) * env * 0.3, np.zeros(int(0.08 * rate), dtype=np.float32)]
    return np.concatenate(parts).astype(np.float32)


def insert_at(audio: np.ndarray, sound: np.ndarray, rate: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Insert a sound at a random point between words (the quietest 20 ms frame near the draw)."""
    width = max(1, rate // 50)
    frames = audio.size // width
    if frames < 2:
        return np.concatenate([audio, sound]), audio.size / rate
    energy = np.array([_power(audio[i * width:(i + 1) * width]) for i in range(frames)])
    centre = int(rng.integers(0, frames))
    lo, hi = max(0, centre - 25), min(frames, centre + 25)
    at = (lo + int(np.argmin(energy[lo:hi]))) * width
    gap = np.zeros(rate // 10, dtype=np.float32)
    return np.concatenate([audio[:at], gap, sound, gap, audio[at:]]).astype(np.float32), at / rate
