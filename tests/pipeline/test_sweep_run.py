"""Sweeps on the suite's local Ray against the test endpoint: totals, resume, faults
and --retry-errors, an actor killed mid-conversation, the cost budget."""

from __future__ import annotations

import pytest

from tauray.endpoint import start_endpoint
from tauray.pipeline.driver import DriverError as SweepError
from tauray.pipeline.scheduler import Hooks
from tauray.results import cells_df, conversations_df, messages_df

from .conftest import make_sweep


@pytest.fixture(scope="module", autouse=True)
def _shared_actors():
    """One actor generation for the module's sweeps (each new one costs seconds of imports)."""
    yield
    from tauray.pipeline.pool import KEPT

    KEPT.drop()


def run_sweep(*args, **kw):
    from tauray.pipeline.driver import execute as run

    return run(*args, keep_actors=True, **kw)


def _exactly_once(out, summary):
    conv = conversations_df(out)
    assert conv["conversation_id"].is_unique
    assert len(conv) == summary.units
    return conv


def test_sweep_runs_grid_with_per_model_totals_and_resumes(ray_local, endpoint, tmp_path, capsys):
    cfg = make_sweep(endpoint.base_url)
    out = tmp_path / "s"
    s = run_sweep(cfg, out=out, progress=True)  # the live display, drawn even without a terminal
    conv = _exactly_once(out, s)
    assert s.units == 4 * 3 * 2 and s.ran == s.units and s.cells == 4
    err = capsys.readouterr().err
    assert "sweep t" in err and "in_flight=" in err and "a1" in err and "cost=$" in err
    assert set(conv["agent_model"]) == {"openai/scripted-agent", "openai/scripted-agent-quiet"}
    assert set(conv["user_model"]) == {"openai/scripted-user:2", "openai/scripted-user-impatient"}
    assert conv["cell_id"].nunique() == 4 and conv["run_id"].eq("t").all()
    # accounting: per role per conversation, per model and per cell
    assert (conv["agent_cost_usd"] > 0).all() and (conv["user_cost_usd"] > 0).all()
    a1 = s.per_model["a1"]
    rows = conv[conv["agent_model"] == "openai/scripted-agent"]
    assert a1.as_agent == a1.conversations == len(rows) == 12
    assert a1.prompt_tokens == rows["agent_prompt_tokens"].sum() > 0
    assert a1.cost_usd == pytest.approx(rows["agent_cost_usd"].sum())
    judge = s.per_model["j"]  # the sweep's judge config, judged in the loop by the coordinator
    judged = conv[conv["judge_prompt_tokens"] > 0]
    assert judge.as_judge == len(judged) > 0 and judge.prompt_tokens == judged["judge_prompt_tokens"].sum()
    assert (judged["judge_cost_usd"] > 0).all()
    cells = cells_df(out)
    assert len(cells) == 4 and cells["done"].eq(6).all() and cells["judge_configs"].map(len).eq(1).all()
    assert cells["cost_usd"].sum() == pytest.approx(s.cost_usd)
    # rerunning needs --resume, and then skips everything
    with pytest.raises(SweepError, match="--resume"):
        run_sweep(cfg, out=out, progress=False)
    again = run_sweep(cfg, out=out, resume=True, progress=False)
    assert again.skipped == again.units and again.ran == 0 and again.rows == s.units
    # more trials later: only the new ones run
    more = run_sweep(cfg.model_copy(update={"trials": 3}), out=out, resume=True, progress=False)
    assert more.ran == 12 and more.rows == 36
    assert len(cells_df(out)) == 4


def test_faults_give_infra_rows_and_retry_errors_replaces_them(ray_local, tmp_path):
    out = tmp_path / "f"
    with start_endpoint(latency=0.0, fault_rate=0.1, fault_seed=5, fault_kinds=("429", "500")) as ep:
        cfg = make_sweep(ep.base_url, spec={"num_retries": 0}, limit=5)
        # no probe: at a 10% fault rate without retries it would rightly refuse to start
        first = run_sweep(cfg, out=out, progress=False, probe=False)
    conv = _exactly_once(out, first)
    assert first.infra_errors > 0 and first.infra_errors == (conv["error_kind"] == "infra").sum()
    infra_ids = set(conv.loc[conv["error_kind"] == "infra", "conversation_id"])
    with start_endpoint(latency=0.0) as ep:  # the provider recovered
        cfg = make_sweep(ep.base_url, limit=5)
        second = run_sweep(cfg, out=out, retry_errors=True, progress=False)
    assert second.retried_errors == len(infra_ids) == second.ran
    conv = _exactly_once(out, second)
    assert second.infra_errors == 0 and conv["error_kind"].isna().all()
    msgs = messages_df(out)
    assert msgs.groupby("conversation_id")["seq"].apply(lambda s: s.is_unique).all()  # old attempts' rows gone
    assert set(msgs["conversation_id"]) == set(conv["conversation_id"])


def test_budget_stops_submitting(ray_local, endpoint, tmp_path):
    cfg = make_sweep(endpoint.base_url, agents=("a1",), users=("u1",), limit=6, trials=2, max_in_flight=2,
                     budget_usd=0.02)
    s = run_sweep(cfg, out=tmp_path / "b", progress=False)
    assert s.budget_reached and s.not_submitted > 0 and 0 < s.rows < s.units
    assert s.cost_usd >= 0.02
    again = run_sweep(cfg, out=tmp_path / "b", resume=True, progress=False)
    assert again.budget_reached and again.ran == 0  # the budget is the sweep's, across reruns


def test_actors_killed_mid_conversation_units_retried_on_new_actors(ray_local, tmp_path):
    """An agent host and a coordinator die with conversations in flight: the host's
    conversations end on actor errors, the coordinator's calls raise; both kinds of
    unit are retried on a fresh generation of actors and end as normal rows."""
    import ray

    killed = []

    def on_submit(pool, n):
        if n == 8 and not killed:
            gen = pool.current
            ray.kill(gen.agents[0])
            ray.kill(gen.coordinators[1])
            killed.append(gen.number)

    with start_endpoint(latency=0.05) as ep:
        # the reference user: the new generation's user host has no litellm to import
        cfg = make_sweep(ep.base_url, agents=("a1",), users=("ref",), limit=4, trials=3, max_in_flight=8,
                         cluster={"coordinators": 2})
        s = run_sweep(cfg, out=tmp_path / "k", progress=False, hooks=Hooks(on_submit=on_submit))
    conv = _exactly_once(tmp_path / "k", s)
    assert killed and s.actor_retries >= 2 and s.actor_generations == 2
    assert conv["error_kind"].isna().all(), conv["error_message"].dropna().tolist()
