"""A tone voice and its recogniser: an exact, instant stand-in for speech, so a duplex conversation
runs with timings worked out by hand (tests) and the harness's own cost is measured without any
model's (``tauray bench duplex``).

Each word is two 120 ms tones (a pair of 16 pitches between 500 and 2750 Hz, inside the
telephone band) and a 60 ms gap: 0.3 s a word, whatever the rate asked for. The pair is the
word's number in the codec's vocabulary, numbered in the order words are first said (256 at
most), so the recogniser reads back exactly the words that reached it whole: a word cut off
mid-way is not heard. ``<cough>`` is a burst of noise that no pitch pair matches.
"""

from __future__ import annotations

import re
from typing import Final

import numpy as np

from tauray.actors.voice.duplex.errors import DuplexConfigError

__all__ = ["GAP_S", "TONE_S", "WORD_S", "ToneCodec", "cough", "tone_words"]

TONE_S: Final = 0.12
GAP_S: Final = 0.06
WORD_S: Final = 2 * TONE_S + GAP_S  # 0.3 s a word
_PITCHES: Final = tuple(500.0 + 150.0 * k for k in range(16))
_LEVEL: Final = 0.3
_WORD_RE = re.compile(r"<cough>|[a-z0-9]+(?:['-][a-z0-9]+)*")


def tone_words(text: str) -> list[str]:
    """The words the tone voice says for ``text``: lower case, punctuation dropped."""
    return _WORD_RE.findall(text.lower())


def cough(rate: int, seed: int) -> np.ndarray:
    """A cough: 0.24 s of noise, shaped by a fast attack and a decay (seeded, so repeatable)."""
    rng = np.random.default_rng(seed)
    n = round(0.24 * rate)
    envelope = np.minimum(1.0, np.arange(n) / (0.02 * rate)) * np.exp(-np.arange(n) / (0.08 * rate))
    return (0.4 * envelope * rng.standard_normal(n)).astype(np.float32)


class ToneCodec:
    """The shared vocabulary of a tone voice (:meth:`tts`) and its recogniser (:meth:`asr`)."""

    def __init__(self, rate: int = 16000) -> None:
        self.rate = rate
        self.index: dict[str, int] = {}
        self.words: list[str] = []

    def number(self, word: str) -> int:
        if word not in self.index:
            if len(self.words) >= len(_PITCHES) ** 2:
                raise DuplexConfigError(f"the tone voice knows {len(self.words)} words at most")
            self.index[word] = len(self.words)
            self.words.append(word)
        return self.index[word]

    def tts(self) -> ToneTTS:
        return ToneTTS(self)

    def asr(self) -> ToneASR:
        return ToneASR(self)


def _tone(pitch: float, rate: int) -> np.ndarray:
    n = round(TONE_S * rate)
    ramp = min(n // 2, round(0.005 * rate))
    envelope = np.ones(n)
    envelope[:ramp] = np.linspace(0.0, 1.0, ramp)
    envelope[n - ramp:] = np.linspace(1.0, 0.0, ramp)
    return (_LEVEL * envelope * np.sin(2 * np.pi * pitch * np.arange(n) / rate)).astype(np.float32)


class ToneTTS:
    """The tone voice as a synthesiser (the engines' ``synth`` signature; voice, rate, pitch and
    seed do not change it)."""

    name = "tones"
    price: tuple[str, float] | None = ("none", 0.0)
    deterministic = True

    def __init__(self, codec: ToneCodec) -> None:
        self.codec = codec
        self.sample_rate = codec.rate

    def voices(self, kind: str) -> tuple[str, ...]:
        return ("tone",)

    def check_voice(self, voice: str) -> None:
        return None

    def word_spans(self, text: str) -> list[tuple[float, float]]:
        """When each word starts and ends in :meth:`synth`'s audio, seconds."""
        return [(i * WORD_S, i * WORD_S + 2 * TONE_S) for i in range(len(tone_words(text)))]

    def synth(self, text: str, voice: str = "tone", rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        gap = np.zeros(round(GAP_S * self.sample_rate), dtype=np.float32)
        parts: list[np.ndarray] = []
        for i, word in enumerate(tone_words(text)):
            if i:
                parts.append(gap)
            if word == "<cough>":
                sound = cough(self.sample_rate, seed + i)
                parts.append(sound)
                continue
            number = self.codec.number(word)
            parts += [_tone(_PITCHES[number // len(_PITCHES)], self.sample_rate),
                      _tone(_PITCHES[number % len(_PITCHES)], self.sample_rate)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


class ToneASR:
    """The tone voice's recogniser: the words whose two tones reached it whole, in order."""

    name = "tones"
    decoding = "exact"
    price: tuple[str, float] | None = ("none", 0.0)

    def __init__(self, codec: ToneCodec) -> None:
        self.codec = codec

    def _pitch(self, audio: np.ndarray) -> int | None:
        spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size)))
        freqs = np.fft.rfftfreq(audio.size, 1 / self.codec.rate)
        peak = int(np.argmax(spectrum))
        if spectrum[peak] < 20 * float(np.median(spectrum) + 1e-9):
            return None  # no clean tone (a cough, noise)
        k = round((freqs[peak] - _PITCHES[0]) / 150.0)
        return k if 0 <= k < len(_PITCHES) and abs(freqs[peak] - _PITCHES[k]) < 40 else None

    def transcribe(self, audio: np.ndarray) -> str:
        rate = self.codec.rate
        frame = round(0.01 * rate)
        n = audio.size // frame
        if n == 0:
            return ""
        rms = np.sqrt(np.mean(audio[:n * frame].astype(np.float64).reshape(n, frame) ** 2, axis=1))
        loud = rms >= 0.02
        words, i = [], 0
        while i < n:
            if not loud[i]:
                i += 1
                continue
            j = i
            while j < n and loud[j]:
                j += 1
            if (j - i) * 0.01 >= 2 * TONE_S - 0.02:  # a whole word (both tones)
                start = i * frame
                half = round(TONE_S * rate)
                a = self._pitch(audio[start + frame:start + half - frame])
                b = self._pitch(audio[start + half + frame:start + 2 * half - frame])
                number = None if a is None or b is None else a * len(_PITCHES) + b
                if number is not None and number < len(self.codec.words):
                    words.append(self.codec.words[number])
            i = j
        return " ".join(words)
