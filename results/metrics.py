"""Metrics over the conversations table (pure functions of DataFrames).

Rates count only *scored* rows: infra-error rows (``error_kind == 'infra'``)
say nothing about the model and are counted separately, and unscored rows
(``success`` null) are neither a pass nor a fail (design rule 4). A *task* is
a scenario by default; trials of one task are its repeated draws.

pass^k follows τ-bench: per task with n scored trials of which c passed,
C(c, k) / C(n, k) (the chance that k trials drawn without replacement all
pass), averaged over tasks with n >= k. Intervals over tasks are bootstrap
intervals that resample whole tasks (trials of one task are not independent),
seeded so a report is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

By = str | Sequence[str] | None

COUNT_COLUMNS = ["conversations", "infra_errors", "unscored", "scored", "successes"]


def _by(by: By) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def scored_mask(conv: pd.DataFrame) -> pd.Series:
    """Rows that count in rates: not an infra error and not unscored."""
    infra = conv["error_kind"].eq("infra").fillna(False).astype(bool)
    return (~infra) & conv["success"].notna()


def _with_flags(conv: pd.DataFrame) -> pd.DataFrame:
    df = conv.copy()
    df["_infra"] = df["error_kind"].eq("infra").fillna(False).astype(int)
    df["_scored"] = scored_mask(conv).astype(int)
    df["_unscored"] = ((df["_infra"] == 0) & conv["success"].isna()).astype(int)
    df["_success"] = (df["_scored"].astype(bool) & conv["success"].fillna(False).astype(bool)).astype(int)
    return df


def counts(conv: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """conversations, infra_errors, unscored, scored, successes per group."""
    df = _with_flags(conv)
    keys = _by(by)
    agg = {"conversations": ("_scored", "size"), "infra_errors": ("_infra", "sum"),
           "unscored": ("_unscored", "sum"), "scored": ("_scored", "sum"), "successes": ("_success", "sum")}
    if not keys:
        return pd.DataFrame([{name: int(df[col].size if fn == "size" else df[col].sum())
                              for name, (col, fn) in agg.items()}])
    return df.groupby(keys, dropna=False, sort=True).agg(**agg).reset_index()


# --- rates and intervals ----------------------------------------------------------------


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate; (nan, nan) when n == 0."""
    if n <= 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, center - half), min(1.0, center + half))


def task_bootstrap(values: Sequence[float], weights: Sequence[float] | None = None, n_boot: int = 2000,
                   confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the (weighted) mean of per-task values, resampling tasks."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return (math.nan, math.nan)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    wsum = w[idx].sum(axis=1)
    stats = np.where(wsum > 0, (v[idx] * w[idx]).sum(axis=1) / np.where(wsum > 0, wsum, 1), np.nan)
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(stats, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def task_counts(conv: pd.DataFrame, by: By = None, task: str = "scenario") -> pd.DataFrame:
    """Scored trials n and successes c per task (and group)."""
    df = _with_flags(conv)
    df = df[df["_scored"] == 1]
    keys = _by(by) + [task]
    return df.groupby(keys, dropna=False, sort=True).agg(n=("_scored", "sum"), c=("_success", "sum")).reset_index()


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
    """pass^k and pass@k per group and k, averaged over tasks with at least k scored trials."""
    keys = _by(by)
    tc = task_counts(conv, keys, task)
    rows = []
    groups = tc.groupby(keys, dropna=False, sort=True) if keys else [((), tc)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for k in ks:
            hat, at = _per_task(g, k, pass_hat_k_task), _per_task(g, k, pass_at_k_task)
            rows.append({**dict(zip(keys, key)), "k": k, "tasks": int(hat.notna().sum()),
                         "pass_hat_k": float(hat.mean()) if hat.notna().any() else math.nan,
                         "pass_at_k": float(at.mean()) if at.notna().any() else math.nan})
    return pd.DataFrame(rows, columns=[*keys, "k", "tasks", "pass_hat_k", "pass_at_k"])


def pass_hat_k(conv: pd.DataFrame, k: int, task: str = "scenario") -> float:
    """pass^k of all rows as one group."""
    return float(pass_k_curve(conv, [k], None, task)["pass_hat_k"].iloc[0])


# --- tables -----------------------------------------------------------------------------


def _rate_columns(df: pd.DataFrame, confidence: float) -> pd.DataFrame:
    df = df.copy()
    df["success_rate"] = [s / n if n else math.nan for s, n in zip(df["successes"], df["scored"])]
    wil = [wilson_interval(int(s), int(n), confidence) for s, n in zip(df["successes"], df["scored"])]
    df["wilson_lo"] = [w[0] for w in wil]
    df["wilson_hi"] = [w[1] for w in wil]
    return df


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
    grouped = df.groupby(keys, dropna=False, sort=True) if keys else df.groupby(lambda _: 0)
    out = grouped.agg(successes=("_success", "sum"), cost_usd=("_cost", lambda s: s.sum(min_count=1)),
                      tokens=("_tokens", "sum")).reset_index(drop=not keys)
    out["cost_per_success"] = [c / s if s else math.nan for c, s in zip(out["cost_usd"], out["successes"])]
    out["tokens_per_success"] = [t / s if s else math.nan for t, s in zip(out["tokens"], out["successes"])]
    return out


def leaderboard(conv: pd.DataFrame, by: By = "agent_model", k_max: int = 4, task: str = "scenario",
                n_boot: int = 2000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per group: counts, success rate with Wilson and task-bootstrap
    intervals, pass^1..k_max, cost and tokens per success; best first."""
    keys = _by(by)
    out = _rate_columns(counts(conv, keys), confidence)
    tc = task_counts(conv, keys, task)
    boots = []
    for _, row in out.iterrows():
        g = tc
        for k in keys:
            g = g[g[k] == row[k]] if pd.notna(row[k]) else g[g[k].isna()]
        rates = (g["c"] / g["n"]).tolist()
        boots.append(task_bootstrap(rates, g["n"].tolist(), n_boot, confidence, seed))
    out["boot_lo"] = [b[0] for b in boots]
    out["boot_hi"] = [b[1] for b in boots]
    out["tasks"] = [int(((tc[keys] == r[keys]).all(axis=1)).sum()) if keys else len(tc) for _, r in out.iterrows()]
    curve = pass_k_curve(conv, range(1, k_max + 1), keys, task)
    for k in range(1, k_max + 1):
        ck = curve[curve["k"] == k][[*keys, "pass_hat_k"]].rename(columns={"pass_hat_k": f"pass_hat_{k}"})
        out = out.merge(ck, on=keys, how="left") if keys else out.assign(**{f"pass_hat_{k}": ck.iloc[0, -1]})
    cost = cost_and_tokens(conv, keys).drop(columns=["successes"])
    out = out.merge(cost, on=keys, how="left") if keys else pd.concat([out, cost], axis=1)
    return out.sort_values(["success_rate", *keys], ascending=[False, *[True] * len(keys)],
                           na_position="last").reset_index(drop=True)


def breakdown(conv: pd.DataFrame, dimension: str, by: By = "agent_model", confidence: float = 0.95) -> pd.DataFrame:
    """Counts and success rate (with Wilson interval) per group and value of
    ``dimension`` (domain, issue_type, persona, policy_variant, termination_reason...);
    a missing value is shown as '(none)'."""
    df = conv.copy()
    df[dimension] = df[dimension].astype(object).where(df[dimension].notna(), "(none)")
    return _rate_columns(counts(df, [*_by(by), dimension]), confidence)


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
    groups = df.groupby(keys, dropna=False, sort=True) if keys else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        pc = paired_comparison(g, "workflow", "manual", by="policy_variant", task="upstream_id",
                               n_boot=n_boot, confidence=confidence, seed=seed)
        rows.append({**dict(zip(keys, key)), **pc.model_dump(exclude={"a", "b"})})
    cols = [*keys, *[f for f in PairedComparison.model_fields if f not in ("a", "b")]]
    return pd.DataFrame(rows, columns=cols)


# --- judge agreement --------------------------------------------------------------------


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two binary raters; nan when chance agreement is 1 (both constant and equal)."""
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if x.size == 0:
        return math.nan
    po = float((x == y).mean())
    pe = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    return (po - pe) / (1 - pe) if pe < 1 else math.nan


JUDGE_KEYS = ["judge_config_id", "judge_model", "prompt_id", "prompt_version"]


def judge_labels(judge_verdicts: pd.DataFrame) -> pd.DataFrame:
    """One verdict per conversation and judge config: the majority of its scored
    samples (NA on a tie or when no sample was scored)."""
    jv = judge_verdicts.copy()
    jv["_yes"] = jv["passed"].eq(True).fillna(False).astype(int)
    jv["_no"] = jv["passed"].eq(False).fillna(False).astype(int)
    out = jv.groupby(["run_id", "conversation_id", *JUDGE_KEYS], dropna=False, sort=True).agg(
        samples=("sample_index", "size"), yes=("_yes", "sum"), no=("_no", "sum")).reset_index()
    out["judge_passed"] = pd.array([True if y > n else False if n > y else pd.NA
                                    for y, n in zip(out["yes"], out["no"])], dtype="boolean")
    out["unscored_samples"] = out["samples"] - out["yes"] - out["no"]
    return out.drop(columns=["yes", "no"])


def judge_config_label(row: Any) -> str:
    return f"{row['judge_model']} · {row['prompt_id']}@{row['prompt_version']}"


def _judged(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str) -> pd.DataFrame:
    labels = judge_labels(judge_verdicts)
    ref = conv[scored_mask(conv)][["run_id", "conversation_id", reference]]
    return labels.merge(ref, on=["run_id", "conversation_id"], how="left")


def judge_agreement(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str = "success") -> pd.DataFrame:
    """Per judge config: confusion against the reference verdict (predicates'
    ``success`` by default), accuracy and κ over conversations both scored."""
    df = _judged(conv, judge_verdicts, reference)
    rows = []
    for key, g in df.groupby(JUDGE_KEYS, dropna=False, sort=True):
        both = g[g["judge_passed"].notna() & g[reference].notna()]
        j, r = both["judge_passed"].astype(bool).to_numpy(), both[reference].astype(bool).to_numpy()
        n = len(both)
        rows.append({**dict(zip(JUDGE_KEYS, key)), "label": judge_config_label(dict(zip(JUDGE_KEYS, key))),
                     "judged": len(g), "judge_unscored": int(g["judge_passed"].isna().sum()), "n": n,
                     "tp": int((j & r).sum()), "fp": int((j & ~r).sum()), "fn": int((~j & r).sum()),
                     "tn": int((~j & ~r).sum()), "accuracy": float((j == r).mean()) if n else math.nan,
                     "kappa": cohen_kappa(j, r), "judge_pass_rate": float(j.mean()) if n else math.nan,
                     "reference_pass_rate": float(r.mean()) if n else math.nan})
    return pd.DataFrame(rows, columns=[*JUDGE_KEYS, "label", "judged", "judge_unscored", "n", "tp", "fp", "fn", "tn",
                                       "accuracy", "kappa", "judge_pass_rate", "reference_pass_rate"])


def judge_pairwise(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str = "success",
                   reference_label: str = "predicates") -> pd.DataFrame:
    """Agreement and κ between every two raters (each judge config and the
    reference), on the conversations both scored: the heatmap's cells."""
    df = _judged(conv, judge_verdicts, reference)
    keyed = df.assign(label=[judge_config_label(r) for _, r in df.iterrows()]) if len(df) else df.assign(label=[])
    raters: dict[str, pd.Series] = {}
    for label, g in keyed.groupby("label", sort=True):
        raters[label] = g.set_index(["run_id", "conversation_id"])["judge_passed"]
    ref = conv[scored_mask(conv)].set_index(["run_id", "conversation_id"])[reference]
    raters = {reference_label: ref, **raters}
    rows = []
    for la, sa in raters.items():
        for lb, sb in raters.items():
            joined = pd.concat([sa.rename("a"), sb.rename("b")], axis=1, join="inner").dropna()
            x, y = joined["a"].astype(bool).to_numpy(), joined["b"].astype(bool).to_numpy()
            rows.append({"rater_a": la, "rater_b": lb, "n": len(joined),
                         "agreement": float((x == y).mean()) if len(joined) else math.nan,
                         "kappa": cohen_kappa(x, y)})
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "n", "agreement", "kappa"])
