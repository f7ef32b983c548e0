"""The work unit: one conversation to run, as the driver hands it to a coordinator.

It lives with the actors that take it (the pipeline builds units, :mod:`tauray.pipeline.plan`
holds the one rule for their ids and seeds), so the layers below the pipeline never import it.
Its model specs and judge configs are typed records, validated once when the plan is built;
the hosts and the judge take them as they come.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from tauray.actors.judge.config import JudgeConfig
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.speech.profiles import SpeechProfile
from tauray.actors.speech.spec import SpeechModelSpec, as_spec
from tauray.scenarios.model import Frozen


class VoiceSettings(Frozen):
    """How a voice cell's conversation crosses the speech channel (None on a unit: text)."""

    profile: str = Field(description="Speech profile (actors/speech/profiles.py), or a custom level's name.")
    custom: SpeechProfile | None = Field(default=None, description="A custom level's profile (a sweep's "
                                         "[voice.levels]); None for a built-in profile, found by name.")
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

    @field_validator("tts", "asr", mode="before")
    @classmethod
    def _spec(cls, value: Any, info: Any) -> Any:
        return as_spec(value, info.field_name) if isinstance(value, str) else value

    def heard_as_audio(self, side: str) -> bool:
        """Whether what ``side`` says reaches its listener as the line audio itself (the caller's
        words to an audio-in agent), not as the recognised text."""
        return self.audio_in and side == "user"


class WorkUnit(Frozen):
    """One conversation to run: what the driver sends a coordinator (a record, read by attribute)."""

    unit_id: str = Field(description="Deterministic id; also the conversation id.")
    run_id: str = Field(description="Run the unit belongs to (the configuration's name).")
    sweep_id: str = Field(description="Sweep the unit belongs to: the same name (a run is a sweep of one cell).")
    cell_id: str = Field(description="Cell of the sweep (models and options).")
    scenario: str = Field(description="Scenario name.")
    trial: int = Field(ge=0, description="Trial index.")
    seed: int = Field(description="Seed derived from the unit id (and the run's base seed).")
    agent: ModelSpec = Field(description="Agent model spec (its model a reference policy, oracle, for no model).")
    user: ModelSpec = Field(description="User-simulator model spec (its model a reference policy, scripted, for "
                            "no model).")
    judge_configs: list[JudgeConfig] = Field(
        default_factory=list, description="Judge configs (model spec and prompt) the cell's conversations are "
        "to be judged with, after the conversation.")
    judge_gates: bool = Field(default=False, description="The first overall judge's verdict gates success.")
    attempt: int = Field(default=0, ge=0, description="Scheduler attempt (0 = first); retries after an actor "
                         "died get the same id and seed.")
    max_steps: int = Field(ge=1, description="Policy replies allowed before the conversation is cut.")
    max_errors: int = Field(ge=1, description="Tool errors allowed before the conversation is cut.")
    audit: bool = Field(default=False, description="Audit the finished conversation (who failed) on the "
                        "coordinator, after judging: its findings and attribution travel with the result.")
    voice: VoiceSettings | None = Field(default=None, description="Voice mode of the unit's cell; None: a text "
                                        "conversation, as without voice mode.")


__all__ = ["VoiceSettings", "WorkUnit"]
