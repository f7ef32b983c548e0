"""Judging at the conversation level: a recorded conversation becomes one item per judge
config, the judge's rows become the conversation's NL_ASSERTION and JUDGE_PASSED
signals, and its verdict is recomputed with them (grading after the fact, so any
stored run can be re-judged without re-running it).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tauray.actors.judge.config import JudgeConfig, JudgeItem
from tauray.actors.judge.host import call_judge
from tauray.actors.judge.parse import assertion_id
from tauray.actors.judge.prompts import get_pack
from tauray.actors.judge.render import render_transcript, text_hash
from tauray.results.tables.records import (
    INFRA,
    ConversationRecord,
    ConversationResult,
    ErrorKind,
    JudgeVerdictRecord,
    NLAssertionRecord,
)
from tauray.scenarios.model import SuccessSignal, SuccessSignals
from tauray.scenarios.scoring import combine


def scenario_context(scenario: Any) -> dict[str, str]:
    user = getattr(scenario, "user", None)
    goal = (getattr(user, "reason_for_call", None) or getattr(user, "instructions", None) or "(not given)")
    return {"ticket": (getattr(scenario, "ticket", None) or "(no ticket given)").strip(),
            "goal": goal.strip(), "domain": getattr(scenario, "domain", "")}


def assertions_for(scenario: Any, config: JudgeConfig) -> list[str]:
    own = list(getattr(scenario, "nl_assertions", None) or ())
    if config.nl_pack:
        own += [a for a in get_pack(config.nl_pack).assertions_for(scenario.name) if a not in own]
    return own


def build_item(run_id: str, conversation_id: str, scenario: Any, transcript: str, config: JudgeConfig,
               samples: list[int] | None = None, prior: dict[int, list[bool | None]] | None = None
               ) -> JudgeItem | None:
    """The item for one conversation and config; None when there is nothing to judge."""
    values = scenario_context(scenario)
    assertions: list[str] = []
    if config.kind == "nl":
        assertions = assertions_for(scenario, config)
        if not assertions:
            return None
        values["assertions"] = "\n".join(f"{assertion_id(i)}. {a}" for i, a in enumerate(assertions))
    wanted = list(range(config.samples)) if samples is None else samples
    if not wanted:
        return None
    return JudgeItem(
        run_id=run_id, conversation_id=conversation_id, scenario=scenario.name, config=config,
        chat=config.template.render(transcript, values), transcript_hash=text_hash(transcript),
        context_hash=text_hash(json.dumps(values, sort_keys=True)), assertions=assertions, samples=wanted,
        prior=prior or {},
    )


def nl_signal(rows: list[NLAssertionRecord]) -> bool | None:
    """All assertions met by majority -> True; any not met -> False; otherwise unscored."""
    by_q: dict[int, bool | None] = {}
    for r in rows:
        by_q[r.assertion_index] = r.majority
    if not by_q:
        return None
    values = list(by_q.values())
    if any(v is False for v in values):
        return False
    return True if all(v is True for v in values) else None


def overall_signal(rows: list[JudgeVerdictRecord]) -> bool | None:
    return rows[-1].majority if rows else None


async def judge_result(result: ConversationResult, scenario: Any, judge_configs: list[JudgeConfig | dict[str, Any]],
                       judge: Any, *, judge_gates: bool = False) -> ConversationResult:
    """``result`` with its NL-assertion and overall verdict rows filled and its verdict recomputed.

    A conversation that ended in an error is returned unchanged. The first NL
    config gives ``signal_nl_assertion`` and the first overall config gives
    ``signal_judge_passed``. NL_ASSERTION gates only where the scenario's gating
    signals contain it; JUDGE_PASSED gates only with ``judge_gates``. ``judge``
    is a :class:`JudgeHost` or a judge actor handle; configs may be given as
    dicts (as work units carry them).

    Samples that got no reply after retries leave no row and are counted in
    ``judge_infra_errors``; when the verdict waits on them (a gating judge signal
    is left unscored), the row is an infra row, like any other outage.
    """
    judge_configs = [c if isinstance(c, JudgeConfig) else JudgeConfig.model_validate(c) for c in judge_configs]
    conv = result.conversation
    if conv.error_kind is not None or not result.messages or not judge_configs:
        return result
    transcript = render_transcript(sorted(result.messages, key=lambda m: m.seq))
    items = [i for i in (build_item(conv.run_id, conv.conversation_id, scenario, transcript, c)
                         for c in judge_configs) if i is not None]
    outcomes = await asyncio.gather(*(call_judge(judge, i) for i in items))
    by_config = {i.config.config_id: o for i, o in zip(items, outcomes)}
    overall_rows = [r for o in outcomes for r in o.overall]
    nl_rows = [r for o in outcomes for r in o.nl]
    infra = [e for o in outcomes for e in o.infra_errors]
    failure = None
    if infra:
        requested = sum(len(i.samples) for i in items)
        failure = f"{len(infra)} of {requested} samples got no reply after retries (first: {infra[0]})"
    signals = conversation_signals(conv)
    first_nl = next((c for c in judge_configs if c.kind == "nl" and c.config_id in by_config), None)
    first_overall = next((c for c in judge_configs if c.kind == "overall" and c.config_id in by_config), None)
    if first_nl is not None:
        signals["NL_ASSERTION"] = nl_signal(by_config[first_nl.config_id].nl)
    if first_overall is not None:
        signals["JUDGE_PASSED"] = overall_signal(by_config[first_overall.config_id].overall)
    all_rows: list[Any] = [*overall_rows, *nl_rows]
    costs = [r.cost_usd for r in all_rows if r.cost_usd is not None]
    updated = with_judge_verdict(conv, scenario, signals, judge_gates, failure, update=dict(
        judge_model=conv.judge_model or judge_configs[0].model.model,
        judge_prompt_tokens=conv.judge_prompt_tokens + sum(r.prompt_tokens for r in all_rows),
        judge_completion_tokens=conv.judge_completion_tokens + sum(r.completion_tokens for r in all_rows),
        judge_cost_usd=(conv.judge_cost_usd or 0.0) + sum(costs) if costs else conv.judge_cost_usd,
        judge_infra_errors=conv.judge_infra_errors + len(infra),
    ))
    return result.model_copy(update={"conversation": updated,
                                     "judge_verdicts": [*result.judge_verdicts, *overall_rows],
                                     "nl_assertions": [*result.nl_assertions, *nl_rows]})


def conversation_signals(conv: ConversationRecord) -> dict[str, bool | None]:
    """Every success signal of a conversation row, by name."""
    return {s.value: getattr(conv, f"signal_{s.value.lower()}") for s in SuccessSignal}


def with_judge_verdict(conv: ConversationRecord, scenario: Any, signals: dict[str, bool | None], judge_gates: bool,
                       failure: str | None = None, failure_kind: ErrorKind = INFRA,
                       update: dict[str, Any] | None = None) -> ConversationRecord:
    """``conv`` with its verdict recomputed from ``signals`` (JUDGE_PASSED gating with
    ``judge_gates``). ``failure`` says what went wrong judging it: when a judge signal the
    verdict waits on is left unscored by it, the row takes ``failure_kind`` (an outage is
    infra, left out of rates and rerun by ``--retry-errors``); otherwise it is a note."""

    gating = tuple(scenario.success_signals.gating)
    informational = tuple(scenario.success_signals.informational)
    if judge_gates and SuccessSignal.JUDGE_PASSED not in gating:
        gating += (SuccessSignal.JUDGE_PASSED,)
        informational = tuple(s for s in informational if s is not SuccessSignal.JUDGE_PASSED)
    verdict = combine(scenario.model_copy(update={"success_signals": SuccessSignals(
        gating=gating, informational=informational)}), signals)
    fields = dict(update or {}, success=verdict.success, success_reason=verdict.reason,
                  gating_signals=list(verdict.gating), excluded_signals=list(verdict.excluded),
                  signal_nl_assertion=signals["NL_ASSERTION"], signal_judge_passed=signals["JUDGE_PASSED"])
    if failure is not None:
        waits = verdict.success is None and any(
            signals.get(s.value) is None for s in (SuccessSignal.NL_ASSERTION, SuccessSignal.JUDGE_PASSED)
            if s.value in verdict.gating)
        if waits:
            fields.update(error_kind=failure_kind,
                          error_message=f"judging failed, and the verdict waits on it: {failure}")
        else:
            note = f"judging incomplete: {failure}; `tauray judge` on the run fills in what is missing"
            fields["error_message"] = f"{conv.error_message}; {note}" if conv.error_message else note
    return conv.model_copy(update=fields)
