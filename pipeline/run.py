"""``tauray run``: scenarios × trials for one agent model and one user model.

A run is a sweep of one cell: the selection is expanded into work units and
handed to the sweep's scheduler (``tauray.pipeline.scheduler``), with the same
actor pool, the same bounded number of conversations in flight, the same
retry of units whose actor died, the same classification of failures and the
same streaming of every result into the Parquet tables. Every unit ends as a
row, except when a model turns out to be unusable where the calls run (a
config error stops the run).
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.pipeline.plan import WorkUnit, make_units


class RunConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    patterns: list[str] = Field(default_factory=list, description="Scenario name globs; empty = all selected.")
    domain: str | None = Field(default=None, description="Domain filter.")
    split: str | None = Field(default=None, description="Split filter.")
    variant: str | None = Field(default=None, description="Policy variant filter.")
    agent: dict[str, Any] = Field(description="Agent ModelSpec (model 'oracle' = reference policy).")
    user: dict[str, Any] = Field(description="User ModelSpec (model 'scripted' = reference policy).")
    trials: int = Field(default=1, ge=1, description="Conversations per scenario.")
    concurrency: int = Field(default=64, ge=1, description="Conversations in flight at once.")
    max_steps: int = Field(default=100, ge=1, description="Policy replies allowed per conversation.")
    max_errors: int = Field(default=10, ge=1, description="Tool errors allowed per conversation.")
    seed: int = Field(default=0, description="Base seed; unit seeds derive from it and the unit id.")
    out: Path = Field(description="Run directory for the tables.")
    run_id: str = Field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
                        + "-" + uuid.uuid4().hex[:6], description="Run id.")
    coordinators: int = Field(default=1, ge=1, description="Coordinator actors.")
    agent_hosts: int = Field(default=1, ge=1, description="Agent host actors.")
    user_hosts: int = Field(default=1, ge=1, description="User-simulator host actors.")
    address: str | None = Field(default=None, description="Ray address to join; None = local Ray on loopback.")
    max_attempts: int = Field(default=3, ge=1, description="Tries per unit when an actor dies under it.")

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, v: str) -> str:
        if not v or any(c in v for c in "/\\ ") or v.startswith("."):
            raise ValueError("run_id must be a plain name without slashes or spaces")
        return v


class OutcomeCounts(BaseModel):
    """How the conversations of a run or sweep ended."""

    success: int = Field(description="Scored and successful.")
    failed: int = Field(description="Scored and not successful.")
    unscored: int = Field(description="Success unknown (a gating signal not scored).")
    infra_errors: int = Field(description="Ended in an infrastructure error (retried by --retry-errors).")
    model_errors: int = Field(description="Ended because the model refused or broke the request.")
    internal_errors: int = Field(description="Ended in a tauray bug (the row carries the traceback).")


class RunSummary(OutcomeCounts):
    run_id: str
    out: str
    conversations: int
    by_termination: dict[str, int]
    actor_retries: int = Field(description="Units resubmitted after an actor died under them.")
    actor_generations: int = Field(description="Sets of actors used (1 + replacements after a death).")
    seconds: float
    conversations_per_second: float
    agent_model: str
    user_model: str


def check_models(cfg: RunConfig) -> None:
    """Fail before any conversation starts when a model cannot be reached as configured."""
    from tauray.actors.llm import ModelSpec, check_model_ready
    from tauray.scenarios.conventions import REFERENCE_BY_SIDE

    for role, spec in (("agent", cfg.agent), ("user", cfg.user)):
        model = ModelSpec.model_validate(spec)
        reference = REFERENCE_BY_SIDE[role]
        if model.is_reference:
            if model.model != reference:
                raise ValueError(f"--{role}-model: '{model.model}' is not a reference policy for the {role} "
                                 f"side; use '{reference}'")
            continue
        check_model_ready(model)


def units_for(cfg: RunConfig) -> list[WorkUnit]:
    from tauray.scenarios import select_scenarios

    entries = select_scenarios(cfg.patterns or None, domain=cfg.domain, split=cfg.split, variant=cfg.variant)
    if not entries:
        raise ValueError("the selection matches no scenario")
    return make_units(cfg.run_id, [e.name for e in entries], cfg.trials, cfg.agent, cfg.user,
                      cfg.max_steps, cfg.max_errors, base_seed=cfg.seed)


def shutdown_actors() -> None:
    """Kill the actors kept between runs of this driver (``keep_actors=True``)."""
    from tauray.pipeline.scheduler import KEPT

    KEPT.drop()


def run_cells(cfg: RunConfig, units: list[WorkUnit]) -> list[tuple[Any, list[WorkUnit]]]:
    """The run's cells (one per distinct cell id among its units, usually one) with their
    units in order: a run is a sweep of one agent model and one user model."""
    from tauray.pipeline.sweep import Cell

    by_cell: dict[str, list[WorkUnit]] = {}
    for unit in units:
        by_cell.setdefault(unit.cell_id or cfg.run_id, []).append(unit)
    return [(Cell(cell_id=cid, agent_name=str(cfg.agent["model"]), user_name=str(cfg.user["model"]),
                  agent=cfg.agent, user=cfg.user, judge_configs=[], judge_labels=[]), part)
            for cid, part in by_cell.items()]


def execute(cfg: RunConfig, units: list[WorkUnit] | None = None,
            on_result: Callable[[Any], None] | None = None, progress: bool = True,
            keep_actors: bool = False, pool: Any = None, hooks: Any = None) -> RunSummary:
    """Run the units (default: the configured selection) through the sweep's scheduler
    and return the summary. ``pool``: actors the caller owns (kept alive); otherwise the
    driver's kept pool, dropped at the end unless ``keep_actors``."""
    from types import SimpleNamespace

    from tauray.pipeline.accounting import LiveTotals
    from tauray.pipeline.progress import SweepProgress
    from tauray.pipeline.ray_runtime import ensure_ray
    from tauray.pipeline.scheduler import CellQueue, Hooks, Limits, drive

    check_models(cfg)
    units = units if units is not None else units_for(cfg)
    ensure_ray(cfg.address)
    from tauray.actors.serving.lifecycle import serve_for_units

    units, served = serve_for_units(units)  # `serve:` models up for the run (docs/serve.md)
    try:  # from here the deployments are ours: whatever fails before the run, they go down
        cells = run_cells(cfg, units)
        queues = [CellQueue(cell, iter(part), len(part)) for cell, part in cells]
        hooks = hooks or Hooks()
        if on_result is not None:
            chained = hooks.on_result

            def both(result: Any) -> None:
                if chained:
                    chained(result)
                on_result(result)

            hooks = Hooks(on_submit=hooks.on_submit, on_result=both, on_retry=hooks.on_retry)
        cfg.out.mkdir(parents=True, exist_ok=True)
        live = LiveTotals(SimpleNamespace(cells=[cell for cell, _ in cells]))
        models = sorted({str(cfg.agent["model"]), str(cfg.user["model"])})
        display = SweepProgress(cfg.run_id, len(units), models, enabled=progress, label="run")
    except BaseException:
        served.stop()
        raise
    start = time.perf_counter()
    try:
        sched, generations = drive(
            queues, Limits(max_in_flight=cfg.concurrency, max_attempts=cfg.max_attempts), out=cfg.out,
            run_id=cfg.run_id, live=live, counts=(cfg.coordinators, cfg.agent_hosts, cfg.user_hosts), pool=pool,
            keep_actors=keep_actors, progress=display, hooks=hooks)
        display.tick(sched, force=True)
    finally:
        display.close()
        served.stop()
    seconds = time.perf_counter() - start
    oc = sched.outcomes
    return RunSummary(
        run_id=cfg.run_id, out=str(cfg.out), conversations=sched.written, success=oc["success"],
        failed=oc["failed"], unscored=oc["unscored"], infra_errors=oc["infra"], model_errors=oc["model"],
        internal_errors=oc["internal"], by_termination=dict(sched.terminations), actor_retries=sched.retried,
        actor_generations=generations, seconds=round(seconds, 3),
        conversations_per_second=round(sched.written / seconds, 2) if seconds else 0.0,
        agent_model=cfg.agent["model"], user_model=cfg.user["model"],
    )
