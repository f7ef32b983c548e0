"""The actors of a run: generations of coordinators and hosts spread over the nodes.

A generation is one set of hosts and coordinators; when one of its actors dies it
is retired (the live ones finish what they hold, then are killed) and a fresh
generation takes new work. The driver owns its pool, or keeps one between runs
(:data:`KEPT`: tests and benchmarks, because a generation costs seconds of imports).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable


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


def default_classes() -> dict[str, Any]:
    """The Ray actor classes of each role."""
    from tauray.actors.coordinator import coordinator_class
    from tauray.actors.hosts import remote_classes

    agent, user = remote_classes()
    return {"agent": agent, "user": user, "coordinator": coordinator_class()}


class ActorGeneration:
    """One set of hosts and coordinators; replaced as a whole when one of them dies."""

    def __init__(self, number: int, coordinators: int, agent_hosts: int, user_hosts: int, spread: bool,
                 classes: dict[str, Any]):
        self.number = number
        place = _placement(spread)
        self.agents = [classes["agent"].options(**place(i)).remote() for i in range(agent_hosts)]
        self.users = [classes["user"].options(**place(i)).remote() for i in range(user_hosts)]
        self.coordinators = [classes["coordinator"].options(**place(i)).remote(self.agents, self.users)
                             for i in range(coordinators)]
        self.in_flight = 0
        self.load = [0] * coordinators  # conversations in flight per coordinator
        self._turn = itertools.cycle(range(coordinators))

    def pick(self) -> int:
        """The least-loaded coordinator; among equals, the next in turn."""
        start = next(self._turn)
        n = len(self.load)
        return min(((start + k) % n for k in range(n)), key=lambda i: self.load[i])

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
    """The actors of a run or sweep: the current generation and retired ones still
    finishing their work. Whoever creates it owns it (``with ActorPool(...)``, or
    ``kill_all``); ``run`` and ``sweep`` take one, or make one for their own lifetime."""

    def __init__(self, coordinators: int, agent_hosts: int, user_hosts: int, spread: bool = True,
                 classes: dict[str, Any] | None = None):
        self.counts = (coordinators, agent_hosts, user_hosts)
        self.spread = spread
        self.classes = classes or default_classes()
        self.started = 0
        self.current = self._new()
        self.retired: list[ActorGeneration] = []

    def _new(self) -> ActorGeneration:
        gen = ActorGeneration(self.started, *self.counts, spread=self.spread, classes=self.classes)
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

    def __enter__(self) -> ActorPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill_all()


class PoolKeeper:
    """Keeps one pool between runs of a driver that asked for it (``keep_actors``: tests,
    benchmarks), because starting a generation costs seconds of imports. ``run`` and
    ``sweep`` share it, so a driver never holds two idle sets of actors."""

    def __init__(self) -> None:
        self.pool: ActorPool | None = None

    def get(self, counts: tuple[int, int, int], spread: bool) -> ActorPool:
        if self.pool is not None and (self.pool.counts, self.pool.spread) != (counts, spread):
            self.drop()
        if self.pool is None:
            self.pool = ActorPool(*counts, spread=spread)
        return self.pool

    def drop(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.kill_all()


KEPT = PoolKeeper()


def counts_for_cluster(cluster: Any) -> tuple[int, int, int]:
    """Actors per role: as configured, else one per live node."""
    import ray

    nodes = max(1, sum(1 for n in ray.nodes() if n.get("Alive")))
    return (cluster.coordinators or nodes, cluster.agent_hosts or nodes, cluster.user_hosts or nodes)
