"""The speech channel: one utterance, on either side, from the text a speaker means to say to
the text the other side hears.

text → speech synthesis (the task's voice, rate, pitch) → source effects (caller side, per the
profile) → telephone line (300–3400 Hz, 8 kHz, μ-law) → recognition → heard text, plus the
utterance's record (:class:`~tauray.results.tables.records.utterance.UtteranceRecord`). Pure and in
process: the pool (:mod:`tauray.actors.voice.pool`) runs it inside Ray workers.

Reproducible: every random draw comes from a generator seeded with a stable hash of (profile,
profile seed, unit, turn, side); synthesis is deterministic per (text, voice, rate, seed) and
cached by that key (:mod:`tauray.actors.voice.engines.cache`); recognition decodes without
sampling. On one machine the same inputs give the same audio and text bit for bit; the neural
voices run on onnxruntime, whose kernels differ by CPU instruction set, so another kind of CPU
may differ in the last bits of the audio (and, rarely, in a word heard).
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

import numpy as np

from tauray.actors.voice import effects as fx
from tauray.actors.voice.audio_store import audio_files
from tauray.actors.voice.engines import (
    ASR,
    SAMPLE_RATE,
    TTS,
    CachedTTS,
    EspeakTTS,
    SpeechModelSpec,
    make_asr,
    make_tts,
)
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.line import LINE_RATE, resample, telephone, ulaw_decode
from tauray.actors.voice.metrics import identifier_errors, normalise, wer
from tauray.actors.voice.profiles import DrawnVoice, SpeechProfile, draw_voice, get_profile
from tauray.actors.voice.seeding import rng_for, stable_seed
from tauray.actors.voice.spoken import speakable
from tauray.results.tables.records.utterance import UtteranceRecord

# Out-of-turn speech a caller may produce mid-utterance (our own words), or a cough.
OUT_OF_TURN: tuple[str, ...] = ("hold on a second", "sorry, one moment", "just a sec", "excuse me", "<cough>")
# Unrelated sentences other voices say to make babble noise (our own words).
_BABBLE_LINES: tuple[str, ...] = (
    "I told her the train would be late again this evening.",
    "Can you pass me the bread and the butter please?",
    "We should paint the kitchen before the summer starts.",
    "The meeting moved to Thursday after lunch.",
)
_ESPEAK_BABBLE: tuple[str, ...] = ("en-us+f3", "en+m2", "en-us+m4", "en-gb-x-rp+f1")


def _babble_voices(tts: CachedTTS) -> tuple[str, ...]:
    """Four voices of the babble: espeak-ng's own four, or the first clear and accented voices of
    another local synthesiser (the people in the room sound like the caller's kind of voice)."""
    if isinstance(tts.engine, EspeakTTS):
        return _ESPEAK_BABBLE
    mixed = list(dict.fromkeys(tts.voices("clear") + tts.voices("accented")))
    return tuple(mixed[i % len(mixed)] for i in range(4))


class SpeechChannel:
    """One profile's channel with its engines; :meth:`carry` takes one utterance across.

    ``tts`` and ``asr`` are engines, specs or model strings (defaults: the packaged neural voices
    and the best packaged Whisper); a synthesiser is put behind the synthesis cache
    (:class:`~tauray.actors.voice.engines.cache.CachedTTS`) unless it is behind one already."""

    def __init__(self, profile: SpeechProfile | str, *, tts: TTS | CachedTTS | SpeechModelSpec | str | None = None,
                 asr: ASR | SpeechModelSpec | str | None = None, seed: int = 0, cpu_threads: int = 1) -> None:
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        if not self.profile.speech:
            raise SpeechConfigError(f"speech profile {self.profile.name!r} has no speech channel (text cells talk "
                                    "in text)")
        self.seed = seed
        if isinstance(tts, CachedTTS):
            self.tts = tts
        else:
            self.tts = CachedTTS(tts) if hasattr(tts, "synth") else make_tts(tts)  # type: ignore[arg-type]
        self.asr: ASR = asr if hasattr(asr, "transcribe") else make_asr(asr, cpu_threads=cpu_threads)  # type: ignore[assignment,arg-type]
        self._babble: dict[int, np.ndarray] = {}
        self._noise_tts: CachedTTS | None = self.tts if getattr(self.tts.engine, "deterministic", False) else None
        self._tts_cost: float | None = 0.0  # what the current utterance's synthesis calls cost

    def voice_for(self, task_id: str, side: Literal["agent", "user"]) -> DrawnVoice:
        """The task's voice on one side under this channel's profile (checked with the engine)."""
        persona = self.profile.agent_persona if side == "agent" else self.profile.persona
        config = draw_voice(self.profile, task_id, self.seed, side=side, voices=self.tts.voices(persona.speaker))
        self.tts.check_voice(config.voice)
        return config

    def _synth(self, text: str, voice: DrawnVoice) -> tuple[np.ndarray, float]:
        """The speaker's audio of ``text`` and the compute it took (0 when the cache had it). Any
        side's text is made speakable first (:func:`~tauray.actors.voice.spoken.speakable`): a model
        may write a screen's glyphs or markup, which no voice says and some synthesisers refuse
        (hibari's number reader stops at a superscript digit)."""
        started = time.perf_counter()
        said = speakable(text)  # said slower where it spells an identifier (Persona.spelling_pace)
        audio, computed = self.tts.synth_cached(said, voice.voice, voice.rate_for(said), voice.pitch, voice.seed)
        if not computed:
            return audio, 0.0
        spent = time.perf_counter() - started
        self._tts_cost = _add(self._tts_cost, _cost(self.tts.price, len(text), audio.size / self.tts.sample_rate))
        return audio, spent

    def babble(self, seed: int) -> np.ndarray:
        """Babble noise: four other voices saying two unrelated sentences each, summed (cached per
        seed). A local synthesiser's own voices (:func:`_babble_voices`); espeak-ng's for a hosted
        one, so a provider is never paid for noise. The sentences are synthesised once (the cache)."""
        if seed not in self._babble:
            if self._noise_tts is None:
                self._noise_tts = CachedTTS(EspeakTTS())
            rng = rng_for("babble", seed)
            tracks = []
            for i, voice in enumerate(_babble_voices(self._noise_tts)):
                line = _BABBLE_LINES[int(rng.integers(len(_BABBLE_LINES)))]
                tracks.append(np.concatenate([self._noise_tts.synth(text, voice, 170, 50, i)
                                              for text in (line, _BABBLE_LINES[i])]))
            n = max(t.size for t in tracks)
            self._babble[seed] = sum(np.roll(np.resize(t, n), int(rng.integers(n))) for t in tracks).astype(np.float32)
        return self._babble[seed]

    def _effects(self, audio: np.ndarray, rate: int, voice: DrawnVoice, rng: np.random.Generator,
                 drawn: dict[str, Any]) -> np.ndarray:
        behaviour = self.profile.behaviour
        if behaviour.out_of_turn_per_min > 0:
            events = int(rng.poisson(behaviour.out_of_turn_per_min * audio.size / rate / 60.0))
            inserted = []
            for _ in range(events):
                what = OUT_OF_TURN[int(rng.integers(len(OUT_OF_TURN)))]
                sound = fx.cough(rate, rng) if what == "<cough>" else self._synth(what, voice)[0]
                audio, at = fx.insert_at(audio, sound, rate, rng)
                inserted.append({"what": what, "at_s": round(at, 3)})
            drawn["out_of_turn"] = inserted
        return self.source_effects(audio, rate, voice, rng, drawn)

    def source_effects(self, audio: np.ndarray, rate: int, voice: DrawnVoice, rng: np.random.Generator,
                       drawn: dict[str, Any]) -> np.ndarray:
        """The profile's effects at the caller's end of the line, in order: muffling, noise (babble
        from the synthesiser's own voices), bursts, dropped frames; each draw from ``rng`` and
        recorded in ``drawn``. The length of ``audio`` is kept. A duplex caller's speech takes
        these too (its out-of-turn speech is a segment of its own there)."""
        eff = self.profile.effects
        if eff.muffle is not None:
            audio, drawn["muffle"] = fx.muffle(audio, rate, eff.muffle, rng)
        if eff.noise is not None:
            kind = voice.noise_kind or eff.noise.kinds[0]
            babble = self.babble(voice.seed) if kind == "babble" else None
            if babble is not None and self._noise_tts is not None and self._noise_tts.sample_rate != rate:
                babble = resample(babble, self._noise_tts.sample_rate, rate)
            audio, drawn["noise"] = fx.add_noise(audio, rate, eff.noise, kind, rng, babble)
        if eff.bursts is not None:
            audio, drawn["bursts"] = fx.add_bursts(audio, rate, eff.bursts, rng)
        if eff.drops is not None:
            audio, drawn["drops"] = fx.drop_frames(audio, rate, eff.drops, rng)
        return audio

    def speak(self, text: str, *, unit_id: str, turn: int, side: Literal["agent", "user"],
              task_id: str | None = None) -> tuple[bytes, dict[str, Any], dict[str, float], DrawnVoice, int]:
        """Text to line audio (μ-law WAV bytes): synthesis, effects, line. Also returns the drawn
        effects, the compute times, the voice and the utterance seed."""
        wav, _, drawn, times, voice, seed = self.speak_both(text, unit_id=unit_id, turn=turn, side=side,
                                                            task_id=task_id)
        return wav, drawn, times, voice, seed

    def speak_both(self, text: str, *, unit_id: str, turn: int, side: Literal["agent", "user"],
                   task_id: str | None = None) -> tuple[bytes, np.ndarray, dict[str, Any], dict[str, float],
                                                        DrawnVoice, int]:
        """Like :meth:`speak`, and also the spoken side: the source audio (synthesis and effects,
        at the synthesiser's rate) before the line, which the run folder keeps next to the line audio."""
        voice = self.voice_for(task_id or unit_id, side)
        seed = stable_seed("utterance", self.profile.name, self.profile.seed, self.seed, unit_id, turn, side)
        rng = np.random.default_rng(seed)
        self._tts_cost = 0.0
        audio, tts_s = self._synth(text, voice)
        started = time.perf_counter()
        drawn: dict[str, Any] = {}
        if side == "user":
            audio = self._effects(audio, self.tts.sample_rate, voice, rng, drawn)
        wav = telephone(audio, self.tts.sample_rate)
        times = {"tts": tts_s, "effects": time.perf_counter() - started, "tts_cost": self._tts_cost}
        return wav, audio, drawn, times, voice, seed

    def hear(self, wav: bytes) -> tuple[str, float]:
        """Line audio to text: μ-law decode, 8 → 16 kHz, recognition; and the compute time."""
        started = time.perf_counter()
        text = self.asr.transcribe(resample(ulaw_decode(wav), LINE_RATE, SAMPLE_RATE))
        return text, time.perf_counter() - started

    def carry(self, text: str, *, unit_id: str, attempt: int = 0, turn: int, side: Literal["agent", "user"],
              clock_s: float = 0.0, task_id: str | None = None) -> tuple[UtteranceRecord, bytes]:
        """One utterance across the channel: its record and its line audio (μ-law WAV bytes).

        ``clock_s`` is where the utterance starts on the conversation's simulated clock; the record's
        ``end_s`` is where the next one may start. ``task_id`` keys the voice (default: the unit)."""
        wav, drawn, times, voice, seed = self.speak(text, unit_id=unit_id, turn=turn, side=side, task_id=task_id)
        heard, asr_s = self.hear(wav)
        return self.record(text, heard, wav, unit_id=unit_id, attempt=attempt, turn=turn, side=side,
                           clock_s=clock_s, drawn=drawn, times={**times, "asr": asr_s}, voice=voice, seed=seed), wav

    def carry_kept(self, text: str, *, keep: bool, unit_id: str, attempt: int = 0, turn: int,
                   side: Literal["agent", "user"], clock_s: float = 0.0,
                   task_id: str | None = None) -> tuple[UtteranceRecord, bytes, dict[str, bytes]]:
        """:meth:`carry`, and with ``keep`` the utterance's audio files: both sides as FLAC named by
        their content (:func:`~tauray.actors.voice.audio_store.audio_files`), the record naming
        them. The one way every speech client (in process or on the pool) makes a kept utterance."""
        wav, spoken, drawn, times, voice, seed = self.speak_both(text, unit_id=unit_id, turn=turn, side=side,
                                                                 task_id=task_id)
        heard, asr_s = self.hear(wav)
        record = self.record(text, heard, wav, unit_id=unit_id, attempt=attempt, turn=turn, side=side,
                             clock_s=clock_s, drawn=drawn, times={**times, "asr": asr_s}, voice=voice, seed=seed)
        if not keep:
            return record, wav, {}
        refs, files = audio_files(wav, spoken, self.tts.sample_rate)
        return record.model_copy(update=refs), wav, files

    def record(self, text: str, heard: str, wav: bytes, *, unit_id: str, attempt: int, turn: int,
               side: Literal["agent", "user"], clock_s: float, drawn: dict[str, Any], times: dict[str, float],
               voice: DrawnVoice, seed: int, audio_ref: str | None = None) -> UtteranceRecord:
        """The utterance's row: what was said, what was heard, what was lost, and what it cost."""
        ids = identifier_errors(text, heard)
        seconds = max(0.0, (len(wav) - 44) / LINE_RATE)  # μ-law: one byte a sample after the WAV header
        tts_cost = times.get("tts_cost", _cost(self.tts.price, len(text), seconds))
        return UtteranceRecord(
            unit_id=unit_id, attempt=attempt, turn=turn, side=side, profile=self.profile.name,
            spoken_text=text, heard_text=heard, heard_differs=normalise(text) != normalise(heard), wer=wer(text, heard),
            words_spoken=len(text.split()),
            identifiers_spoken=len(ids.spoken), identifiers_lost=len(ids.lost),
            lost_identifiers=[{"kind": i.kind, "spoken": i.value} for i in ids.lost],
            identifiers_heard=[{"kind": i.kind, "value": i.value} for i in ids.heard],
            phone_numbers_spoken=ids.count("phone"), phone_numbers_lost=ids.count("phone", lost=True),
            account_ids_spoken=ids.count("account_id"), account_ids_lost=ids.count("account_id", lost=True),
            line_ids_spoken=ids.count("line_id"), line_ids_lost=ids.count("line_id", lost=True),
            digits_spoken=ids.digits_spoken, digit_errors=ids.digit_errors,
            audio_seconds=round(seconds, 4), start_s=clock_s, end_s=clock_s + round(seconds, 4),
            tts_seconds=times.get("tts", 0.0), effects_seconds=times.get("effects", 0.0),
            asr_seconds=times.get("asr", 0.0), tts_cost_usd=_usd(tts_cost),
            asr_cost_usd=_usd(_cost(self.asr.price, 0, seconds)), tts_model=self.tts.name,
            voice=voice.voice, asr_model=self.asr.name, asr_decoding=getattr(self.asr, "decoding", ""),
            effects=json.dumps(drawn, sort_keys=True), seed=seed, audio_ref=audio_ref)


def _cost(price: tuple[str, float] | None, chars: int, seconds: float) -> float | None:
    """One call's cost at ``price`` (:func:`~tauray.actors.voice.spec.speech_price`); None: unknown."""
    if price is None:
        return None
    unit, usd = price
    return 0.0 if unit == "none" else usd * (chars if unit == "char" else seconds)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 8)
