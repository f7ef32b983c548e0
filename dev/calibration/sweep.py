"""The calibration sweep: every fault class and hard negative of the endpoint's
``faulty-user`` behaviour, and the clean writing customer, against the writing agent
(the scenario's reference steps), on the telecom split.

Each user model is one cell, so one sweep (one Ray start) produces the ground-truth
set; ``python -m dev.calibration DIR --endpoint URL`` builds it (``sweep_config``), runs it
through the driver in its own process (``run_calibration_sweep``) and measures the
detectors on what it stored. The endpoint must serve the faulty behaviours:
``tauray endpoint --behaviours tests.test_helpers.faulty`` from a source checkout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
from tests.test_helpers import faulty_user

FAULTY = "tests.test_helpers.faulty"
"""The module of faulty behaviours the calibration's endpoint serves (``--behaviours``)."""


CLEAN_USER = "scripted-user-writes"
AGENT = "scripted-agent-writes"


def user_models(split: str, classes: tuple[str, ...] | None = None) -> dict[str, str]:
    """Sweep model name -> endpoint behaviour of every customer the calibration runs (only the
    named fault classes and hard negatives, plus the clean customer, when ``classes`` is given:
    measuring new detectors need not rerun every class)."""
    fu = faulty_user
    every = (*fu.FAULT_CLASSES, *fu.HARD_NEGATIVES)
    unknown = sorted(set(classes or ()) - set(every))
    if unknown:
        raise ValueError(f"unknown fault classes or hard negatives {unknown}; known: {', '.join(every)}")
    models = {f"u-{name}": f"faulty-user:{name}:{split}" for name in every if classes is None or name in classes}
    models["u-clean"] = CLEAN_USER
    return models


def sweep_config(name: str, endpoint: str, split: str = "heldout", telecom_split: str = "base",
                 limit: int | None = None, max_in_flight: int = 6, trials: int = 1,
                 classes: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The calibration sweep, as the sweep file's fields (``SweepConfig`` validates them)."""
    users = user_models(split, classes)
    scenarios: dict[str, Any] = {"domain": "telecom", "split": telecom_split}
    if limit is not None:
        scenarios["limit"] = limit
    models = {"agent": {"model": f"openai/{AGENT}", "api_base": endpoint, "reference_steps": True},
              **{key: {"model": f"openai/{behaviour}", "api_base": endpoint} for key, behaviour in users.items()}}
    return {"name": name, "trials": trials, "seed": 0, "max_in_flight": max_in_flight, "agents": ["agent"],
            "users": list(users), "scenarios": [scenarios], "models": models}


def run_calibration_sweep(sweep: dict[str, Any], out: Path) -> Any:
    """Run (or resume) a calibration sweep into ``out`` through the driver, in this process."""

    return execute(SweepConfig.model_validate(sweep), out=out, resume=(out / "sweep.json").exists(), probe=False,
                   progress=False)


__all__ = ["AGENT", "CLEAN_USER", "FAULTY", "run_calibration_sweep", "sweep_config", "user_models"]
