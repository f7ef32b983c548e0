"""Speech profiles: how hard the channel between caller and agent is, as a sweep axis.

The profiles follow τ-Voice's speech-complexity levels (τ³-bench): ``control`` is clean
speech over a telephone line; ``regular`` adds its published source effects (background
noise at 15 dB SNR drifting ±3 dB, Poisson noise bursts at 1/min at −5..10 dB SNR, muffling
of 20% of utterances over one 500 ms stretch low-passed at 1500 Hz, Gilbert–Elliott frame
drops at 2% loss with 100 ms mean bursts), accented speaker personas and out-of-turn speech
at 0.7/min. The single-factor ablations (``audio``, ``accents``, ``behaviour``) and their
pairs switch on one or two of the three factors. ``text`` is no speech at all: today's
text-only conversation. Every task draws its caller's voice from a stable seed
(:func:`draw_voice`), as τ³ pre-samples one per task and level; the draw depends on the kind of
speaker (clear or accented), not on the profile, so the profiles of one kind hear the same
caller and differ only by what the profile adds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.rules import SPELLED_RUN
from tauray.actors.voice.seeding import rng_for, stable_seed

_FROZEN = ConfigDict(frozen=True, extra="forbid")

class NoiseParams(BaseModel):
    """Background noise: synthetic coloured noise or babble under the whole utterance."""

    model_config = _FROZEN
    snr_db: float = Field(15.0, ge=-10.0, le=60.0, description="Mean signal-to-noise ratio, dB.")
    drift_db: float = Field(3.0, ge=0.0, le=20.0, description="The SNR drifts within ±drift_db over the utterance.")
    kinds: tuple[str, ...] = Field(("pink", "brown", "babble"), min_length=1,
                                   description="Noise kinds a task draws from: white, pink, brown, babble.")

    @model_validator(mode="after")
    def _known(self) -> NoiseParams:
        bad = [k for k in self.kinds if k not in NOISE_KINDS]
        if bad:
            raise ValueError(f"unknown noise kind {bad[0]!r}; known: {', '.join(NOISE_KINDS)}")
        return self


NOISE_KINDS: Final = ("white", "pink", "brown", "babble")


class BurstParams(BaseModel):
    """Noise bursts: a Poisson process over the utterance, each burst at its own SNR."""

    model_config = _FROZEN
    rate_per_min: float = Field(1.0, ge=0.0, le=60.0, description="Mean bursts per minute of speech.")
    snr_db_low: float = Field(-5.0, ge=-20.0, le=40.0, description="Lowest SNR a burst is drawn at, dB.")
    snr_db_high: float = Field(10.0, ge=-20.0, le=40.0, description="Highest SNR a burst is drawn at, dB.")
    seconds: float = Field(0.5, gt=0.0, le=5.0, description="Length of one burst, seconds.")

    @model_validator(mode="after")
    def _ordered(self) -> BurstParams:
        if self.snr_db_low > self.snr_db_high:
            raise ValueError(f"snr_db_low {self.snr_db_low} is above snr_db_high {self.snr_db_high}")
        return self


class MuffleParams(BaseModel):
    """Muffled speech: on a share of utterances, one stretch low-passed (a hand over the phone)."""

    model_config = _FROZEN
    probability: float = Field(0.2, ge=0.0, le=1.0, description="Share of utterances muffled.")
    seconds: float = Field(0.5, gt=0.0, le=10.0, description="Length of the muffled stretch, seconds.")
    cutoff_hz: float = Field(1500.0, ge=100.0, le=3400.0, description="Low-pass cut-off of the stretch, Hz.")


class DropParams(BaseModel):
    """Dropped audio frames from a two-state Gilbert–Elliott model (good/bad channel)."""

    model_config = _FROZEN
    loss: float = Field(0.02, ge=0.0, lt=0.5, description="Target share of frames lost.")
    mean_burst_ms: float = Field(100.0, gt=0.0, le=2000.0, description="Mean length of one loss burst, ms.")
    frame_ms: float = Field(20.0, gt=0.0, le=100.0, description="Frame length, ms (a telephony packet).")


class Effects(BaseModel):
    """The source effects of a profile; None switches an effect off."""

    model_config = _FROZEN
    noise: NoiseParams | None = Field(None, description="Background noise, or None.")
    bursts: BurstParams | None = Field(None, description="Noise bursts, or None.")
    muffle: MuffleParams | None = Field(None, description="Muffled stretches, or None.")
    drops: DropParams | None = Field(None, description="Dropped frames, or None.")


class Behaviour(BaseModel):
    """Caller behaviour the half-duplex channel can carry: speech out of turn."""

    model_config = _FROZEN
    out_of_turn_per_min: float = Field(0.0, ge=0.0, le=30.0, description="Mean out-of-turn events (a cough, "
                                       "'hold on a second') per minute of the caller's speech, inserted in the audio.")


Speaker = Literal["clear", "accented", "agent"]


# A caller spells an identifier at this fraction of their rate, as people slow down to spell
# (chosen on the tuning draw, measured on a frozen one: docs/voice.md, "Spelling pace").
SPELLING_PACE: Final = 0.85


class Persona(BaseModel):
    """Who speaks: which kind of speaker (the synthesiser has voices of each kind,
    :meth:`~tauray.actors.voice.engines.TTS.voices`), and the range of speaking rates."""

    model_config = _FROZEN
    speaker: Speaker = Field("clear", description="'clear' (plain American English), 'accented' (other accents "
                             "of English) or 'agent' (the agent's voice): the kind of voice drawn.")
    rate_wpm: tuple[int, int] = Field((155, 180), description="Speaking rate range, words per minute (170: a "
                                      "voice's natural pace).")
    pitch: tuple[int, int] = Field((40, 60), description="espeak-ng pitch range (0-100); the neural voices have "
                                   "their own.")
    spelling_pace: float = Field(SPELLING_PACE, ge=0.5, le=1.0, description="An utterance that spells an "
                                 "identifier is said at this fraction of the speaker's rate, as people slow down "
                                 "to spell (1.0: no slower).")


class SpeechProfile(BaseModel):
    """One speech profile: the effects, personas and behaviour of a voice cell, all seeded."""

    model_config = _FROZEN
    name: str = Field(min_length=1, description="Profile name, part of a voice cell's identity.")
    description: str = Field(description="What the profile stands for, in one sentence.")
    speech: bool = Field(True, description="False for `text`: no speech channel at all.")
    effects: Effects = Field(default_factory=Effects, description="Source effects applied to the caller's speech.")
    persona: Persona = Field(default_factory=Persona, description="Caller voices and rates.")
    agent_persona: Persona = Field(default_factory=lambda: Persona(speaker="agent", rate_wpm=(170, 170),
                                                                   pitch=(50, 50), spelling_pace=1.0),
                                   description="The agent's voice: one clear voice in every profile.")
    behaviour: Behaviour = Field(default_factory=Behaviour, description="Caller behaviour.")
    seed: int = Field(0, ge=0, description="Profile seed mixed into every draw (change it for a new sample).")
    version: int = Field(1, ge=1, description="The built-in profile's revision, part of its cells' identity from "
                         "2 on: a profile whose definition changes makes new cells, so a resumed run never mixes "
                         "two definitions (2: the caller slows down to spell).")


def _audio() -> Effects:
    return Effects(noise=NoiseParams(), bursts=BurstParams(), muffle=MuffleParams(), drops=DropParams())


_ACCENTED = Persona(speaker="accented")
_BEHAVIOUR = Behaviour(out_of_turn_per_min=0.7)


def _make(name: str, audio: bool, accents: bool, behaviour: bool, description: str) -> SpeechProfile:
    return SpeechProfile(name=name, description=description, effects=_audio() if audio else Effects(),
                         persona=_ACCENTED if accents else Persona(), behaviour=_BEHAVIOUR if behaviour else Behaviour(),
                         version=2)


PROFILES: Final[dict[str, SpeechProfile]] = {
    "text": SpeechProfile(name="text", description="No speech: the conversation is text, as without voice mode.",
                          speech=False),
    "control": _make("control", False, False, False, "Clean American speech over a telephone line."),
    "regular": _make("regular", True, True, True, "τ-Voice's realistic level: noisy line, accents, out-of-turn speech."),
    "audio": _make("audio", True, False, False, "Ablation: the audio effects only."),
    "accents": _make("accents", False, True, False, "Ablation: accented personas only."),
    "behaviour": _make("behaviour", False, False, True, "Ablation: out-of-turn speech only."),
    "audio+accents": _make("audio+accents", True, True, False, "Ablation pair: audio effects and accents."),
    "audio+behaviour": _make("audio+behaviour", True, False, True, "Ablation pair: audio effects and behaviour."),
    "accents+behaviour": _make("accents+behaviour", False, True, True, "Ablation pair: accents and behaviour."),
}


def get_profile(name: str) -> SpeechProfile:
    """The named profile, or a one-line error naming the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise SpeechConfigError(f"speech profile {name!r} is unknown; known: {', '.join(PROFILES)}") from None


class DrawnVoice(BaseModel):
    """The voice one task draws for one side (who speaks: voice, rate, pitch, noise): the same for
    every turn. Not a profile: a profile is what the draw is made from."""

    model_config = _FROZEN
    voice: str = Field(description="The synthesiser's voice, e.g. 'kokoro/jf_alpha' or espeak-ng's 'en-us+m3'.")
    rate_wpm: int = Field(ge=80, le=450, description="Speaking rate, words per minute.")
    pitch: int = Field(ge=0, le=100, description="espeak-ng pitch (0-100).")
    noise_kind: str | None = Field(description="Background noise kind, when the profile has noise.")
    seed: int = Field(ge=0, description="The speaker's synthesis seed (stable hash of the draw's key).")
    spelling_rate_wpm: int | None = Field(None, ge=80, le=450, description="Rate while spelling an identifier "
                                          "(None: the speaking rate).")

    def rate_for(self, text: str) -> int:
        """The rate this speaker says ``text`` at: the spelling rate where it spells an identifier
        (:data:`~tauray.actors.voice.rules.SPELLED_RUN`), else the speaking rate."""
        if self.spelling_rate_wpm is not None and SPELLED_RUN.search(text):
            return self.spelling_rate_wpm
        return self.rate_wpm


def draw_voice(profile: SpeechProfile | str, task_id: str, seed: int = 0, *, side: str = "user",
               voices: Sequence[str]) -> DrawnVoice:
    """The voice of one task's side under a profile, drawn from ``voices`` (the synthesiser's voices
    of the persona's kind) by a stable seed: the same task, kind and seed give the same voice on
    every machine and run. The profile's name is not in the key: a task's caller is the same
    person in every profile of its kind (clear or accented), so profiles compare like for like
    and the synthesis is computed once (:mod:`tauray.actors.voice.engines.cache`)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    persona = prof.agent_persona if side == "agent" else prof.persona
    if not voices:
        raise SpeechConfigError(f"the synthesiser has no {persona.speaker} voice")
    key = ("voice", persona.speaker, prof.seed, task_id, seed, side)
    rng = rng_for(*key)
    voice = voices[int(rng.integers(len(voices)))]
    rate = int(rng.integers(persona.rate_wpm[0], persona.rate_wpm[1] + 1))
    pitch = int(rng.integers(persona.pitch[0], persona.pitch[1] + 1))
    noise = prof.effects.noise
    kind = None
    if noise is not None and side == "user":
        kind = noise.kinds[int(rng_for("noise", prof.seed, task_id, seed).integers(len(noise.kinds)))]
    spelling = max(80, round(rate * persona.spelling_pace)) if persona.spelling_pace < 1.0 else None
    return DrawnVoice(voice=voice, rate_wpm=rate, pitch=pitch, noise_kind=kind, seed=stable_seed(*key),
                      spelling_rate_wpm=spelling)


EFFECTS: Final = tuple(Effects.model_fields)


def profile_with(base: str, *, name: str | None = None, effects: dict[str, dict[str, object] | None] | None = None,
                 out_of_turn_per_min: float | None = None, seed: int | None = None) -> SpeechProfile:
    """A named profile with some effects changed (a sweep file's custom level): ``effects`` maps
    an effect (noise, bursts, muffle, drops) to its parameters, or None to switch it off. A
    one-line error names an unknown effect or parameter, or a value out of range."""
    prof = get_profile(base)
    changed: dict[str, object] = {}
    for effect, params in (effects or {}).items():
        if effect not in EFFECTS:
            raise SpeechConfigError(f"speech effect {effect!r} is unknown; known: {', '.join(EFFECTS)}")
        if params is None:
            changed[effect] = None
            continue
        model = Effects.model_fields[effect].annotation.__args__[0]  # type: ignore[union-attr]
        current = getattr(prof.effects, effect)
        try:
            changed[effect] = model(**{**(current.model_dump() if current else {}), **params})
        except ValueError as exc:
            first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}  # type: ignore[attr-defined]
            field = ".".join(str(p) for p in first.get("loc", ()))
            raise SpeechConfigError(f"speech effect {effect}{'.' + field if field else ''}: {first['msg']}") from None
    update: dict[str, object] = {"effects": prof.effects.model_copy(update=changed)}
    if name:
        update["name"] = name
    if out_of_turn_per_min is not None:
        if not 0 <= out_of_turn_per_min <= 30:
            raise SpeechConfigError(f"out_of_turn_per_min {out_of_turn_per_min} is out of range 0..30")
        update["behaviour"] = Behaviour(out_of_turn_per_min=out_of_turn_per_min)
    if seed is not None:
        update["seed"] = seed
    return prof.model_copy(update=update)
