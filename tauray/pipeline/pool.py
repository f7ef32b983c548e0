"""The actors of a run: groups of coordinators and hosts on the cluster's nodes.

By default each node gets its own group, sized from the node's CPUs (a host is one event
loop, so a bigger node gets more of them; :func:`node_counts`), and the group's
coordinators talk to the hosts on their own node. Nodes that join while a run goes on get
a group at the next refill. When an actor dies, only its group is retired (the live ones
finish what they hold, then are killed) and a fresh group takes its node's work; the
other nodes' groups go on. With counts set in ``[cluster]``, one group of exactly those
counts is spread round robin over the nodes instead.

Actors reserve CPU (``cluster.actor_cpus`` each), so Ray places them where there is room
and an autoscaler sees the demand. The driver owns its pool, or keeps one between runs
(:data:`KEPT`: tests and benchmarks, because a group costs seconds of imports).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from typing import Any

from tauray.actors.coordinator import CoordinatorHost, coordinator_class
from tauray.actors.hosts import AgentHost, UserSimHost, remote_classes

CPUS_PER_HOST = 4
"""A node gets one agent host and one user host per this many CPUs (at least one each)."""

CPUS_PER_COORDINATOR = 8
"""... and one coordinator per this many (at least one)."""

GROW_EVERY_S = 5.0
"""How often a pool looks for nodes that joined."""


def node_counts(cpus: float) -> tuple[int, int, int]:
    """(coordinators, agent hosts, user hosts) for a node with ``cpus`` CPUs."""
    hosts = max(1, int(cpus // CPUS_PER_HOST))
    return max(1, int(cpus // CPUS_PER_COORDINATOR)), hosts, hosts


def _live_nodes() -> dict[str, float]:
    """Live nodes and their CPUs."""
    import ray

    return {n["NodeID"]: float(n.get("Resources", {}).get("CPU", 1.0)) for n in ray.nodes() if n.get("Alive")}


def _on_node(node: str) -> dict[str, Any]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=False)}


def _spread_nodes(spread: bool) -> list[str]:
    """The nodes a spread group's actors go to, round robin (the nodes alive when the group
    starts); none when there is one node or no spreading: Ray places the actors."""
    import ray

    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive")) if spread else []
    return nodes if len(nodes) >= 2 else []


def _placement(nodes: list[str]) -> Callable[[int], dict[str, Any]]:
    """Actor options that put the i-th actor of each role on the i-th of ``nodes`` (round
    robin). Ray's SPREAD strategy, and soft node affinity, left zero-CPU actors on one node
    in tests here, so nodes are assigned explicitly; with no nodes this is a no-op."""
    if not nodes:
        return lambda i: {}
    return lambda i: _on_node(nodes[i % len(nodes)])


def default_classes(replaced: Mapping[str, type] | None = None) -> dict[str, Any]:
    """The Ray actor classes of each role (``agent``, ``user``, ``coordinator``): tauray's own, or
    the subclasses ``replaced`` names (a run's :class:`~tauray.pipeline.scheduler.Hooks`)."""
    replaced = replaced or {}
    agent, user = remote_classes(replaced.get("agent", AgentHost), replaced.get("user", UserSimHost))
    return {"agent": agent, "user": user, "coordinator": coordinator_class(replaced.get("coordinator",
                                                                                         CoordinatorHost))}


class ActorGeneration:
    """One group of hosts and coordinators (one node's, or the configured counts spread over
    the nodes); replaced as a whole when one of them dies."""

    def __init__(self, number: int, coordinators: int, agent_hosts: int, user_hosts: int, spread: bool,
                 classes: dict[str, Any], node: str | None = None, actor_cpus: float = 0.0):
        self.number = number
        self.node = node
        nodes = _spread_nodes(spread) if node is None else [node]
        spread_place = _placement(nodes)
        # the node each coordinator runs on, for the live calls per node ("" where Ray placed it)
        self.coordinator_nodes = [nodes[i % len(nodes)] if nodes else "" for i in range(coordinators)]
        cpus = {"num_cpus": actor_cpus} if actor_cpus else {}

        def place(i: int) -> dict[str, Any]:
            return {**spread_place(i), **cpus}

        self.agents = [classes["agent"].options(**place(i)).remote() for i in range(agent_hosts)]
        self.users = [classes["user"].options(**place(i)).remote() for i in range(user_hosts)]
        self.coordinators = [classes["coordinator"].options(**place(i)).remote(self.agents, self.users)
                             for i in range(coordinators)]
        self.in_flight = 0
        self.load = [0] * coordinators  # conversations in flight per coordinator
        self._turn = itertools.cycle(range(coordinators))

    def pick(self, allowed: Callable[[str], bool] | None = None) -> int | None:
        """The least-loaded coordinator (among equals, the next in turn) whose node is
        ``allowed``; None when no node is."""
        start = next(self._turn)
        n = len(self.load)
        ok = [i for i in ((start + k) % n for k in range(n)) if allowed is None or allowed(self.coordinator_nodes[i])]
        return min(ok, key=lambda i: self.load[i]) if ok else None

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
    """The actors of a run or sweep: the live groups and retired ones still finishing their
    work. ``ActorPool(c, a, u)`` is one group of those counts; ``ActorPool(None, None, None)``
    one group per node, growing with the cluster. Whoever creates it owns it (``with
    ActorPool(...)``, or ``kill_all``); ``run`` and ``sweep`` take one, or make one for their
    own lifetime."""

    def __init__(self, coordinators: int | None, agent_hosts: int | None, user_hosts: int | None,
                 spread: bool = True, classes: dict[str, Any] | None = None, actor_cpus: float = 0.0):
        self.counts = (coordinators, agent_hosts, user_hosts)
        self.by_node = self.counts == (None, None, None)
        self.spread = spread
        self.actor_cpus = actor_cpus
        self.classes = classes or default_classes()
        self.started = 0
        self.groups: list[ActorGeneration] = []
        self.retired: list[ActorGeneration] = []
        self._grown = 0.0
        if self.by_node:
            self.grow(force=True)
        else:
            self.groups.append(self._new(None, self.counts))

    @property
    def current(self) -> ActorGeneration:
        """The first live group (with configured counts: the only one)."""
        return self.groups[0]

    def _new(self, node: str | None, counts: tuple[int, ...]) -> ActorGeneration:
        gen = ActorGeneration(self.started, *counts, spread=self.spread, classes=self.classes, node=node,
                              actor_cpus=self.actor_cpus)
        self.started += 1
        return gen

    def grow(self, force: bool = False) -> int:
        """Give every live node without a group its own (per-node pools; checked every
        :data:`GROW_EVERY_S`); returns the groups added."""
        now = time.monotonic()
        if not self.by_node or (not force and now - self._grown < GROW_EVERY_S):
            return 0
        self._grown = now
        have = {g.node for g in self.groups}
        added = 0
        for node, cpus in sorted(_live_nodes().items()):
            if node not in have:
                self.groups.append(self._new(node, node_counts(cpus)))
                added += 1
        return added

    def actor_counts(self) -> dict[str, int]:
        """Live actors per role, over all groups."""
        return {"coordinators": sum(len(g.coordinators) for g in self.groups),
                "agent_hosts": sum(len(g.agents) for g in self.groups),
                "user_hosts": sum(len(g.users) for g in self.groups)}

    def pick(self, allowed: Callable[[str], bool] | None = None) -> tuple[ActorGeneration, int] | None:
        """The least-loaded coordinator of all live groups whose node is ``allowed`` (a node id,
        or "" where Ray placed the group's actors); None when no node is."""
        best = [(g, i) for g in self.groups if (i := g.pick(allowed)) is not None]
        return min(best, key=lambda gi: gi[0].load[gi[1]]) if best else None

    def replace(self, dead: ActorGeneration) -> None:
        """Retire ``dead``'s group; a fresh one takes its place (on its node, if the node lives)."""
        if dead not in self.groups:
            return
        self.groups.remove(dead)
        self.retired.append(dead)
        if not self.by_node:
            self.groups.append(self._new(None, self.counts))
            return
        nodes = _live_nodes()
        if dead.node in nodes:
            self.groups.append(self._new(dead.node, node_counts(nodes[dead.node])))
        if not self.groups:  # its node is gone too, and no other group is left
            self.grow(force=True)

    def reap(self) -> None:
        for gen in [g for g in self.retired if g.in_flight == 0]:
            gen.kill()
            self.retired.remove(gen)

    def kill_all(self) -> None:
        for gen in [*self.groups, *self.retired]:
            gen.kill()
        self.retired.clear()
        self.groups.clear()

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
        self.key: Any = None

    def get(self, counts: tuple[int | None, int | None, int | None], spread: bool,
            actor_cpus: float = 0.0, classes: Mapping[str, type] | None = None) -> ActorPool:
        """The kept pool, made anew when the counts, placement or actor classes asked for differ."""
        key = (counts, spread, actor_cpus, tuple(sorted((classes or {}).items())))
        if self.pool is not None and self.key != key:
            self.drop()
        if self.pool is None:
            self.pool = ActorPool(*counts, spread=spread, actor_cpus=actor_cpus, classes=default_classes(classes))
            self.key = key
        return self.pool

    def drop(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.kill_all()


KEPT = PoolKeeper()


def reserved_cpus(counts: tuple[int | None, int | None, int | None], actor_cpus: float) -> float:
    """The CPUs a generation of ``counts`` actors (:func:`counts_for_cluster`) reserves in all."""
    if counts == (None, None, None):
        return actor_cpus * sum(sum(node_counts(cpus)) for cpus in _live_nodes().values())
    return actor_cpus * sum(c or 0 for c in counts)


def counts_for_cluster(cluster: Any) -> tuple[int | None, int | None, int | None]:
    """Actors per role as configured (a role left unset: one per live node), or, when none is
    set, ``(None, None, None)``: a group per node sized from its CPUs (:func:`node_counts`)."""
    if cluster.coordinators is None and cluster.agent_hosts is None and cluster.user_hosts is None:
        return (None, None, None)
    nodes = max(1, len(_live_nodes()))
    return (cluster.coordinators or nodes, cluster.agent_hosts or nodes, cluster.user_hosts or nodes)
