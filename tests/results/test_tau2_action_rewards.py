"""τ² export rewards by the task's own reward basis, checked by τ²'s own evaluator on every
telecom task whose basis includes ACTION and on a seeded sample of the rest (issue 37, 9).

τ² gates a task on the reward basis it declares; 32 of the 2285 telecom tasks (all
service_issue, the reference action ``transfer_to_human_agents``) include ACTION in it, where
tauray's own telecom verdict is the predicates alone. Each task runs in both policy variants
(τ²'s ``telecom`` and ``telecom-workflow`` files), by two agents: the oracle
(the reference actions, the transfer included) and the endpoint's scripted agent, which only
looks things up: on an ACTION task it leaves the state as the assertions want it but never
transfers, so τ²'s ACTION gate gives 0 where tauray's verdict passes. Every exported
simulation's reward must equal τ²'s recomputation, N/N.

Rerun with the figure printed (about a minute on 2 cores):
``pytest -s -p no:cacheprovider tests/results/test_tau2_action_rewards.py``
"""

from __future__ import annotations

import random
from typing import Any

from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
from tauray.results import conversations_df
from tauray.results.tau2.to_tau2 import export_tau2
from tauray.scenarios.registry import default_registry
from tests.results.test_tau2_interop import _evaluate

SAMPLE = 32
"""Telecom tasks without ACTION in their basis, drawn with a fixed seed beside the ACTION ones."""


def action_scenarios() -> tuple[list[Any], list[Any]]:
    """(telecom scenario entries whose task's reward basis includes ACTION, the others), both
    policy variants, by the registry."""
    registry = default_registry()
    action, other = [], []
    for entry in registry.select(domain="telecom"):
        basis = registry.raw_task(entry).evaluation_criteria.reward_basis
        (action if "ACTION" in basis else other).append(entry)
    return action, other


def test_tau2_recomputes_every_reward_on_all_action_tasks_and_a_sample(ray_local, endpoint, tmp_path):
    action, other = action_scenarios()
    tasks = {e.upstream_id for e in action}
    assert len(tasks) == 32 and len(tasks | {e.upstream_id for e in other}) == 2285
    sample = set(random.Random(37).sample(sorted({e.upstream_id for e in other}), SAMPLE))
    chosen = [e.name for e in action] + [e.name for e in other if e.upstream_id in sample]
    cfg = SweepConfig.model_validate({
        "name": "tau2-action", "agents": ["oracle", "scripted-agent"], "users": ["scripted"], "max_steps": 30,
        "models": {"scripted-agent": {"model": "openai/scripted-agent", "api_base": endpoint.base_url,
                                      "num_retries": 0}},
        "scenarios": [{"domain": "telecom", "patterns": chosen}], "policy_variants": ["manual", "workflow"]})
    execute(cfg, out=tmp_path / "run", probe=False, progress=False, keep_actors=True)
    conv = conversations_df(tmp_path / "run")
    assert len(conv) == 2 * len(chosen) == 2 * 2 * (32 + SAMPLE) and not conv["error_kind"].notna().any()
    summary = export_tau2(tmp_path / "run", tmp_path / "export")
    sims = agree = gated = on_action = 0
    for f in summary.files:
        for sim, recomputed, task in _evaluate(f.path):
            sims += 1
            agree += recomputed.reward == sim.reward_info.reward
            assert recomputed.reward == sim.reward_info.reward, (sim.id, task.id, recomputed.reward_breakdown)
            if "ACTION" in [b.value for b in task.evaluation_criteria.reward_basis]:
                on_action += 1
                verdict = sim.reward_info.info["tauray"]["conversation"]["success"]
                gated += bool(verdict) and sim.reward_info.reward == 0.0  # τ²'s ACTION gate decided it
    print(f"\nτ² evaluator recomputed {agree}/{sims} exported rewards equal ({len(tasks)} ACTION tasks and "
          f"{SAMPLE} others × 2 policy variants × oracle and scripted agent); on the {on_action} ACTION "
          f"simulations the gate set {gated} rewards to 0 that tauray's verdict passes")
    assert {f.domain for f in summary.files} == {"telecom", "telecom-workflow"}
    assert agree == sims == 2 * len(chosen) and on_action == 2 * len(action) and gated >= len(action)
