"""Work units for tests that call the coordinator, the loop or the hosts directly: a
one-cell configuration over exactly the given scenarios, planned by the driver's own
rule (:class:`~tauray.pipeline.plan.SweepPlan`), so ids and seeds are the ones a run has."""

from __future__ import annotations

from typing import Any

from tauray.actors.unit import WorkUnit
from tauray.pipeline.config import run_config
from tauray.pipeline.plan import SweepPlan


def make_units(name: str, scenarios: list[str], trials: int = 1, agent: dict[str, Any] | None = None,
               user: dict[str, Any] | None = None, **knobs: Any) -> list[WorkUnit]:
    """The units of ``tauray run``'s one cell (oracle agent, scripted user unless told otherwise)."""
    cfg = run_config(name=name, agent=agent or {"model": "oracle"}, user=user or {"model": "scripted"},
                     patterns=list(scenarios), trials=trials, **knobs)
    plan = SweepPlan(cfg, list(scenarios))
    return [u for cell in plan.cells for u in plan.units(cell)]
