"""``tauray run``: scenarios × trials for one agent model and one user model.

The driver expands the selection into work units, starts the hosts (agent,
user simulator) and coordinators as Ray actors, keeps a bounded number of
conversations in flight, and streams every result into the Parquet tables as
it arrives, so memory stays flat however long the run. Every unit ends as a
row: an actor that dies takes its units with it as infra-error rows.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.pipeline.units import WorkUnit, make_units


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
    seconds: float
    conversations_per_second: float
    agent_model: str
    user_model: str


def check_models(cfg: RunConfig) -> None:
    """Fail before any conversation starts when a model cannot be reached as configured."""
    from tauray.actors.models import ModelSpec, check_model_ready

    for role, spec in (("agent", cfg.agent), ("user", cfg.user)):
        model = ModelSpec.model_validate(spec)
        reference = {"agent": "oracle", "user": "scripted"}[role]
        if model.model in ("oracle", "scripted"):
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


class Actors:
    """The hosts and coordinators of one run."""

    def __init__(self, cfg: RunConfig):
        from tauray.actors.coordinator import coordinator_class
        from tauray.actors.hosts import remote_classes

        agent_cls, user_cls = remote_classes()
        self.agents = [agent_cls.remote() for _ in range(cfg.agent_hosts)]
        self.users = [user_cls.remote() for _ in range(cfg.user_hosts)]
        coord = coordinator_class()
        self.coordinators = [coord.remote(self.agents, self.users) for _ in range(cfg.coordinators)]

    def kill(self) -> None:
        import ray

        for actor in self.coordinators + self.agents + self.users:
            try:
                ray.kill(actor)
            except Exception:
                pass


_POOL: dict[tuple[int, int, int], Actors] = {}


def get_actors(cfg: RunConfig) -> Actors:
    """Actors for this run, reused across runs in one driver when asked to keep them."""
    key = (cfg.agent_hosts, cfg.user_hosts, cfg.coordinators)
    if key not in _POOL:
        _POOL[key] = Actors(cfg)
    return _POOL[key]


def shutdown_actors() -> None:
    while _POOL:
        _POOL.popitem()[1].kill()


def execute(cfg: RunConfig, units: list[WorkUnit] | None = None,
            on_result: Callable[[Any], None] | None = None, progress: bool = True,
            keep_actors: bool = False) -> RunSummary:
    from tqdm import tqdm

    from tauray.actors.coordinator import failed_result
    from tauray.pipeline.ray_runtime import ensure_ray
    from tauray.results.writer import TableWriter

    check_models(cfg)
    units = units if units is not None else units_for(cfg)
    ray = ensure_ray(cfg.address)
    actors = get_actors(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    start = time.perf_counter()
    pending: dict[Any, WorkUnit] = {}
    queue = list(reversed(units))
    try:
        with TableWriter(cfg.out, cfg.run_id) as writer, tqdm(
                total=len(units), unit="conv", disable=not progress, dynamic_ncols=True,
                desc=f"run {cfg.run_id}") as bar:
            while queue or pending:
                while queue and len(pending) < cfg.concurrency:
                    unit = queue.pop()
                    coord = actors.coordinators[len(pending) % len(actors.coordinators)]
                    pending[coord.run.remote(unit.model_dump())] = unit
                done, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                if len(done) == 1 and len(pending) > 1:  # take everything else already finished too
                    more, _ = ray.wait([r for r in pending if r != done[0]], num_returns=len(pending) - 1,
                                       timeout=0)
                    done += more
                for ref in done:
                    unit = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # the coordinator died: the unit is still a row
                        result = failed_result(unit.model_dump(), "infra", f"{type(exc).__name__}: {exc}")
                    writer.add(result)
                    _count(counts, result)
                    if on_result:
                        on_result(result)
                    bar.update(1)
                    bar.set_postfix(ok=counts["success"], fail=counts["failed"], err=counts["errors"], refresh=False)
    finally:
        if not keep_actors:
            shutdown_actors()
    seconds = time.perf_counter() - start
    return RunSummary(
        run_id=cfg.run_id, out=str(cfg.out), conversations=counts["total"], success=counts["success"],
        failed=counts["failed"], unscored=counts["unscored"], infra_errors=counts["infra"],
        model_errors=counts["model"], internal_errors=counts["internal"],
        by_termination={k[5:]: v for k, v in counts.items() if k.startswith("term:")},
        seconds=round(seconds, 3), conversations_per_second=round(counts["total"] / seconds, 2) if seconds else 0.0,
        agent_model=cfg.agent["model"], user_model=cfg.user["model"],
    )


def _count(counts: Counter[str], result: Any) -> None:
    from tauray.pipeline.accounting import outcome

    c = result.conversation
    counts["total"] += 1
    counts[f"term:{c.termination_reason}"] += 1
    kind = outcome(c.error_kind, c.success)
    counts[kind] += 1
    counts["errors"] += kind in ("infra", "model", "internal")
