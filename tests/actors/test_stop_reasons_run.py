"""Stop reasons end to end: a sweep whose agents are the endpoint's stop behaviours writes
each reply's finish reason and refusal, counts them per conversation, and the report shows
them (issue 22: truncation, filtering and refusals are data, never invisible)."""

from __future__ import annotations

from pathlib import Path

from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
from tauray.results import conversations_df, messages_df

STOPS = {"stop-length-text": "truncated_replies", "stop-length-tool": "truncated_tool_calls",
         "stop-content-filter": "filtered_replies", "stop-refusal": "refused_replies"}


def test_stop_behaviours_become_columns_counts_and_a_report_section(ray_local, endpoint, tmp_path):
    from tauray.results.report import build_report

    models = {name: {"model": f"openai/{name}", "api_base": endpoint.base_url, "num_retries": 0} for name in STOPS}
    cfg = SweepConfig.model_validate({
        "name": "stops", "models": models, "agents": list(STOPS), "users": ["scripted"], "max_steps": 12,
        "scenarios": [{"domain": "telecom", "split": "small", "patterns": ["tau2_telecom__mms_issue__*"],
                       "limit": 1}], "policy_variants": ["manual"]})
    summary = execute(cfg, out=tmp_path / "run", probe=False, progress=False, keep_actors=True)
    assert summary.rows == len(STOPS) and summary.internal_errors == 0
    conv = conversations_df(tmp_path / "run").set_index("agent_model")
    for name, column in STOPS.items():
        row = conv.loc[f"openai/{name}"]
        assert row[column] >= 1, (name, row[list(STOPS.values())].to_dict())
        others = [c for c in STOPS.values() if c != column and not (column == "truncated_tool_calls"
                                                                     and c == "truncated_replies")]
        assert all(row[c] == 0 for c in others), (name, row[list(STOPS.values())].to_dict())
        assert row["malformed_tool_calls"] == 0  # a cut call is its own kind, never "malformed"
    msgs = messages_df(tmp_path / "run")
    agent = msgs[(msgs["side"] == "agent") & (msgs["role"] == "assistant")]
    assert {"length", "content_filter"} <= set(agent["finish_reason"].dropna())
    assert agent["refusal"].notna().any()
    index = Path(build_report(tmp_path / "run", tmp_path / "report").index).read_text()
    assert "How replies ended" in index and 'data-metric="stops_refused_replies"' in index
