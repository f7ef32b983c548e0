"""The one driver of ``tauray run``, ``tauray sweep`` and ``tauray demo``.

lock -> validate -> probe -> Ray -> serve -> drive -> teardown, in that order:

* **lock** first, so a second driver on the same folder is refused before it
  imports litellm, probes a model or starts Ray;
* **validate** what can be checked for free: the selection matches scenarios, the
  folder holds no results unless resuming, each model is usable as configured;
* **probe**: one real call per distinct model and role, shaped as the run calls it;
* **Ray** (local on loopback, or a cluster with the project shipped to it),
  **serve** the ``serve:`` models, **drive** the units through the scheduler;
* **teardown** whatever happens: deployments down, lock released, actors dropped
  unless kept.

A run is a sweep of one cell (:func:`tauray.pipeline.config.run_config`), so both
commands get the same unit ids, rows and summary.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field

from tauray.actors.audit.summary import who_failed
from tauray.actors.llm import check_model_ready
from tauray.actors.llm.usable import ProbeError, budget_refusal, probe_models
from tauray.actors.quota import quota_actor, reset_gate
from tauray.actors.serving.lifecycle import unserved
from tauray.actors.voice.live.agent import phone_names, probe_phones
from tauray.actors.voice.pool import start_run_pool, stop_run_pool
from tauray.actors.voice.spec import check_ready as check_speech_ready
from tauray.actors.voice.spec import speech_price
from tauray.pipeline.accounting import (
    LiveTotals,
    ModelTotals,
    fill_costs,
    stored_speech_cost,
    table_totals,
    write_cells,
)
from tauray.pipeline.config import COMMAND_LINE, DriveOptions, SweepConfig
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.pool import counts_for_cluster, reserved_cpus
from tauray.pipeline.progress import SweepProgress
from tauray.pipeline.ray_runtime import connect
from tauray.pipeline.resume import resume_state
from tauray.pipeline.scheduler import CellQueue, SchedulerBounds, drive
from tauray.pipeline.serving import serve_for_sweep
from tauray.pipeline.sweep_file import as_stored, stored_name
from tauray.results.tables import layout
from tauray.results.tables.lock import RunLock
from tauray.results.tables.records import INFRA, INTERNAL, MODEL
from tauray.results.tables.writer import remove_temp_files
from tauray.scenarios.conventions import is_reference


class DriverError(RuntimeError):
    """The configuration cannot run as asked (e.g. results exist and --resume was not given)."""


class OutcomeCounts(BaseModel):
    """How the conversations of a run ended (over every row in its tables)."""

    success: int = Field(description="Scored and successful.")
    failed: int = Field(description="Scored and not successful.")
    unscored: int = Field(description="Success unknown (a gating signal not scored).")
    infra_errors: int = Field(description="Ended in an infrastructure error (rerun by --retry-errors).")
    model_errors: int = Field(description="Ended because the model refused or broke the request.")
    internal_errors: int = Field(description="Ended in a tauray bug (the row carries the traceback).")


class RunSummary(OutcomeCounts):
    """What a driver did, and what the run's tables hold now."""

    run_id: str = Field(description="The configuration's name: every row's run_id.")
    out: str = Field(description="Run directory.")
    cells: int
    scenarios: int
    units: int = Field(description="Units in the configuration (cells × scenarios × trials).")
    skipped: int = Field(description="Units already in the tables when this driver started.")
    retried_errors: int = Field(description="Infra-error rows rerun because of --retry-errors.")
    ran: int = Field(description="Rows this driver wrote.")
    rows: int = Field(description="Units with a row in the tables now (one per unit).")
    by_termination: dict[str, int] = Field(description="Rows this driver wrote, by termination reason.")
    actor_retries: int = Field(description="Units resubmitted after an actor died under them.")
    actor_generations: int = Field(description="Groups of actors started: one per node (or one for configured "
                                   "counts), plus one per node that joined, plus one per replacement after a death.")
    not_submitted: int = Field(description="Units left unsubmitted (budget reached).")
    budget_usd: float | None
    budget_reached: bool
    temp_files_removed: int = Field(description="Temp files of a killed writer removed on start.")
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    seconds: float
    conversations_per_second: float
    agent_models: list[str]
    user_models: list[str]
    per_model: dict[str, ModelTotals]
    per_cell: list[dict[str, Any]]
    nodes: int
    actors: dict[str, int]
    attributions: dict[str, int] = Field(default_factory=dict, description="Conversations by who failed, from the "
                                         "newest audit of each conversation (docs/audit.md); empty when none was audited.")
    audit_findings: int = Field(0, description="User-simulator and agent faults that audit found.")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def check_models(cfg: SweepConfig) -> None:
    """Each model usable as configured (provider known, key variable set): free, no call."""

    for name, entry in cfg.models.items():
        if not is_reference(entry.spec.get("model")):
            try:
                if entry.speech is not None:  # a speech model: its package, or its key's variable
                    check_speech_ready(entry.speech)
                else:
                    check_model_ready(entry.model_spec)
            except Exception as exc:
                raise ConfigFileError(cfg.source, f"{cfg.where(f'models.{name}')}: {exc}") from None

    refusal = budget_refusal([(name, str(entry.spec.get("model")), entry.price is not None)
                              for name, entry in cfg.models.items()  # a phone bot costs tauray nothing
                              if not is_reference(entry.spec.get("model")) and entry.speech is None
                              and not entry.model_spec.is_phone]
                             + [(name, entry.speech.model, speech_price(entry.speech) is not None)
                                for name, entry in cfg.models.items() if entry.speech is not None],
                             cfg.budget_usd)
    if refusal:  # an unpriced model would count as $0 against the budget
        raise ConfigFileError(cfg.source, refusal)


def run_probe(cfg: SweepConfig, notes: Callable[[str], None]) -> None:
    """One real call per distinct model and role, before any row exists (served models
    are probed once deployed)."""

    try:
        probe_models(unserved(cfg.probe_specs()), seed=cfg.seed, notes=notes)
    except ProbeError as exc:
        raise ConfigFileError(cfg.source, str(exc)) from None
    phones = {name: spec for name, spec in phone_names(cfg).items() if name in cfg.agents}
    for name, check in zip(phones, probe_phones(list(phones.values()))):
        if not check.ok:
            raise ConfigFileError(cfg.source, f"{cfg.where(f'models.{name}')}: {check.line}")


def write_manifest(out: Path, cfg: SweepConfig) -> None:
    final = out / layout.SWEEP_MANIFEST
    tmp = layout.temp_path(final)
    tmp.write_text(json.dumps({"sweep": as_stored(cfg),
                               "written_at": datetime.now(timezone.utc).isoformat()}, indent=1, default=str))
    os.replace(tmp, final)


def _needs_speech_pool(cfg: SweepConfig, plan: Any) -> bool:
    """Whether the run starts its speech workers: for half-duplex voice cells (the coordinators'
    hosts carry utterances on them), or to deploy a served recogniser that duplex calls hear
    through. A duplex call otherwise speaks and hears through its process's own engines, and a
    live call through the line: a run of those alone starts no workers."""
    voiced = [c for c in plan.cells if c.voice is not None]
    return any(c.voice.duplex is None for c in voiced) or (bool(voiced) and cfg.speech_spec("asr").serve is not None)


def execute(cfg: SweepConfig, *, out: Path | str | None = None, address: str | None = None, resume: bool = False,
            retry_errors: bool = False, probe: bool = True, progress: bool | None = None,
            hooks: Any = None, pool: Any = None, keep_actors: bool = False,
            notes: Callable[[str], None] = _stderr) -> RunSummary:
    """Run (or resume) ``cfg`` and return its summary; see the module docstring.

    ``pool``: actors the caller owns (``pool.ActorPool``), used and left alive. Otherwise
    ``keep_actors`` keeps the actors for the next run in this process (tests, benchmarks).
    """

    opts = DriveOptions(out=out, address=address, resume=resume, retry_errors=retry_errors, probe=probe)
    out = opts.out_for(cfg)
    created = not out.exists()
    lock = RunLock(out)  # one driver per folder: a second one is refused here, naming the holder
    served = None
    try:
        if layout.has_rows(out):
            _check_resumable(out, cfg, resume or retry_errors)

        scenarios = select(cfg)
        check_models(cfg)
        if opts.probe:
            run_probe(cfg, notes)
        started = time.perf_counter()

        ray = connect(opts.address, ship_project=cfg.cluster.ship_project, runtime_env=cfg.cluster.runtime_env)

        cfg, served = serve_for_sweep(cfg, probe=opts.probe)  # `serve:` models up (docs/serve.md)
        return _drive(cfg, scenarios, out, opts, ray, started, progress=progress, hooks=hooks, pool=pool,
                      keep_actors=keep_actors, notes=notes)
    finally:
        if served is not None:
            served.stop()
        if created:
            _remove_if_unused(out)
        lock.release()


def _warn_cap_before_quota(sched: Any, quotas: dict[str, Any], notes: Callable[[str], None]) -> None:
    """A model with a quota that never made a call wait, while an in-flight cap held work
    back most of the time: the cap, not the quota, bound the run; say which."""

    cap = sched.binding_cap()
    if cap is None:
        return
    import ray

    stats = ray.get(quota_actor().stats.remote())
    for key in quotas:
        s = stats.get(key)
        if s and s["admitted"] and s["waited_s"] / s["admitted"] < 0.05:
            notes(f"warning: {cap} bound this run before the quota of {key} (rpm={s['rpm']}, tpm={s['tpm']}) "
                  f"did: its calls waited {s['waited_s']:.1f} s for the quota in all; raise {cap.split('=')[0]} "
                  "to spend the quota")


def _note_spent_quotas(ray: Any, notes: Callable[[str], None]) -> None:
    """Each model whose calls stopped because its quota or spend cap is spent, in one line."""
    for s in ray.get(quota_actor().stats.remote()).values():
        if s.get("stopped"):
            notes(f"error: {s['stopped']}")


def _check_resumable(out: Path, cfg: SweepConfig, resuming: bool) -> None:
    """A folder with results continues only when asked, and only the configuration it holds."""
    if not resuming:
        raise DriverError(f"{out} already holds results; pass --resume to continue there (or "
                          "--retry-errors to also rerun its infra errors), or choose another --out")
    held = stored_name(out)
    if held is not None and held != cfg.name:
        raise DriverError(f"{out} holds run {held!r}, not {cfg.name!r}; resume it under its own name "
                          f"(tauray run: --run-id {held}), or choose another --out")


def _remove_if_unused(out: Path) -> None:
    """A folder this driver created and left holding nothing but its lock file (a run refused
    before its first row) is removed, so a failed start leaves nothing behind. Done while the
    lock is still held: no other driver can have taken the folder meanwhile."""
    try:
        if {p.name for p in out.iterdir()} <= {layout.LOCK_NAME}:
            (out / layout.LOCK_NAME).unlink(missing_ok=True)
            out.rmdir()
    except OSError:
        pass


def _drive(cfg: SweepConfig, scenarios: list[str], out: Path, opts: DriveOptions, ray: Any, started: float,
           **drive_kw: Any) -> RunSummary:
    notes = drive_kw.pop("notes")

    counts = counts_for_cluster(cfg.cluster)
    plan = SweepPlan(cfg, scenarios)
    book = any(not s.is_reference for c in plan.cells for s in (c.agent, c.user)) or bool(cfg.judge_list)
    if book:  # the cluster's one quota book, owned by this driver (tauray.actors.quota), fresh for the run
        ray.get(quota_actor().reset.remote())
        reset_gate()
    write_manifest(out, cfg)
    moved = remove_temp_files(out)
    state = resume_state(out, cfg.name, retry_errors=opts.retry_errors)
    queues, to_run = [], 0
    for cell in plan.cells:
        remaining = sum(1 for uid, _, _ in plan.unit_ids(cell) if uid not in state.done)
        to_run += remaining
        queues.append(CellQueue(cell, plan.units(cell, state.done), remaining))
    skipped = plan.total - to_run
    retried_errors = sum(1 for cell in plan.cells for uid, _, _ in plan.unit_ids(cell) if uid in state.to_retry)
    spent = 0.0
    if cfg.budget_usd is not None and state.rows:  # the budget is the run's, across reruns
        spent = sum(m.cost_usd or 0.0 for m in table_totals(out, plan)[1].values()) + stored_speech_cost(out, plan)
    agents, users = sorted({c.agent_name for c in plan.cells}), sorted({c.user_name for c in plan.cells})
    display = SweepProgress(cfg.name, to_run, sorted(set(agents) | set(users)), already=skipped,
                            enabled=drive_kw.pop("progress"), label="run" if cfg.source == COMMAND_LINE else "sweep")
    limits = SchedulerBounds(max_in_flight=cfg.max_in_flight, max_attempts=cfg.max_attempts, budget_usd=cfg.budget_usd,
                    per_model={name: cfg.models[name].concurrency for name in cfg.models},
                    live_per_node=cfg.cluster.live_calls_per_node)
    sched, generations = None, 0
    t0 = time.perf_counter()
    speech = None
    try:
        if to_run and _needs_speech_pool(cfg, plan):
            speech = start_run_pool(cfg.name, tts=cfg.speech_spec("tts"), asr=cfg.speech_spec("asr"),
                                    reserved_cpus=reserved_cpus(counts, cfg.cluster.actor_cpus),
                                    worker=getattr(drive_kw.get("hooks"), "classes", {}).get("speech"))
        if to_run:
            sched, generations = drive(
                queues, limits, out=out, run_id=cfg.name, live=LiveTotals(plan), counts=counts,
                spread=cfg.cluster.spread, actor_cpus=cfg.cluster.actor_cpus, progress=display, spent_usd=spent,
                finish=lambda result, cell: fill_costs(result, cfg, cell.agent_name, cell.user_name), **drive_kw)
            display.tick(sched, force=True)
    finally:
        display.close()
        if speech is not None:
            stop_run_pool(speech)
    seconds = time.perf_counter() - t0
    if sched is not None and plan.quotas:
        _warn_cap_before_quota(sched, plan.quotas, notes)
    if sched is not None and book:
        _note_spent_quotas(ray, notes)
    attributions, audit_findings = _audit(out, cfg, notes=notes)
    cells, per_model, oc = table_totals(out, plan)
    write_cells(out, cfg.name, cells)
    costs = [c.cost_usd for c in cells if c.cost_usd is not None]
    ran = sched.written if sched else 0
    return RunSummary(
        run_id=cfg.name, out=str(out), cells=len(plan.cells), scenarios=len(plan.scenarios), units=plan.total,
        skipped=skipped, retried_errors=retried_errors, ran=ran, rows=oc.get("total", 0),
        by_termination=dict(sched.terminations) if sched else {}, actor_retries=sched.retried if sched else 0,
        actor_generations=generations, not_submitted=sched.not_submitted if sched else 0,
        budget_usd=cfg.budget_usd, budget_reached=bool(sched and sched.budget_reached),
        temp_files_removed=len(moved), success=oc.get("success", 0), failed=oc.get("failed", 0),
        unscored=oc.get("unscored", 0), infra_errors=oc.get(INFRA, 0), model_errors=oc.get(MODEL, 0),
        internal_errors=oc.get(INTERNAL, 0), prompt_tokens=sum(m.prompt_tokens for m in per_model.values()),
        completion_tokens=sum(m.completion_tokens for m in per_model.values()),
        cost_usd=round(sum(costs), 6) if costs else None, seconds=round(time.perf_counter() - started, 3),
        conversations_per_second=round(ran / seconds, 2) if seconds > 0 else 0.0,
        agent_models=agents, user_models=users,
        per_model=per_model,
        per_cell=[c.model_dump(mode="json", exclude={"updated_at"}) for c in cells],
        nodes=sum(1 for n in ray.nodes() if n.get("Alive")),
        actors=sched.actor_counts if sched else {k: c or 0 for k, c in zip(("coordinators", "agent_hosts",
                                                                            "user_hosts"), counts)},
        attributions=attributions, audit_findings=audit_findings,
    )


def _audit(out: Path, cfg: SweepConfig, notes: Callable[[str], None]) -> tuple[dict[str, int], int]:
    """Who failed, counted from the audit rows the coordinators made as each conversation
    finished (stored with its other rows; nothing is audited again here). A count that cannot
    be read is a warning, never a lost run."""
    if not cfg.audit:
        return {}, 0
    try:
        return who_failed(out)
    except Exception as exc:  # noqa: BLE001 - the run's rows are written; only the count is missing
        notes(f"warning: the audit counts of {out} could not be read ({type(exc).__name__}: {exc})")
        return {}, 0
