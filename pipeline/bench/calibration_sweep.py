"""The calibration sweep: every fault class and hard negative of the endpoint's
``faulty-user`` behaviour, and the clean writing customer, against the writing agent
(the scenario's reference steps), on the telecom split.

Each user model is one cell, so one sweep (one Ray start) produces the ground-truth
set; ``tauray audit-calibrate DIR --endpoint URL`` writes this file, runs it with ``tauray sweep`` and
measures the detectors on what it stored.
"""

from __future__ import annotations

import importlib
from types import ModuleType

FAULTY = "tests.test_helpers.faulty"
"""The module of faulty behaviours the calibration's endpoint serves (``--behaviours``)."""


def faulty(name: str) -> ModuleType:
    """``tests.test_helpers.<name>``: the faulty customers and agents are the tests' ground
    truth, not the product's, so the calibration needs a source checkout to find them."""
    try:
        return importlib.import_module(f"tests.test_helpers.{name}")
    except ModuleNotFoundError:
        raise ValueError("the audit calibration needs a source checkout of tauray (its faulty customers and agents "
                         "live in tests/test_helpers): run it from the repository root") from None


CLEAN_USER = "scripted-user-writes"
AGENT = "scripted-agent-writes"


def user_models(split: str, classes: tuple[str, ...] | None = None) -> dict[str, str]:
    """Sweep model name -> endpoint behaviour of every customer the calibration runs (only the
    named fault classes and hard negatives, plus the clean customer, when ``classes`` is given:
    measuring new detectors need not rerun every class)."""
    fu = faulty("faulty_user")
    every = (*fu.FAULT_CLASSES, *fu.HARD_NEGATIVES)
    unknown = sorted(set(classes or ()) - set(every))
    if unknown:
        raise ValueError(f"unknown fault classes or hard negatives {unknown}; known: {', '.join(every)}")
    models = {f"u-{name}": f"faulty-user:{name}:{split}" for name in every if classes is None or name in classes}
    models["u-clean"] = CLEAN_USER
    return models


def sweep_toml(name: str, endpoint: str, split: str = "heldout", telecom_split: str = "base",
               limit: int | None = None, max_in_flight: int = 6, trials: int = 1,
               classes: tuple[str, ...] | None = None) -> str:
    """The calibration sweep file (TOML)."""
    users = user_models(split, classes)
    lines = [f'name = "{name}"', f"trials = {trials}", "seed = 0", f"max_in_flight = {max_in_flight}",
             'agents = ["agent"]', f"users = [{', '.join(repr(u).replace(chr(39), chr(34)) for u in users)}]", "",
             "[[scenarios]]", 'domain = "telecom"', f'split = "{telecom_split}"']
    if limit is not None:
        lines.append(f"limit = {limit}")
    lines += ["", "[models.agent]", f'model = "openai/{AGENT}"', f'api_base = "{endpoint}"', "reference_steps = true"]
    for key, behaviour in users.items():
        lines += ["", f"[models.{key}]", f'model = "openai/{behaviour}"', f'api_base = "{endpoint}"']
    return "\n".join(lines) + "\n"


__all__ = ["AGENT", "CLEAN_USER", "FAULTY", "faulty", "sweep_toml", "user_models"]
