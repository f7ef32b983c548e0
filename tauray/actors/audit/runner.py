"""The audit of conversations: every rule on each one, its attribution, and the rows the
audit stores. The same function audits a conversation in the loop (``inloop``) and a stored
run again (``tauray audit``); nothing is re-run, the audit reads only what was recorded.

A judge tier (checks that need an LLM's judgement) is the caller's: it lives with the judge
(``tauray.actors.audit.judge_tier``) and comes here as findings per conversation.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.audit.agent_faults import AGENT_DETECTORS
from tauray.actors.audit.attribution import attribute, finding_key
from tauray.actors.audit.counterfactual import alone, flips
from tauray.actors.audit.finding import Detector, Finding, detect_all
from tauray.actors.audit.store import write_audit
from tauray.actors.audit.trajectory import Trajectory, trajectories
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.results.tables.layout import run_dirs
from tauray.results.tables.readers import actions_df, conversations_df, messages_df
from tauray.results.tables.records import SimAttributionRecord, SimFindingRecord

DETECTORS: tuple[Detector, ...] = (*USER_DETECTORS, *AGENT_DETECTORS)
"""What every audit runs: the simulator's rules, then the agent's."""

INLOOP_AUDIT_ID = "inloop-" + hashlib.sha256(",".join(d.key for d in DETECTORS).encode()).hexdigest()[:10]
"""The audit id of the audit made as each conversation finishes: one per set of rule versions."""

JudgeTier = Callable[[list[Trajectory]], tuple[list[tuple[Finding, ...]], dict[str, Any]]]
"""A judge tier as the audit sees it: per trajectory (in order) the judge's findings, and its
totals (checks, faults, clean, unscored and why, calls, infra errors)."""


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

    path: str = Field(description="The run directory or sweep folder audited.")
    audit_id: str = Field(description="This audit's id (its rows carry it).")
    runs: int = Field(description="Run directories audited.")
    conversations: int = Field(description="Conversations audited.")
    findings: int = Field(description="Findings, all sides and tiers.")
    findings_by_class: dict[str, int] = Field(description="Findings per fault class.")
    attributions: dict[str, int] = Field(description="Conversations per attribution.")
    detectors: list[str] = Field(description="What audited them (name@version, judge labels).")
    written: bool = Field(description="Whether the rows were written.")
    judge: dict[str, Any] | None = Field(None, description="The judge tier's totals (checks, faults, clean, "
                                         "unscored and why, calls, infra errors); None without --judge.")


def _success(value: Any) -> bool | None:
    try:
        return None if value is None or pd.isna(value) else bool(value)  # NaN / pd.NA
    except TypeError:
        return None


def audit_trajectory(t: Trajectory, detectors: tuple[Detector, ...] = DETECTORS,
                     judged: tuple[Finding, ...] = ()) -> ConversationAudit:
    """Findings and attribution of one conversation; ``judged``: the judge tier's findings on
    it, attributed together with the rules' (in message order)."""
    findings = [f.model_copy(update={"flips_verdict": flips(t, f)}) if f.effect == "outcome" else f
                for f in detect_all(t, detectors)]
    if judged:
        findings = sorted([*findings, *judged], key=lambda f: (-1 if f.message_seq is None else f.message_seq,
                                                                f.tier, f.detector))
    success = _success(t.row.get("success"))
    error_kind = t.row.get("error_kind")
    sides = {f.blamed_side for f in findings if f.effect == "outcome"}
    both = success is False and {"user", "agent"} <= sides  # only then does a fault's weight alone matter
    who = attribute(success, error_kind if isinstance(error_kind, str) else None, findings,
                    {finding_key(f): alone(t, f) for f in findings if f.effect == "outcome"} if both else None)
    return ConversationAudit(keys=t.keys, user_model=str(t.row.get("user_model")), success=success,
                             findings=tuple(findings), attribution=who.attribution, decisive=who.decisive,
                             reason=who.reason)


def audit_records(audit: ConversationAudit, audit_id: str, at: datetime,
               names: list[str]) -> tuple[list[SimFindingRecord], SimAttributionRecord]:
    """One conversation's audit as the rows of its two tables (``names``: what audited it)."""
    findings = [SimFindingRecord(**audit.keys, audit_id=audit_id, detector=f.detector,
                                 detector_version=f.detector_version, fault_class=f.fault_class,
                                 blamed_side=f.blamed_side, effect=f.effect, tier=f.tier, turn=f.turn,
                                 message_seq=f.message_seq, evidence=f.evidence, flips_verdict=f.flips_verdict,
                                 audited_at=at) for f in audit.findings]
    d = audit.decisive
    attribution = SimAttributionRecord(
        **audit.keys, audit_id=audit_id, attribution=audit.attribution,
        decisive_finding=f"{d.detector}@{d.detector_version}" if d else None,
        decisive_class=d.fault_class if d else None, decisive_turn=d.turn if d else None, reason=audit.reason,
        findings=len(audit.findings), user_findings=sum(f.blamed_side == "user" for f in audit.findings),
        agent_findings=sum(f.blamed_side == "agent" for f in audit.findings),
        success=audit.success, detectors=names, audited_at=at)
    return findings, attribution


def audit_run_dir(run_dir: Path | str, detectors: tuple[Detector, ...] = DETECTORS,
                  judge: JudgeTier | None = None,
                  totals: list[dict[str, Any]] | None = None) -> list[ConversationAudit]:
    """Audit every counted conversation of one run directory (or sweep folder); with ``judge``
    its judge tier too (its totals appended to ``totals``)."""
    conv = conversations_df(run_dir)
    if conv.empty:
        return []
    ts = trajectories(conv, messages_df(run_dir), actions_df(run_dir))
    judged: list[tuple[Finding, ...]] = [() for _ in ts]
    if judge is not None:
        judged, tier_totals = judge(ts)
        if totals is not None:
            totals.append(tier_totals)
    return [audit_trajectory(t, detectors, j) for t, j in zip(ts, judged)]


def _judge_totals(tiers: list[dict[str, Any]]) -> dict[str, Any]:
    reasons: Counter[str] = Counter()
    for t in tiers:
        reasons.update(t.get("unscored_reasons", {}))
    keys = ("conversations", "judged", "checks", "faults", "clean", "unscored", "calls", "infra_errors")
    return {**{k: sum(int(t.get(k, 0)) for t in tiers) for k in keys}, "unscored_reasons": dict(reasons)}


def new_audit_id() -> str:
    """The id of a new ``tauray audit`` (sorts after the audits before it)."""
    return f"audit-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def audit_path(path: Path | str, write: bool = True, detectors: tuple[Detector, ...] = DETECTORS,
               judge: JudgeTier | None = None,
               judge_labels: list[str] | None = None) -> tuple[AuditSummary, list[ConversationAudit]]:
    """Audit a stored run directory or sweep folder again (with ``judge``, its judge tier too,
    named by ``judge_labels``) and append its rows under a new audit id, which readers then
    take as each conversation's newest audit."""
    audit_id, at = new_audit_id(), datetime.now(UTC)
    every: list[ConversationAudit] = []
    dirs = run_dirs(path)
    tiers: list[dict[str, Any]] = []
    names = [d.key for d in detectors] + (judge_labels or [])
    for run_dir in dirs:
        audits = audit_run_dir(run_dir, detectors, judge, tiers)
        every += audits
        if write:
            for run_id in sorted({a.keys["run_id"] for a in audits}):
                findings: list[SimFindingRecord] = []
                attributions: list[SimAttributionRecord] = []
                for a in audits:
                    if a.keys["run_id"] == run_id:
                        f, row = audit_records(a, audit_id, at, names)
                        findings += f
                        attributions.append(row)
                write_audit(run_dir, run_id, findings, attributions)
    summary = AuditSummary(
        path=str(path), audit_id=audit_id, runs=len(dirs), conversations=len(every),
        findings=sum(len(a.findings) for a in every),
        findings_by_class=dict(Counter(f.fault_class for a in every for f in a.findings).most_common()),
        attributions=dict(Counter(a.attribution for a in every).most_common()),
        detectors=names, written=write, judge=_judge_totals(tiers) if judge else None)
    return summary, every


__all__ = ["DETECTORS", "INLOOP_AUDIT_ID", "AuditSummary", "ConversationAudit", "JudgeTier", "audit_path",
           "audit_records", "audit_run_dir", "audit_trajectory", "new_audit_id"]
