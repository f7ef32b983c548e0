"""τ² interop both ways, with the installed τ² package as the oracle: an export of a tauray
run is a τ² results file whose rewards τ²'s own evaluator recomputes, and importing it
back gives the same tables; bad files are refused with one line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tauray.actors.audit import audit_result
from tauray.pipeline.cli.main import main
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.results import actions_df, conversations_df, messages_df, predicates_df
from tauray.results.tau2.format import Tau2FileError, load_tau2_results
from tauray.results.tau2.from_tau2 import import_tau2, tau2_rewards_df
from tauray.results.tau2.to_tau2 import export_tau2


@pytest.fixture(scope="module")
def faulty_run(ray_local, tmp_path_factory):
    """Scripted models behind an endpoint that injects faults: verdicts of both kinds,
    infra errors, malformed tool calls, retries, and the reference pair for agent stops."""
    from tauray.endpoint import start_endpoint

    out = tmp_path_factory.mktemp("tau2") / "run"
    with start_endpoint(latency=0.0, fault_rate=0.15, fault_seed=7,
                        fault_kinds=("500", "malformed_tool_json", "empty")) as ep:
        spec = {"api_base": ep.base_url, "num_retries": 0}
        cfg = run_config(name="faulty", split="small", patterns=["tau2_telecom*__service_issue__*"],
                         agent={"model": "openai/scripted-agent", **spec},
                         user={"model": "openai/scripted-user", **spec}, max_in_flight=8)
        execute(cfg, out=out, probe=False, progress=False, keep_actors=True)
    cfg = run_config(name="oracle", domain="telecom", split="small", limit=6, agent={"model": "oracle"},
                     user={"model": "scripted"})
    execute(cfg, out=out.parent / "oracle", probe=False, progress=False, keep_actors=True)
    return out.parent


def _evaluate(path: str) -> list[tuple[object, object, object]]:
    """(simulation, τ²'s recomputed reward info, the task) for every simulation of a file."""
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    results = load_tau2_results(path)
    tasks = {t.id: t for t in results.tasks}
    return [(sim, evaluate_simulation(simulation=sim, task=tasks[sim.task_id], evaluation_type=EvaluationType.ALL,
                                      solo_mode=False, domain=results.info.environment_info.domain_name),
             tasks[sim.task_id]) for sim in results.simulations]


def test_tau2_evaluator_recomputes_every_exported_reward(faulty_run, tmp_path):
    # issue 37 (9): the reward is by the task's own basis, so τ²'s evaluator agrees N/N, the
    # tasks gated on ACTION included (before: tauray's predicate verdict, 38/40 on such a run)
    summary = export_tau2(faulty_run, tmp_path / "export")
    conv = conversations_df(faulty_run)
    assert summary.conversations == len(conv) and {f.domain for f in summary.files} == {"telecom", "telecom-workflow"}
    agree = action_tasks = 0
    for f in summary.files:
        for sim, recomputed, task in _evaluate(f.path):
            action_tasks += "ACTION" in [b.value for b in task.evaluation_criteria.reward_basis]
            agree += recomputed.reward == sim.reward_info.reward
            assert recomputed.reward == sim.reward_info.reward, (sim.id, task.id, recomputed.reward_breakdown)
    assert agree == len(conv) and action_tasks >= 1
    assert conv["error_kind"].eq("infra").any() and conv["success"].eq(True).any() and conv["success"].eq(False).any()


def _plain(frame: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    frame = frame.drop(columns=["run_id", "sweep_id"], errors="ignore").sort_values(key).reset_index(drop=True)
    frame = frame.astype(object)
    return frame.where(frame.notna(), None).map(lambda v: list(v) if hasattr(v, "tolist") else v)


def test_round_trip_keeps_every_message_tool_call_and_verdict(faulty_run, tmp_path):
    export_tau2(faulty_run, tmp_path / "export")
    files = sorted((tmp_path / "export").glob("*.json"))
    summary = import_tau2(files, tmp_path / "imported", finish=audit_result)  # as `tauray import-tau2` does
    # τ²'s reward (by the task's basis) differs from tauray's verdict only on tasks gated on ACTION
    differ = 0
    for f in files:
        for sim in load_tau2_results(str(f)).simulations:
            success = sim.reward_info.info["tauray"]["conversation"]["success"]
            differ += success is not None and (sim.reward_info.reward == 1.0) != bool(success)
    assert summary.replay_mismatches == 0 and summary.tau2_disagree == differ
    for reader, key in ((conversations_df, ["conversation_id"]), (messages_df, ["conversation_id", "seq"]),
                        (actions_df, ["conversation_id", "seq"]), (predicates_df, ["conversation_id", "index"])):
        before, after = _plain(reader(faulty_run), key), _plain(reader(tmp_path / "imported"), key)
        pd.testing.assert_frame_equal(before, after, check_dtype=False)
    msgs = messages_df(faulty_run)
    assert msgs["tool_calls"].fillna("").str.contains("end_conversation").any()  # harness calls came back
    assert msgs["retries"].notna().any()
    rewards = tau2_rewards_df(tmp_path / "imported")
    assert len(rewards) == summary.simulations and int((~rewards["agree"].dropna().astype(bool)).sum()) == differ


def test_import_rescores_instead_of_copying_the_reward(faulty_run, tmp_path):
    export_tau2(faulty_run, tmp_path / "export", cells=None)
    path = sorted((tmp_path / "export").glob("telecom_oracle_*.json"))[0]
    data = json.loads(path.read_text())
    sim = data["simulations"][0]
    sim["reward_info"]["reward"] = 0.0  # a reward the trajectory does not earn
    for m in sim["messages"]:  # and a trajectory whose tool calls are all gone
        m["tool_calls"] = None
        m.pop("raw_data", None)
    sim["messages"] = [m for m in sim["messages"] if m["role"] != "tool"]
    path.write_text(json.dumps(data))
    summary = import_tau2([path], tmp_path / "imported")
    conv = conversations_df(tmp_path / "imported").set_index("unit_id")
    assert conv.loc[sim["id"], "success"] == False  # noqa: E712 - nothing was fixed: tauray's own verdict
    assert conv.loc[sim["id"], "agent_tool_calls"] == 0
    assert summary.tau2_agree == summary.simulations  # the forged 0.0 agrees with the failure it now is


def _bad(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bad_files_are_one_line_errors(faulty_run, tmp_path, capsys):
    export_tau2(faulty_run, tmp_path / "export")
    good = sorted((tmp_path / "export").glob("telecom_oracle_*.json"))[0]
    text = good.read_text()
    data = json.loads(text)
    other = json.loads(text)
    other["info"]["environment_info"]["domain_name"] = "banking"
    unknown = json.loads(text)
    unknown["simulations"][0]["messages"][0]["sentiment"] = "calm"
    missing = json.loads(text)
    del missing["simulations"][0]["task_id"]
    foreign = json.loads(text)
    foreign["tasks"][0]["id"] = foreign["simulations"][0]["task_id"] = "no_such_task"
    cases = {
        "truncated.json": (text[: len(text) // 2], "not valid JSON (truncated?)"),
        "banking.json": (json.dumps(other), "τ² domain 'banking' is not one tauray has"),
        "unknown.json": (json.dumps(unknown), "fields unknown to the installed τ² version"),
        "missing.json": (json.dumps(missing), "simulations.0.task_id: Field required"),
        "foreign.json": (json.dumps(foreign), "task 'no_such_task' is not a telecom task"),
    }
    assert data["simulations"]
    for name, (content, says) in cases.items():
        path = _bad(tmp_path, name, content)
        with pytest.raises(Tau2FileError, match=None) as info:
            import_tau2([path], tmp_path / f"out-{name}")
        assert str(info.value).startswith(str(path)) and says in str(info.value) and "\n" not in str(info.value)
        assert main(["import-tau2", str(path), "--out", str(tmp_path / f"cli-{name}")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1] == f"tauray import-tau2: error: {info.value}"
        assert not (tmp_path / f"cli-{name}").exists()  # refused before anything is written


def test_cli_export_then_import(faulty_run, tmp_path, capsys, cli_json):
    exported = cli_json("export-tau2", str(faulty_run / "oracle"), "--out", str(tmp_path / "x"))
    assert [f["simulations"] for f in exported["files"]] and sum(f["simulations"] for f in exported["files"]) == 6
    files = [f["path"] for f in exported["files"]]
    imported = cli_json("import-tau2", *files, "--out", str(tmp_path / "run"))
    assert imported["simulations"] == 6 and imported["success"] == 6 and imported["tau2_agree"] == 6


def test_a_reference_agent_costs_nothing_so_the_leaderboard_can_average_it(faulty_run, tmp_path):
    """`tau2 submit prepare` averages the agent's cost and refuses NaN; a reference policy
    calls no model, so its cost is 0, while a model with no known price stays unknown."""
    from tau2.metrics.agent_metrics import compute_metrics

    summary = export_tau2(faulty_run / "oracle", tmp_path / "oracle")
    for f in summary.files:
        results = load_tau2_results(f.path)
        assert all(s.agent_cost == 0.0 and s.user_cost == 0.0 for s in results.simulations)
        assert compute_metrics(results).avg_agent_cost == 0.0


def test_a_cut_replys_calls_are_kept_from_tau2s_replay():
    # issue 37 (1): tauray never ran the calls of a reply cut at max_tokens (Anthropic hands them back
    # with parsed {} arguments); τ²'s evaluator replays every tool call of a trajectory, so an exported
    # cut call must travel where τ² does not look (raw_data, like the harness calls), or τ² would run it
    from tauray.results.tau2.format import HARNESS_KEY
    from tauray.results.tau2.to_tau2 import tau2_messages

    now = pd.Timestamp.now(tz="UTC")
    call = {"id": "toolu_1", "name": "toggle_airplane_mode", "arguments": "{}"}
    rows = [{"turn": 1, "created_at": now, "side": "user", "role": "user", "content": None,
             "tool_calls": json.dumps([call]), "tool_call_id": None, "retries": 0, "finish_reason": "length",
             "native_finish_reason": None, "stop": "length", "refusal": None},
            {"turn": 1, "created_at": now, "side": "user", "role": "tool", "content": "Error: your reply was cut",
             "tool_calls": None, "tool_call_id": "toolu_1", "retries": None, "finish_reason": None}]
    out = tau2_messages(rows, [False])
    assert len(out) == 1 and not out[0]["tool_calls"]
    assert out[0]["raw_data"][HARNESS_KEY]["calls"] == [call] and out[0]["raw_data"]["tauray_stop"] == "length"


MOCK_UNSOLVABLE = {"update_task_with_history_and_env_assertions": "ENV_ASSERTION",
                   "update_task_with_initialization_data": "COMMUNICATE"}
"""The mock tasks whose data no reference player can satisfy, and τ²'s reward component that fails:
the first asserts a task status that no reference action sets (its actions are missing), the second
wants two rubric sentences said word for word as COMMUNICATE facts (docs/tau2.md)."""


def test_the_mock_tasks_the_reference_policies_fail_are_the_ones_tau2_fails_too(ray_local, tmp_path):
    """τ²'s own evaluator, on the exported trajectories and on upstream's own tasks, gives every mock
    task the verdict tauray gave: 7 rewarded, and the two that fail fail on the same component."""
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    cfg = run_config(name="mock-ref", domain="mock", agent={"model": "oracle"}, user={"model": "scripted"})
    execute(cfg, out=tmp_path / "run", probe=False, progress=False, keep_actors=True)
    conv = conversations_df(tmp_path / "run")
    success = {str(r.scenario).removeprefix("tau2_mock__"): bool(r.success) for r in conv.itertuples()}
    summary = export_tau2(tmp_path / "run", tmp_path / "export")
    upstream = {t.id: t for t in registry.get_tasks_loader("mock")()}
    rewards = {}
    for f in summary.files:
        for sim in load_tau2_results(f.path).simulations:
            got = evaluate_simulation(simulation=sim, task=upstream[sim.task_id], evaluation_type=EvaluationType.ALL,
                                      solo_mode=False, domain="mock")
            rewards[sim.task_id] = (got.reward, {k.value: v for k, v in (got.reward_breakdown or {}).items()})
    assert len(rewards) == len(success) == 9
    assert {t for t, ok in success.items() if not ok} == set(MOCK_UNSOLVABLE)
    for task, ok in success.items():
        assert (rewards[task][0] == 1.0) is ok, (task, rewards[task])
    for task, component in MOCK_UNSOLVABLE.items():
        assert rewards[task][1][component] == 0.0, (task, rewards[task])
    # the first is wrong as upstream ships it: τ²'s gold (the history, no reference action) fails its assertion
    history = upstream["update_task_with_history_and_env_assertions"]
    assert not history.evaluation_criteria.actions and "ENV_ASSERTION" in [
        b.value for b in history.evaluation_criteria.reward_basis]
