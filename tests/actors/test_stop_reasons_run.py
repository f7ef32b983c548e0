"""Stop reasons end to end: a sweep whose agents are the endpoint's stop behaviours (OpenAI-compatible,
and Anthropic, Gemini and Azure in their own wire formats) writes each reply's finish reason, the
provider's own reason and tauray's stop, counts them per conversation, the run summary names them
and the report shows them (issue 22: truncation, filtering and refusals are data, never invisible;
issue 37: the native reason beside litellm's, each kind in its own column)."""

from __future__ import annotations

from pathlib import Path

from tauray.pipeline.cli.drive import print_summary
from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
from tauray.results import conversations_df, messages_df

# model name in the sweep -> (litellm model, the column its replies fill)
STOPS = {"stop-length-text": ("openai/stop-length-text", "truncated_replies"),
         "stop-length-tool": ("openai/stop-length-tool", "truncated_tool_calls"),
         "stop-content-filter": ("openai/stop-content-filter", "filtered_replies"),
         "stop-refusal": ("openai/stop-refusal", "refused_replies"),
         "tool-call-text": ("openai/tool-call-text", "text_tool_call_replies"),
         "claude-refusal": ("anthropic/refusal", "refused_replies"),
         "gemini-malformed": ("gemini/malformed-call", "malformed_call_replies"),
         "azure-prompt-filter": ("azure/prompt-filter", "prompt_filtered_replies")}
COLUMNS = sorted({column for _, column in STOPS.values()} | {"filtered_replies", "truncated_replies"})


def test_stop_behaviours_become_columns_counts_and_a_report_section(ray_local, endpoint, tmp_path, capsys):
    from tauray.pipeline.report import write_report

    root = endpoint.base_url.removesuffix("/v1")
    models = {name: {"model": model, "api_base": endpoint.base_url if model.startswith("openai/") else root,
                     "num_retries": 0} for name, (model, _) in STOPS.items()}
    cfg = SweepConfig.model_validate({
        "name": "stops", "models": models, "agents": list(STOPS), "users": ["scripted"], "max_steps": 12,
        "scenarios": [{"domain": "telecom", "split": "small", "patterns": ["tau2_telecom__mms_issue__*"],
                       "limit": 1}], "policy_variants": ["manual"]})
    summary = execute(cfg, out=tmp_path / "run", probe=False, progress=False, keep_actors=True)
    assert summary.rows == len(STOPS) and summary.internal_errors == 0 and summary.model_errors == 0
    conv = conversations_df(tmp_path / "run").set_index("agent_model")
    for name, (model, column) in STOPS.items():
        row = conv.loc[model]
        assert row[column] >= 1, (name, row[COLUMNS].to_dict(), row[["termination_reason", "error_message", "agent_llm_calls"]].to_dict())
        others = [c for c in COLUMNS if c != column and not (column == "truncated_tool_calls"
                                                              and c == "truncated_replies")]
        assert all(row[c] == 0 for c in others), (name, row[COLUMNS].to_dict())
        assert row["malformed_tool_calls"] == 0  # a cut call is its own kind, never "malformed"
    msgs = messages_df(tmp_path / "run")
    agent = msgs[(msgs["side"] == "agent") & (msgs["role"] == "assistant")]
    assert {"length", "content_filter"} <= set(agent["finish_reason"].dropna())
    assert {"MALFORMED_FUNCTION_CALL", "refusal"} <= set(agent["native_finish_reason"].dropna())
    assert {"prompt_filter", "malformed_call", "refusal", "length"} <= set(agent["stop"].dropna())
    assert agent["refusal"].notna().any()
    assert sum(c["prompt_filtered_replies"] for c in summary.per_cell) == conv["prompt_filtered_replies"].sum()
    print_summary(summary)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("replies:"))
    for words in ("cut at max_tokens", "tool calls cut (not run)", "output filtered", "prompt filtered", "refused",
                  "tool calls the provider could not parse", "tool calls written as text", "--tool-call-parser"):
        assert words in line, line
    # a τ² export imported back keeps every count (τ² has no field for them: the export's tauray block)
    from tauray.results.tau2.from_tau2 import import_tau2
    from tauray.results.tau2.to_tau2 import export_tau2

    export_tau2(tmp_path / "run", tmp_path / "tau2")
    import_tau2(sorted((tmp_path / "tau2").glob("*.json")), tmp_path / "imported")
    back = conversations_df(tmp_path / "imported").set_index("agent_model")
    assert back.loc[conv.index, COLUMNS].to_dict() == conv[COLUMNS].to_dict()
    stops = messages_df(tmp_path / "imported")["stop"].dropna()
    assert set(stops) == set(msgs["stop"].dropna())
    index = Path(write_report(tmp_path / "run", tmp_path / "report").index).read_text()
    assert "How replies ended" in index and 'data-metric="stops_refused_replies"' in index
