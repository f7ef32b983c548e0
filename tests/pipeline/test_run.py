"""Runs through Ray actors: reference policies, models behind the local test
endpoint over real HTTP, injected faults, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tauray.endpoint import start_endpoint
from tauray.pipeline.config import SweepConfig, run_config
from tauray.pipeline.driver import execute
from tauray.results import actions_df, conversations_df, messages_df, predicates_df


def _run(tmp_path: Path, **kw) -> tuple[SweepConfig, object]:
    cfg = run_config(name="t", **kw)
    return cfg, execute(cfg, out=tmp_path / cfg.name, probe=False, progress=False, keep_actors=True)


def test_reference_policies_on_ray_write_readable_tables(ray_local, tmp_path):
    cfg, summary = _run(tmp_path, domain="telecom", split="small", agent={"model": "oracle"},
                        user={"model": "scripted"}, max_in_flight=16)
    assert summary.ran == 40 and summary.success == 40
    conv = pd.read_parquet((tmp_path / cfg.name) / "conversations")
    assert len(conv) == 40 and conv["conversation_id"].is_unique
    assert set(conv["policy_variant"]) == {"manual", "workflow"}
    assert (conv["agent_kind"] == "reference").all() and (conv["agent_model"] == "oracle").all()
    preds = predicates_df((tmp_path / cfg.name))
    assert len(preds) == conv["predicates_total"].sum() and preds["met"].all()
    actions = actions_df((tmp_path / cfg.name))
    syncs = actions[actions["kind"] == "sync"]
    assert len(syncs) == conv["sync_events"].sum() > 0
    calls = actions[actions["kind"] == "tool_call"]
    assert calls["matched_action_id"].notna().any()
    msgs = messages_df((tmp_path / cfg.name))
    assert set(msgs["side"]) == {"agent", "user"} and set(msgs["role"]) == {"assistant", "user", "tool"}
    first = msgs[msgs["seq"] == 0]
    assert (first["side"] == "agent").all()  # the agent greets first


def test_models_behind_the_endpoint(ray_local, endpoint, tmp_path):
    agent = {"model": "openai/scripted-agent", "api_base": endpoint.base_url}
    user = {"model": "openai/scripted-user", "api_base": endpoint.base_url}
    cfg, summary = _run(tmp_path, patterns=["tau2_telecom__mms_issue__*"], split="small", agent=agent, user=user,
                        trials=2, max_in_flight=8)
    conv = conversations_df((tmp_path / cfg.name))
    assert len(conv) == summary.ran == 2 * 6
    assert (conv["termination_reason"] == "user_stop").all()
    assert (conv["agent_llm_calls"] > 0).all() and (conv["user_prompt_tokens"] > 0).all()
    assert (conv["agent_tool_calls"] > 0).all() and (conv["agent_kind"] == "llm").all()
    assert conv["success"].notna().all()  # scored: the scripted agent fixes nothing, predicates decide
    assert conv.groupby("scenario")["seed"].nunique().eq(2).all()  # trials get distinct seeds


def test_injected_faults_every_unit_is_one_row(ray_local, tmp_path):
    with start_endpoint(latency=0.0, fault_rate=0.1, fault_seed=3, timeout_hang_s=2.0) as ep:
        spec = {"api_base": ep.base_url, "num_retries": 0, "timeout": 1.0}
        cfg, summary = _run(tmp_path, split="small", domain="telecom", variant="manual",
                            agent={"model": "openai/scripted-agent", **spec},
                            user={"model": "openai/scripted-user", **spec}, trials=2, max_in_flight=20)
        stats = ep.stats()
    conv = conversations_df((tmp_path / cfg.name))
    assert len(conv) == 40 and conv["conversation_id"].is_unique
    infra = conv[conv["error_kind"] == "infra"]
    assert len(infra) > 0 and (infra["termination_reason"] == "infra_error").all()
    assert infra["error_message"].str.len().gt(0).all()
    assert sum(stats["faults"].values()) > 0
    assert summary.infra_errors == len(infra)
    assert conv.loc[conv["error_kind"].isna(), "success"].notna().all()


@pytest.mark.parametrize("flags, needle", [
    (["--agent-model", "nosuchprovider/some-model"], "nosuchprovider/some-model"),
    (["--agent-model", "openai/gpt-4o-mini", "--agent-key-env", "TAURAY_TEST_UNSET_KEY"], "TAURAY_TEST_UNSET_KEY"),
])
def test_bad_model_fails_before_any_conversation(tmp_path, capsys, flags, needle):
    """The CLI in this process (``python -m tauray`` itself is run by tests/scenarios/test_bad_input.py)."""
    from tauray.pipeline.cli.main import main

    out = tmp_path / "never"
    code = main(["run", "--split", "small", "--domain", "telecom", "--user-model", "scripted", "--out", str(out),
                 *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err
    assert not out.exists()


def test_cli_run_json(ray_local, tmp_path, capsys):
    from tauray.pipeline.cli.main import main

    out = tmp_path / "cli"
    capsys.readouterr()
    code = main(["run", "tau2_telecom__service_issue__*", "--split", "small", "--agent-model", "oracle",
                 "--user-model", "scripted", "--out", str(out), "--json"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    summary = json.loads(stdout)  # stdout is the document alone (pipeline/output.json_only_stdout)
    assert summary["ran"] == summary["success"] == 6
    assert len(pd.read_parquet(out / "conversations")) == 6


def test_cli_agent_reference_steps_reaches_the_agent_spec():
    from tauray.pipeline.cli.main import build_parser
    from tauray.pipeline.cli.run import role_spec as _model_spec

    base = ["run", "tau2_mock__*", "--agent-model", "openai/x", "--user-model", "scripted"]
    args = build_parser().parse_args([*base, "--agent-reference-steps"])
    assert _model_spec(args, "agent")["reference_steps"] is True
    assert "reference_steps" not in _model_spec(build_parser().parse_args(base), "agent")
    with pytest.raises(SystemExit):  # an agent option only
        build_parser().parse_args([*base, "--user-reference-steps"])
