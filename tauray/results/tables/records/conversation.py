"""The conversation row (who took part, how it ended, how it scored, what it cost) and the
cell totals row."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from tauray.results.tables.records.columns import (
    _ROW_CONFIG,
    ATTEMPT_DOC,
    UNIT_ID_DOC,
    AgentKind,
    Attempt,
    Count,
    ErrorKind,
    UnitId,
    UtcDatetime,
    _fill_unit_id,
)


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
    agent_kind: AgentKind = Field(description="'llm', 'reference' (oracle policy), 'phone' (a live phone bot) or 'realtime' (a realtime speech model).")
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
    truncated_tool_calls: Count = Field(0, description="Tool calls in model replies cut at the length limit (every "
                                        "call of such a reply, whatever its arguments look like): never run, the "
                                        "model told or the request sent again (the model spec's cut_tool_calls); not "
                                        "counted as malformed or as performed, both sides.")
    filtered_replies: Count = Field(0, description="Model replies whose output the provider's content filter "
                                    "withheld (finish_reason content_filter, Gemini's SAFETY, ...), both sides.")
    prompt_filtered_replies: Count = Field(0, description="Model calls the provider refused because its content "
                                           "filter flagged the prompt (Azure's HTTP 400 content_filter): no reply, "
                                           "passed on as an empty one, both sides.")
    refused_replies: Count = Field(0, description="Model replies that were refusals (OpenAI's message.refusal, "
                                   "Anthropic's stop_reason refusal), both sides.")
    malformed_call_replies: Count = Field(0, description="Model replies stopped because the model wrote a tool call "
                                          "the provider could not parse (Gemini's MALFORMED_FUNCTION_CALL): an empty "
                                          "reply, both sides.")
    text_tool_call_replies: Count = Field(0, description="Model replies with a tool call written as text in the "
                                          "content ('<tool_call>{...}</tool_call>', ...): the server parses no tool "
                                          "calls (vLLM without --tool-call-parser); the text was passed on, both sides.")
    adapted_calls: Count = Field(0, description="Model calls whose history or tool schemas were adapted for the "
                                 "provider family (a user turn first, empty turns dropped, ...; docs/providers.md), "
                                 "both sides.")
    sync_events: Count = Field(description="Cross-side state syncs applied.")
    agent_llm_calls: Count = Field(description="Model calls made for the agent.")
    user_llm_calls: Count = Field(description="Model calls made for the user.")
    agent_llm_retries: Count = Field(0, description="Retries of the agent's model calls: the Router's (a dead "
                                     "served replica, a 5xx) plus 429s waited out; the messages table says which call.")
    user_llm_retries: Count = Field(0, description="Retries of the user simulator's model calls, counted as agent_llm_retries.")
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
    speech_profile: str = Field("text", description="Speech profile of the cell ('text': no speech channel; "
                                "docs/voice.md).")
    voice_prompts: str | None = Field(None, description="Voice rules the sides got, 'side=id@version#hash' "
                                      "comma-separated; null in a text cell.")
    speech_engines: str | None = Field(None, description="The cell's synthesiser and recogniser with its decoding, "
                                       "e.g. 'local/neural + local/whisper-tiny.en (beam 5, prompt 0fd2a529)'; null "
                                       "in a text cell.")
    utterances: Count = Field(0, description="Utterances carried over the speech channel (rows in `utterances`).")
    mean_wer: float | None = Field(None, ge=0, description="Mean word error rate of the carried utterances; null "
                                   "when none was carried.")
    identifiers_spoken: Count = Field(0, description="Identifiers spoken over the channel (phone numbers, account "
                                      "and line ids, digit strings), both sides.")
    identifiers_lost: Count = Field(0, description="Of them, those the other side did not hear exactly.")
    audio_seconds: float = Field(0.0, ge=0, description="Simulated length of the conversation's speech, seconds.")
    speech_cost_usd: float | None = Field(None, ge=0, description="What the conversation's speech cost: the "
                                          "utterances' synthesis and recognition calls (0 with local engines); null "
                                          "in a text cell or when a hosted engine's price is unknown.")
    text_cell_id: str | None = Field(None, description="A voice row's text twin: the cell without the speech "
                                     "profile, whose conversation of the same task ran on the same seed; null in a "
                                     "text cell.")
    turn_taking: str = Field("half", description="Turn-taking of the cell: 'half' (turn by turn; text cells too) "
                             "or 'duplex' (both sides on one clock; docs/duplex.md).")
    duplex_pipeline_id: str | None = Field(None, description="Duplex: the agent pipeline's identity (sha256 of its "
                                           "settings, 16 hex digits); null in half duplex and for a live phone bot.")
    duplex_pipeline: str | None = Field(None, description="Duplex: the agent pipeline's settings that differ from "
                                        "the defaults ('end_of_turn_ms=300'; 'default pipeline'; 'live phone bot' "
                                        "for a phone bot, its own pipeline); null in half duplex.")
    duplex_timing: str | None = Field(None, description="Duplex: how the agent model's timing was taken, 'declared' "
                                      "(reproducible) or 'measured' (wall clock), or 'live' (a phone bot called on "
                                      "the wall clock); null in half duplex.")
    duplex_tick_ms: int | None = Field(None, description="Duplex: the clock's tick, ms; null in half duplex.")
    duplex_ended: str | None = Field(None, description="Duplex: how the call ended on the clock ('caller_hung_up', "
                                     "'caller_hung_up_on_silence', 'max_duration'; a live call also 'bot_hung_up', "
                                     "'fault'); null in half duplex.")
    duplex_duration_s: float | None = Field(None, ge=0, description="Duplex: length of the call on the simulated "
                                            "clock (a live call: on the wall clock), seconds; null in half duplex.")
    duplex_steps: int | None = Field(None, ge=0, description="Duplex: ticks the loop visited (it steps from event to "
                                     "event); null in half duplex.")
    duplex_ticks: int | None = Field(None, ge=0, description="Duplex: ticks the call covered; null in half duplex.")
    duplex_compute_s: float | None = Field(None, ge=0, description="Duplex: wall-clock compute of the call's speech, "
                                           "VAD, models and tools (apart from simulated time); null in half duplex.")
    segments: Count = Field(0, description="Rows of this conversation in `segments` (duplex cells; 0 otherwise).")
    recording_sha256: str | None = Field(None, description="Duplex: sha256 of the call's stereo recording (FLAC, 8 "
                                         "kHz, caller left, agent right): its content address, audio/<hash[:2]>/"
                                         "<hash>.flac when the keep policy kept it; null in half duplex.")
    labels_sha256: str | None = Field(None, description="Duplex: sha256 of the call's Audacity label track, stored "
                                      "as audio/<hash[:2]>/<hash>.txt beside the recording when kept; null in half "
                                      "duplex.")
    segments_sha256: str | None = Field(None, description="Duplex: sha256 of the call's segments (their JSON, one "
                                        "per line): the timeline's content hash; null in half duplex.")
    duplex_response_latency_s: float | None = Field(None, description="Duplex: L_R: mean seconds from a caller turn's end to the agent's next onset, over the turns answered; null in half duplex or with no event.")
    duplex_response_latency_n: int | None = Field(None, description="Duplex: L_R's count: the responses averaged; null in half duplex.")
    duplex_yield_latency_s: float | None = Field(None, description="Duplex: L_Y: mean seconds from a caller's onset over the agent to the agent's audio stopping, over the yields; null in half duplex or with no event.")
    duplex_yield_latency_n: int | None = Field(None, description="Duplex: L_Y's count: the yields averaged; null in half duplex.")
    duplex_response_rate: float | None = Field(None, description="Duplex: R_R: share of response-eligible caller turns the agent answered before the caller spoke again; null in half duplex or with no event.")
    duplex_response_rate_n: int | None = Field(None, description="Duplex: R_R's count: eligible caller turns that had a sequel; null in half duplex.")
    duplex_yield_rate: float | None = Field(None, description="Duplex: R_Y: share of caller turns begun over the agent after which the agent stopped within the no-yield window; null in half duplex or with no event.")
    duplex_yield_rate_n: int | None = Field(None, description="Duplex: R_Y's count: caller turns begun over the agent; null in half duplex.")
    duplex_agent_interruption_rate: float | None = Field(None, description="Duplex: I_A: agent onsets over a caller turn per response-eligible turn (may exceed 1); null in half duplex or with no event.")
    duplex_agent_interruption_rate_n: int | None = Field(None, description="Duplex: I_A's count: the response-eligible turns; null in half duplex.")
    duplex_selectivity_backchannel: float | None = Field(None, description="Duplex: S_BC: share of the caller's backchannels over the agent's speech that the agent talked through; null in half duplex or with no event.")
    duplex_selectivity_backchannel_n: int | None = Field(None, description="Duplex: S_BC's count: backchannels over the agent's speech; null in half duplex.")
    duplex_selectivity_vocal_tic: float | None = Field(None, description="Duplex: S_VT: share of the caller's vocal tics the agent neither yielded to nor answered; null in half duplex or with no event.")
    duplex_selectivity_vocal_tic_n: int | None = Field(None, description="Duplex: S_VT's count: vocal tics scored; null in half duplex.")
    duplex_selectivity_non_directed: float | None = Field(None, description="Duplex: S_ND: share of the caller's out-of-turn speech the agent neither yielded to nor answered; null in half duplex or with no event.")
    duplex_selectivity_non_directed_n: int | None = Field(None, description="Duplex: S_ND's count: out-of-turn events scored; null in half duplex.")
    duplex_agent_interruptions: int | None = Field(None, description="Duplex: Agent onsets over a caller turn (I_A's numerator); null in half duplex.")
    live_ended_by: str | None = Field(None, description="Live call (a phone bot as the agent): who ended it, 'caller', "
                                      "'bot', 'fault', or 'none' (the dial failed); null otherwise.")
    live_fault_kind: str | None = Field(None, description="Live call: the fault that ended it ('unreachable', "
                                        "'harness_late', also when its lateness passed the limit: an infra row; 'wrong_protocol', "
                                        "'no_answer', 'hung_up', 'timeout': the bot's), its line in error_message; "
                                        "null when none.")
    live_frames: int | None = Field(None, ge=0, description="Live call: 20 ms frames the harness sent; null otherwise.")
    live_lateness_p50_ms: float | None = Field(None, ge=0, description="Live call: median lateness of a frame "
                                               "sent against its due time on the wall clock, ms; null otherwise.")
    live_lateness_p99_ms: float | None = Field(None, ge=0, description="Live call: 99th-percentile frame-send "
                                               "lateness, ms (over the limit: an infra row); null otherwise.")
    live_lateness_max_ms: float | None = Field(None, ge=0, description="Live call: the latest frame's lateness, ms; "
                                               "null otherwise.")
    live_longest_gap_ms: float | None = Field(None, ge=0, description="Live call: longest time between two frames "
                                              "sent, ms (20 when on time; over the limit: an infra row); null otherwise.")
    live_caller_moves: int | None = Field(None, ge=0, description="Live call: caller speech that went out later "
                                          "than the caller decided (its frame had gone while it was made); null "
                                          "otherwise.")
    live_caller_move_max_s: float | None = Field(None, ge=0, description="Live call: the largest such move, seconds; "
                                                 "null otherwise.")
    live_tick_lag_p50_s: float | None = Field(None, ge=0, description="Live call: median of how far the call had run "
                                              "past a tick when the caller's decision at it reached the line, "
                                              "seconds; null otherwise.")
    live_tick_lag_max_s: float | None = Field(None, ge=0, description="Live call: the largest such lag, seconds; null "
                                              "otherwise.")
    live_protocol: str | None = Field(None, description="Live call with a realtime model: the protocol spoken "
                                      "('openai-realtime'); null for a phone bot and otherwise.")
    live_input_audio_tokens: int | None = Field(None, ge=0, description="Realtime model: input audio tokens over the "
                                                "session's responses (its usage); null otherwise.")
    live_input_text_tokens: int | None = Field(None, ge=0, description="Realtime model: input text tokens; null "
                                               "otherwise.")
    live_output_audio_tokens: int | None = Field(None, ge=0, description="Realtime model: output audio tokens; null "
                                                 "otherwise.")
    live_output_text_tokens: int | None = Field(None, ge=0, description="Realtime model: output text tokens; null "
                                                "otherwise.")
    live_truncations: int | None = Field(None, ge=0, description="Realtime model: times the caller cut its audio "
                                         "(conversation.item.truncate sent at the ms played); null otherwise.")

    @model_validator(mode="before")
    @classmethod
    def _unit_from_conversation(cls, data: Any) -> Any:
        return _fill_unit_id(data)



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
    truncated_replies: Count = Field(0, description="Replies cut at the length limit (conversations' "
                                     "truncated_replies), both roles.")
    truncated_tool_calls: Count = Field(0, description="Tool calls in those replies, never run.")
    filtered_replies: Count = Field(0, description="Replies whose output the provider's filter withheld.")
    prompt_filtered_replies: Count = Field(0, description="Calls refused because the provider's filter flagged the prompt.")
    refused_replies: Count = Field(0, description="Replies that were refusals.")
    malformed_call_replies: Count = Field(0, description="Replies stopped on a tool call the provider could not parse.")
    text_tool_call_replies: Count = Field(0, description="Replies with a tool call written as text.")
    updated_at: UtcDatetime = Field(description="When these totals were computed, UTC.")
