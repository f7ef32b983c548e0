"""What the audit says about a run, as tables: success raw and with simulator-caused
failures set aside (per arm), and the simulators' faults per 100 conversations by class
(per user model). Read from the stored conversations and the newest audit's tables.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from tauray.results.audit.store import read_audit
from tauray.results.metrics import wilson_interval

KEY = ["run_id", "conversation_id"]


def _joined(path: Path | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    from tauray.results.readers import conversations_df

    conv = conversations_df(path, columns=["run_id", "conversation_id", "agent_model", "user_model", "success",
                                           "error_kind"])
    att = read_audit(path, "sim_attributions")
    if att.empty:
        raise ValueError(f"{path} has no audit yet: run `tauray audit {path}` first")
    conv = conv.astype({"run_id": str, "conversation_id": str})
    att = att.astype({"run_id": str, "conversation_id": str})
    merged = conv.merge(att[[*KEY, "attribution"]], on=KEY, how="left")
    findings = read_audit(path, "sim_findings").astype({"run_id": str, "conversation_id": str})
    return merged, findings


def adjusted_success(path: Path | str) -> pd.DataFrame:
    """Per arm: success raw, and with the conversations whose failure the audit attributes
    to the simulator set aside (infra/harness rows are left out of both, as everywhere)."""
    merged, _ = _joined(path)
    rows = []
    for (agent, user), g in merged.groupby(["agent_model", "user_model"], observed=True):
        g = g[g["attribution"] != "harness"]
        n, ok = len(g), int(g["success"].fillna(False).astype(bool).sum())
        sim = int((g["attribution"] == "simulator").sum())
        raw_lo, raw_hi = wilson_interval(ok, n)
        adj_lo, adj_hi = wilson_interval(ok, n - sim)
        rows.append({"agent_model": agent, "user_model": user, "conversations": n, "success": ok,
                     "raw_rate": ok / n if n else None, "raw_low": raw_lo, "raw_high": raw_hi,
                     "simulator_failures": sim, "adjusted_rate": ok / (n - sim) if n - sim else None,
                     "adjusted_low": adj_lo, "adjusted_high": adj_hi,
                     "mixed": int((g["attribution"] == "mixed").sum()),
                     "undetermined": int((g["attribution"] == "undetermined").sum())})
    return pd.DataFrame(rows)


def ranking(path: Path | str) -> pd.DataFrame:
    """Per agent model (over all its user models): success raw and simulator-adjusted, the
    rank each gives it (1 = best; ties share the better rank), and how far it moves
    (``rank_change`` > 0: up once simulator-caused failures are set aside)."""
    return rank_agents(_joined(path)[0])


def rank_agents(merged: pd.DataFrame) -> pd.DataFrame:
    """:func:`ranking` over conversations joined with their attribution (``agent_model``,
    ``success``, ``attribution``)."""
    merged = merged[merged["attribution"] != "harness"]
    rows = []
    for agent, g in merged.groupby("agent_model", observed=True):
        n, ok = len(g), int(g["success"].fillna(False).astype(bool).sum())
        sim = int((g["attribution"] == "simulator").sum())
        rows.append({"agent_model": agent, "conversations": n, "success": ok, "simulator_failures": sim,
                     "raw_rate": ok / n if n else None, "adjusted_rate": ok / (n - sim) if n - sim else None})
    out = pd.DataFrame(rows, columns=["agent_model", "conversations", "success", "simulator_failures", "raw_rate",
                                      "adjusted_rate"])
    for kind in ("raw", "adjusted"):
        out[f"{kind}_rank"] = out[f"{kind}_rate"].rank(ascending=False, method="min").astype("Int64")
    out["rank_change"] = out["raw_rank"] - out["adjusted_rank"]
    return out.sort_values(["adjusted_rank", "raw_rank", "agent_model"], na_position="last").reset_index(drop=True)


def faults_per_100(path: Path | str) -> pd.DataFrame:
    """Per user model: simulator faults per 100 conversations, one column per fault class."""
    merged, findings = _joined(path)
    n = merged.groupby("user_model", observed=True).size().rename("conversations")
    if findings.empty:
        return n.reset_index()
    users = merged[[*KEY, "user_model"]]
    f = findings[findings["blamed_side"] == "user"].merge(users, on=KEY, how="inner")
    counts = f.groupby(["user_model", "fault_class"], observed=True).size().unstack(fill_value=0)
    per100 = counts.div(n, axis=0).mul(100).round(1)
    return pd.concat([n, per100], axis=1).fillna(0).reset_index()


__all__ = ["adjusted_success", "faults_per_100", "rank_agents", "ranking"]
