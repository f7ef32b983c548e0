"""A sweep's voice mode (``[voice]`` in a sweep file, docs/voice.md) and what a voice cell's
units carry of it.

:class:`VoiceConfig` is the sweep's section: the speech profiles as a sweep axis, custom
levels written as changes to a built-in profile, the speech models bound to the ``tts`` and
``asr`` roles, and the checks a voice sweep gets at load, before any model call and before
anything is written (one line each, naming the field). Each profile name is resolved once,
here, into its :class:`~tauray.actors.voice.profiles.SpeechProfile`, which is what a
cell's :class:`VoiceSettings`, the speech pool and the channel carry from then on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.voice.duplex.config import DUPLEX, HALF, TURN_TAKING, DuplexSettings, TurnTaking, duplex_settings
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.live.agent import check_phone_agents
from tauray.actors.voice.profiles import PROFILES, SpeechProfile, get_profile, profile_with
from tauray.actors.voice.spec import DEFAULT_TTS, SpeechModelSpec, as_spec, check_spec
from tauray.scenarios.conventions import ORACLE

_STRICT = ConfigDict(frozen=True, extra="forbid")
TEXT_PROFILE = "text"  # the speech profile of a text-only cell (no speech channel)
OFF = "off"  # how a sweep file switches a base profile's effect off (TOML has no null)


class VoiceLevel(BaseModel):
    """How a sweep file writes a custom profile (``[voice.levels.NAME]``): a built-in profile with
    some effects changed (:func:`~tauray.actors.voice.profiles.profile_with`); its name goes in
    ``profiles`` like any, and :meth:`VoiceConfig.profile` resolves it."""

    model_config = _STRICT
    base: str = Field(description="The built-in profile it starts from, e.g. 'regular'.")
    effects: dict[str, dict[str, Any] | Literal["off"]] = Field(
        default_factory=dict, description="Effect (noise, bursts, muffle, drops) -> the parameters to change, "
        "e.g. {noise = {snr_db = 10}}, or \"off\" to switch it off.")
    out_of_turn_per_min: float | None = Field(None, description="Out-of-turn events per minute (0..30).")
    seed: int | None = Field(None, ge=0, description="Profile seed (a new sample of voices and effects).")

    def build(self, name: str) -> SpeechProfile:
        effects = {k: None if v == OFF else v for k, v in self.effects.items()}
        return profile_with(self.base, name=name, effects=effects, out_of_turn_per_min=self.out_of_turn_per_min,
                            seed=self.seed)


class VoiceConfig(BaseModel):
    """Voice mode: every cell runs once per speech profile; a profile other than ``text``
    carries every utterance over a speech channel."""

    model_config = _STRICT
    profiles: list[str] = Field(default_factory=lambda: [TEXT_PROFILE], min_length=1, description="Speech "
                                "profiles, a sweep axis: 'text' (no speech), 'control', 'regular', the ablations "
                                "'audio', 'accents', 'behaviour' and their pairs (tauray/actors/voice/profiles.py), or a "
                                "custom level of [voice.levels].")
    levels: dict[str, VoiceLevel] = Field(default_factory=dict, description="Custom levels by name: a built-in "
                                          "profile with some effects changed.")
    tts: str = Field(default=DEFAULT_TTS, min_length=1, description="Speech synthesis model bound to the tts "
                     "role: offline 'local/neural' (the packaged neural voices, default), 'local/piper', "
                     "'local/hibari', 'local/kokoro' or 'local/espeak-ng' (robotic, fastest), or the name of a "
                     "[models] entry with role = \"tts\" (a hosted engine through litellm speech).")
    asr: str = Field(default="local/whisper-tiny.en", min_length=1, description="Speech recogniser bound to the asr "
                     "role: a packaged offline model ('local/...') or the name of a [models] entry with role = "
                     "\"asr\" (litellm transcription, or a local model with its device and beam).")
    audio_agents: list[str] = Field(default_factory=list, description="Agent model names that take the caller's "
                                    "audio themselves (audio-in agents, litellm audio message parts); the other "
                                    "agents are cascaded: they read the recognised text.")
    hear_agent: bool = Field(default=False, description="The user simulator hears the agent through the channel "
                             "too (default: it reads the agent's own words, as τ-Voice's does); each utterance "
                             "where the two differ is marked (heard_differs).")
    keep_audio: Literal["none", "failed", "all"] = Field(default="failed", description="Which conversations' "
                                                         "audio the run folder keeps (content-addressed FLAC).")
    turn_taking: list[str] = Field(default_factory=lambda: [HALF], min_length=1, description="Turn-taking modes, "
                                   "a sweep axis: 'half' (each side waits for the other's whole utterance; the "
                                   "default, its cells keep their ids) and 'duplex' (both sides on one clock, "
                                   "talking over each other; docs/duplex.md). Text cells run 'half' only.")
    duplex_rules: dict[str, Any] = Field(default_factory=dict, description="Duplex cells: the caller's turn-taking "
                                         "rules (tauray/actors/voice/duplex/caller.py CallerRules), e.g. "
                                         "{respond_after_silence_s = 0.5}.")
    duplex_pipeline: dict[str, Any] | list[dict[str, Any]] = Field(
        default_factory=dict, description="Duplex cells: the agent pipeline's knobs (duplex/pipeline.py "
        "PipelineSettings), e.g. {end_of_turn_ms = 900, vad = \"energy\"}; a list of such tables is a sweep "
        "axis: every duplex cell runs once per pipeline.")
    duplex_clock: dict[str, Any] = Field(default_factory=dict, description="Duplex cells: the clock "
                                         "(duplex/clock.py ClockSettings), e.g. {tick_ms = 200}.")

    @property
    def duplex(self) -> list[DuplexSettings]:
        """The duplex cells' settings, one per pipeline of ``duplex_pipeline`` (empty when
        turn_taking has no 'duplex'); checked at load."""
        if DUPLEX not in self.turn_taking:
            return []
        if not isinstance(self.duplex_pipeline, list):
            return [duplex_settings(self.duplex_rules, self.duplex_pipeline, self.duplex_clock,
                                    hear_agent=self.hear_agent)]
        if not self.duplex_pipeline:
            raise SpeechConfigError("voice.duplex_pipeline: an empty list; give one table or several")
        variants = []
        for i, pipeline in enumerate(self.duplex_pipeline):
            try:
                variants.append(duplex_settings(self.duplex_rules, pipeline, self.duplex_clock,
                                                hear_agent=self.hear_agent))
            except SpeechConfigError as exc:
                raise SpeechConfigError(str(exc).replace("voice.duplex_pipeline", f"voice.duplex_pipeline[{i}]", 1)) \
                    from None
        if len({v.pipeline.identity() for v in variants}) != len(variants):
            raise SpeechConfigError("voice.duplex_pipeline: two entries are the same pipeline (defaults filled in)")
        return variants

    @property
    def speaks(self) -> bool:
        """Whether any profile of the sweep carries speech."""
        return any(p != TEXT_PROFILE for p in self.profiles)

    def profile(self, name: str) -> SpeechProfile:
        """The profile ``name`` stands for: a custom level's, else the built-in one."""
        return self.levels[name].build(name) if name in self.levels else get_profile(name)


class VoiceSettings(BaseModel):
    """How a voice cell's conversation crosses the speech channel (None on a unit: text)."""

    model_config = _STRICT
    profile: SpeechProfile = Field(description="The cell's speech profile (a name resolves to the built-in one).")
    tts: SpeechModelSpec = Field(description="Speech synthesis model bound to the tts role (a model string "
                                 "becomes its spec).")
    asr: SpeechModelSpec = Field(description="Speech recogniser bound to the asr role (likewise).")
    audio_in: bool = Field(default=False, description="The agent takes the caller's audio itself (audio-in); "
                           "otherwise it reads the recognised text (cascaded).")
    hear_agent: bool = Field(default=False, description="The user simulator hears the agent through the channel "
                             "too, instead of reading the agent's own words.")
    keep_audio: str = Field(default="failed", description="Which conversations' audio is kept: none, failed, all.")
    prompts: dict[str, str] = Field(default_factory=dict, description="Voice prompt ids and versions the sides got, "
                                    "side -> 'id@version#hash'.")
    text_cell_id: str | None = Field(default=None, description="Id of the cell's text twin (the same cell without "
                                     "the speech profile): the voice cell's units take their seeds from its units, "
                                     "and voice is compared with text per twin.")
    turn_taking: TurnTaking = Field(default="half", description="'half': turn by turn over the speech channel; "
                                    "'duplex': both sides on one clock (docs/duplex.md).")
    duplex: DuplexSettings | None = Field(default=None, description="A duplex cell's caller rules, agent pipeline "
                                          "and clock; None in a half-duplex cell.")

    @field_validator("profile", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        return get_profile(value) if isinstance(value, str) else value

    @field_validator("tts", "asr", mode="before")
    @classmethod
    def _spec(cls, value: Any, info: Any) -> Any:
        return as_spec(value, info.field_name) if isinstance(value, str) else value

    @property
    def custom(self) -> bool:
        """A custom level (a built-in profile is named by its name alone in a cell's identity)."""
        return PROFILES.get(self.profile.name) != self.profile

    def heard_as_audio(self, side: str) -> bool:
        """Whether what ``side`` says reaches its listener as the line audio itself (the caller's
        words to an audio-in agent), not as the recognised text."""
        return self.audio_in and side == "user"


def _check_profiles(v: VoiceConfig) -> None:
    """Every profile known (built in, or a custom level), listed once; every custom level buildable."""
    for name, level in v.levels.items():
        if name in PROFILES:
            raise ValueError(f"voice.levels.{name}: a built-in profile has that name; choose another")
        if level.base not in PROFILES or level.base == TEXT_PROFILE:
            raise ValueError(f"voice.levels.{name}.base: expected a built-in speech profile, got {level.base!r}; "
                             f"known: {', '.join(p for p in PROFILES if p != TEXT_PROFILE)}")
        try:
            level.build(name)
        except ValueError as exc:
            raise ValueError(f"voice.levels.{name}: {exc}") from None
    for i, name in enumerate(v.profiles):
        if name not in PROFILES and name not in v.levels:
            raise ValueError(f"voice.profiles[{i}]: unknown speech profile {name!r}; known: "
                             f"{', '.join([*PROFILES, *v.levels])}")
    if len(set(v.profiles)) != len(v.profiles):
        raise ValueError(f"voice.profiles: expected distinct profiles, got {v.profiles}")


def _check_turn_taking(v: VoiceConfig) -> None:
    """Known, distinct turn-taking modes; duplex settings only with 'duplex', parsed (one line
    naming the field), with a speech profile and no audio-in agent (it takes whole utterances, so
    it cannot stream)."""
    for i, mode in enumerate(v.turn_taking):
        if mode not in TURN_TAKING:
            raise ValueError(f"voice.turn_taking[{i}]: unknown turn-taking {mode!r}; known: {', '.join(TURN_TAKING)}")
    if len(set(v.turn_taking)) != len(v.turn_taking):
        raise ValueError(f"voice.turn_taking: expected distinct modes, got {v.turn_taking}")
    if DUPLEX not in v.turn_taking:
        for field in ("duplex_rules", "duplex_pipeline", "duplex_clock"):
            if getattr(v, field):
                raise ValueError(f"voice.{field}: set, but turn_taking has no 'duplex'")
        return
    if not v.speaks:
        raise ValueError("voice.turn_taking: 'duplex' needs a speech profile other than 'text'")
    for name in v.audio_agents:
        raise ValueError(f"voice.turn_taking: the audio-in agent {name!r} cannot stream (it takes whole "
                         "utterances); run it in 'half' or drop it from audio_agents")
    try:
        v.duplex
    except SpeechConfigError as exc:
        raise ValueError(str(exc)) from None


def check_voice(cfg: Any) -> None:
    """Voice settings the run can honour (``cfg``: the :class:`~tauray.pipeline.config.SweepConfig`),
    checked at load: the profiles and custom levels are known and valid, a phone bot is an agent of
    duplex cells only (:mod:`.live.agent`), the speech models bound to tts and asr are known, speech entries of [models] are bound to no other role, a local
    engine's package is installed (the message names the install command), and an audio-in
    agent is a model litellm says takes audio."""
    v = cfg.voice
    _check_profiles(v)
    _check_turn_taking(v)
    check_phone_agents(cfg)
    for field, names in (("agents", cfg.agents), ("users", cfg.users), ("judges", [j.model for j in cfg.judge_list])):
        for i, name in enumerate(names):
            if name in cfg.models and cfg.models[name].speech is not None:
                raise ValueError(f"{field}[{i}]: {name!r} is a speech model (role {cfg.models[name].speech.role}); "
                                 "bind it in [voice] instead")
    for role in ("tts", "asr"):
        name = getattr(v, role)
        entry = cfg.models.get(name)
        if not name.startswith("local/") and entry is None:
            raise ValueError(f"voice.{role}: unknown speech model {name!r}; expected 'local/...' or a name from "
                             f"[models] ({', '.join(sorted(cfg.models)) or 'none defined'})")
        if entry is not None and (entry.speech is None or entry.speech.role != role):
            raise ValueError(f"voice.{role}: model {name!r} is not bound to the {role} role (its [models] entry "
                             f"needs role = \"{role}\")")
        if v.speaks:  # a text-only sweep needs no speech package
            try:
                check_spec(cfg.speech_spec(role))
            except ValueError as exc:
                raise ValueError(f"voice.{role}: {exc}") from None
    for i, name in enumerate(v.audio_agents):
        if name not in cfg.agents or name == ORACLE:
            raise ValueError(f"voice.audio_agents[{i}]: {name!r} is not a model among the agents")
        if not v.speaks:
            raise ValueError(f"voice.audio_agents[{i}]: an audio-in agent needs a speech profile other than 'text'")
        if not takes_audio(cfg.models[name].spec):
            raise ValueError(f"voice.audio_agents[{i}]: model {cfg.models[name].model!r} takes no audio input "
                             "(litellm's model info has no supports_audio_input for it)")


def takes_audio(spec: dict[str, Any]) -> bool:
    """Whether litellm says a model accepts audio message parts; the local test endpoint's
    audio behaviour (``audio-*`` models on it) counts as one that does."""
    model = str(spec.get("model", ""))
    if model.split("/", 1)[-1].startswith("audio-") and (spec.get("api_base") or "").startswith("http://127.0.0.1"):
        return True
    import litellm  # lazy: ~1 s to import, only for sweeps with audio-in agents

    try:
        return bool(litellm.supports_audio_input(model=model))
    except Exception:  # litellm raises for a model it has no info on: it does not say the model takes audio
        return False


__all__ = ["TEXT_PROFILE", "VoiceConfig", "VoiceLevel", "VoiceSettings", "check_voice", "takes_audio"]
