"""``tauray sweep``: run a sweep file on local Ray or a cluster, resumably.

Local: Ray on loopback, started by the driver. Cluster: ``--address`` or
``RAY_ADDRESS``; the project is shipped to the workers with a runtime env
(``py_modules``: the installed ``tauray`` package, assembled from its
sub-package folders), merged with the sweep's own ``[cluster.runtime_env]``
(e.g. ``pip`` for the dependencies when the nodes lack them).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import Field
from tauray.pipeline.accounting import (
    LiveTotals,
    ModelTotals,
    fill_costs,
    table_totals,
    write_cells,
)
from tauray.pipeline.run import OutcomeCounts
from tauray.pipeline.sweep import SweepConfig, SweepFileError, load_sweep, plan_sweep
from tauray.scenarios.conventions import is_reference


class SweepError(RuntimeError):
    """The sweep cannot run as asked (e.g. results exist and --resume was not given)."""


class SweepSummary(OutcomeCounts):
    sweep_id: str
    out: str
    cells: int
    scenarios: int
    units: int = Field(description="Units in the sweep (cells × scenarios × trials).")
    skipped: int = Field(description="Units already in the tables when this driver started.")
    retried_errors: int = Field(description="Infra-error rows rerun because of --retry-errors.")
    ran: int = Field(description="Rows this driver wrote.")
    actor_retries: int = Field(description="Units resubmitted after an actor died under them.")
    actor_generations: int
    not_submitted: int = Field(description="Units left unsubmitted (budget reached).")
    budget_usd: float | None
    budget_reached: bool
    temp_files_removed: int = Field(description="Temp files of a killed writer removed on start.")
    rows: int = Field(description="Units with a row in the tables now (one per unit).")
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    seconds: float
    conversations_per_second: float
    per_model: dict[str, ModelTotals]
    per_cell: list[dict[str, Any]]
    nodes: int
    actors: dict[str, int]


def project_runtime_env(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A runtime env that ships the installed ``tauray`` package to every worker."""
    import tauray

    stage = Path(tempfile.mkdtemp(prefix="tauray-ship-")) / "tauray"
    shutil.copytree(Path(tauray.__path__[0]), stage, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for sub in ("scenarios", "actors", "pipeline", "results", "data"):
        mod = __import__(f"tauray.{sub}", fromlist=["_"])
        shutil.copytree(Path(mod.__path__[0]), stage / sub, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env: dict[str, Any] = {"py_modules": [str(stage)],
                           "env_vars": {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "RAY_USAGE_STATS_ENABLED": "0"}}
    for key, value in (extra or {}).items():
        if key == "env_vars":
            env["env_vars"].update(value)
        elif key == "py_modules":
            env["py_modules"] += list(value)
        else:
            env[key] = value
    return env


def drop_pool() -> None:
    """Kill the actors this driver keeps between sweeps and runs (``keep_actors``)."""
    from tauray.pipeline.scheduler import KEPT

    KEPT.drop()


def _manifest(out: Path, cfg: SweepConfig) -> None:
    path = out / "sweep.json"
    tmp = out / ".sweep.json.tmp"
    tmp.write_text(json.dumps({"sweep": cfg.model_dump(mode="json"),
                               "written_at": datetime.now(timezone.utc).isoformat()}, indent=1, default=str))
    os.replace(tmp, path)


def run_sweep(cfg: SweepConfig | Path | str, out: Path | str | None = None, address: str | None = None,
              resume: bool = False, retry_errors: bool = False, progress: bool | None = None,
              hooks: Any = None, keep_actors: bool = False, probe: bool = True, pool: Any = None) -> SweepSummary:
    """Run (or resume) a sweep and return its summary; see the module docstring.

    ``pool``: actors the caller owns (``scheduler.ActorPool``), used and left alive.
    Otherwise ``keep_actors`` keeps the actors for the next sweep or run in this
    driver (tests, benchmarks): starting a generation costs a few seconds of imports.
    """
    from tauray.pipeline.progress import SweepProgress
    from tauray.pipeline.ray_runtime import ensure_ray
    from tauray.pipeline.resume import resume_state
    from tauray.results.lock import RunLock
    from tauray.results.writer import remove_temp_files
    from tauray.pipeline.scheduler import CellQueue, Limits, counts_for_cluster, drive, out_has_rows

    if not isinstance(cfg, SweepConfig):
        cfg = load_sweep(cfg)
    out = Path(out) if out is not None else Path("runs") / cfg.name
    if out_has_rows(out) and not (resume or retry_errors):
        raise SweepError(f"{out} already holds results; pass --resume to continue this sweep there "
                         f"(or --retry-errors to also rerun its infra errors), or choose another --out")
    for name, entry in cfg.models.items():  # fail before anything starts
        if not is_reference(entry.spec.get("model")):
            from tauray.actors.llm import ModelSpec, check_model_ready

            try:
                check_model_ready(ModelSpec.model_validate(entry.spec))
            except Exception as exc:
                raise SweepFileError(f"{cfg.name}: field 'models.{name}': {exc}") from None
    if probe:  # one real call per distinct model, before any directory or row exists
        from tauray.actors.llm.probe import ProbeError, probe_models
        from tauray.actors.serving.lifecycle import unserved

        try:
            probe_models(unserved(cfg.probe_specs()), seed=cfg.seed,  # served ones: once deployed
                         notes=lambda line: print(line, file=__import__("sys").stderr))
        except ProbeError as exc:
            raise SweepFileError(f"{cfg.name}: {exc}") from None
    started = time.perf_counter()
    address = address or os.environ.get("RAY_ADDRESS") or None
    import ray as _ray

    runtime_env = None
    if address and not _ray.is_initialized() and cfg.cluster.ship_project:
        runtime_env = project_runtime_env(cfg.cluster.runtime_env)
    elif cfg.cluster.runtime_env and not _ray.is_initialized():
        runtime_env = cfg.cluster.runtime_env
    ray = ensure_ray(address, runtime_env=runtime_env)
    from tauray.actors.serving.lifecycle import serve_for_sweep

    cfg, served = serve_for_sweep(cfg, probe=probe)  # `serve:` models up for the sweep (docs/serve.md)
    lock = None
    try:  # from here the deployments are ours: whatever fails before the run, they go down
        counts = counts_for_cluster(cfg.cluster)
        plan = plan_sweep(cfg, {"agent": counts[1], "user": counts[2]})
        out.mkdir(parents=True, exist_ok=True)
        lock = RunLock(out)  # one driver per folder: a second one fails here, naming this one
        _manifest(out, cfg)
        moved = remove_temp_files(out)
        state = resume_state(out, cfg.name, retry_errors=retry_errors)
        skip = state.done
        queues, to_run = [], 0
        for cell in plan.cells:
            remaining = sum(1 for uid, _, _ in plan.unit_ids(cell) if uid not in skip)
            to_run += remaining
            queues.append(CellQueue(cell, plan.units(cell, skip), remaining))
        skipped = plan.total - to_run
        retried_errors = sum(1 for cell in plan.cells for uid, _, _ in plan.unit_ids(cell)
                             if uid in state.to_retry)
        live = LiveTotals(plan)
        spent = 0.0
        if cfg.budget_usd is not None and state.rows:  # the budget is the sweep's, across reruns
            spent = sum(m.cost_usd or 0.0 for m in table_totals(out, plan)[1].values())
        models = sorted({c.agent_name for c in plan.cells} | {c.user_name for c in plan.cells})
        display = SweepProgress(cfg.name, to_run, models, already=skipped, enabled=progress)
        limits = Limits(max_in_flight=cfg.max_in_flight, max_attempts=cfg.max_attempts, budget_usd=cfg.budget_usd,
                        per_model={name: cfg.models[name].concurrency for name in cfg.models})
    except BaseException:
        if lock is not None:
            lock.release()
        served.stop()
        raise
    sched, generations = None, 0
    t0 = time.perf_counter()
    try:
        if to_run:
            sched, generations = drive(
                queues, limits, out=out, run_id=cfg.name, live=live, counts=counts, spread=cfg.cluster.spread,
                pool=pool, keep_actors=keep_actors, progress=display, spent_usd=spent, hooks=hooks,
                finish=lambda result, cell: fill_costs(result, cfg, cell.agent_name, cell.user_name))
            display.tick(sched, force=True)
    finally:
        display.close()
        lock.release()
        served.stop()
    seconds = time.perf_counter() - t0
    cells, per_model, oc = table_totals(out, plan)
    write_cells(out, cfg.name, cells)
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    costs = [c.cost_usd for c in cells if c.cost_usd is not None]
    ran = sched.written if sched else 0
    return SweepSummary(
        sweep_id=cfg.name, out=str(out), cells=len(plan.cells), scenarios=len(plan.scenarios), units=plan.total,
        skipped=skipped, retried_errors=retried_errors, ran=ran, actor_retries=sched.retried if sched else 0,
        actor_generations=generations, not_submitted=sched.not_submitted if sched else 0,
        budget_usd=cfg.budget_usd, budget_reached=bool(sched and sched.budget_reached),
        temp_files_removed=len(moved), rows=oc.get("total", 0), success=oc.get("success", 0),
        failed=oc.get("failed", 0), unscored=oc.get("unscored", 0), infra_errors=oc.get("infra", 0),
        model_errors=oc.get("model", 0), internal_errors=oc.get("internal", 0),
        prompt_tokens=sum(m.prompt_tokens for m in per_model.values()),
        completion_tokens=sum(m.completion_tokens for m in per_model.values()),
        cost_usd=round(sum(costs), 6) if costs else None, seconds=round(time.perf_counter() - started, 3),
        conversations_per_second=round(ran / seconds, 2) if seconds > 0 else 0.0,
        per_model=per_model, per_cell=[c.model_dump(mode="json", exclude={"updated_at"}) for c in cells],
        nodes=nodes, actors=dict(zip(("coordinators", "agent_hosts", "user_hosts"), counts)),
    )
