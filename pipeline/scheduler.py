"""The sweep driver: actors spread over the nodes, bounded work in flight, per-model
limits, retries when an actor dies, a cost budget, results streamed to the tables.

One place retries a work unit (this one; design note 6). A unit is retried
only when an actor died under it (the coordinator's call raised, or the
conversation ended on an actor error from a host): the dead generation of
actors is retired (the live ones finish what they hold, then are killed), a
fresh generation takes new work, and the unit goes back to the queue, up to
``max_attempts``. Then, like a provider outage outlasting the Router's retries,
it is an ``infra`` row for ``--retry-errors``. A model failure is a verdict
and is never retried.

Memory stays flat: units are generated per cell as they are submitted, at most
``max_in_flight`` are held, and results go straight to the writer.
"""

from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator

from tauray.pipeline.accounting import LiveTotals, conversation_cost, fill_costs
from tauray.pipeline.sweep import Cell, SweepPlan
from tauray.pipeline.units import WorkUnit

ACTOR_ERRORS = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError",
                "OwnerDiedError", "NodeDiedError")


def actor_died(result: Any) -> bool:
    """A row that says an actor died under the conversation (not the model's fault)."""
    c = result.conversation
    return c.error_kind == "infra" and (c.error_message or "").startswith(ACTOR_ERRORS)


def _placement(spread: bool) -> Callable[[int], dict[str, Any]]:
    """Actor options that put the i-th actor of each role on the i-th live node (round
    robin over the nodes alive when the generation starts). Ray's SPREAD strategy, and
    soft node affinity, left zero-CPU actors on one node in tests here, so nodes are
    assigned explicitly; with one node this is a no-op."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive")) if spread else []
    if len(nodes) < 2:
        return lambda i: {}
    return lambda i: {"scheduling_strategy": NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], soft=False)}


class ActorGeneration:
    """One set of hosts and coordinators; replaced as a whole when one of them dies."""

    def __init__(self, number: int, coordinators: int, agent_hosts: int, user_hosts: int, spread: bool):
        from tauray.actors.coordinator import coordinator_class
        from tauray.actors.hosts import remote_classes

        agent_cls, user_cls = remote_classes()
        self.number = number
        place = _placement(spread)
        self.agents = [agent_cls.options(**place(i)).remote() for i in range(agent_hosts)]
        self.users = [user_cls.options(**place(i)).remote() for i in range(user_hosts)]
        coord = coordinator_class()
        self.coordinators = [coord.options(**place(i)).remote(self.agents, self.users) for i in range(coordinators)]
        self.in_flight = 0
        self._next = itertools.cycle(range(coordinators))

    def coordinator(self) -> Any:
        return self.coordinators[next(self._next)]

    def actors(self) -> dict[str, list[Any]]:
        return {"coordinator": self.coordinators, "agent": self.agents, "user": self.users}

    def node_ids(self) -> dict[str, list[str]]:
        """The node each actor runs on (for placement checks)."""
        import ray

        def node(_: Any) -> str:
            import ray as r

            return r.get_runtime_context().get_node_id()

        return {role: ray.get([a.__ray_call__.remote(node) for a in actors]) for role, actors in self.actors().items()}

    def kill(self) -> None:
        import ray

        for actors in self.actors().values():
            for a in actors:
                try:
                    ray.kill(a)
                except Exception:
                    pass


class ActorPool:
    def __init__(self, coordinators: int, agent_hosts: int, user_hosts: int, spread: bool):
        self.counts = (coordinators, agent_hosts, user_hosts)
        self.spread = spread
        self.started = 0
        self.current = self._new()
        self.retired: list[ActorGeneration] = []

    def _new(self) -> ActorGeneration:
        gen = ActorGeneration(self.started, *self.counts, spread=self.spread)
        self.started += 1
        return gen

    def replace(self, dead: ActorGeneration) -> None:
        if dead is self.current:
            self.retired.append(dead)
            self.current = self._new()

    def reap(self) -> None:
        for gen in [g for g in self.retired if g.in_flight == 0]:
            gen.kill()
            self.retired.remove(gen)

    def kill_all(self) -> None:
        for gen in [self.current, *self.retired]:
            gen.kill()
        self.retired.clear()


class CellQueue:
    """A cell's units, generated lazily, with retries served first."""

    def __init__(self, cell: Cell, units: Iterator[WorkUnit], remaining: int):
        self.cell = cell
        self.units = units
        self.retries: deque[WorkUnit] = deque()
        self.remaining = remaining  # units not yet submitted (first attempts)
        self.exhausted = False

    def pop(self) -> WorkUnit | None:
        if self.retries:
            return self.retries.popleft()
        if self.exhausted:
            return None
        unit = next(self.units, None)
        if unit is None:
            self.exhausted = True
        else:
            self.remaining -= 1
        return unit

    @property
    def empty(self) -> bool:
        return not self.retries and self.exhausted


class Hooks:
    """Test and tooling hooks; every one optional."""

    def __init__(self, on_submit: Callable[[ActorPool, int], None] | None = None,
                 on_result: Callable[[Any], None] | None = None):
        self.on_submit = on_submit
        self.on_result = on_result


class Scheduler:
    def __init__(self, plan: SweepPlan, pool: ActorPool, writer: Any, queues: list[CellQueue], live: LiveTotals,
                 progress: Any, spent_usd: float = 0.0, hooks: Hooks | None = None):
        cfg = plan.cfg
        self.plan, self.pool, self.writer, self.queues, self.live, self.progress = plan, pool, writer, queues, live, progress
        self.hooks = hooks or Hooks()
        self.max_in_flight = cfg.max_in_flight
        self.max_attempts = cfg.max_attempts
        self.budget = cfg.budget_usd
        self.spent = spent_usd
        self.limits = {name: cfg.models[name].concurrency for name in cfg.models}
        self.model_in_flight: dict[str, int] = {name: 0 for name in [*cfg.models, "oracle", "scripted"]}
        self.pending: dict[Any, tuple[WorkUnit, Cell, ActorGeneration]] = {}
        self.submitted = 0
        self.retried = 0
        self.written = 0
        self.budget_reached = False

    # --- submitting -------------------------------------------------------------------
    def _room(self, cell: Cell) -> bool:
        for name in (cell.agent_name, cell.user_name):
            limit = self.limits.get(name)
            if limit is not None and self.model_in_flight[name] >= limit:
                return False
        return True

    def _fill(self) -> None:
        if self.budget is not None and self.spent >= self.budget:
            self.budget_reached = True
            return
        progressed = True
        while progressed and len(self.pending) < self.max_in_flight:
            progressed = False
            for q in self.queues:
                if len(self.pending) >= self.max_in_flight:
                    break
                if q.empty or not self._room(q.cell):
                    continue
                unit = q.pop()
                if unit is None:
                    continue
                self._submit(unit, q.cell)
                progressed = True

    def _submit(self, unit: WorkUnit, cell: Cell) -> None:
        gen = self.pool.current
        ref = gen.coordinator().run.remote(unit.model_dump())
        gen.in_flight += 1
        self.pending[ref] = (unit, cell, gen)
        for name in (cell.agent_name, cell.user_name):
            self.model_in_flight[name] += 1
        self.submitted += 1
        if self.hooks.on_submit:
            self.hooks.on_submit(self.pool, self.submitted)

    # --- collecting -------------------------------------------------------------------
    def _finish(self, ref: Any) -> None:
        import ray

        from tauray.actors.coordinator import failed_result

        unit, cell, gen = self.pending.pop(ref)
        gen.in_flight -= 1
        for name in (cell.agent_name, cell.user_name):
            self.model_in_flight[name] -= 1
        died = None
        try:
            result = ray.get(ref)
            if actor_died(result):
                died = result.conversation.error_message
        except Exception as exc:  # the coordinator itself died (or its worker)
            result, died = None, f"{type(exc).__name__}: {exc}"
        if died is not None:
            self.pool.replace(gen)
            if unit.attempt + 1 < self.max_attempts:
                self.retried += 1
                self._queue_of(cell).retries.append(unit.model_copy(update={"attempt": unit.attempt + 1}))
                return
            if result is None:
                result = failed_result(unit.model_dump(), "infra", f"{died.splitlines()[0][:500]} "
                                       f"(after {self.max_attempts} attempts)")
        result = fill_costs(result, self.plan.cfg, cell.agent_name, cell.user_name)
        self.writer.add(result)
        self.written += 1
        self.spent += conversation_cost(result.conversation)
        self.live.add(result)
        if self.progress is not None:
            self.progress.update(self)
        if self.hooks.on_result:
            self.hooks.on_result(result)

    def _queue_of(self, cell: Cell) -> CellQueue:
        return next(q for q in self.queues if q.cell.cell_id == cell.cell_id)

    def run(self) -> None:
        import ray

        self._fill()
        while self.pending:
            done, _ = ray.wait(list(self.pending), num_returns=1, timeout=1.0)
            if done and len(self.pending) > 1:
                more, _ = ray.wait([r for r in self.pending if r != done[0]], num_returns=len(self.pending) - 1,
                                   timeout=0)
                done += more
            for ref in done:
                self._finish(ref)
            self.pool.reap()
            self._fill()
            if self.progress is not None:
                self.progress.tick(self)

    @property
    def in_flight(self) -> int:
        return len(self.pending)

    @property
    def not_submitted(self) -> int:
        return sum(q.remaining + len(q.retries) for q in self.queues)


def counts_for_cluster(cluster: Any) -> tuple[int, int, int]:
    """Actors per role: as configured, else one per live node."""
    import ray

    nodes = max(1, sum(1 for n in ray.nodes() if n.get("Alive")))
    return (cluster.coordinators or nodes, cluster.agent_hosts or nodes, cluster.user_hosts or nodes)


def out_has_rows(out: Path) -> bool:
    folder = out / "conversations"
    return folder.is_dir() and any(p.name.startswith("part-") for p in folder.iterdir())
