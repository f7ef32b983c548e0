"""The one execution path of ``tauray run`` and ``tauray sweep``: actors spread over the
nodes, bounded work in flight, per-model limits, retries when an actor dies, a cost
budget, results streamed to the tables.

One place retries a work unit (this one; design note 6). A unit is retried
only when an actor died under it (the coordinator's call raised an actor death,
or the conversation ended on one from a host; ``tauray.actors.failures`` says
which exceptions those are): the dead generation of actors is retired (the live
ones finish what they hold, then are killed), a fresh generation takes new
work, and the unit goes back to the queue, up to ``max_attempts``. Then, like a
provider outage outlasting the Router's retries, it is an ``infra`` row for
``--retry-errors``. A model failure is a verdict and is never retried; any
other exception out of a coordinator is a bug of ours: an ``internal`` row. A
``config`` failure (a key variable missing where the call ran) stops the run:
nothing more is submitted, what is in flight is written, and the error is
raised.

Coordinators get work least-loaded (ties in turn), so a refill goes to the
coordinator with the fewest conversations in flight. A live call (a phone bot or a realtime
model as the agent) goes only to a coordinator on a node with fewer than
``live_per_node`` live calls in flight: its caller paces frames on that node's wall clock, and
past what a node sustains the harness falls behind (an infrastructure row). So live calls
spread over the nodes, and wait when every node is full.

Memory stays flat: units are generated per cell as they are submitted, at most
``max_in_flight`` are held, and results go straight to the writer.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.conversation import failed_result
from tauray.actors.failures import CONFIG, classify, is_actor_death
from tauray.actors.llm import ModelConfigError
from tauray.actors.unit import WorkUnit
from tauray.pipeline.accounting import conversation_cost
from tauray.pipeline.plan import Cell
from tauray.pipeline.pool import KEPT, ActorGeneration, ActorPool
from tauray.pipeline.writing import BackgroundWriter
from tauray.results.stats.outcomes import outcome
from tauray.results.tables.records import INFRA


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
    """Test and tooling hooks, every one optional: callbacks on the scheduler's events, and
    ``classes``, subclasses that stand in for a role's actor class (``coordinator``, ``agent``,
    ``user``: the hosts; ``speech``: the speech workers), for a tool that measures a run from
    inside its actors (``dev/bench``). Nothing of a conversation's own path calls them."""

    def __init__(self, on_submit: Callable[[ActorPool, int], None] | None = None,
                 on_result: Callable[[Any], None] | None = None,
                 on_retry: Callable[[WorkUnit, str], None] | None = None,
                 classes: dict[str, type] | None = None):
        self.on_submit = on_submit
        self.on_result = on_result
        self.on_retry = on_retry
        self.classes = dict(classes or {})
        unknown = sorted(set(self.classes) - {"coordinator", "agent", "user", "speech"})
        if unknown:
            raise ValueError(f"Hooks.classes: {unknown[0]!r} is no actor role (coordinator, agent, user, speech)")


class SchedulerBounds(BaseModel):
    """How much the scheduler may have going at once, and for how long."""

    model_config = ConfigDict(frozen=True)
    max_in_flight: int = Field(ge=1, description="Conversations in flight at once, all cells.")
    max_attempts: int = Field(default=3, ge=1, description="Tries per unit when an actor dies under it.")
    budget_usd: float | None = Field(default=None, description="Stop submitting once this much is spent.")
    per_model: dict[str, int] = Field(default_factory=dict, description="Conversations in flight per model name.")
    live_per_node: int | None = Field(default=None, ge=1, description="Live calls (a phone bot or a realtime "
                                      "model as the agent) in flight per node; None: no bound.")


class Scheduler:
    def __init__(self, limits: SchedulerBounds, pool: ActorPool, writer: Any, queues: list[CellQueue], live: Any,
                 progress: Any = None, spent_usd: float = 0.0, hooks: Hooks | None = None,
                 finish: Callable[[Any, Cell], Any] | None = None):
        self.limits, self.pool, self.writer, self.queues, self.live, self.progress = (
            limits, pool, writer, queues, live, progress)
        self.hooks = hooks or Hooks()
        self.finish = finish
        self.spent = spent_usd
        self.model_in_flight: dict[str, int] = defaultdict(int)
        self.live_on: Counter[str] = Counter()  # live calls in flight per node ("": where Ray placed the actors)
        self.pending: dict[Any, tuple[WorkUnit, Cell, ActorGeneration, int]] = {}
        self.submitted = 0
        self.retried = 0
        self.written = 0
        self.budget_reached = False
        self.outcomes: Counter[str] = Counter()
        self.terminations: Counter[str] = Counter()
        self.config_error: str | None = None
        self.fills = 0
        self.capped: Counter[str] = Counter()  # refills that left work waiting, by the cap that held it
        self.actor_counts: dict[str, int] = {}  # filled by drive() from the pool at the end

    # --- submitting -------------------------------------------------------------------
    @staticmethod
    def _models(cell: Cell) -> set[str]:
        """The models a conversation of ``cell`` uses, each once (one model may play both sides)."""
        return {cell.agent_name, cell.user_name}

    def _place(self, cell: Cell) -> tuple[ActorGeneration, int] | str:
        """The coordinator a conversation of ``cell`` goes to, or the cap that holds it."""
        for name in self._models(cell):
            limit = self.limits.per_model.get(name)
            if limit is not None and self.model_in_flight[name] >= limit:
                return f"models.{name}.concurrency={limit}"
        picked = self.pool.pick(self._live_room(cell))
        return picked if picked is not None else f"cluster.live_calls_per_node={self.limits.live_per_node}"

    def _live_room(self, cell: Cell) -> Callable[[str], bool] | None:
        """Which nodes may take a conversation of ``cell``: for a live call, those under the
        per-node bound (a live call paces its frames on the node's wall clock); else any."""
        cap = self.limits.live_per_node
        if cap is None or not cell.agent.is_live:
            return None
        return lambda node: self.live_on[node] < cap

    def _fill(self) -> None:
        if self.config_error is not None:
            return
        budget = self.limits.budget_usd
        if budget is not None and self.spent >= budget:
            self.budget_reached = True
            return
        progressed = True
        held: set[str] = set()
        while progressed and len(self.pending) < self.limits.max_in_flight:
            progressed = False
            for q in self.queues:
                if len(self.pending) >= self.limits.max_in_flight:
                    break
                if q.empty:
                    continue
                placed = self._place(q.cell)
                if isinstance(placed, str):
                    held.add(placed)
                    continue
                unit = q.pop()
                if unit is None:
                    continue
                self._submit(unit, q.cell, placed)
                progressed = True
        if len(self.pending) >= self.limits.max_in_flight and any(not q.empty for q in self.queues):
            held.add(f"max_in_flight={self.limits.max_in_flight}")
        self.fills += 1
        self.capped.update(held)

    def binding_cap(self) -> str | None:
        """The cap that held work back in most refills, when that was most of them."""
        if not self.capped or not self.fills:
            return None
        cap, count = self.capped.most_common(1)[0]
        return cap if count >= self.fills / 2 else None

    def _submit(self, unit: WorkUnit, cell: Cell, placed: tuple[ActorGeneration, int]) -> None:
        gen, i = placed
        ref = gen.coordinators[i].run.remote(unit)
        gen.in_flight += 1
        gen.load[i] += 1
        if cell.agent.is_live:
            self.live_on[gen.coordinator_nodes[i]] += 1
        self.pending[ref] = (unit, cell, gen, i)
        for name in self._models(cell):
            self.model_in_flight[name] += 1
        self.submitted += 1
        if self.hooks.on_submit:
            self.hooks.on_submit(self.pool, self.submitted)

    # --- collecting -------------------------------------------------------------------
    def _finish(self, ref: Any) -> None:
        import ray


        unit, cell, gen, i = self.pending.pop(ref)
        gen.in_flight -= 1
        gen.load[i] -= 1
        if cell.agent.is_live:
            self.live_on[gen.coordinator_nodes[i]] -= 1
        for name in self._models(cell):
            self.model_in_flight[name] -= 1
        died = None
        try:
            result = ray.get(ref)
            c = result.conversation
            if is_actor_death(c.error_kind, c.error_message):
                died = c.error_message
        except Exception as exc:  # the coordinator died, or raised (a bug, a config error)
            failure = classify(exc)
            if failure.kind == CONFIG:
                self.config_error = self.config_error or failure.message.removeprefix("ModelConfigError: ")
                return  # no row: the unit runs again once the configuration is fixed
            result = None if failure.actor_death else failed_result(unit, failure.kind, failure.message)
            died = failure.message if failure.actor_death else None
        if died is not None:
            self.pool.replace(gen)
            if unit.attempt + 1 < self.limits.max_attempts:
                self.retried += 1
                self._queue_of(cell).retries.append(unit.model_copy(update={"attempt": unit.attempt + 1}))
                if self.hooks.on_retry:
                    self.hooks.on_retry(unit, died)
                return
            if result is None:
                result = failed_result(unit, INFRA, f"{died.splitlines()[0][:500]} "
                                       f"(after {self.limits.max_attempts} attempts)")
        self._write(result, cell)

    def _write(self, result: Any, cell: Cell) -> None:
        if self.finish is not None:
            result = self.finish(result, cell)
        self.writer.add(result)
        self.written += 1
        c = result.conversation
        self.outcomes[outcome(c.error_kind, c.success)] += 1
        self.terminations[c.termination_reason] += 1
        self.spent += conversation_cost(c)
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
            self.pool.grow()  # nodes that joined get actors, and take work from the next refill
            self._fill()
            if self.progress is not None:
                self.progress.tick(self)
        if self.config_error is not None:
            raise ModelConfigError(self.config_error)

    @property
    def in_flight(self) -> int:
        return len(self.pending)

    @property
    def not_submitted(self) -> int:
        return sum(q.remaining + len(q.retries) for q in self.queues)


def drive(queues: list[CellQueue], limits: SchedulerBounds, *, out: Path, run_id: str, live: Any,
          counts: tuple[int | None, int | None, int | None], spread: bool = True, pool: ActorPool | None = None,
          actor_cpus: float = 0.0,
          keep_actors: bool = False, progress: Any = None, spent_usd: float = 0.0, hooks: Hooks | None = None,
          finish: Callable[[Any, Cell], Any] | None = None) -> tuple[Scheduler, int]:
    """Run the queues to the tables in ``out``; returns the scheduler (its counters) and
    the actor generations used. A given ``pool`` is the caller's and stays alive;
    otherwise the kept pool is used (and kept if ``keep_actors``, else dropped)."""

    own = pool is None
    actors = {role: cls for role, cls in (hooks.classes if hooks else {}).items() if role != "speech"}
    pool = KEPT.get(counts, spread, actor_cpus, actors) if own else pool
    before = pool.started - 1
    sched = None
    try:
        with BackgroundWriter(out, run_id) as writer:
            sched = Scheduler(limits, pool, writer, queues, live, progress, spent_usd=spent_usd, hooks=hooks,
                              finish=finish)
            sched.run()
    finally:
        if sched is not None:
            sched.actor_counts = pool.actor_counts()
        if own and not keep_actors:
            KEPT.drop()
    return sched, pool.started - before
