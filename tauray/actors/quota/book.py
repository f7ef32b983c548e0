"""Every model's quota in one place: the :class:`QuotaBook` (one named Ray actor per cluster,
or one object per process without Ray), and how a process reaches it (:class:`Gate`)."""

from __future__ import annotations

import itertools
import sys
import time
from typing import Any, Callable

from tauray.actors.quota.headers import RateInfo
from tauray.actors.quota.model import Limits, ModelQuota, Settlement, Ticket
from tauray.actors.quota.window import PERIOD_S

ACTOR_NAME = "tauray-quota"


def quota_key(model: str, api_base: str | None) -> str:
    """The quota a call is metered against: the model at its API base."""
    return f"{model}@{(api_base or '').rstrip('/')}"


class QuotaBook:
    """Every model's quota; one per cluster (the :data:`ACTOR_NAME` actor) or per process."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, period: float = PERIOD_S) -> None:
        self.clock = clock
        self.period = period
        self.models: dict[str, ModelQuota] = {}
        self._numbers = itertools.count(1)

    def _model(self, key: str, limits: Limits) -> ModelQuota:
        quota = self.models.get(key)
        if quota is None:
            quota = self.models[key] = ModelQuota(limits, clock=self.clock, period=self.period)
        elif limits.any and limits != quota.limits:  # every caller of one model must meet the tightest limit
            quota.set_limits(quota.limits.tighter(limits))
        return quota

    async def acquire(self, key: str, limits: Limits, chars: int, max_tokens: int | None = None,
                      upfront: bool = False) -> Ticket:
        return await self._model(key, limits).acquire(next(self._numbers), key, chars, max_tokens, upfront)

    def settle(self, key: str, number: int, settlement: Settlement) -> None:
        quota = self.models.get(key)
        if quota is not None:
            quota.settle(number, settlement)

    def learn(self, key: str, rate: RateInfo) -> None:
        """Headers of an answer to a call the book did not admit (an unmetered caller's)."""
        self._model(key, Limits()).learn(rate)

    def pause(self, key: str, seconds: float) -> None:
        self._model(key, Limits()).pause(seconds)

    def stop(self, key: str, reason: str) -> None:
        self._model(key, Limits()).stop(reason)

    def stats(self) -> dict[str, dict[str, Any]]:
        return {key: quota.stats() for key, quota in self.models.items()}

    def reset(self) -> None:
        """Forget every model (a new run: limits are learned again, stopped models retried)."""
        self.models.clear()


class Gate:
    """How a process reaches the quota book: the cluster's actor, or a book of its own. It
    also remembers, for this process, the models whose calls need not ask the book (no quota,
    no rate-limit headers) and the models whose calls are stopped."""

    def __init__(self, book: QuotaBook | None = None, actor: Any = None) -> None:
        self.book = book
        self.actor = actor
        self.unmetered: set[str] = set()
        self.stopped: dict[str, str] = {}

    async def acquire(self, key: str, limits: Limits, chars: int, max_tokens: int | None,
                      upfront: bool = False) -> Ticket:
        if self.actor is not None:
            ticket = await self.actor.acquire.remote(key, limits, chars, max_tokens, upfront)
        else:
            ticket = await self.book.acquire(key, limits, chars, max_tokens, upfront)
        if ticket.stopped:
            self.stopped[key] = ticket.stopped
        elif not ticket.metered:
            self.unmetered.add(key)
        return ticket

    def settle(self, ticket: Ticket, settlement: Settlement) -> None:
        if self.actor is not None:
            self.actor.settle.remote(ticket.key, ticket.number, settlement)
        else:
            self.book.settle(ticket.key, ticket.number, settlement)

    def learn(self, key: str, rate: RateInfo) -> None:
        self.unmetered.discard(key)
        if self.actor is not None:
            self.actor.learn.remote(key, rate)
        else:
            self.book.learn(key, rate)

    def pause(self, key: str, seconds: float) -> None:
        self.unmetered.discard(key)  # its callers now wait in the book
        if self.actor is not None:
            self.actor.pause.remote(key, seconds)
        else:
            self.book.pause(key, seconds)

    def stop(self, key: str, reason: str) -> None:
        self.stopped.setdefault(key, reason)
        if self.actor is not None:
            self.actor.stop.remote(key, reason)
        else:
            self.book.stop(key, reason)


_GATE: tuple[str | None, Gate] | None = None
_BOOK: tuple[str | None, Any] | None = None


def _ray_job() -> str | None:
    ray = sys.modules.get("ray")  # never import Ray just to learn it is not running
    if ray is None or not ray.is_initialized():
        return None
    return ray.get_runtime_context().get_job_id()


def gate() -> Gate:
    """This process's gate: the cluster's book when this process runs on Ray and the driver
    started one, else a book of this process's own (no Ray, or a coordinator driven directly)."""
    global _GATE
    job = _ray_job()
    if _GATE is None or _GATE[0] != job:
        actor = None
        if job is not None:
            import ray

            try:  # looked up, never created here: a worker must not own the cluster's book
                actor = ray.get_actor(ACTOR_NAME)
            except ValueError:
                actor = None
        _GATE = (job, Gate(actor=actor) if actor is not None else Gate(book=QuotaBook()))
    return _GATE[1]


def reset_gate(book: QuotaBook | None = None) -> None:
    """Forget this process's gate (a new Ray session), or make ``book`` this process's quota
    (tests that meter over a short period)."""
    global _GATE
    _GATE = None if book is None else (_ray_job(), Gate(book=book))


def quota_actor() -> Any:
    """The cluster's quota book, created by the driver before any actor calls a model (it
    lives as long as the driver's job)."""
    import ray

    global _BOOK
    job = _ray_job()
    if _BOOK is None or _BOOK[0] != job:
        cls = ray.remote(num_cpus=0, max_restarts=-1, max_concurrency=100_000)(QuotaBook)
        # The creating handle is kept for the driver's lifetime: Ray ends an actor once its
        # owner's handles are gone, whatever handles others looked up.
        _BOOK = (job, cls.options(name=ACTOR_NAME, get_if_exists=True, lifetime=None).remote())
    return _BOOK[1]


def forget_actor() -> None:
    """Forget the driver's handle on the cluster's book (it was killed; the next driver
    creates a fresh one), and this process's gate to it."""
    global _BOOK, _GATE
    _BOOK = _GATE = None


def shared_limits(specs: list[dict[str, Any]]) -> dict[str, Limits]:
    """Each provider model's quota over all ``specs`` (agents, users, judges): the tightest
    ``rpm``/``tpm`` any of them sets for that model at that API base."""
    out: dict[str, Limits] = {}
    for spec in specs:
        limits = Limits(rpm=spec.get("rpm"), tpm=spec.get("tpm"))
        if limits.any and spec.get("model"):
            key = quota_key(spec["model"], spec.get("api_base"))
            out[key] = out[key].tighter(limits) if key in out else limits
    return out


def with_quota(spec: dict[str, Any], limits: dict[str, Limits]) -> dict[str, Any]:
    """``spec`` with its model's shared quota, so a role that sets no limit of its own is
    still metered against the quota another role of the same model set."""
    if not spec.get("model"):
        return spec
    shared = limits.get(quota_key(spec["model"], spec.get("api_base")))
    if shared is None:
        return spec
    return {**spec, "rpm": shared.rpm, "tpm": shared.tpm}


__all__ = ["ACTOR_NAME", "Gate", "QuotaBook", "forget_actor", "gate", "quota_actor", "quota_key", "reset_gate",
           "shared_limits", "with_quota"]
