"""Declared Arrow schemas of the result tables.

Written out by hand rather than inferred from the first batch of rows, so a
column that happens to be all-null in one file still has its real type and
every file of a table has the same schema. ``tests/results`` checks these
against the record classes in ``records.py``.
"""

from __future__ import annotations

import pyarrow as pa

STR = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
STR_LIST = pa.list_(pa.string())
UTC_TS = pa.timestamp("us", tz="UTC")


def _req(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


def _opt(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=True)


CONVERSATIONS = pa.schema(
    [
        _req("run_id", STR),
        _opt("sweep_id", STR),
        _opt("cell_id", STR),
        _req("conversation_id", STR),
        _req("scenario", STR),
        _req("domain", STR),
        _req("upstream_id", STR),
        _req("policy_variant", STR),
        _opt("issue_type", STR),
        _opt("persona", STR),
        _req("agent_model", STR),
        _req("agent_kind", STR),
        _req("user_model", STR),
        _req("user_kind", STR),
        _opt("judge_model", STR),
        _req("trial", INT),
        _req("seed", INT),
        _req("termination_reason", STR),
        _opt("success", BOOL),
        _req("success_reason", STR),
        _req("gating_signals", STR_LIST),
        _req("excluded_signals", STR_LIST),
        _opt("signal_db_state_assertion", BOOL),
        _opt("signal_nl_assertion", BOOL),
        _opt("signal_db_state_match", BOOL),
        _opt("signal_action_match", BOOL),
        _opt("signal_communicate", BOOL),
        _opt("signal_judge_passed", BOOL),
        _opt("db_state_match", BOOL),
        _opt("action_match", BOOL),
        _req("predicates_total", INT),
        _req("predicates_met", INT),
        _req("turns", INT),
        _req("agent_tool_calls", INT),
        _req("user_tool_calls", INT),
        _req("tool_errors", INT),
        _req("malformed_tool_calls", INT),
        _req("sync_events", INT),
        _req("agent_llm_calls", INT),
        _req("user_llm_calls", INT),
        _req("agent_prompt_tokens", INT),
        _req("agent_completion_tokens", INT),
        _opt("agent_cost_usd", FLOAT),
        _req("user_prompt_tokens", INT),
        _req("user_completion_tokens", INT),
        _opt("user_cost_usd", FLOAT),
        _req("judge_prompt_tokens", INT),
        _req("judge_completion_tokens", INT),
        _opt("judge_cost_usd", FLOAT),
        _req("started_at", UTC_TS),
        _req("duration_s", FLOAT),
        _opt("error_kind", STR),
        _opt("error_message", STR),
        _opt("agent_db_hash", STR),
        _opt("user_db_hash", STR),
        _opt("gold_agent_db_hash", STR),
        _opt("gold_user_db_hash", STR),
        _req("tauray_version", STR),
        _req("upstream_version", STR),
    ]
)

PREDICATE_VERDICTS = pa.schema(
    [
        _req("run_id", STR),
        _req("conversation_id", STR),
        _req("scenario", STR),
        _req("index", INT),
        _req("side", STR),
        _req("function", STR),
        _req("arguments", STR),
        _req("expected", BOOL),
        _opt("actual", STR),
        _req("met", BOOL),
        _opt("error", STR),
    ]
)

ACTIONS = pa.schema(
    [
        _req("run_id", STR),
        _req("conversation_id", STR),
        _req("scenario", STR),
        _req("seq", INT),
        _req("turn", INT),
        _req("side", STR),
        _req("kind", STR),
        _opt("tool", STR),
        _opt("arguments", STR),
        _opt("result", STR),
        _req("error", BOOL),
        _req("is_write", BOOL),
        _opt("matched_action_id", STR),
        _opt("sync_agent", STR),
        _opt("sync_user", STR),
    ]
)

MESSAGES = pa.schema(
    [
        _req("run_id", STR),
        _req("conversation_id", STR),
        _req("scenario", STR),
        _req("seq", INT),
        _req("turn", INT),
        _req("side", STR),
        _req("role", STR),
        _opt("content", STR),
        _opt("tool_calls", STR),
        _opt("tool_call_id", STR),
        _req("created_at", UTC_TS),
    ]
)

NL_ASSERTION_VERDICTS = pa.schema(
    [
        _req("run_id", STR),
        _req("conversation_id", STR),
        _req("scenario", STR),
        _req("judge_model", STR),
        _req("prompt_id", STR),
        _req("prompt_version", STR),
        _req("prompt_hash", STR),
        _req("sample_index", INT),
        _req("assertion_index", INT),
        _req("assertion", STR),
        _opt("met", BOOL),
        _opt("unscored_reason", STR),
        _opt("reasoning", STR),
        _opt("raw_output", STR),
        _req("prompt_tokens", INT),
        _req("completion_tokens", INT),
        _opt("cost_usd", FLOAT),
        _opt("latency_s", FLOAT),
        _req("created_at", UTC_TS),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    "conversations": CONVERSATIONS,
    "predicate_verdicts": PREDICATE_VERDICTS,
    "actions": ACTIONS,
    "messages": MESSAGES,
    "nl_assertion_verdicts": NL_ASSERTION_VERDICTS,
}


class UnknownTableError(KeyError):
    """Raised for a table name that is not one of the declared tables."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


def schema_for(table: str) -> pa.Schema:
    """Declared schema of ``table``; fails loudly, naming the known tables."""
    try:
        return SCHEMAS[table]
    except KeyError:
        known = ", ".join(SCHEMAS)
        raise UnknownTableError(f"unknown table {table!r}; known tables: {known}") from None
