"""The judge's verdict rows: one per sample, on an NL assertion or on the whole conversation."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tauray.results.tables.records.columns import Count, JsonText, UtcDatetime, _DetailRow


class _JudgeRow(_DetailRow):
    """Columns shared by every judge verdict row: what was judged, by which
    configuration, and what the call returned and cost."""

    judge_model: str = Field(description="Model that judged.")
    prompt_id: str = Field(description="Judge prompt template id.")
    prompt_version: str = Field(description="Version of that template.")
    prompt_hash: str = Field(description="Hash of the rendered template text.")
    judge_config_id: str = Field(description="Hash of everything that shapes the judge request as configured: "
                                 "model, api base, temperature, seed, max tokens, extra params, structured mode, "
                                 "prompt id/version/hash and NL pack id/version/hash (the columns below record what "
                                 "the request carried).")
    judge_api_base: str | None = Field(description="API base URL of the judge (credentials and query removed); null "
                                       "for the provider's standard endpoint.")
    judge_temperature: float | None = Field(description="Sampling temperature the request carried; null when none "
                                            "was sent (the provider's default; judge_dropped_params says why).")
    judge_seed: int | None = Field(description="Seed the request carried (base seed + sample index); null when none "
                                   "was set or the provider takes none.")
    judge_max_tokens: int | None = Field(description="Completion-token cap the request carried (the spec's, else "
                                         "tauray's default); null leaves the provider default.")
    judge_dropped_params: str | None = Field(None, description="Parameters of the judge spec left out of the request "
                                             "because the provider takes none or refuses the value (e.g. temperature "
                                             "for an o-series model, or with thinking on), comma-separated; null "
                                             "when none (or on rows written before it was recorded).")
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
    enforcement: Literal["json_schema", "grammar", "guided", "prompt"] | None = Field(
        None, description="How the reply format was enforced at the source: json_schema (litellm response_format, "
        "the provider's structured output), grammar (tauray's llama.cpp model, schema as grammar), guided (tauray's "
        "vLLM model), prompt (asked only in the prompt); null on rows written before it was recorded.")
    repair_used: bool = Field(False, description="Whether the first reply was not one value of the format and a "
                              "repair turn was asked in the same judge conversation (docs/judge.md).")
    repair_prompt: str | None = Field(None, description="id@version of the repair prompt sent; null without repair.")
    repair_prompt_hash: str | None = Field(None, description="Hash of that repair prompt's text and schema.")
    first_unscored_reason: str | None = Field(None, description="Why the first reply did not conform (what the "
                                              "repair turn was told); null when it conformed.")
    repair_output: str | None = Field(None, description="Raw reply to the repair turn; null without repair.")
    repair_prompt_tokens: Count = Field(0, description="Prompt tokens of the repair call (0 without one, or cached).")
    repair_completion_tokens: Count = Field(0, description="Completion tokens of the repair call.")
    repair_cost_usd: float | None = Field(None, description="Cost of the repair call; null without one or unknown.")
    repair_latency_s: float | None = Field(None, description="Latency of the repair call in seconds; null without one.")


class NLAssertionRecord(_JudgeRow):
    """One judge verdict on one natural-language assertion (one sample)."""

    assertion_index: int = Field(ge=0, description="Position of the assertion.")
    assertion: str = Field(description="Assertion text.")
    met: bool | None = Field(description="Verdict; null when unscored.")


class JudgeVerdictRecord(_JudgeRow):
    """One judge's overall verdict on one conversation (one sample)."""

    passed: bool | None = Field(description="Did the agent resolve the problem within policy; null when unscored.")
