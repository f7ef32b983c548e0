"""The audit's judge tier: an LLM judge asked, about stored conversations, the fault classes a
rule cannot decide (persona kept, a reasonable stop, staying in character), its answers turned
into findings beside the rules'.

It is a judge call like any other: each audit config's items (:mod:`.judge_checks` builds them)
run the way ``tauray judge`` runs its own (``Runner``: on a judge host or a Ray judge actor,
with bounded concurrency), so the local endpoint, any litellm provider and ``serve:`` models
all work, and a prompt ablation is one more config.

A check the judge says the customer failed becomes a :class:`~.finding.Finding` of tier
``judge`` whose detector is the prompt id and whose version is the prompt version (so findings
of two prompt versions never mix), blamed on the user, effect ``talk`` (whether words misled
the agent is itself judgement). A check with no readable verdict (an unparseable reply, no
reply after retries, a tie between samples) is counted as unscored with its reason: never a
fault, never clean. Nothing is written here; the audit that calls this stores the findings.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.audit.finding import Finding
from tauray.actors.audit.judge_checks import (
    AuditCheck,
    CheckReading,
    build_audit_item,
    check_audit_config,
    combine_samples,
    read_check,
)
from tauray.actors.audit.trajectory import Trajectory
from tauray.actors.judge.config import JudgeConfig, JudgeItem, JudgeOutcome
from tauray.actors.judge.parse import ParsedVerdict
from tauray.actors.llm import check_model_ready

TIER = "judge"


class UnscoredCheck(BaseModel):
    """A check of one conversation that got no verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    detector: str = Field(description="Audit prompt id.")
    detector_version: int = Field(description="Audit prompt version.")
    fault_class: str = Field(description="Fault class the check asks about.")
    reason: str = Field(description="Why there is no verdict.")


class ConversationJudgement(BaseModel):
    """The judge tier on one conversation, over every audit config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keys: dict[str, Any] = Field(description="run_id, conversation_id, unit_id, attempt, scenario.")
    findings: tuple[Finding, ...] = Field(description="Faults the judge found, tier 'judge'.")
    unscored: tuple[UnscoredCheck, ...] = Field(description="Checks with no verdict, with the reason.")
    clean: int = Field(description="Checks judged free of fault.")
    skipped: str | None = Field(None, description="Why the conversation was not judged (an error, no messages).")


class JudgeTierResult(BaseModel):
    """What the judge tier did, per conversation (in the order given) and in total."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    audits: list[ConversationJudgement]
    configs: list[dict[str, Any]] = Field(description="label, judge_config_id, prompt, samples of each config.")
    conversations: int = Field(description="Conversations given.")
    judged: int = Field(description="Conversations judged (not skipped).")
    checks: int = Field(description="Conversation x config x check triples judged.")
    faults: int
    clean: int
    unscored: int
    unscored_reasons: dict[str, int] = Field(description="Unscored checks by reason (first 80 characters).")
    calls: int = Field(description="Judge model calls made.")
    cache_hits: int
    infra_errors: int = Field(description="Samples that got no reply after retries.")
    infra_error_examples: list[str] = Field(default_factory=list)
    seconds: float

    @property
    def findings(self) -> list[Finding]:
        return [f for a in self.audits for f in a.findings]


def _skip(t: Trajectory) -> str | None:
    kind = t.row.get("error_kind")
    if isinstance(kind, str) and kind:
        return f"ended in a {kind} error"
    if not t.messages:
        return "no messages"
    return None


def _finding(reading: CheckReading, config: JudgeConfig, shown: tuple[Any, ...]) -> Finding:
    n = reading.message_number
    message = shown[n - 1] if n is not None and 1 <= n <= len(shown) else None
    evidence = reading.evidence or "(no reasoning given)"
    if n is None:
        evidence = f"(no message cited) {evidence}"
    elif message is None:
        evidence = f"(cites #{n}, which is not in the record) {evidence}"
    t = config.template
    return Finding(detector=t.id, detector_version=int(t.version), fault_class=reading.fault_class,
                   blamed_side="user", effect="talk", tier=TIER, turn=message.turn if message else None,
                   message_seq=message.seq if message else None, evidence=" ".join(evidence.split())[:300])


def _readings(outcome: JudgeOutcome, checks: tuple[AuditCheck, ...]) -> list[CheckReading]:
    """One combined reading per check from an item's NL rows (one row per sample and check)."""
    by_check: dict[int, list[CheckReading]] = defaultdict(list)
    for row in sorted(outcome.nl, key=lambda r: (r.assertion_index, r.sample_index)):
        parsed = ParsedVerdict(verdict=row.met, reasoning=row.reasoning, unscored_reason=row.unscored_reason)
        by_check[row.assertion_index].append(read_check(parsed, checks[row.assertion_index]))
    out = []
    for i, check in enumerate(checks):
        if by_check.get(i):
            out.append(combine_samples(by_check[i]))
        else:
            why = outcome.infra_errors[0] if outcome.infra_errors else "no sample was judged"
            out.append(CheckReading(id=check.id, fault_class=check.fault_class, fault=None,
                                    unscored_reason=f"no reply after retries: {why}"[:500]))
    return out


Runner = Callable[[list[JudgeItem]], list[JudgeOutcome]]
"""Runs judge items, outcomes in input order (``tauray audit`` runs them as ``tauray judge`` does)."""


def judge_findings(trajectories: list[Trajectory], configs: list[JudgeConfig], run: Runner) -> JudgeTierResult:
    """Judge every conversation under every audit config; findings and unscored checks per
    conversation. ``run`` judges the items (on a judge host or actor, bounded, probed first
    as the caller chooses). Conversations that ended in an error, or hold no messages, are
    skipped and say why."""
    checks = audit_checks_of(configs)
    started = time.perf_counter()
    items: list[tuple[int, JudgeConfig, JudgeItem, tuple[Any, ...]]] = []
    skipped: dict[int, str] = {}
    for index, t in enumerate(trajectories):
        why = _skip(t)
        if why is not None:
            skipped[index] = why
            continue
        for c in configs:
            item, shown = build_audit_item(t, c)
            items.append((index, c, item, shown))
    outcomes = run([i for _, _, i, _ in items]) if items else []
    found: dict[int, list[Finding]] = defaultdict(list)
    unscored: dict[int, list[UnscoredCheck]] = defaultdict(list)
    clean: Counter[int] = Counter()
    errors: list[str] = []
    for (index, c, _, shown), outcome in zip(items, outcomes):
        errors += outcome.infra_errors
        for reading in _readings(outcome, checks[c.config_id]):
            if reading.fault is True:
                found[index].append(_finding(reading, c, shown))
            elif reading.fault is False:
                clean[index] += 1
            else:
                unscored[index].append(UnscoredCheck(detector=c.template.id, detector_version=int(c.template.version),
                                                     fault_class=reading.fault_class,
                                                     reason=reading.unscored_reason or "no verdict"))
    audits = [ConversationJudgement(
        keys=t.keys, clean=clean[i], skipped=skipped.get(i),
        findings=tuple(sorted(found[i], key=lambda f: (f.message_seq if f.message_seq is not None else -1,
                                                       f.detector, f.detector_version))),
        unscored=tuple(unscored[i])) for i, t in enumerate(trajectories)]
    every_unscored = [u for a in audits for u in a.unscored]
    return JudgeTierResult(
        audits=audits,
        configs=[{"label": c.label, "judge_config_id": c.config_id, "prompt": c.prompt, "samples": c.samples,
                  "judge_model": c.model.model} for c in configs],
        conversations=len(trajectories), judged=len(trajectories) - len(skipped),
        checks=sum(len(checks[c.config_id]) for _, c, _, _ in items),
        faults=sum(len(a.findings) for a in audits), clean=sum(clean.values()), unscored=len(every_unscored),
        unscored_reasons=dict(Counter(u.reason[:80] for u in every_unscored).most_common()),
        calls=sum(o.calls for o in outcomes), cache_hits=sum(o.cache_hits for o in outcomes),
        infra_errors=len(errors), infra_error_examples=errors[:5], seconds=round(time.perf_counter() - started, 3))


def audit_checks_of(configs: list[JudgeConfig]) -> dict[str, tuple[AuditCheck, ...]]:
    """The checks of each audit config (by config id); refuses what cannot be audited with:
    no config, one given twice, two of one audit prompt (their findings would carry the same
    detector and version), a prompt that is no audit prompt, a model that is not ready."""
    if not configs:
        raise ValueError("no audit judge config given")
    ids = [c.config_id for c in configs]
    if len(set(ids)) != len(ids):
        raise ValueError("the same audit judge config is given twice")
    by_prompt = Counter(c.prompt for c in configs)
    if shared := sorted(p for p, n in by_prompt.items() if n > 1):
        raise ValueError(f"several judge configs use {', '.join(shared)}: their findings would carry the same "
                         "detector and version, which no column of sim_findings tells apart; audit with one judge "
                         "per audit prompt version (a judge-model ablation is one audit per model)")
    for c in configs:
        check_model_ready(c.model)
    return {c.config_id: check_audit_config(c) for c in configs}


def audit_judge_configs(models: list[dict[str, Any] | str], prompts: list[str] | None = None, *, samples: int = 1,
                        structured: str = "auto") -> list[JudgeConfig]:
    """Every model x every audit prompt (default: the latest ``sim-audit``) as judge configs; a
    prompt that is no audit prompt is refused here, before anything runs."""
    configs = []
    for model in models:
        spec = {"model": model} if isinstance(model, str) else dict(model)
        for prompt in prompts or ["sim-audit"]:
            config = JudgeConfig(model=spec, prompt=prompt, samples=samples, structured=structured)
            check_audit_config(config)
            configs.append(config)
    return configs


__all__ = ["TIER", "ConversationJudgement", "JudgeTierResult", "Runner", "UnscoredCheck", "audit_checks_of",
           "audit_judge_configs", "judge_findings"]
