"""Row records of the result tables.

Each class is one row of one flat table; the field order is the column order
on disk (``schemas.py`` declares the same columns and a test keeps the two in
step). JSON-shaped values (tool arguments, sync updates, tool calls) are kept
as JSON text so every column has one plain Arrow type and the tables stay
readable without this package.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

Side = Literal["agent", "user"]
AgentKind = Literal["llm", "reference"]
# Why a conversation failed, when it did (``results.outcomes`` says how each kind counts;
# ``actors.failures`` sorts exceptions into them): the one definition of the kinds.
ErrorKind = Literal["infra", "model", "internal"]
INFRA: Final = "infra"  # the infrastructure failed (provider outage, actor died): says nothing about the model
MODEL: Final = "model"  # the provider refused the request: a verdict on the model
INTERNAL: Final = "internal"  # a bug of ours (or of a policy)
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
assert ERROR_KINDS == (INFRA, MODEL, INTERNAL)
ActionKind = Literal["tool_call", "sync"]
Role = Literal["assistant", "user", "tool"]


def as_json_text(value: Any) -> Any:
    # A str is taken to be JSON already and only checked; anything else is
    # serialised here so producers can hand over the structured value.
    if value is None:
        return None
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON text: {value[:80]!r}") from exc
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"value cannot be stored as JSON: {exc}") from exc


def _check_tool_calls(value: str | None) -> str | None:
    if value is None:
        return None
    calls = json.loads(value)
    if not isinstance(calls, list):
        raise ValueError("tool_calls must be a JSON list")  # noqa: TRY004 - pydantic expects ValueError
    for call in calls:
        if not isinstance(call, dict) or not {"id", "name", "arguments"} <= call.keys():
            raise ValueError("each tool call must be an object with id, name and arguments")
    return value


def _to_utc(value: datetime) -> datetime:
    # Naive datetimes are ambiguous once they leave the process that made
    # them, so they are refused rather than guessed.
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError("datetime must be timezone-aware")
    return value.astimezone(UTC)


JsonText = Annotated[str, BeforeValidator(as_json_text)]
ToolCallsJson = Annotated[str, BeforeValidator(as_json_text), AfterValidator(_check_tool_calls)]
UtcDatetime = Annotated[datetime, AfterValidator(_to_utc)]
Count = Annotated[int, Field(ge=0)]

_ROW_CONFIG = ConfigDict(frozen=True, extra="forbid")

# Attempts are data: every per-unit row says which unit and which attempt of it
# produced it, so "the newest attempt wins" is a groupby on columns, readable
# with plain pandas (docs/tables.md), never a rule about file names.
UnitId = str
Attempt = Annotated[int, Field(ge=0)]
UNIT_ID_DOC = ("Work unit the row belongs to (deterministic from cell, scenario and trial; "
               "the conversation id of every attempt of the unit).")
ATTEMPT_DOC = ("Attempt of the unit that wrote the row (0 = first run; a rerun after a kill or "
               "--retry-errors writes a higher one). Rows of the unit's newest attempt count.")


def _fill_unit_id(data: Any) -> Any:
    # A unit's conversation id is its unit id (pipeline/plan.py); producers
    # that predate the column may omit it.
    if isinstance(data, dict) and "unit_id" not in data and "conversation_id" in data:
        return {**data, "unit_id": data["conversation_id"]}
    return data


class ConversationRecord(BaseModel):
    """One conversation: who took part, how it ended, how it scored, what it cost."""

    model_config = _ROW_CONFIG

    run_id: str = Field(description="Run the conversation belongs to.")
    sweep_id: str | None = Field(description="Sweep that produced the run, if any.")
    cell_id: str | None = Field(description="Sweep cell (model/config combination), if any.")
    conversation_id: str = Field(description="Deterministic id of this conversation.")
    unit_id: UnitId = Field(description=UNIT_ID_DOC)
    attempt: Attempt = Field(default=0, description=ATTEMPT_DOC)
    scenario: str = Field(description="Scenario name.")
    domain: str = Field(description="Domain of the scenario, e.g. telecom.")
    upstream_id: str = Field(description="Task id in the upstream task set.")
    policy_variant: str = Field(description="Agent policy variant the scenario used.")
    issue_type: str | None = Field(description="Issue category of the scenario, if known.")
    persona: str | None = Field(description="User persona, if the scenario has one.")
    agent_model: str = Field(description="Model bound to the agent role.")
    agent_kind: AgentKind = Field(description="'llm' or 'reference' (oracle policy).")
    user_model: str = Field(description="Model bound to the user role.")
    user_kind: str = Field(description="Kind of user simulator (LLM or scripted).")
    judge_model: str | None = Field(description="Model bound to the judge role, if judged.")
    trial: int = Field(ge=0, description="Trial index within the cell.")
    seed: int = Field(description="Seed used for this conversation.")
    seed_applied: bool | None = Field(
        default=None, description="Whether the seed reached the models: true when every model call carried it, "
        "false when a provider takes no seed and it was left out, null when no model was called.")
    termination_reason: str = Field(description="Why the conversation stopped.")
    success: bool | None = Field(description="Overall verdict; null when unscored.")
    success_reason: str = Field(description="Short explanation of the verdict.")
    gating_signals: list[str] = Field(description="Signals that decided success.")
    excluded_signals: list[str] = Field(description="Signals computed but not gating.")
    signal_db_state_assertion: bool | None = Field(description="DB-state assertion signal.")
    signal_nl_assertion: bool | None = Field(description="NL-assertion signal.")
    signal_db_state_match: bool | None = Field(description="DB-state-vs-gold signal.")
    signal_action_match: bool | None = Field(description="Reference-action signal.")
    signal_communicate: bool | None = Field(description="Communicate-info signal.")
    signal_judge_passed: bool | None = Field(description="Overall judge signal.")
    db_state_match: bool | None = Field(description="Both final DBs equal the gold replay.")
    action_match: bool | None = Field(description="All reference actions were performed.")
    predicates_total: Count = Field(description="Number of state predicates checked.")
    predicates_met: Count = Field(description="Number of state predicates met.")
    turns: Count = Field(description="Conversation turns taken.")
    agent_tool_calls: Count = Field(description="Tool calls made by the agent.")
    user_tool_calls: Count = Field(description="Tool calls made by the user.")
    tool_errors: Count = Field(description="Tool calls that returned an error.")
    malformed_tool_calls: Count = Field(description="Tool calls that could not be parsed.")
    empty_replies: Count = Field(default=0, description="Model replies with neither text nor tool calls (no choices, "
                                 "or blank content), both sides; each is passed on as an empty message.")
    truncated_replies: Count = Field(0, description="Model replies cut at the length limit (finish_reason length / "
                                     "max_tokens), both sides.")
    truncated_tool_calls: Count = Field(0, description="Tool calls whose arguments were cut at the length limit: "
                                        "answered with an error, not counted as malformed (the model is not blamed).")
    filtered_replies: Count = Field(0, description="Model replies withheld by the provider's content filter "
                                    "(finish_reason content_filter, SAFETY, ...), both sides.")
    refused_replies: Count = Field(0, description="Model replies that were refusals (OpenAI message.refusal), both "
                                   "sides.")
    adapted_calls: Count = Field(0, description="Model calls whose history or tool schemas were adapted for the "
                                 "provider family (a user turn first, empty turns dropped, ...; docs/providers.md), "
                                 "both sides.")
    sync_events: Count = Field(description="Cross-side state syncs applied.")
    agent_llm_calls: Count = Field(description="Model calls made for the agent.")
    user_llm_calls: Count = Field(description="Model calls made for the user.")
    agent_llm_retries: Count = Field(0, description="Router retries of the agent's model calls (a dead served "
                                     "replica, a 5xx); the messages table says which call.")
    user_llm_retries: Count = Field(0, description="Router retries of the user simulator's model calls.")
    agent_prompt_tokens: Count = Field(description="Agent prompt tokens.")
    agent_completion_tokens: Count = Field(description="Agent completion tokens.")
    agent_cost_usd: float | None = Field(description="Agent cost; null when unknown.")
    user_prompt_tokens: Count = Field(description="User prompt tokens.")
    user_completion_tokens: Count = Field(description="User completion tokens.")
    user_cost_usd: float | None = Field(description="User cost; null when unknown.")
    agent_reasoning_tokens: Count = Field(0, description="Of the agent's completion tokens, those spent reasoning "
                                          "(as the provider reports them).")
    user_reasoning_tokens: Count = Field(0, description="Of the user's completion tokens, those spent reasoning.")
    agent_cached_tokens: Count = Field(0, description="Of the agent's prompt tokens, those read from the "
                                       "provider's prompt cache.")
    user_cached_tokens: Count = Field(0, description="Of the user's prompt tokens, those read from the cache.")
    agent_dropped_params: str | None = Field(None, description="Parameters of the agent's model spec left out of "
                                             "its calls because the provider or model takes none (e.g. "
                                             "'temperature' for a reasoning model), comma-separated; null when none.")
    user_dropped_params: str | None = Field(None, description="The same for the user simulator's model.")
    judge_prompt_tokens: Count = Field(description="Judge prompt tokens.")
    judge_completion_tokens: Count = Field(description="Judge completion tokens.")
    judge_cost_usd: float | None = Field(description="Judge cost; null when unknown.")
    judge_infra_errors: Count = Field(0, description="In-loop judge samples that got no reply after the Router's "
                                      "retries: no verdict row; `tauray judge` fills them in. When the verdict "
                                      "waits on them, the row is infra (see error_message).")
    started_at: UtcDatetime = Field(description="Start time, UTC.")
    duration_s: float = Field(ge=0, description="Wall time of the conversation in seconds.")
    error_kind: ErrorKind | None = Field(description="'infra', 'model' or 'internal' when it failed.")
    error_message: str | None = Field(description="Error text when it failed.")
    agent_db_hash: str | None = Field(description="Hash of the agent's final DB.")
    user_db_hash: str | None = Field(description="Hash of the user's final DB.")
    gold_agent_db_hash: str | None = Field(description="Hash of the gold agent DB.")
    gold_user_db_hash: str | None = Field(description="Hash of the gold user DB.")
    tauray_version: str = Field(description="tauray version that produced the row.")
    upstream_version: str = Field(description="Upstream tau2 version used.")

    @model_validator(mode="before")
    @classmethod
    def _unit_from_conversation(cls, data: Any) -> Any:
        return _fill_unit_id(data)


class _DetailRow(BaseModel):
    """Columns every per-conversation detail row starts with."""

    model_config = _ROW_CONFIG

    run_id: str = Field(description="Run the conversation belongs to.")
    conversation_id: str = Field(description="Conversation the row belongs to.")
    unit_id: UnitId = Field(description=UNIT_ID_DOC)
    attempt: Attempt = Field(default=0, description=ATTEMPT_DOC)
    scenario: str = Field(description="Scenario name.")

    @model_validator(mode="before")
    @classmethod
    def _unit_from_conversation(cls, data: Any) -> Any:
        return _fill_unit_id(data)


class PredicateRecord(_DetailRow):
    """One state predicate checked at the end of a conversation."""

    index: int = Field(ge=0, description="Position of the predicate in the scenario.")
    side: Side = Field(description="Side whose state was checked.")
    function: str = Field(description="Assertion function called.")
    arguments: JsonText = Field(description="Arguments of the call, JSON.")
    expected: bool = Field(description="Value the predicate should return.")
    actual: str | None = Field(description="Value it returned, as text; null on error.")
    met: bool = Field(description="Whether actual equals expected.")
    error: str | None = Field(description="Error raised by the check, if any.")


class ActionRecord(_DetailRow):
    """One tool call or state sync, in conversation order."""

    seq: int = Field(ge=0, description="Order of the action within the conversation.")
    turn: int = Field(ge=0, description="Turn in which it happened.")
    side: Side = Field(description="Side that acted.")
    kind: ActionKind = Field(description="'tool_call' or 'sync'.")
    tool: str | None = Field(description="Tool name; null for a sync.")
    arguments: JsonText | None = Field(description="Tool arguments, JSON.")
    result: str | None = Field(description="Tool result text.")
    error: bool = Field(description="Whether the call returned an error.")
    is_write: bool = Field(description="Whether the tool writes state.")
    matched_action_id: str | None = Field(description="Reference action it matched, if any.")
    sync_agent: JsonText | None = Field(description="Updates pushed to the agent DB, JSON.")
    sync_user: JsonText | None = Field(description="Updates pushed to the user DB, JSON.")


class MessageRecord(_DetailRow):
    """One message of the transcript, in conversation order."""

    seq: int = Field(ge=0, description="Order of the message within the conversation.")
    turn: int = Field(ge=0, description="Turn in which it was produced.")
    side: Side = Field(description="Who produced it: 'agent' or 'user'.")
    role: Role = Field(description="'assistant' (agent), 'user' (customer) or 'tool'.")
    content: str | None = Field(description="Text content, if any.")
    tool_calls: ToolCallsJson | None = Field(description="JSON list of {id, name, arguments}.")
    tool_call_id: str | None = Field(description="Call answered by a tool message.")
    retries: int | None = Field(None, ge=0, description="Router retries of the model call that produced this "
                                "message (0: first attempt); null when no model call produced it.")
    finish_reason: str | None = Field(None, description="The provider's finish reason for the model call that "
                                      "produced this message (stop, length, tool_calls, content_filter, ...); null "
                                      "when no model call produced it.")
    refusal: str | None = Field(None, description="The model's refusal text, when it refused (OpenAI's refusal).")
    created_at: UtcDatetime = Field(description="Creation time, UTC.")


class _JudgeRow(_DetailRow):
    """Columns shared by every judge verdict row: what was judged, by which
    configuration, and what the call returned and cost."""

    judge_model: str = Field(description="Model that judged.")
    prompt_id: str = Field(description="Judge prompt template id.")
    prompt_version: str = Field(description="Version of that template.")
    prompt_hash: str = Field(description="Hash of the rendered template text.")
    judge_config_id: str = Field(description="Hash of everything that shapes the judge request: model, api base, "
                                 "temperature, seed, max tokens, extra params, structured mode, prompt id/version/hash "
                                 "and NL pack id/version/hash (the columns below).")
    judge_api_base: str | None = Field(description="API base URL of the judge (credentials and query removed); null "
                                       "for the provider's standard endpoint.")
    judge_temperature: float | None = Field(description="Sampling temperature sent; null leaves the provider default.")
    judge_seed: int | None = Field(description="Seed sent with this sample (base seed + sample index); null when none.")
    judge_max_tokens: int | None = Field(description="Completion-token cap sent; null leaves the provider default.")
    judge_extra_params: JsonText = Field(description="Further completion parameters of the judge spec, JSON.")
    structured: Literal["auto", "always", "never"] = Field(
        description="Structured mode of the config: send the reply schema as response_format auto/always/never.")
    response_format_sent: bool = Field(description="Whether the reply schema was sent as response_format.")
    reply_fingerprint: str | None = Field(None, description="What the server said produced the reply (OpenAI's "
                                          "system_fingerprint; a judge tauray serves on llama.cpp names the grammar "
                                          "its reply was constrained by, e.g. 'llama.cpp grammar=json-schema:…').")
    nl_pack: str | None = Field(description="NL-assertion pack id@version whose assertions joined the scenario's.")
    nl_pack_hash: str | None = Field(description="Hash of that pack's rules.")
    context_hash: str = Field(description="Hash of the per-item context given to the judge (ticket, goal, domain, "
                                          "assertions).")
    transcript_hash: str = Field(description="Hash of the rendered transcript that was judged.")
    sample_index: int = Field(ge=0, description="Judge sample number.")
    majority: bool | None = Field(description="Majority verdict over the item's scored samples; null on a tie or none.")
    agreement: float | None = Field(description="Share of the item's scored samples agreeing with the majority.")
    scored_samples: Count = Field(description="Samples of the item with a verdict: the majority's base.")
    item_samples: Count = Field(description="Samples of the item stored so far, scored or not.")
    unscored_share: float | None = Field(description="Share of the item's samples that are unscored "
                                         "(1 - scored_samples / item_samples).")
    unscored_reason: str | None = Field(description="Why no verdict could be read.")
    reasoning: str | None = Field(description="Judge's stated reasoning.")
    raw_output: str | None = Field(description="Raw judge reply.")
    prompt_tokens: Count = Field(description="Judge prompt tokens.")
    completion_tokens: Count = Field(description="Judge completion tokens.")
    cost_usd: float | None = Field(description="Cost; null when unknown.")
    latency_s: float | None = Field(description="Call latency in seconds.")
    created_at: UtcDatetime = Field(description="Time of the verdict, UTC.")


class NLAssertionRecord(_JudgeRow):
    """One judge verdict on one natural-language assertion (one sample)."""

    assertion_index: int = Field(ge=0, description="Position of the assertion.")
    assertion: str = Field(description="Assertion text.")
    met: bool | None = Field(description="Verdict; null when unscored.")


class JudgeVerdictRecord(_JudgeRow):
    """One judge's overall verdict on one conversation (one sample)."""

    passed: bool | None = Field(description="Did the agent resolve the problem within policy; null when unscored.")


class CellRecord(BaseModel):
    """Totals of one sweep cell (agent model × user model × judge configs × options)."""

    model_config = _ROW_CONFIG

    sweep_id: str = Field(description="Sweep the cell belongs to.")
    cell_id: str = Field(description="Deterministic id of the cell's configuration.")
    agent_model: str = Field(description="Agent model of the cell.")
    user_model: str = Field(description="User model of the cell.")
    judge_configs: list[str] = Field(description="Judge configs (model and prompt id@version) of the cell.")
    units: Count = Field(description="Work units in the cell.")
    done: Count = Field(description="Units with a row (newest attempt).")
    success: Count = Field(description="Units that succeeded.")
    failed: Count = Field(description="Units scored and not successful (max-steps and too-many-errors stops included).")
    unscored: Count = Field(description="Units with no error whose gating signal could not be scored (count as not successful).")
    infra_errors: Count = Field(description="Units that ended in an infrastructure error (left out of the rate).")
    model_errors: Count = Field(description="Units that ended in a model error (count as not successful).")
    internal_errors: Count = Field(default=0, description="Units that ended in a tauray error (count as not successful).")
    success_rate: float | None = Field(default=None, description="success / (done - infra_errors); null when that is 0.")
    agent_prompt_tokens: Count = Field(description="Agent prompt tokens.")
    agent_completion_tokens: Count = Field(description="Agent completion tokens.")
    user_prompt_tokens: Count = Field(description="User prompt tokens.")
    user_completion_tokens: Count = Field(description="User completion tokens.")
    judge_prompt_tokens: Count = Field(description="Judge prompt tokens.")
    judge_completion_tokens: Count = Field(description="Judge completion tokens.")
    cost_usd: float | None = Field(description="Total known cost of the cell; null when no price is known.")
    updated_at: UtcDatetime = Field(description="When these totals were computed, UTC.")


# --- the audit's rows (``results.audit``): made once per conversation, in the loop, and
# carried in its ``ConversationResult`` like the other detail rows; ``tauray audit``
# appends rows under a newer ``audit_id``. Readers keep each conversation's newest audit.

AuditBlame = Literal["agent", "user", "harness"]
AuditAttribution = Literal["none", "agent", "simulator", "mixed", "harness", "undetermined"]
AUDIT_ID_DOC = ("Audit that wrote the row: `inloop-<detectors digest>` for the audit made as the conversation "
                "finished, `audit-<time>-<hex>` for a `tauray audit`; readers keep each conversation's newest.")


class SimFindingRecord(_DetailRow):
    """One fault a detector of the user-simulator audit found in one conversation."""

    audit_id: str = Field(description=AUDIT_ID_DOC)
    detector: str = Field(description="Detector that found it.")
    detector_version: int = Field(ge=1, description="Version of the detector's rule.")
    fault_class: str = Field(description="Fault class, e.g. premature_stop, unrequested_write.")
    blamed_side: AuditBlame = Field(description="Side at fault: 'user' (the simulator), 'agent' or 'harness'.")
    effect: Literal["outcome", "talk"] = Field(description="'outcome': the fault changed the phone or ended the "
                                               "call; 'talk': it only said something wrong.")
    tier: Literal["rule", "judge"] = Field(description="'rule' (a rule over the record) or 'judge' (a model).")
    turn: int | None = Field(ge=0, description="Conversation turn of the fault.")
    message_seq: int | None = Field(ge=0, description="Message (seq in the messages table) that shows it.")
    evidence: str = Field(description="What the rule saw, one line.")
    flips_verdict: bool | None = Field(None, description="Whether correcting the fault and replaying the recorded "
                                       "calls flips the verdict (outcome faults); null: cannot say (a fault that "
                                       "ended the call, a talk fault, or a replay that does not reproduce the run).")
    audited_at: UtcDatetime = Field(description="Time of the audit, UTC.")


class SimAttributionRecord(_DetailRow):
    """Who failed in one conversation, as the user-simulator audit attributes it."""

    audit_id: str = Field(description=AUDIT_ID_DOC)
    attribution: AuditAttribution = Field(description="none / agent / simulator / mixed / harness / undetermined.")
    decisive_finding: str | None = Field(description="Detector (name@version) of the decisive finding, if any.")
    decisive_class: str | None = Field(description="Fault class of the decisive finding, if any.")
    decisive_turn: int | None = Field(ge=0, description="Turn of the decisive finding, if any.")
    reason: str = Field(description="Why, one line.")
    findings: Count = Field(description="Findings in the conversation, all sides.")
    user_findings: Count = Field(description="Findings blamed on the user simulator.")
    agent_findings: Count = Field(0, description="Findings blamed on the agent.")
    success: bool | None = Field(description="The conversation's verdict, as stored.")
    detectors: list[str] = Field(description="Detectors run (name@version).")
    audited_at: UtcDatetime = Field(description="Time of the audit, UTC.")


class ConversationResult(BaseModel):
    """Everything one conversation adds to the tables, sent back as one message."""

    model_config = _ROW_CONFIG

    conversation: ConversationRecord = Field(description="The conversation row.")
    predicates: list[PredicateRecord] = Field(description="Predicate verdict rows.")
    actions: list[ActionRecord] = Field(description="Action rows.")
    messages: list[MessageRecord] = Field(description="Message rows.")
    nl_assertions: list[NLAssertionRecord] = Field(default=[], description="NL-assertion verdict rows.")
    judge_verdicts: list[JudgeVerdictRecord] = Field(default=[], description="Overall judge verdict rows.")
    sim_findings: list[SimFindingRecord] = Field(default=[], description="The audit's findings (none when not audited).")
    sim_attributions: list[SimAttributionRecord] = Field(default=[], description="The audit's attribution: one row "
                                                         "when audited, none otherwise.")

    @model_validator(mode="after")
    def _rows_belong_to_conversation(self) -> ConversationResult:
        # Detail rows that point at another conversation would be orphaned
        # (or worse, attached to the wrong one) once written.
        key = (self.conversation.run_id, self.conversation.conversation_id)
        for name in ("predicates", "actions", "messages", "nl_assertions", "judge_verdicts", "sim_findings",
                     "sim_attributions"):
            for row in getattr(self, name):
                if (row.run_id, row.conversation_id) != key:
                    raise ValueError(
                        f"{name} row for {row.run_id}/{row.conversation_id} "
                        f"does not belong to {key[0]}/{key[1]}"
                    )
        return self


TABLES: dict[str, type[BaseModel]] = {
    "conversations": ConversationRecord,
    "predicate_verdicts": PredicateRecord,
    "actions": ActionRecord,
    "messages": MessageRecord,
    "nl_assertion_verdicts": NLAssertionRecord,
    "judge_verdicts": JudgeVerdictRecord,
    "sim_findings": SimFindingRecord,
    "sim_attributions": SimAttributionRecord,
    "cells": CellRecord,
}


def rows_by_table(result: ConversationResult) -> dict[str, list[BaseModel]]:
    """Split a result into the rows of each table (every table present)."""
    return {
        "conversations": [result.conversation],
        "predicate_verdicts": list(result.predicates),
        "actions": list(result.actions),
        "messages": list(result.messages),
        "nl_assertion_verdicts": list(result.nl_assertions),
        "judge_verdicts": list(result.judge_verdicts),
        "sim_findings": list(result.sim_findings),
        "sim_attributions": list(result.sim_attributions),
    }
