"""The scheduler's per-model limit counts conversations: one conversation whose agent and user
are the same model holds one of that model's places, not two."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from tauray.pipeline.config import run_config
from tauray.pipeline.plan import SweepPlan
from tauray.pipeline.scheduler import CellQueue, Scheduler, SchedulerBounds


class _Coordinator:
    def __init__(self) -> None:
        self.run = SimpleNamespace(remote=lambda unit, _ids=itertools.count(): next(_ids))


def _pool() -> SimpleNamespace:
    generation = SimpleNamespace(coordinators=[_Coordinator()], in_flight=0, load=[0], pick=lambda: 0)
    return SimpleNamespace(current=generation, pick=lambda: (generation, 0))


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
