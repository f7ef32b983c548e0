"""The scheduler's limits: the per-model limit counts conversations (one conversation whose agent
and user are the same model holds one of that model's places, not two), and live calls (a phone
bot as the agent) are bounded per node and spread over the nodes."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from tauray.pipeline.config import ClusterConfig, run_config
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.pool import ActorGeneration, ActorPool
from tauray.pipeline.scheduler import CellQueue, Scheduler, SchedulerBounds
from tauray.pipeline.sweep_file import load_sweep


class _Coordinator:
    def __init__(self) -> None:
        self.run = SimpleNamespace(remote=lambda unit: object())  # a fresh ref per call


def _pool() -> SimpleNamespace:
    generation = SimpleNamespace(coordinators=[_Coordinator()], in_flight=0, load=[0], pick=lambda: 0)
    return SimpleNamespace(current=generation, pick=lambda allowed=None: (generation, 0))


def _pending(agent: dict, user: dict, limit: int) -> int:
    cfg = run_config(name="lim", agent=agent, user=user, patterns=["tau2_mock__*"], domain="mock", trials=3)
    names = [f"tau2_mock__s{i}" for i in range(10)]
    plan = SweepPlan(cfg, names)
    [cell] = plan.cells
    queue = CellQueue(cell, plan.units(cell), plan.total)
    limits = SchedulerBounds(max_in_flight=100, per_model={cell.agent_name: limit, cell.user_name: limit})
    sched = Scheduler(limits, _pool(), writer=None, queues=[queue], live=None)
    sched._fill()
    return len(sched.pending)


def test_one_model_on_both_sides_takes_one_place_per_conversation():
    same = {"model": "openai/gpt-4o-mini"}
    assert _pending(same, same, limit=8) == 8


def test_different_models_each_bound_the_conversations():
    assert _pending({"model": "openai/a"}, {"model": "openai/b"}, limit=8) == 8


def _generation(nodes: list[str]) -> ActorGeneration:
    """A group whose coordinators sit on ``nodes`` (no Ray: the real picking code)."""
    gen = object.__new__(ActorGeneration)
    gen.coordinators = [_Coordinator() for _ in nodes]
    gen.coordinator_nodes, gen.load, gen.in_flight = list(nodes), [0] * len(nodes), 0
    gen._turn = itertools.cycle(range(len(nodes)))
    return gen


def _live_scheduler(tmp_path, groups: list[list[str]], per_node: int | None, units: int = 12,
                    agents: str = '["bot"]') -> Scheduler:
    path = tmp_path / "live.toml"
    path.write_text(f'name = "live"\nagents = {agents}\nusers = ["scripted"]\ntrials = {units}\n'
                    '[[scenarios]]\ndomain = "mock"\npatterns = ["tau2_mock__impossible_task_1"]\n'
                    '[models.bot]\nmodel = "phone/bot"\nphone = {url = "ws://127.0.0.1:8765/phone-bot"}\n'
                    '[voice]\nprofiles = ["control"]\ntts = "local/espeak-ng"\nturn_taking = ["duplex"]\n')
    cfg = load_sweep(path)
    plan = SweepPlan(cfg, select(cfg))
    queues = [CellQueue(cell, plan.units(cell), units) for cell in plan.cells]
    pool = object.__new__(ActorPool)
    pool.groups = [_generation(nodes) for nodes in groups]
    return Scheduler(SchedulerBounds(max_in_flight=100, live_per_node=per_node), pool, writer=None, queues=queues,
                     live=None)


def test_live_calls_are_bounded_per_node_and_spread_over_the_nodes(tmp_path):
    # two nodes' groups, two coordinators each: at most 2 live calls a node, 4 in all
    sched = _live_scheduler(tmp_path, [["n1", "n1"], ["n2", "n2"]], per_node=2)
    sched._fill()
    assert len(sched.pending) == 4 and dict(sched.live_on) == {"n1": 2, "n2": 2}
    assert [g.load for g in sched.pool.groups] == [[1, 1], [1, 1]]
    assert sched.binding_cap() == "cluster.live_calls_per_node=2"  # what held the rest back, said
    # a call ends on n2: the next one goes there, and only one
    ref = next(r for r, (_, _, gen, _) in sched.pending.items() if gen is sched.pool.groups[1])
    sched.pending.pop(ref)
    sched.live_on["n2"] -= 1
    sched._fill()
    assert len(sched.pending) == 4 and dict(sched.live_on) == {"n1": 2, "n2": 2}


def test_without_the_bound_every_live_call_starts_and_other_cells_are_never_held(tmp_path):
    sched = _live_scheduler(tmp_path, [["n1"]], per_node=None, units=5)
    sched._fill()
    assert len(sched.pending) == 5
    # a text agent beside the bot: its conversations start whatever the live calls hold
    sched = _live_scheduler(tmp_path, [["n1"]], per_node=1, units=3, agents='["bot", "oracle"]')
    sched._fill()
    live = [u for u, cell, _, _ in sched.pending.values() if cell.agent.is_live]
    assert len(live) == 1 and len(sched.pending) == 1 + 3 and dict(sched.live_on) == {"n1": 1}


def test_the_bound_is_a_cluster_setting_with_a_measured_default():
    assert ClusterConfig().live_calls_per_node >= 1
    with pytest.raises(ValueError, match="live_calls_per_node"):
        ClusterConfig(live_calls_per_node=0)
