"""A finished conversation's result records: the conversation row with its verdict and
diagnostics, and its predicate, action and message rows. Whatever ended the
conversation (a stop, a limit, a failure), :func:`build_result` makes its rows.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from tauray import __version__
from tauray.actors.session import SideFinal, seed_applied
from tauray.actors.voice.audio_store import audio_hash, kept
from tauray.results.tables.layout import LABELS_SUFFIX
from tauray.results.tables.records import (
    INFRA,
    INTERNAL,
    MODEL,
    ActionRecord,
    ConversationRecord,
    ConversationResult,
    PredicateRecord,
)
from tauray.scenarios.conventions import is_reference
from tauray.scenarios.scoring import score_checks
from tauray.scenarios.upstream import upstream_version

if TYPE_CHECKING:
    from tauray.actors.conversation import Conversation


class Termination(str, Enum):
    USER_STOP = "user_stop"
    USER_TRANSFER = "user_transfer"
    USER_OUT_OF_SCOPE = "user_out_of_scope"
    AGENT_END = "agent_end"
    AGENT_TRANSFER = "agent_transfer"
    MAX_STEPS = "max_steps"
    TOO_MANY_ERRORS = "too_many_errors"
    INFRA_ERROR = "infra_error"
    MODEL_ERROR = "model_error"
    INTERNAL_ERROR = "internal_error"
    CALLER_HUNG_UP = "caller_hung_up"  # duplex: the caller hung up after a long silence
    MAX_DURATION = "max_duration"  # duplex: the call reached the clock's longest
    BOT_HUNG_UP = "bot_hung_up"  # a live call: the phone bot hung up
    FAULT = "fault"  # a live call: the bot failed it (wrong protocol, no answer, hung up at once, timeout)


REASONS = {INFRA: Termination.INFRA_ERROR, MODEL: Termination.MODEL_ERROR}
LIVE_PIPELINE = "live phone bot"  # a live call's duplex_pipeline: the bot is its own pipeline
REALTIME_PIPELINE = "live realtime model"  # ... and a realtime model is its own


def build_result(conv: Conversation, reason: Termination, error_kind: str | None, error_message: str | None,
                 finals: dict[str, SideFinal | None], started: datetime, duration: float) -> ConversationResult:
    unit, scenario = conv.unit, conv.scenario
    run_id = unit.run_id
    common = dict(run_id=run_id, conversation_id=conv.id, scenario=scenario.name)
    scored = None
    if error_kind is None and finals.get("agent") is not None:
        failed = next((f.check_error for f in finals.values() if f is not None and f.check_error), None)
        try:
            scored = _score(conv, finals) if failed is None else None
        except Exception as exc:
            failed = f"{type(exc).__name__}: {exc}"
        if failed is not None:
            error_kind, error_message = INTERNAL, f"scoring failed: {failed}"
            reason = Termination.INTERNAL_ERROR
    counters = {side: final.counters if (final := finals.get(side)) is not None else None
                for side in ("agent", "user")}

    def count(side: str, name: str, default: Any = 0) -> Any:
        c = counters[side]
        return getattr(c, name) if c is not None else default

    verdict = scored.verdict if scored else None
    signals = verdict.signals if verdict else {}
    conversation = ConversationRecord(
        **common, sweep_id=unit.sweep_id, cell_id=unit.cell_id,
        domain=scenario.domain, upstream_id=scenario.upstream_id, policy_variant=scenario.policy_variant,
        issue_type=scenario.issue_type, persona=scenario.persona,
        agent_model=unit.agent.model, agent_kind=_kind(unit.agent.model, unit.agent.is_phone, unit.agent.is_realtime),
        user_model=unit.user.model, user_kind=_kind(unit.user.model),
        judge_model=None, trial=unit.trial, seed=unit.seed,
        seed_applied=seed_applied(count("agent", "seed_applied", None), count("user", "seed_applied", None)),
        termination_reason=reason.value,
        success=verdict.success if verdict else None,
        success_reason=verdict.reason if verdict else f"not scored: {reason.value}",
        gating_signals=list(verdict.gating) if verdict else [s.value for s in scenario.success_signals.gating],
        excluded_signals=list(verdict.excluded) if verdict else [
            s.value for s in scenario.success_signals.informational],
        signal_db_state_assertion=signals.get("DB_STATE_ASSERTION"),
        signal_nl_assertion=signals.get("NL_ASSERTION"),
        signal_db_state_match=signals.get("DB_STATE_MATCH"),
        signal_action_match=signals.get("ACTION_MATCH"),
        signal_communicate=signals.get("COMMUNICATE"),
        signal_judge_passed=signals.get("JUDGE_PASSED"),
        db_state_match=scored.db_state_match if scored else None,
        action_match=scored.action_match if scored else None,
        predicates_total=len(scored.predicates) if scored else 0,
        predicates_met=sum(p.met for p in scored.predicates) if scored else 0,
        turns=conv.turn,
        agent_tool_calls=sum(1 for c in conv.calls if c.side == "agent"),
        user_tool_calls=sum(1 for c in conv.calls if c.side == "user"),
        tool_errors=conv.errors,
        malformed_tool_calls=count("agent", "malformed_tool_calls") + count("user", "malformed_tool_calls"),
        empty_replies=count("agent", "empty_replies") + count("user", "empty_replies"),
        **{name: count("agent", name) + count("user", name) for name in (
            "truncated_replies", "truncated_tool_calls", "filtered_replies", "prompt_filtered_replies",
            "refused_replies", "malformed_call_replies", "text_tool_call_replies", "adapted_calls")},
        agent_reasoning_tokens=count("agent", "reasoning_tokens"), user_reasoning_tokens=count("user", "reasoning_tokens"),
        agent_cached_tokens=count("agent", "cached_tokens"), user_cached_tokens=count("user", "cached_tokens"),
        agent_dropped_params=",".join(count("agent", "dropped_params", ())) or None,
        user_dropped_params=",".join(count("user", "dropped_params", ())) or None,
        sync_events=conv.sync_events,
        agent_llm_calls=count("agent", "llm_calls"), user_llm_calls=count("user", "llm_calls"),
        agent_llm_retries=count("agent", "llm_retries"), user_llm_retries=count("user", "llm_retries"),
        **(_realtime_usage(conv) or dict(agent_prompt_tokens=count("agent", "prompt_tokens"),
                                         agent_completion_tokens=count("agent", "completion_tokens"),
                                         agent_cost_usd=count("agent", "cost_usd", None))),
        user_prompt_tokens=count("user", "prompt_tokens"),
        user_completion_tokens=count("user", "completion_tokens"),
        user_cost_usd=count("user", "cost_usd", None),
        judge_prompt_tokens=0, judge_completion_tokens=0, judge_cost_usd=None,
        started_at=started, duration_s=max(duration, 0.0),
        error_kind=error_kind, error_message=error_message,
        agent_db_hash=scored.agent_hash if scored else None,
        user_db_hash=scored.user_hash if scored else None,
        gold_agent_db_hash=scored.gold_agent_hash if scored else None,
        gold_user_db_hash=scored.gold_user_hash if scored else None,
        tauray_version=__version__, upstream_version=upstream_version(),
        **_voice_columns(conv),
        **_duplex_columns(conv),
    )
    predicates = [PredicateRecord(**common, index=p.index, side=p.side, function=p.function,
                                  arguments=p.arguments, expected=p.expected, actual=p.actual, met=p.met,
                                  error=p.error)
                  for p in (scored.predicates if scored else ())]
    actions = [ActionRecord(**common, seq=i, **a) for i, a in enumerate(conv.actions)]
    utterances = [u.model_copy(update={"run_id": run_id, "unit_id": unit.unit_id, "attempt": unit.attempt}) for u in conv.utterances]
    utterances, audio = _kept_audio(conv, utterances, failed=conversation.success is not True)
    duplex = getattr(conv, "duplex", None)
    segments = [s.model_copy(update={"run_id": run_id}) for s in duplex.segments] if duplex is not None else []
    if duplex is not None and duplex.recording and kept(conv.voice.keep_audio, failed=conversation.success is not True):
        labels = duplex.labels.encode()
        audio = {**audio, duplex.recording_sha256: duplex.recording, f"{audio_hash(labels)}{LABELS_SUFFIX}": labels}
    return ConversationResult(conversation=conversation, predicates=predicates, actions=actions,
                              messages=list(conv.messages), utterances=utterances, segments=segments, audio=audio)


def _kept_audio(conv: Conversation, utterances: list[Any], *, failed: bool) -> tuple[list[Any], dict[str, bytes]]:
    """The verdict is in: the audio files the keep policy keeps (both sides of every utterance) go
    with the result to the writer; under a policy that drops them their refs are cleared, so no
    row names a file the run folder does not hold. (A judge gate's later verdict does not revisit it.)"""
    voice, held = getattr(conv, "voice", None), getattr(conv, "audio", {})
    if voice is not None and kept(voice.keep_audio, failed=failed):
        named = {ref for u in utterances for ref in (u.audio_ref, u.spoken_audio_ref) if ref}
        # a file that never came back (its host's close failed) is named by no row
        return [_without_missing(u, held) for u in utterances], {ref: data for ref, data in held.items()
                                                                 if ref in named}
    cleared = {"audio_ref": None, "spoken_audio_ref": None}
    return [u.model_copy(update=cleared) if (u.audio_ref or u.spoken_audio_ref) else u for u in utterances], {}


def _without_missing(utterance: Any, held: dict[str, bytes]) -> Any:
    missing = {f: None for f in ("audio_ref", "spoken_audio_ref") if getattr(utterance, f) and
               getattr(utterance, f) not in held}
    return utterance.model_copy(update=missing) if missing else utterance


def _voice_columns(conv: Conversation) -> dict[str, Any]:
    """The conversation row's voice columns: profile, prompts and what the channel lost."""
    voice = getattr(conv, "voice", None)
    if voice is None:
        return {}
    said = getattr(conv, "utterances", [])
    return dict(speech_profile=voice.profile.name,
                voice_prompts=",".join(f"{side}={label}" for side, label in sorted(voice.prompts.items())) or None,
                speech_engines=speech_engines(voice),
                utterances=len(said), mean_wer=sum(u.wer for u in said) / len(said) if said else None,
                identifiers_spoken=sum(u.identifiers_spoken for u in said),
                identifiers_lost=sum(u.identifiers_lost for u in said),
                audio_seconds=sum(u.audio_seconds for u in said), speech_cost_usd=_speech_cost(said),
                text_cell_id=voice.text_cell_id)


def _duplex_columns(conv: Conversation) -> dict[str, Any]:
    """A duplex call's columns: its pipeline, clock, recording and timeline hashes, and τ-Voice's
    interaction panel with the event count of each metric (``duplex_`` + InteractionMetrics.columns)."""
    voice, result = getattr(conv, "voice", None), getattr(conv, "duplex", None)
    if voice is None:
        return {}
    unit = getattr(conv, "unit", None)
    live = unit is not None and unit.agent.is_live
    if result is None:  # the call never ran (an infra row): the cell's pipeline still says which arm it is
        settings = getattr(voice, "duplex", None)
        if settings is not None and live:
            return dict(turn_taking=voice.turn_taking,
                        duplex_pipeline=REALTIME_PIPELINE if unit.agent.is_realtime else LIVE_PIPELINE)
        return dict(turn_taking=voice.turn_taking) if settings is None else dict(
            turn_taking=voice.turn_taking, duplex_pipeline_id=settings.pipeline.identity(),
            duplex_pipeline=settings.pipeline.label())
    if live:
        return _call_columns(voice, result) | _live_columns(result)
    return _call_columns(voice, result) | dict(duplex_pipeline_id=result.pipeline_id,
                                               duplex_pipeline=result.pipeline.label(), duplex_timing=result.timing)


def _call_columns(voice: Any, result: Any) -> dict[str, Any]:
    """What a simulated call (DuplexResult) and a live one (LiveResult) both say: the clock, the
    timeline and recording hashes (none when no call took place), and the interaction panel."""
    recorded = bool(result.recording)
    return dict(turn_taking=voice.turn_taking, duplex_tick_ms=result.clock.tick_ms, duplex_ended=result.ended,
                duplex_duration_s=result.duration_s, duplex_steps=result.steps, duplex_ticks=result.ticks,
                duplex_compute_s=round(sum(result.compute_s.values()), 6), segments=len(result.segments),
                recording_sha256=result.recording_sha256 if recorded else None,
                labels_sha256=audio_hash(result.labels.encode()) if recorded else None,
                segments_sha256=result.segments_sha256, **result.metrics.columns("duplex_"))


def _live_columns(result: Any) -> dict[str, Any]:
    """A live call's own columns (its LiveResult): the harness's lateness on the wall clock, the
    caller's moves and lags, and who ended it."""
    lateness = result.lateness
    return dict(duplex_pipeline=REALTIME_PIPELINE if result.protocol else LIVE_PIPELINE, duplex_timing="live",
                live_ended_by=result.ended_by, live_frames=lateness.frames,
                # lateness past the limit is the harness's fault too, whatever else ended the call
                live_fault_kind=result.fault_kind or ("harness_late" if result.late else None),
                live_lateness_p50_ms=lateness.p50_ms, live_lateness_p99_ms=lateness.p99_ms,
                live_lateness_max_ms=lateness.max_ms, live_longest_gap_ms=lateness.longest_gap_ms,
                live_caller_moves=result.caller_moves, live_caller_move_max_s=result.caller_move_max_s,
                live_tick_lag_p50_s=result.tick_lag_p50_s, live_tick_lag_max_s=result.tick_lag_max_s,
                **_realtime_columns(result))


def _realtime_columns(result: Any) -> dict[str, Any]:
    """A realtime model's own columns: its protocol, its tokens, the caller's cuts."""
    if result.protocol is None:
        return {}
    usage = result.usage
    return dict(live_protocol=result.protocol, live_truncations=result.truncations,
                **{f"live_{name}": usage.get(name, 0) for name in (
                    "input_audio_tokens", "input_text_tokens", "output_audio_tokens", "output_text_tokens")})


def _realtime_usage(conv: Any) -> dict[str, Any] | None:
    """A realtime model's tokens and cost as the agent's (None for any other agent)."""
    result = getattr(conv, "duplex", None)
    if getattr(result, "protocol", None) is None:
        return None
    usage = result.usage
    inputs = ("input_audio_tokens", "input_text_tokens")  # cached tokens are counted among these
    return dict(agent_prompt_tokens=sum(usage.get(k, 0) for k in inputs),
                agent_completion_tokens=sum(v for k, v in usage.items() if k.startswith("output_")),
                agent_cost_usd=getattr(conv, "live_cost_usd", None))


def speech_engines(voice: Any) -> str:
    """A voice cell's engines in words: 'local/neural + local/whisper-tiny.en (beam 5, prompt 0fd2a529)'."""
    decoding = voice.asr.decoding()
    return f"{voice.tts.model} + {voice.asr.model}" + (f" ({decoding})" if decoding else "")


def _speech_cost(said: list[Any]) -> float | None:
    """The utterances' synthesis and recognition cost; None when any price is unknown."""
    costs = [c for u in said for c in (u.tts_cost_usd, u.asr_cost_usd)]
    return None if any(c is None for c in costs) else round(sum(costs), 8)


def _kind(model: str, phone: bool = False, realtime: bool = False) -> str:
    return "phone" if phone else "realtime" if realtime else "reference" if is_reference(model) else "llm"


def _score(conv: Conversation, finals: dict[str, SideFinal | None]):
    """The score from what each host checked of its final DB (no DB crosses to here)."""
    agent = finals["agent"].check
    if agent is None:
        raise ValueError("the agent host handed back no check of its final DB")
    final_user = finals.get("user")
    user = final_user.check if conv.domain.has_user_state and final_user is not None else None
    return score_checks(conv.scenario, agent, user, conv.calls, agent_texts=conv.agent_texts)

