"""One imported τ² simulation as tauray rows: its tool calls replayed on tauray's
dual state, re-scored by tauray's scoring, and the conversation row around them.

The replay is how a live conversation changes state (initialization, then each
call on its side, sync after every write); the recorded result of each call is
what the rows keep (it is what the model saw), and a call whose replayed result
differs from the recorded one is counted as a mismatch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from tauray import __version__
from tauray.results.tables.records import (
    INFRA,
    MODEL,
    ActionRecord,
    ConversationRecord,
    ConversationResult,
    MessageRecord,
    PredicateRecord,
)
from tauray.results.tau2.format import TERMINATION_TO_TAU2, call_arguments
from tauray.scenarios.conventions import (
    HARNESS_TOOLS,
    OUT_OF_SCOPE,
    TRANSFER,
    TRANSFER_TO_HUMAN,
    is_reference,
)
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.scoring import ExecutedCall, matched_reference, score
from tauray.scenarios.upstream import upstream_version

# Conversation-row columns whose value τ² has no field for: an export keeps them in
# reward_info.info["tauray"]; an import takes them from there, or counts them itself.
COUNTERS = ("malformed_tool_calls", "agent_llm_calls", "user_llm_calls", "agent_llm_retries", "user_llm_retries",
            "agent_prompt_tokens", "agent_completion_tokens", "user_prompt_tokens", "user_completion_tokens",
            "judge_infra_errors", "adapted_calls")


# How model replies ended (the conversation columns): from the export's tauray block, else
# counted from the imported messages' stop (which a tauray export keeps in raw_data).
STOPS = {"truncated_replies": "length", "filtered_replies": "content_filter", "prompt_filtered_replies": "prompt_filter",
         "refused_replies": "refusal", "malformed_call_replies": "malformed_call"}


def _stops(messages: list[MessageRecord], block: dict[str, Any]) -> dict[str, int]:
    said = [m for m in messages if m.role != "tool"]
    counted = {k: sum(m.stop == stop for m in said) for k, stop in STOPS.items()}
    counted["truncated_tool_calls"] = sum(len(m.calls) for m in said if m.stop == "length")
    counted["text_tool_call_replies"] = 0  # not in τ²'s messages; a tauray block keeps it
    return {k: int(block[k]) if block.get(k) is not None else v for k, v in counted.items()}


def _normal(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return text


def replay(scenario: Any, messages: list[MessageRecord], errors: dict[str, bool]
           ) -> tuple[Any, list[dict[str, Any]], list[ExecutedCall], int]:
    """Replay the calls of ``messages`` on fresh state: (final state, action rows, executed calls, mismatches)."""
    state = domain_spec(scenario.domain).fresh_state()
    state.initialize(scenario.initialization_data, scenario.initialization_actions)
    actions = [_sync_row(0, e) for e in state.sync_events]
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    calls: list[ExecutedCall] = []
    mismatches = 0
    for m in messages:
        cut = m.stop == "length"  # a reply cut at the length limit: its calls were never run, nor made
        for c in json.loads(m.tool_calls) if m.tool_calls else ():
            args = call_arguments(c["arguments"])
            skip = cut or args is None or ((c["name"] in HARNESS_TOOLS) if m.side == "agent" else state.user is None)
            args = args if args is not None else {}  # unparseable: never run, as in a live conversation
            outcome, event = (None, None) if skip else state.execute(m.side, c["name"], args)
            recorded = results.get(c["id"], outcome.result if outcome else None)
            if outcome is not None and _normal(outcome.result) != _normal(recorded):
                mismatches += 1
            call = ExecutedCall(side=m.side, name=c["name"], arguments=args)
            calls += [] if cut else [call]
            error = errors.get(c["id"], outcome.error if outcome else False)
            actions.append(dict(turn=m.turn, side=m.side, kind="tool_call", tool=c["name"], arguments=args,
                                result=recorded, error=error, is_write=bool(outcome and outcome.is_write),
                                matched_action_id=matched_reference(scenario, call), sync_agent=None, sync_user=None))
            if event is not None:
                actions.append(_sync_row(m.turn, event))
    return state, actions, calls, mismatches


def _sync_row(turn: int, event: Any) -> dict[str, Any]:
    side = event.after.split(":")[0] if ":" in event.after else "agent"
    return dict(turn=turn, side=side, kind="sync", tool=None, arguments=None, result=f"sync after {event.after}",
                error=False, is_write=True, matched_action_id=None,
                sync_agent=event.agent or None, sync_user=event.user or None)


def termination(sim: Any, messages: list[MessageRecord], block: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """(tauray termination reason, error kind, error message) of a τ² simulation."""

    reason = sim.termination_reason.value
    kept = block.get("termination_reason")
    if kept is not None and TERMINATION_TO_TAU2.get(kept) == reason:  # an export of tauray's: exact again
        return kept, block.get("error_kind"), block.get("error_message")
    if reason == "user_stop":
        last = next((m.content or "" for m in reversed(messages) if m.role == "user" and m.content), "")
        return ("user_transfer" if TRANSFER in last else "user_out_of_scope" if OUT_OF_SCOPE in last
                else "user_stop"), None, None
    if reason == "agent_stop":
        names = [c["name"] for m in messages if m.side == "agent" and m.tool_calls for c in json.loads(m.tool_calls)]
        return ("agent_transfer" if names and names[-1] == TRANSFER_TO_HUMAN else "agent_end"), None, None
    if reason in ("max_steps", "too_many_errors"):
        return reason, None, None
    if sim.skipped:
        return "infra_error", INFRA, f"τ² skipped the simulation ({reason})"
    return "model_error", MODEL, f"τ² termination: {reason}"


def _tokens(messages: list[Any], role: str, key: str) -> int:
    return sum(int((m.usage or {}).get(key) or 0) for m in messages if m.role == role and getattr(m, "usage", None))


def _models(info: Any) -> tuple[str, str]:
    return (info.agent_info.llm or info.agent_info.implementation, info.user_info.llm or info.user_info.implementation)


def _counters(sim: Any, messages: list[MessageRecord], block: dict[str, Any], agent: str, user: str) -> dict[str, Any]:
    said = {s: sum(1 for m in messages if m.side == s and m.role != "tool") for s in ("agent", "user")}
    counted = {
        "malformed_tool_calls": 0, "judge_infra_errors": 0, "agent_llm_retries": 0, "user_llm_retries": 0,
        "adapted_calls": 0,
        "agent_llm_calls": 0 if is_reference(agent) else said["agent"],
        "user_llm_calls": 0 if is_reference(user) else said["user"],
        "agent_prompt_tokens": _tokens(sim.messages, "assistant", "prompt_tokens"),
        "agent_completion_tokens": _tokens(sim.messages, "assistant", "completion_tokens"),
        "user_prompt_tokens": _tokens(sim.messages, "user", "prompt_tokens"),
        "user_completion_tokens": _tokens(sim.messages, "user", "completion_tokens"),
    }
    return {k: block.get(k, counted[k]) if block.get(k) is not None else counted[k] for k in COUNTERS}


def simulation_result(run_id: str, sim: Any, info: Any, scenario: Any, messages: list[MessageRecord],
                      block: dict[str, Any], when: Callable[[str | None], Any]) -> tuple[ConversationResult, int]:
    """The rows of one imported simulation (verdict re-scored by tauray), and its replay mismatches."""
    errors = _tool_errors(sim.messages)
    state, actions, calls, mismatches = replay(scenario, messages, errors)
    reason, error_kind, error_message = termination(sim, messages, block)
    texts = [m.content for m in messages if m.side == "agent" and m.role == "assistant" and m.content]
    scored = score(scenario, state, calls, agent_texts=texts) if error_kind is None else None
    verdict = scored.verdict if scored else None
    signals = verdict.signals if verdict else {}
    agent, user = _models(info)
    common = dict(run_id=run_id, conversation_id=sim.id, scenario=scenario.name)
    cell = block.get("cell_id") or hashlib.sha256(f"{agent}\n{user}".encode()).hexdigest()[:12]
    tool_rows = [a for a in actions if a["kind"] == "tool_call"]
    conversation = ConversationRecord(
        **common, sweep_id=None, cell_id=cell, domain=scenario.domain, upstream_id=scenario.upstream_id,
        policy_variant=scenario.policy_variant, issue_type=scenario.issue_type, persona=scenario.persona,
        agent_model=agent, agent_kind="reference" if is_reference(agent) else "llm",
        user_model=user, user_kind="reference" if is_reference(user) else "llm", judge_model=None,
        trial=sim.trial or 0, seed=sim.seed if sim.seed is not None else block.get("seed", 0),
        seed_applied=block.get("seed_applied"), termination_reason=reason,
        success=verdict.success if verdict else None,
        success_reason=verdict.reason if verdict else f"not scored: {reason}",
        gating_signals=list(verdict.gating) if verdict else [s.value for s in scenario.success_signals.gating],
        excluded_signals=list(verdict.excluded) if verdict else [
            s.value for s in scenario.success_signals.informational],
        **{f"signal_{k.lower()}": signals.get(k) for k in ("DB_STATE_ASSERTION", "NL_ASSERTION", "DB_STATE_MATCH",
                                                           "ACTION_MATCH", "COMMUNICATE", "JUDGE_PASSED")},
        db_state_match=scored.db_state_match if scored else None,
        action_match=scored.action_match if scored else None,
        predicates_total=len(scored.predicates) if scored else 0,
        predicates_met=sum(p.met for p in scored.predicates) if scored else 0,
        turns=block.get("turns", max((m.turn for m in messages), default=0)),
        agent_tool_calls=sum(c.side == "agent" for c in calls), user_tool_calls=sum(c.side == "user" for c in calls),
        tool_errors=sum(bool(a["error"]) for a in tool_rows),
        empty_replies=sum(1 for m in messages if m.role != "tool" and not m.content and not m.tool_calls),
        sync_events=sum(a["kind"] == "sync" for a in actions),
        **_counters(sim, messages, block, agent, user),
        **_stops(messages, block),
        agent_cost_usd=block.get("agent_cost_usd", sim.agent_cost),  # tauray's own row: unknown stays unknown
        user_cost_usd=block.get("user_cost_usd", sim.user_cost),
        judge_prompt_tokens=0, judge_completion_tokens=0, judge_cost_usd=None,
        started_at=when(sim.start_time), duration_s=max(sim.duration, 0.0),
        error_kind=error_kind, error_message=error_message,
        agent_db_hash=scored.agent_hash if scored else None, user_db_hash=scored.user_hash if scored else None,
        gold_agent_db_hash=scored.gold_agent_hash if scored else None,
        gold_user_db_hash=scored.gold_user_hash if scored else None,
        tauray_version=__version__, upstream_version=upstream_version(),
    )
    predicates = [PredicateRecord(**common, index=p.index, side=p.side, function=p.function, arguments=p.arguments,
                                  expected=p.expected, actual=p.actual, met=p.met, error=p.error)
                  for p in (scored.predicates if scored else ())]
    rows = [ActionRecord(**common, seq=i, **a) for i, a in enumerate(actions)]
    return ConversationResult(conversation=conversation, predicates=predicates, actions=rows,
                              messages=messages), mismatches


def _tool_errors(messages: list[Any]) -> dict[str, bool]:
    """The error flag τ² recorded for each tool call, by call id."""
    flags: dict[str, bool] = {}
    for m in messages:
        for t in getattr(m, "tool_messages", None) or ([m] if m.role == "tool" else []):
            flags[t.id] = t.error
        for r in ((getattr(m, "raw_data", None) or {}).get("tauray_harness") or {}).get("results", ()):
            flags[r["id"]] = r["error"]
    return flags
