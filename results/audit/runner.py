"""Audit stored runs: read a run's tables, run every detector on every conversation,
attribute each conversation, and (unless told not to) write the audit's tables next to
the run's. Nothing is re-run; the audit reads only what the run recorded.
"""

from __future__ import annotations

import secrets
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tauray.results.audit.agent_faults import AGENT_DETECTORS
from tauray.results.audit.attribution import attribute, finding_key
from tauray.results.audit.detectors import DETECTORS as USER_DETECTORS
from tauray.results.audit.detectors import Detector, Finding, detect_all
from tauray.results.audit.trajectory import Trajectory, trajectories
from tauray.results.layout import run_dirs
from tauray.results.records import SimAttributionRecord, SimFindingRecord

DETECTORS: tuple[Detector, ...] = (*USER_DETECTORS, *AGENT_DETECTORS)
"""What ``tauray audit`` runs: the simulator's detectors, then the agent's."""


class ConversationAudit(BaseModel):
    """The audit of one conversation: its findings and who failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keys: dict[str, Any] = Field(description="run_id, conversation_id, unit_id, attempt, scenario.")
    user_model: str = Field(description="The conversation's user model.")
    success: bool | None = Field(description="Its stored verdict.")
    findings: tuple[Finding, ...] = Field(description="What the detectors found.")
    attribution: str = Field(description="Who failed.")
    decisive: Finding | None = Field(description="The deciding finding, if any.")
    reason: str = Field(description="Why, one line.")


class AuditSummary(BaseModel):
    """What ``tauray audit`` prints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    audit_id: str
    runs: int
    conversations: int
    findings: int
    findings_by_class: dict[str, int]
    attributions: dict[str, int]
    detectors: list[str]
    written: bool
    judge: dict[str, Any] | None = Field(None, description="The judge tier's totals (checks, faults, clean, "
                                         "unscored and why, calls, infra errors); None without --judge.")


def _success(value: Any) -> bool | None:
    import pandas as pd

    try:
        return None if value is None or pd.isna(value) else bool(value)  # NaN / pd.NA
    except TypeError:
        return None


def audit_trajectory(t: Trajectory, detectors: tuple[Detector, ...] = DETECTORS,
                     judged: tuple[Finding, ...] = ()) -> ConversationAudit:
    """Findings and attribution of one conversation; ``judged``: the judge tier's findings on
    it, attributed together with the rules' (in message order)."""
    from tauray.results.audit.counterfactual import alone, flips

    findings = [f.model_copy(update={"flips_verdict": flips(t, f)}) if f.effect == "outcome" else f
                for f in detect_all(t, detectors)]
    if judged:
        findings = sorted([*findings, *judged], key=lambda f: (-1 if f.message_seq is None else f.message_seq,
                                                                f.tier, f.detector))
    success = _success(t.row.get("success"))
    error_kind = t.row.get("error_kind")
    sides = {f.blamed_side for f in findings if f.effect == "outcome"}
    both = success is False and {"user", "agent"} <= sides  # only then does a fault's weight alone matter
    verdict = attribute(success, error_kind if isinstance(error_kind, str) else None, findings,
                        {finding_key(f): alone(t, f) for f in findings if f.effect == "outcome"} if both else None)
    return ConversationAudit(keys=t.keys, user_model=str(t.row.get("user_model")), success=success,
                             findings=tuple(findings), attribution=verdict.attribution, decisive=verdict.decisive,
                             reason=verdict.reason)


class JudgeTier(BaseModel):
    """The audit's judge tier as ``tauray audit --judge`` asks for it (``judge_tier.py``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    configs: list[Any] = Field(description="Audit judge configs (``judge_tier.audit_judge_configs``).")
    use_ray: bool = Field(False, description="Judge on a Ray judge actor.")
    concurrency: int = Field(16, ge=1, description="Judge items in flight.")
    progress: bool = Field(False, description="Show a progress bar.")
    probe: bool = Field(True, description="Call each judge model once before judging.")

    @property
    def labels(self) -> list[str]:
        return [f"{c.prompt}:{c.model.model}" for c in self.configs]


def audit_run_dir(run_dir: Path | str, detectors: tuple[Detector, ...] = DETECTORS,
                  judge: JudgeTier | None = None, totals: list[Any] | None = None) -> list[ConversationAudit]:
    """Audit every counted conversation of one run directory (or sweep folder); with ``judge``
    its judge tier too (its totals appended to ``totals``)."""
    from tauray.results.readers import actions_df, conversations_df, messages_df

    conv = conversations_df(run_dir)
    if conv.empty:
        return []
    ts = trajectories(conv, messages_df(run_dir), actions_df(run_dir))
    judged: list[tuple[Finding, ...]] = [() for _ in ts]
    if judge is not None:
        from tauray.results.audit.judge_tier import judge_findings

        tier = judge_findings(ts, judge.configs, use_ray=judge.use_ray, concurrency=judge.concurrency,
                              progress=judge.progress, probe=judge.probe and not totals)
        judged = [a.findings for a in tier.audits]
        if totals is not None:
            totals.append(tier)
    return [audit_trajectory(t, detectors, j) for t, j in zip(ts, judged)]


def _judge_totals(tiers: list[Any]) -> dict[str, Any]:
    reasons: Counter[str] = Counter()
    for t in tiers:
        reasons.update(t.unscored_reasons)
    keys = ("conversations", "judged", "checks", "faults", "clean", "unscored", "calls", "infra_errors")
    return {**{k: sum(getattr(t, k, 0) for t in tiers) for k in keys}, "unscored_reasons": dict(reasons)}


def audit_rows(audits: list[ConversationAudit], audit_id: str, at: datetime,
               detectors: tuple[Detector, ...] = DETECTORS,
               names: list[str] | None = None) -> dict[str, list[BaseModel]]:
    """The audit tables' rows for these conversations (``names``: what audited them, the
    detectors' keys by default)."""
    names = names if names is not None else [d.key for d in detectors]
    findings, attributions = [], []
    for a in audits:
        for f in a.findings:
            findings.append(SimFindingRecord(**a.keys, audit_id=audit_id, detector=f.detector,
                                             detector_version=f.detector_version, fault_class=f.fault_class,
                                             blamed_side=f.blamed_side, effect=f.effect, tier=f.tier, turn=f.turn,
                                             message_seq=f.message_seq, evidence=f.evidence,
                                             flips_verdict=f.flips_verdict, audited_at=at))
        d = a.decisive
        attributions.append(SimAttributionRecord(
            **a.keys, audit_id=audit_id, attribution=a.attribution,
            decisive_finding=f"{d.detector}@{d.detector_version}" if d else None,
            decisive_class=d.fault_class if d else None, decisive_turn=d.turn if d else None, reason=a.reason,
            findings=len(a.findings), user_findings=sum(f.blamed_side == "user" for f in a.findings),
            agent_findings=sum(f.blamed_side == "agent" for f in a.findings),
            success=a.success, detectors=names, audited_at=at))
    return {"sim_findings": findings, "sim_attributions": attributions}


def audit_path(path: Path | str, write: bool = True, detectors: tuple[Detector, ...] = DETECTORS,
               judge: JudgeTier | None = None) -> tuple[AuditSummary, list[ConversationAudit]]:
    """Audit a run directory or a sweep folder (with ``judge``, its judge tier too); write the
    audit tables into each run directory."""
    from tauray.results.audit.store import write_audit

    audit_id = f"audit-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    at = datetime.now(UTC)
    every: list[ConversationAudit] = []
    dirs = run_dirs(path)
    tiers: list[Any] = []
    names = [d.key for d in detectors] + (judge.labels if judge else [])
    for run_dir in dirs:
        audits = audit_run_dir(run_dir, detectors, judge, tiers)
        every += audits
        if write:
            rows = audit_rows(audits, audit_id, at, detectors, names)
            for run_id in sorted({a.keys["run_id"] for a in audits}):
                write_audit(run_dir, run_id, {t: [r for r in rs if r.run_id == run_id] for t, rs in rows.items()})
    summary = AuditSummary(
        path=str(path), audit_id=audit_id, runs=len(dirs), conversations=len(every),
        findings=sum(len(a.findings) for a in every),
        findings_by_class=dict(Counter(f.fault_class for a in every for f in a.findings).most_common()),
        attributions=dict(Counter(a.attribution for a in every).most_common()),
        detectors=names, written=write, judge=_judge_totals(tiers) if judge else None)
    return summary, every


__all__ = ["DETECTORS", "AuditSummary", "ConversationAudit", "JudgeTier", "audit_path", "audit_rows", "audit_run_dir", "audit_trajectory"]
