"""What the audit says about a run, as tables: success raw and with simulator-caused
failures set aside (per arm), agents ranked both ways, and the simulators' faults per 100
conversations by class (per user model). Read from the stored conversations and each
conversation's newest audit.

The rates are :func:`~tauray.results.stats.outcomes.success_rate` over the rows
:func:`~tauray.results.stats.outcomes.tally` counts (every row but infra), as in the run summary
and the report; the adjusted rate also sets aside the failures attributed to the simulator.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tauray.results.stats.metrics import wilson_interval
from tauray.results.stats.outcomes import outcomes, success_rate, tally
from tauray.results.tables.readers import conversations_df, sim_attributions_df, sim_findings_df

KEY = ["run_id", "conversation_id"]


def _audited(path: Path | str) -> pd.DataFrame:
    conv = conversations_df(path, columns=["run_id", "conversation_id", "agent_model", "user_model", "success",
                                           "error_kind", "attribution"])
    if conv["attribution"].isna().all():
        raise ValueError(f"{path} has no audit: run `tauray audit {path}` first")
    return conv.astype({"run_id": str, "conversation_id": str})


def _rates(g: pd.DataFrame) -> dict[str, float | int | None]:
    """Counted rows, successes, simulator failures and both rates of one group."""
    counts = tally(outcomes(g))
    n, ok = counts["counted"], counts["success"]
    sim = int((g["attribution"] == "simulator").sum())
    raw, adjusted = success_rate(ok, n), success_rate(ok, n - sim)
    return {"conversations": n, "success": ok, "simulator_failures": sim,
            "raw_rate": None if pd.isna(raw) else raw, "adjusted_rate": None if pd.isna(adjusted) else adjusted}


def adjusted_success(path: Path | str) -> pd.DataFrame:
    """Per arm: success raw, and with the conversations whose failure the audit attributes
    to the simulator set aside, each with its 95% Wilson interval."""
    rows = []
    for (agent, user), g in _audited(path).groupby(["agent_model", "user_model"], observed=True):
        r = _rates(g)
        raw_lo, raw_hi = wilson_interval(r["success"], r["conversations"])
        adj_lo, adj_hi = wilson_interval(r["success"], r["conversations"] - r["simulator_failures"])
        rows.append({"agent_model": agent, "user_model": user, **r, "raw_low": raw_lo, "raw_high": raw_hi,
                     "adjusted_low": adj_lo, "adjusted_high": adj_hi,
                     "mixed": int((g["attribution"] == "mixed").sum()),
                     "undetermined": int((g["attribution"] == "undetermined").sum())})
    return pd.DataFrame(rows)


def ranking(path: Path | str) -> pd.DataFrame:
    """Per agent model (over all its user models): success raw and simulator-adjusted, the
    rank each gives it (1 = best; ties share the better rank), and how far it moves
    (``rank_change`` > 0: up once simulator-caused failures are set aside)."""
    return rank_agents(_audited(path))


def rank_agents(merged: pd.DataFrame) -> pd.DataFrame:
    """:func:`ranking` over conversations with their attribution (``agent_model``, ``success``,
    ``error_kind``, ``attribution``)."""
    rows = [{"agent_model": agent, **_rates(g)} for agent, g in merged.groupby("agent_model", observed=True)]
    out = pd.DataFrame(rows, columns=["agent_model", "conversations", "success", "simulator_failures", "raw_rate",
                                      "adjusted_rate"])
    for kind in ("raw", "adjusted"):
        out[f"{kind}_rank"] = out[f"{kind}_rate"].astype(float).rank(ascending=False, method="min").astype("Int64")
    out["rank_change"] = out["raw_rank"] - out["adjusted_rank"]
    return out.sort_values(["adjusted_rank", "raw_rank", "agent_model"], na_position="last").reset_index(drop=True)


def faults_per_100(path: Path | str) -> pd.DataFrame:
    """Per user model: simulator faults per 100 conversations, one column per fault class."""
    merged = _audited(path)
    findings = sim_findings_df(path).astype({"run_id": str, "conversation_id": str})
    n = merged.groupby("user_model", observed=True).size().rename("conversations")
    if findings.empty:
        return n.reset_index()
    users = merged[[*KEY, "user_model"]]
    f = findings[findings["blamed_side"] == "user"].merge(users, on=KEY, how="inner")
    counts = f.groupby(["user_model", "fault_class"], observed=True).size().unstack(fill_value=0)
    per100 = counts.div(n, axis=0).mul(100).round(1)
    return pd.concat([n, per100], axis=1).fillna(0).reset_index()


def who_failed(path: Path | str) -> tuple[dict[str, int], int]:
    """Conversations per attribution and the findings of their newest audits (the run
    summary's `who failed (audit)` line); empty when nothing was audited."""
    att = sim_attributions_df(path, columns=["attribution"])
    counts = {str(k): int(v) for k, v in att["attribution"].value_counts().items() if v}
    return counts, len(sim_findings_df(path, columns=["audit_id"])) if counts else 0


__all__ = ["adjusted_success", "faults_per_100", "rank_agents", "ranking", "who_failed"]
