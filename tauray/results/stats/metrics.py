"""Metrics over the conversations table (pure functions of DataFrames).

Every row counts (``results.outcomes``): the success rate is successes over
all rows except infra errors, so model errors, internal errors and unscored
rows lower it; infra rows say nothing about the model and are reported beside
each rate, as a count and a share. A *task* is a scenario by default; trials
of one task are its repeated draws.

Intervals are task-clustered (``results.intervals``): trials of one task are
not independent, so the headline and breakdown intervals come from a
bootstrap that resamples whole tasks.

pass^k follows τ-bench and τ²: per task with n counted trials of which c
passed, C(c, k) / C(n, k), averaged over every task of the group, for k up to
the smallest trial count of the group's tasks (a larger k would average over a
subset of tasks, and the curve could rise).

This module is the one door to every statistic: the interval formulas
(``results.intervals``) and the agreement of judges (``results.agreement``)
live in their own modules and are re-exported here, so ``metrics.X`` names
them all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from tauray.results.stats.agreement import (
    BOOTSTRAP_SEED,
    binary_metrics,
    cohen_kappa,
    fleiss_kappa,
    kappa_interval,
    majority,
    tally_votes,
    unscored_by_truth,
    unscored_reason_class,
)
from tauray.results.stats.intervals import rate_interval, task_bootstrap, wilson_interval
from tauray.results.stats.outcomes import outcomes, success_rate
from tauray.results.tables.records import INFRA, INTERNAL, MODEL

By = str | Sequence[str] | None

COUNT_COLUMNS = ["conversations", "infra_errors", "infra_share", "counted", "successes", "failures",
                 "failed", "unscored", "model_errors", "internal_errors"]


def _by(by: By) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def scored_mask(conv: pd.DataFrame) -> pd.Series:
    """Rows with a known verdict (not infra, success not null): the reference a judge is compared with."""
    infra = conv["error_kind"].astype(object).eq(INFRA).to_numpy(dtype=bool)
    return pd.Series(~infra & conv["success"].notna().to_numpy(dtype=bool), index=conv.index)


def _with_flags(conv: pd.DataFrame) -> pd.DataFrame:
    df = conv.copy()
    out = outcomes(conv).astype(object)
    for name, label in (("_infra", INFRA), ("_success", "success"), ("_failed", "failed"),
                        ("_unscored", "unscored"), ("_model", MODEL), ("_internal", INTERNAL)):
        df[name] = (out == label).astype(int)
    df["_counted"] = 1 - df["_infra"]
    return df


_AGG = {"conversations": ("_counted", "size"), "infra_errors": ("_infra", "sum"), "counted": ("_counted", "sum"),
        "successes": ("_success", "sum"), "failed": ("_failed", "sum"), "unscored": ("_unscored", "sum"),
        "model_errors": ("_model", "sum"), "internal_errors": ("_internal", "sum")}


def counts(conv: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """Rows per outcome per group: conversations (all rows), infra_errors and
    infra_share (left out of rates), counted (the rest), successes, failures
    (counted - successes) split into failed, unscored, model_errors and
    internal_errors."""
    df = _with_flags(conv)
    keys = _by(by)
    if not keys:
        out = pd.DataFrame([{name: int(df[col].size if fn == "size" else df[col].sum())
                             for name, (col, fn) in _AGG.items()}])
    else:
        out = df.groupby(keys, dropna=False, sort=True, observed=True).agg(**_AGG).reset_index()
    out["failures"] = out["counted"] - out["successes"]
    out["infra_share"] = [i / n if n else math.nan for i, n in zip(out["infra_errors"], out["conversations"])]
    return out[[*keys, *COUNT_COLUMNS]]


def task_counts(conv: pd.DataFrame, by: By = None, task: str = "scenario") -> pd.DataFrame:
    """Counted trials n (all but infra) and successes c per task (and group)."""
    df = _with_flags(conv)
    df = df[df["_counted"] == 1]
    keys = _by(by) + [task]
    return df.groupby(keys, dropna=False, sort=True, observed=True).agg(
        n=("_counted", "sum"), c=("_success", "sum")).reset_index()


# --- pass^k and pass@k ------------------------------------------------------------------


def pass_hat_k_task(n: int, c: int, k: int) -> float:
    """τ-bench's per-task pass^k: C(c, k) / C(n, k); nan when n < k."""
    return math.comb(c, k) / math.comb(n, k) if n >= k else math.nan


def pass_at_k_task(n: int, c: int, k: int) -> float:
    """Per-task pass@k: 1 - C(n - c, k) / C(n, k); nan when n < k."""
    return 1 - math.comb(n - c, k) / math.comb(n, k) if n >= k else math.nan


def _per_task(tc: pd.DataFrame, k: int, fn: Any) -> pd.Series:
    return pd.Series([fn(int(n), int(c), k) for n, c in zip(tc["n"], tc["c"])], index=tc.index, dtype=float)


def pass_k_curve(conv: pd.DataFrame, ks: Sequence[int] = (1, 2, 3, 4), by: By = None, task: str = "scenario"
                 ) -> pd.DataFrame:
    """pass^k and pass@k per group and k over all the group's tasks, for k up to
    ``k_cap`` (the group's smallest counted trial count, as τ²); larger k are NaN
    with ``tasks`` 0. Non-increasing in k by construction. ``conversations`` is
    the counted trials the figures rest on."""
    keys = _by(by)
    tc = task_counts(conv, keys, task)
    rows = []
    groups = tc.groupby(keys, dropna=False, sort=True, observed=True) if keys else [((), tc)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        cap = int(g["n"].min()) if len(g) else 0
        for k in ks:
            ok = k <= cap
            hat = _per_task(g, k, pass_hat_k_task) if ok else pd.Series(dtype=float)
            at = _per_task(g, k, pass_at_k_task) if ok else pd.Series(dtype=float)
            rows.append({**dict(zip(keys, key)), "k": k, "k_cap": cap, "tasks": len(g) if ok else 0,
                         "conversations": int(g["n"].sum()) if ok else 0,
                         "pass_hat_k": float(hat.mean()) if ok else math.nan,
                         "pass_at_k": float(at.mean()) if ok else math.nan})
    return pd.DataFrame(rows, columns=[*keys, "k", "k_cap", "tasks", "conversations", "pass_hat_k", "pass_at_k"])


# --- tables -----------------------------------------------------------------------------


def _with_rates(out: pd.DataFrame, tc: pd.DataFrame, keys: list[str], n_boot: int, confidence: float,
                seed: int) -> pd.DataFrame:
    """success_rate, its task-clustered interval (ci_lo, ci_hi) and tasks, per row of ``out``."""
    out = out.copy()
    out["success_rate"] = [success_rate(s, n) for s, n in zip(out["successes"], out["counted"])]
    rows = []
    groups = tc.groupby(keys, dropna=False, sort=False, observed=True) if keys else [((), tc)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        lo, hi = rate_interval(g["n"], g["c"], n_boot, confidence, seed)
        rows.append({**dict(zip(keys, key)), "ci_lo": lo, "ci_hi": hi, "tasks": int((g["n"] > 0).sum())})
    ci = pd.DataFrame(rows, columns=[*keys, "ci_lo", "ci_hi", "tasks"])
    if not keys:
        return out.assign(**(ci.iloc[0].to_dict() if len(ci) else {"ci_lo": math.nan, "ci_hi": math.nan,
                                                                      "tasks": 0}))
    for k in keys:  # categorical keys merge by value
        out[k], ci[k] = out[k].astype(object), ci[k].astype(object)
    out = out.merge(ci, on=keys, how="left")
    out["tasks"] = out["tasks"].fillna(0).astype(int)
    return out


def cost_and_tokens(conv: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """Known cost and all tokens per group, and per success.

    Cost and tokens count every row (infra errors spent money too); a cost
    that no row knows is NaN, not 0.
    """
    df = _with_flags(conv)
    cost_cols = ["agent_cost_usd", "user_cost_usd", "judge_cost_usd"]
    tok_cols = ["agent_prompt_tokens", "agent_completion_tokens", "user_prompt_tokens", "user_completion_tokens",
                "judge_prompt_tokens", "judge_completion_tokens"]
    df["_cost"] = df[cost_cols].sum(axis=1, min_count=1)
    df["_tokens"] = df[tok_cols].sum(axis=1)
    keys = _by(by)
    grouped = df.groupby(keys, dropna=False, sort=True, observed=True) if keys else df.groupby(lambda _: 0)
    out = grouped.agg(successes=("_success", "sum"), cost_usd=("_cost", lambda s: s.sum(min_count=1)),
                      tokens=("_tokens", "sum")).reset_index(drop=not keys)
    out["cost_per_success"] = [c / s if s else math.nan for c, s in zip(out["cost_usd"], out["successes"])]
    out["tokens_per_success"] = [t / s if s else math.nan for t, s in zip(out["tokens"], out["successes"])]
    return out


# How model replies ended badly, per conversation (columns absent from older runs count 0).
STOP_COLUMNS = ("truncated_replies", "truncated_tool_calls", "filtered_replies", "prompt_filtered_replies",
                "refused_replies", "malformed_call_replies", "text_tool_call_replies", "malformed_tool_calls",
                "empty_replies")


def stop_reasons(conv: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """Per group: conversations, and the replies cut at the length limit (text and tool calls),
    filtered by the provider (output, prompt), refused by the model, stopped on a call the provider
    could not parse, with a tool call written as text, malformed and empty."""
    df = conv.copy()
    for col in STOP_COLUMNS:
        df[col] = df[col].fillna(0).astype(int) if col in df else 0
    keys = _by(by)
    grouped = df.groupby(keys, dropna=False, sort=True, observed=True) if keys else df.groupby(lambda _: 0)
    return grouped.agg(conversations=("conversation_id", "count"),
                       **{c: (c, "sum") for c in STOP_COLUMNS}).reset_index(drop=not keys)


def leaderboard(conv: pd.DataFrame, by: By = "agent_model", k_max: int = 4, task: str = "scenario",
                n_boot: int = 2000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per group: every outcome counted, success rate with its task-clustered
    interval (``ci_lo``, ``ci_hi``), tasks, pass^1..k_max (NaN past ``k_cap``),
    cost and tokens per success; best first."""
    keys = _by(by)
    tc = task_counts(conv, keys, task)
    out = _with_rates(counts(conv, keys), tc, keys, n_boot, confidence, seed)
    curve = pass_k_curve(conv, range(1, k_max + 1), keys, task)
    for k in range(1, k_max + 1):
        ck = curve[curve["k"] == k][[*keys, "pass_hat_k", "k_cap"]].rename(columns={"pass_hat_k": f"pass_hat_{k}"})
        if k > 1:
            ck = ck.drop(columns=["k_cap"])
        out = out.merge(ck, on=keys, how="left") if keys else out.assign(**ck.iloc[0].to_dict())
    cost = cost_and_tokens(conv, keys).drop(columns=["successes"])
    out = out.merge(cost, on=keys, how="left") if keys else pd.concat([out, cost], axis=1)
    return out.sort_values(["success_rate", *keys], ascending=[False, *[True] * len(keys)],
                           na_position="last").reset_index(drop=True)


def breakdown(conv: pd.DataFrame, dimension: str, by: By = "agent_model", task: str = "scenario",
              n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Every outcome counted and the success rate with its task-clustered interval per
    group and value of ``dimension`` (domain, issue_type, persona, policy_variant,
    termination_reason...); a missing value is shown as '(none)'."""
    df = conv.copy()
    df[dimension] = df[dimension].astype(object).where(df[dimension].notna(), "(none)")
    keys = [*_by(by), dimension]
    return _with_rates(counts(df, keys), task_counts(df, keys, task), keys, n_boot, confidence, seed)


class PairedComparison(BaseModel):
    """Two arms (models, cells, policy variants) on the tasks both ran."""

    model_config = ConfigDict(frozen=True)

    a: str = Field(description="First arm.")
    b: str = Field(description="Second arm.")
    tasks: int = Field(description="Tasks with scored trials in both arms.")
    rate_a: float = Field(description="Mean per-task success rate of a on those tasks.")
    rate_b: float = Field(description="Mean per-task success rate of b on those tasks.")
    difference: float = Field(description="rate_a - rate_b.")
    lo: float = Field(description="Lower end of the task-bootstrap interval of the difference.")
    hi: float = Field(description="Upper end of that interval.")
    won: int = Field(description="Tasks where a's rate is higher.")
    lost: int = Field(description="Tasks where b's rate is higher.")
    tied: int = Field(description="Tasks with equal rates.")


def paired_comparison(conv: pd.DataFrame, a: str, b: str, by: str = "agent_model", task: str = "scenario",
                      n_boot: int = 2000, confidence: float = 0.95, seed: int = 0) -> PairedComparison:
    """Compare arm ``a`` with arm ``b`` (values of column ``by``) on identical tasks."""
    tc = task_counts(conv[conv[by].isin([a, b])], by, task)
    tc["rate"] = tc["c"] / tc["n"]
    wide = tc.pivot_table(index=task, columns=by, values="rate", aggfunc="first")
    if a not in wide.columns or b not in wide.columns:
        wide = wide.reindex(columns=[a, b])
    wide = wide.dropna(subset=[a, b])
    diff = (wide[a] - wide[b]).to_numpy(dtype=float)
    lo, hi = task_bootstrap(diff, None, n_boot, confidence, seed)
    nan = math.nan
    return PairedComparison(
        a=a, b=b, tasks=len(wide), rate_a=float(wide[a].mean()) if len(wide) else nan,
        rate_b=float(wide[b].mean()) if len(wide) else nan, difference=float(diff.mean()) if len(diff) else nan,
        lo=lo, hi=hi, won=int((diff > 0).sum()), lost=int((diff < 0).sum()), tied=int((diff == 0).sum()))


def manual_vs_workflow(conv: pd.DataFrame, by: By = "agent_model", n_boot: int = 2000, confidence: float = 0.95,
                       seed: int = 0) -> pd.DataFrame:
    """Per group: workflow policy minus manual policy on identical upstream tasks."""
    keys = _by(by)
    df = conv[conv["policy_variant"].isin(["manual", "workflow"])]
    rows = []
    groups = df.groupby(keys, dropna=False, sort=True, observed=True) if keys else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        pc = paired_comparison(g, "workflow", "manual", by="policy_variant", task="upstream_id",
                               n_boot=n_boot, confidence=confidence, seed=seed)
        rows.append({**dict(zip(keys, key)), **pc.model_dump(exclude={"a", "b"})})
    cols = [*keys, *[f for f in PairedComparison.model_fields if f not in ("a", "b")]]
    return pd.DataFrame(rows, columns=cols)


__all__ = ["BOOTSTRAP_SEED", "COUNT_COLUMNS", "STOP_COLUMNS", "By", "PairedComparison", "binary_metrics", "breakdown",
           "cohen_kappa", "cost_and_tokens", "counts", "fleiss_kappa", "kappa_interval", "leaderboard", "majority",
           "manual_vs_workflow", "paired_comparison", "pass_at_k_task", "pass_hat_k_task", "pass_k_curve",
           "rate_interval", "scored_mask", "stop_reasons", "tally_votes", "task_bootstrap", "task_counts",
           "unscored_by_truth", "unscored_reason_class", "wilson_interval"]
