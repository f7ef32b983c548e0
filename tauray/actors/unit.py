"""The work unit: one conversation to run, as the driver hands it to a coordinator.

It lives with the actors that take it (the pipeline builds units, :mod:`tauray.pipeline.plan`
holds the one rule for their ids and seeds), so the layers below the pipeline never import it.
Its model specs and judge configs are typed records, validated once when the plan is built;
the hosts and the judge take them as they come.
"""

from __future__ import annotations

from pydantic import Field

from tauray.actors.judge.config import JudgeConfig
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.voice.config import VoiceSettings
from tauray.scenarios.model import Frozen


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


__all__ = ["WorkUnit"]
