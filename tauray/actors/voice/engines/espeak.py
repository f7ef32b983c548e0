"""Speech synthesis with espeak-ng, the library and voice data that the ``espeakng-loader``
package ships (no system install), called through ctypes.

espeak-ng keeps its synthesiser in static state that survives ``espeak_Terminate`` (the
pitch-flutter index, the glottal phase), so the same text comes out a few samples different
on every call of a long-lived library. Each synthesis therefore loads the library afresh
(``dlopen``), seeds its random draws and the C library's ``rand`` (breath noise), speaks, and
unloads it (``dlclose``): about 12 ms, and every synthesis depends on its inputs alone, bit
for bit. Calls are serialised by a lock; the speech workers of
:mod:`tauray.actors.voice.pool` are processes, which is where the parallelism comes from.
"""

from __future__ import annotations

import _ctypes
import ctypes
import re
import threading
from pathlib import Path
from typing import Any, Final

import numpy as np

from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError

_AUDIO_OUTPUT_SYNCHRONOUS = 0x02
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_RATE, _PITCH = 1, 3
_PHONEMES_IPA = 0x02
_CLAUSE = re.compile(r"([,.!?;:]+)")
_LIBC = ctypes.CDLL(None)
_SYNTH_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class _Espeak:
    """Where libespeak-ng and its data are, what voices they have, and one synthesis at a time."""

    _lock = threading.Lock()  # one synthesis at a time: the library is process-global
    _create = threading.Lock()
    _instance: _Espeak | None = None

    def __init__(self) -> None:
        try:
            import espeakng_loader  # lazy: optional extra tauray[voice]
        except ImportError:
            raise SpeechConfigError(f"speech synthesis 'local/espeak-ng' needs espeakng-loader: {INSTALL_HINT}") from None
        self.library = str(espeakng_loader.get_library_path())
        self.data_path = Path(espeakng_loader.get_data_path())
        self.languages = frozenset(p.name.lower() for p in (self.data_path / "lang").rglob("*") if p.is_file())
        self.variants = frozenset(p.name for p in (self.data_path / "voices" / "!v").iterdir() if p.is_file())
        self._chunks: list[np.ndarray] = []
        self._callback = _SYNTH_CALLBACK(self._collect)  # kept alive with the instance
        self.sample_rate = 0
        self.synth("", "en-us", 175, 50, 0)  # learns the sample rate

    def _collect(self, wav: Any, count: int, _events: Any) -> int:
        if wav and count > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0

    @classmethod
    def get(cls) -> _Espeak:
        with cls._create:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def synth(self, text: str, voice: str, rate_wpm: int, pitch: int, seed: int) -> np.ndarray:
        with self._lock:
            lib = ctypes.CDLL(self.library)
            try:
                lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
                lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
                lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
                lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
                lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                             ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
                rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, str(self.data_path.parent).encode(), 0)
                if rate <= 0:
                    raise RuntimeError(f"espeak-ng failed to initialise from {self.data_path}")
                self.sample_rate = rate
                lib.espeak_SetSynthCallback(self._callback)
                if lib.espeak_SetVoiceByName(voice.encode()) != 0:
                    raise SpeechConfigError(f"espeak-ng could not load voice {voice!r}")
                lib.espeak_SetParameter(_RATE, int(rate_wpm), 0)
                lib.espeak_SetParameter(_PITCH, int(pitch), 0)
                lib.espeak_ng_SetRandSeed(seed & 0x7FFFFFFF)
                _LIBC.srand(seed & 0x7FFFFFFF)
                self._chunks = []
                data = text.encode("utf-8") + b"\0"
                status = lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
                if status != 0:
                    raise RuntimeError(f"espeak-ng synthesis failed with status {status}")
                lib.espeak_Synchronize()
                lib.espeak_Terminate()
            finally:
                handle = lib._handle
                del lib
                _ctypes.dlclose(handle)
            chunks, self._chunks = self._chunks, []
        pcm = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return pcm.astype(np.float32) / 32768.0

    def phonemes(self, text: str, voice: str) -> list[tuple[str, str]]:
        """``text`` as IPA phonemes, clause by clause: (the clause's phonemes, the punctuation
        that ends it, '' for none). The neural engines read these (engines/piper.py, kokoro.py);
        clauses are split here because espeak-ng's phoneme call drops the punctuation."""
        clauses: list[tuple[str, str]] = []
        parts = _CLAUSE.split(text)
        with self._lock:
            lib = ctypes.CDLL(self.library)
            try:
                lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
                lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
                lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int]
                lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
                if lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, str(self.data_path.parent).encode(), 0) <= 0:
                    raise RuntimeError(f"espeak-ng failed to initialise from {self.data_path}")
                if lib.espeak_SetVoiceByName(voice.encode()) != 0:
                    raise SpeechConfigError(f"espeak-ng could not load voice {voice!r}")
                for words, stop in zip(parts[::2], [*parts[1::2], ""], strict=True):
                    if not words.strip():
                        if clauses and stop:
                            clauses[-1] = (clauses[-1][0], clauses[-1][1] + stop)
                        continue
                    buffer = ctypes.c_char_p(words.encode("utf-8"))
                    pieces = []
                    while buffer.value:
                        out = lib.espeak_TextToPhonemes(ctypes.byref(buffer), _CHARS_UTF8, _PHONEMES_IPA)
                        if out is None:
                            break
                        pieces.append(out.decode("utf-8"))
                    said = re.sub(r"\([^)]*\)", "", " ".join(pieces)).strip()  # language-switch flags
                    if said:
                        clauses.append((said, stop.strip()[:1]))
                lib.espeak_Terminate()
            finally:
                handle = lib._handle
                del lib
                _ctypes.dlclose(handle)
        return clauses


# espeak-ng voices (language+variant, from espeakng-loader's espeak-ng-data) a speaker is drawn from.
# Clear speakers: American English in the variants the packaged recogniser heard best through the
# line (docs/voice.md, "Which voices": 13 voices on a tuning draw apart from the measured corpus);
# accented ones: English variants and other-language voices reading English, in every timbre.
AMERICAN: Final = ("en-us",)
CLEAR_VARIANTS: Final = ("f2", "m7", "klatt", "f3")
ENGLISH_VARIANTS: Final = ("en-us", "en", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc",
                           "en-gb-x-gbclan", "en-gb-x-gbcwmd")
FOREIGN_READING_ENGLISH: Final = ("fr", "de", "es", "it", "hi", "pt", "nl", "pl")
VARIANTS: Final = ("m1", "m2", "m3", "m4", "f1", "f2", "f3", "f4")
VOICES: Final = {
    "clear": tuple(f"{lang}+{v}" for lang in AMERICAN for v in CLEAR_VARIANTS),
    "accented": tuple(f"{lang}+{v}" for lang in ENGLISH_VARIANTS + FOREIGN_READING_ENGLISH for v in VARIANTS),
    "agent": ("en-us+m7",),
}


class EspeakTTS:
    """espeak-ng as the channel's speech synthesiser: ``synth(text, voice, rate, pitch, seed)``
    returns float32 mono audio in [-1, 1] at :attr:`sample_rate`. The robotic voice: the fastest
    engine here (tests that need speed), and a "robotic" option for a sweep."""

    name = "local/espeak-ng"
    price: tuple[str, float] | None = ("none", 0.0)  # runs here: no money per call
    deterministic = True
    packages = ("espeakng-loader",)

    def __init__(self) -> None:
        self._espeak = _Espeak.get()
        self.sample_rate: int = self._espeak.sample_rate

    def check_voice(self, voice: str) -> None:
        """A one-line error for a voice espeak-ng does not have (before any synthesis)."""
        language, _, variant = voice.partition("+")
        if language.lower() not in self._espeak.languages:
            raise SpeechConfigError(f"voice {voice!r}: espeak-ng has no language {language!r} "
                                    "(e.g. en-us, en, en-gb-scotland, fr, de)")
        if variant and variant not in self._espeak.variants:
            raise SpeechConfigError(f"voice {voice!r}: espeak-ng has no variant {variant!r} (e.g. m1, m3, f2)")

    def voices(self, kind: str) -> tuple[str, ...]:
        """The voices of one kind of speaker: 'clear', 'accented' or 'agent'."""
        return VOICES[kind]

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        self.check_voice(voice)
        return self._espeak.synth(text, voice, rate_wpm, pitch, seed)
