"""Work units: one conversation to run, with a deterministic id and seed.

The id hashes the cell configuration (models and options), the scenario and
the trial, so a rerun of the same unit has the same id (resume skips it) and
the same seed (the models are asked the same thing).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import Field

from tauray.scenarios.model import Frozen


class WorkUnit(Frozen):
    unit_id: str = Field(description="Deterministic id; also the conversation id.")
    run_id: str = Field(description="Run the unit belongs to.")
    sweep_id: str | None = Field(default=None, description="Sweep, when run from a sweep file.")
    cell_id: str | None = Field(default=None, description="Cell of the sweep (models and options).")
    scenario: str = Field(description="Scenario name.")
    trial: int = Field(ge=0, description="Trial index.")
    seed: int = Field(description="Seed derived from the unit id (and the run's base seed).")
    agent: dict[str, Any] = Field(description="Agent ModelSpec as a dict (or a reference policy).")
    user: dict[str, Any] = Field(description="User-simulator ModelSpec as a dict (or a reference policy).")
    judge_model: str | None = Field(default=None, description="Judge model, when a judge is configured.")
    judge_configs: list[dict[str, Any]] = Field(
        default_factory=list, description="Judge configs (model spec and prompt) the cell's conversations are "
        "to be judged with; carried as data, judged after the conversation.")
    attempt: int = Field(default=0, ge=0, description="Scheduler attempt (0 = first); retries after an actor "
                         "died get the same id and seed.")
    max_steps: int = Field(ge=1, description="Policy replies allowed before the conversation is cut.")
    max_errors: int = Field(ge=1, description="Tool errors allowed before the conversation is cut.")


# ModelSpec fields that say how to reach or pace a model, not what it is asked: changing
# them (a new endpoint port, a higher rate limit) must not change unit ids, or a resumed
# sweep would redo finished work.
OPERATIONAL_FIELDS = frozenset({"api_base", "api_key_env", "concurrency", "rpm", "tpm", "timeout", "num_retries"})


def model_identity(spec: dict[str, Any]) -> dict[str, Any]:
    """The part of a model spec that decides what the model is asked (for ids)."""
    from tauray.actors.llm import ModelSpec

    model = ModelSpec.model_validate(spec)
    full = model.model_dump()
    if model.serve is None:  # ids of models that are not served stay what they were
        full.pop("serve", None)
    else:  # replicas, placement and timeouts do not change the answers either
        full["serve"] = model.serve.identity()
    return {k: v for k, v in full.items() if k not in OPERATIONAL_FIELDS}


def cell_id(cell: dict[str, Any]) -> str:
    blob = json.dumps(cell, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def unit_id(cell: str, scenario: str, trial: int) -> str:
    return hashlib.sha256(f"{cell}|{scenario}|{trial}".encode()).hexdigest()[:20]


def unit_seed(uid: str, base_seed: int) -> int:
    return (int(uid[:8], 16) + base_seed) % (2**31 - 1)


def make_units(run_id: str, scenarios: list[str], trials: int, agent: dict[str, Any], user: dict[str, Any],
               max_steps: int, max_errors: int, base_seed: int = 0, sweep_id: str | None = None,
               judge_model: str | None = None) -> list[WorkUnit]:
    cell = cell_id({"agent": agent, "user": user, "judge": judge_model, "max_steps": max_steps,
                    "max_errors": max_errors, "seed": base_seed})
    units = []
    for trial in range(trials):
        for name in scenarios:
            uid = unit_id(cell, name, trial)
            units.append(WorkUnit(unit_id=uid, run_id=run_id, sweep_id=sweep_id, cell_id=cell, scenario=name,
                                  trial=trial, seed=unit_seed(uid, base_seed), agent=agent, user=user,
                                  judge_model=judge_model, max_steps=max_steps, max_errors=max_errors))
    return units
