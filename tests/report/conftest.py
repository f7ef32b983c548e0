"""A small fixture sweep for the analysis and report tests.

Four cells (three agent models) × eight telecom small-split scenarios (four
upstream tasks in both policy variants) × two trials, run through Ray with the
reference policies and the scripted models behind the local test endpoint.
Judge verdicts for two judge configs are FIXTURE DATA written straight into
``judge_verdicts`` (deterministic stand-ins, not produced by a judge model).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

TASKS = [
    "service_issue__overdue_bill_suspension__persona_easy",
    "service_issue__airplane_mode_on",
    "mobile_data_issue__data_usage_exceeded__persona_easy",
    "mms_issue__bad_network_preference",
]
PATTERNS = [f"tau2_telecom*__{t}" for t in TASKS]
TRIALS = 2
# name -> judge model, prompt id, prompt version
JUDGE_CONFIGS = {
    "strict": ("openai/judge-json", "overall", "v1"),
    "lenient": ("openai/judge-lenient", "overall", "v2"),
}


def _cells(base_url: str) -> dict[str, tuple[dict, dict]]:
    ep = {"api_base": base_url}
    user = {"model": "openai/scripted-user", **ep}
    return {
        "oracle": ({"model": "oracle"}, {"model": "scripted"}),
        "oracle-llmuser": ({"model": "oracle"}, user),
        "scripted": ({"model": "openai/scripted-agent", **ep}, user),
        "quiet": ({"model": "openai/scripted-agent-quiet", **ep}, user),
    }


def _fixture_judge_rows(conv) -> dict[str, list[dict]]:
    """Deterministic judge verdicts (fixture data): 'strict' follows the
    predicates' verdict except on every fifth conversation; 'lenient' takes
    three samples, passing twice, and one conversation gets only unscored
    samples (an unparseable reply)."""
    rows: dict[str, list[dict]] = {}
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for i, r in enumerate(conv.sort_values(["run_id", "conversation_id"]).itertuples()):
        for name, (model, prompt_id, version) in JUDGE_CONFIGS.items():
            config_id = hashlib.sha256(f"{model}|{prompt_id}|{version}".encode()).hexdigest()[:12]
            if name == "strict":
                samples = [(r.success is not pd.NA and bool(r.success)) != (i % 5 == 0)]
            elif i == 3:
                samples = [None, None, None]
            else:
                samples = [True, True, (r.success is not pd.NA and bool(r.success))]
            scored = [s for s in samples if s is not None]
            yes = sum(scored)
            majority = None if not scored or yes * 2 == len(scored) else yes * 2 > len(scored)
            for k, passed in enumerate(samples):
                rows.setdefault(r.run_id, []).append({
                    "run_id": r.run_id, "conversation_id": r.conversation_id, "scenario": r.scenario,
                    "judge_model": model, "prompt_id": prompt_id, "prompt_version": version,
                    "prompt_hash": "fixture", "judge_config_id": config_id, "transcript_hash": "fixture",
                    "judge_api_base": None, "judge_temperature": 0.0, "judge_seed": None, "judge_max_tokens": None,
                    "judge_extra_params": "{}", "structured": "auto", "response_format_sent": False,
                    "nl_pack": None, "nl_pack_hash": None, "context_hash": "fixture",
                    "scored_samples": len(scored), "item_samples": len(samples),
                    "unscored_share": (len(samples) - len(scored)) / len(samples),
                    "sample_index": k, "passed": passed, "majority": majority,
                    "agreement": None if majority is None else sum(s == majority for s in scored) / len(scored),
                    "unscored_reason": "fixture: unparseable reply" if passed is None else None,
                    "reasoning": f"fixture verdict of the {name} judge config", "raw_output": None,
                    "prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.0001, "latency_s": 0.01,
                    "created_at": now})
    return rows


@pytest.fixture(scope="session")
def fixture_sweep(ray_local, endpoint, tmp_path_factory) -> Path:
    from tauray.pipeline.config import run_config
    from tauray.pipeline.driver import execute
    from tauray.results import write_records
    from tauray.results.tables.readers import conversations_df

    root = tmp_path_factory.mktemp("sweep")
    for name, (agent, user) in _cells(endpoint.base_url).items():
        cfg = run_config(name=name, patterns=PATTERNS, split="small", agent=agent, user=user, trials=TRIALS,
                         max_in_flight=16)
        execute(cfg, out=root / name, probe=False, progress=False, keep_actors=True)
    conv = conversations_df(root)
    for run_id, rows in _fixture_judge_rows(conv).items():
        write_records(root / run_id, "judge_verdicts", rows, run_id)
    return root


@pytest.fixture(scope="session")
def report_dir(fixture_sweep, tmp_path_factory) -> Path:
    from tauray.pipeline.report import write_report

    out = tmp_path_factory.mktemp("report")
    write_report(fixture_sweep, out)
    return out
