"""Tokens, cost and outcomes: per role per conversation (the conversation row),
totals per model and per cell (the sweep summary and the ``cells`` table).

Live totals are kept incrementally for the progress display; the final
summary and the ``cells`` rows are recomputed from the tables, so a resumed
sweep reports everything it holds, not just what the last driver ran.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tauray.pipeline.config import SweepConfig
from tauray.pipeline.plan import SweepPlan
from tauray.results.stats.outcomes import ERRORS, outcome, outcomes, success_rate, tally  # noqa: F401 (outcome: run.py counts with it)
from tauray.results.tables.readers import conversations_df, judge_verdicts_df, nl_verdicts_df
from tauray.results.tables.records import INFRA, INTERNAL, MODEL, CellRecord
from tauray.results.tables.writer import write_records

ROLES = ("agent", "user", "judge")


class ModelTotals(BaseModel):
    """One model's share of a sweep, over every role it played."""

    model: str = Field(description="litellm model string (or reference policy).")
    conversations: int = 0
    as_agent: int = 0
    as_user: int = 0
    as_judge: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    done: int = 0
    failed: int = 0
    errors: int = 0
    judge_calls: int = Field(0, description="Judge calls made as a judge (one per sample, plus its repair turn).")
    repair_calls: int = Field(0, description="Repair turns asked as a judge: samples whose first reply was not "
                              "one value of the declared format (docs/judge.md).")


def judge_model_name(cfg: SweepConfig) -> str | None:
    """The sweep's judge model when there is exactly one (judge tokens are per conversation,
    not per judge, so they can be attributed to a model only then)."""
    names = {j.model for j in cfg.judge_list}
    return names.pop() if len(names) == 1 else None


def fill_costs(result: Any, cfg: SweepConfig, agent_name: str, user_name: str) -> Any:
    """Cost from the sweep's prices where litellm knew none (self-hosted or test models)."""
    c = result.conversation
    update = {}
    roles = [("agent", agent_name), ("user", user_name)]
    judge = judge_model_name(cfg)
    if judge and (c.judge_prompt_tokens or c.judge_completion_tokens):
        roles.append(("judge", judge))
    for role, name in roles:
        price = cfg.price(name)
        if getattr(c, f"{role}_cost_usd") is None and price is not None:
            update[f"{role}_cost_usd"] = round(price.cost(getattr(c, f"{role}_prompt_tokens"),
                                                          getattr(c, f"{role}_completion_tokens")), 8)
    if not update:
        return result
    return result.model_copy(update={"conversation": c.model_copy(update=update)})


def conversation_cost(c: Any) -> float:
    """What a conversation spent against the budget: its model calls and its speech (hosted engines)."""
    models = sum(float(getattr(c, f"{r}_cost_usd") or 0.0) for r in ROLES)
    return models + float(getattr(c, "speech_cost_usd", 0) or 0.0)


def stored_speech_cost(out: Path, plan: SweepPlan) -> float:
    """What the run's stored conversations (newest attempts) spent on speech, for a resumed budget."""
    df = conversations_df(out, columns=["cell_id", "speech_cost_usd"], run=plan.cfg.name)
    mine = df[df["cell_id"].astype(object).isin([c.cell_id for c in plan.cells])]
    return float(mine["speech_cost_usd"].fillna(0).sum())


class LiveTotals:
    """What the progress display shows, updated per result (constant memory)."""

    def __init__(self, plan: SweepPlan):
        self.by_model: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.counts: dict[str, int] = defaultdict(int)
        self.tokens = 0
        self.cost = 0.0
        self.cells = {cell.cell_id: cell for cell in plan.cells}

    def add_row(self, cell_id: str, error_kind: Any, success: Any, tokens: dict[str, int], costs: dict[str, float]) -> None:
        cell = self.cells.get(cell_id)
        out = outcome(error_kind, success)
        self.counts[out] += 1
        self.counts["total"] += 1
        for role, name in (("agent", cell.agent_name if cell else "?"), ("user", cell.user_name if cell else "?")):
            m = self.by_model[name]
            m["done"] += 1
            m["errors"] += out in ERRORS
            m["tokens"] += tokens.get(role, 0)
            m["cost"] += costs.get(role, 0.0)
        self.tokens += sum(tokens.values())
        self.cost += sum(costs.values())

    def add(self, result: Any) -> None:
        c = result.conversation
        self.add_row(c.cell_id or "", c.error_kind, c.success,
                     {r: getattr(c, f"{r}_prompt_tokens") + getattr(c, f"{r}_completion_tokens") for r in ROLES},
                     {r: float(getattr(c, f"{r}_cost_usd") or 0.0) for r in ROLES})


STOPS = ("truncated_replies", "truncated_tool_calls", "filtered_replies", "prompt_filtered_replies", "refused_replies",
         "malformed_call_replies", "text_tool_call_replies")
"""How model replies ended badly: the conversation columns each cell row totals and the run summary names."""

_COLUMNS = ["conversation_id", "cell_id", "success", "error_kind",
            *[f"{r}_{k}" for r in ROLES for k in ("prompt_tokens", "completion_tokens", "cost_usd")], *STOPS]


def table_totals(out: Path, plan: SweepPlan) -> tuple[list[Any], dict[str, ModelTotals], dict[str, int]]:
    """Cells rows, per-model totals and outcome counts of the sweep (newest attempt of
    every unit), from its tables, classified by ``results.outcomes``."""

    df = conversations_df(out, columns=_COLUMNS, run=plan.cfg.name)
    cells_by_id = {c.cell_id: c for c in plan.cells}
    df = df.assign(cell_id=df["cell_id"].astype(object))
    df = df[df["cell_id"].isin(list(cells_by_id))]
    df = df.assign(outcome=outcomes(df).astype(object))
    now = datetime.now(timezone.utc)
    cells, models = [], {}
    counts = tally(df["outcome"])
    for cell in plan.cells:
        part = df[df["cell_id"] == cell.cell_id]
        oc = tally(part["outcome"])
        cost_cols = [part[f"{r}_cost_usd"] for r in ROLES]
        known = any(c.notna().any() for c in cost_cols)
        rate = success_rate(oc["success"], oc["counted"])
        cells.append(CellRecord(
            sweep_id=plan.cfg.name, cell_id=cell.cell_id, agent_model=cell.agent.model,
            user_model=cell.user.model, judge_configs=cell.judge_labels,
            units=plan.units_per_cell, done=len(part), success=oc["success"], failed=oc["failed"],
            unscored=oc["unscored"], infra_errors=oc[INFRA], model_errors=oc[MODEL],
            internal_errors=oc[INTERNAL], success_rate=None if rate != rate else round(rate, 6),
            **{f"{r}_{k}": int(part[f"{r}_{k}"].sum()) for r in ROLES for k in ("prompt_tokens", "completion_tokens")},
            cost_usd=round(float(sum(c.fillna(0).sum() for c in cost_cols)), 8) if known else None,
            **{s: int(part[s].fillna(0).sum()) for s in STOPS}, updated_at=now))
        for role, name in (("agent", cell.agent_name), ("user", cell.user_name)):
            spec_model = (cell.agent if role == "agent" else cell.user).model
            m = models.setdefault(name, ModelTotals(model=spec_model))
            m.conversations += len(part)
            setattr(m, f"as_{role}", getattr(m, f"as_{role}") + len(part))
            m.prompt_tokens += int(part[f"{role}_prompt_tokens"].sum())
            m.completion_tokens += int(part[f"{role}_completion_tokens"].sum())
            if part[f"{role}_cost_usd"].notna().any():
                m.cost_usd = round((m.cost_usd or 0.0) + float(part[f"{role}_cost_usd"].fillna(0).sum()), 8)
            m.done += len(part)
            m.failed += oc["counted"] - oc["success"]
            m.errors += oc["errors"]
        judge = judge_model_name(plan.cfg)
        judged = part[(part["judge_prompt_tokens"] + part["judge_completion_tokens"]) > 0]
        if judge and len(judged):
            m = models.setdefault(judge, ModelTotals(model=plan.cfg.spec(judge).get("model", judge)))
            m.conversations += len(judged)
            m.as_judge += len(judged)
            m.prompt_tokens += int(judged["judge_prompt_tokens"].sum())
            m.completion_tokens += int(judged["judge_completion_tokens"].sum())
            if judged["judge_cost_usd"].notna().any():
                m.cost_usd = round((m.cost_usd or 0.0) + float(judged["judge_cost_usd"].fillna(0).sum()), 8)
            m.done += len(judged)
    for model, (calls, repairs) in judge_calls_by_model(out, plan.cfg.name).items():
        name = next((n for n, e in plan.cfg.models.items() if e.spec.get("model") == model), model)
        m = models.setdefault(name, ModelTotals(model=model))
        m.judge_calls, m.repair_calls = calls, repairs
    return cells, models, counts


_SAMPLE = ["run_id", "unit_id", "attempt", "judge_config_id", "transcript_hash", "sample_index"]


def judge_calls_by_model(out: Path, run: str | None = None) -> dict[str, tuple[int, int]]:
    """judge model -> (judge calls, repair turns) of a run, over the distinct samples of its
    overall and NL judge rows (an NL sample is one call however many assertions it answers);
    every run under ``out`` when ``run`` is None. The sweep summary prints it per model."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for read in (judge_verdicts_df, nl_verdicts_df):
        df = read(out, run=run)
        if df.empty or "judge_model" not in df.columns:
            continue
        keys = [k for k in _SAMPLE if k in df.columns]
        repaired = df["repair_used"].fillna(False).astype(bool) if "repair_used" in df.columns else None
        samples = df.assign(repaired=False if repaired is None else repaired)[[*keys, "judge_model", "repaired"]]
        samples = samples.drop_duplicates(keys)
        for model, g in samples.groupby("judge_model"):
            repairs = int(g["repaired"].sum())
            found[str(model)][0] += len(g) + repairs
            found[str(model)][1] += repairs
    return {m: (c, r) for m, (c, r) in found.items()}


def write_cells(out: Path, run_id: str, cells: list[Any]) -> Path | None:
    """All cells of the sweep as one new ``cells`` file; readers keep the latest
    ``updated_at`` per (sweep_id, cell_id)."""

    return write_records(out, "cells", cells, run_id)
