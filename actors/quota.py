"""One rate limit per provider model across the cluster.

A provider meters a model's quota per account, in requests and tokens per minute, over
every call made with it: the agent, the user simulator and the judge of every host and
coordinator on every node. So the quota lives in one place, a :class:`QuotaBook` (one
named Ray actor per cluster, or one object per process without Ray), keyed by model and
API base; each :class:`~tauray.actors.llm.client.ModelClient` whose spec sets ``rpm`` or
``tpm`` asks it for admission right before it sends a call.

Admission is decided before the call is sent, never counted after the fact:

* requests: one per call;
* tokens: the prompt, estimated from its size in characters with the tokens-per-character
  ratio the model's own usage reports have shown (conservative until the first report),
  plus a reservation for the completion (``max_tokens`` when the spec sets it, else the
  largest completion seen lately); when the call returns, the reservation is settled with
  the real usage;
* two rules per dimension must both allow it: no 60 s window may hold more than the quota
  (a log of admissions, so the provider's own per-minute count can never be exceeded by
  what was admitted), and calls are spread at the quota's rate with a small burst
  allowance (GCRA pacing), so a sweep's opening wave does not spend a minute's quota in
  its first second, which providers that meter in shorter slices refuse.

A 429 from the provider pauses the whole model (every caller, every node) for its
``retry-after`` or, without one, for an exponential backoff; see
:func:`~tauray.actors.llm.client.ModelClient.complete` for the bounded wait.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

PERIOD_S = 60.0
"""Providers state quotas per minute."""

BURST = 0.05
"""Share of the quota that may go out at once above the steady rate (3 s of the rate)."""

FIRST_RATIO = 0.5
"""Tokens per character assumed before a model has reported any usage (English BPE runs
about 0.25-0.3, JSON and code up to 0.4: an over-estimate that the first reply corrects)."""

FIRST_COMPLETION = 1024
"""Completion tokens reserved before any has been seen (when the spec sets no max_tokens)."""

RECENT = 64
"""Replies whose usage sets the estimates (largest ratio and completion among them)."""

HEADROOM = 0.02
"""Share of the quota left unused: admission timing as the provider sees it varies by
more than any margin measured here (a busy node delays a call between its admission and
its arrival), and one call too many in a window is a 429 for everyone."""

GUARD_S = 0.25
"""The log holds admissions a little longer than the period: a call admitted here reaches
the provider a moment later, and that moment varies between calls (more on a busy node), so
an exact period would let the provider see one call too many at a window's edge. The margin
is the largest such delay the callers reported lately, and at least this (or 1% of the
period)."""

ACTOR_NAME = "tauray-quota"


class Limits(BaseModel):
    """A model's quota: requests and tokens per minute (either may be unset)."""

    model_config = ConfigDict(frozen=True)
    rpm: int | None = Field(None, gt=0, description="Requests per minute.")
    tpm: int | None = Field(None, gt=0, description="Tokens (prompt + completion) per minute.")

    def tighter(self, other: Limits) -> Limits:
        def low(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else min(a, b)

        return Limits(rpm=low(self.rpm, other.rpm), tpm=low(self.tpm, other.tpm))

    @property
    def any(self) -> bool:
        return self.rpm is not None or self.tpm is not None


def quota_key(model: str, api_base: str | None) -> str:
    """The quota a call is metered against: the model at its API base."""
    return f"{model}@{(api_base or '').rstrip('/')}"


# --------------------------------------------------------------------------- one dimension


@dataclass
class _Entry:
    at: float
    amount: float


class Window:
    """One dimension of a per-minute quota: a log of what was admitted in the last period
    (hard cap) and a GCRA schedule (pacing at the quota's rate, ``burst`` of it at once)."""

    def __init__(self, limit: float, period: float = PERIOD_S, burst: float = BURST,
                 headroom: float = HEADROOM) -> None:
        self.quota = float(limit)
        self.limit = max(1.0, float(limit) * (1.0 - headroom))  # what admission aims at
        self.period = period
        self.hold = period + max(GUARD_S, 0.01 * period)
        self.tolerance = burst * period
        self.log: deque[_Entry] = deque()
        self.used = 0.0
        self.tat = -math.inf  # theoretical arrival time of the next unit (GCRA)

    def set_margin(self, delay: float) -> None:
        """Hold admissions for the period plus ``delay`` (and at least the guard)."""
        self.hold = self.period + max(GUARD_S, 0.01 * self.period, delay)

    def _expire(self, now: float) -> None:
        while self.log and self.log[0].at <= now - self.hold:
            self.used -= self.log.popleft().amount
        if not self.log:
            self.used = 0.0

    def fit(self, amount: float) -> float:
        """An amount the quota can ever admit (a call larger than the whole quota waits
        for an empty window; the provider decides whether to take it)."""
        return min(float(amount), self.limit)

    def wait(self, now: float, amount: float) -> float:
        """Seconds from ``now`` until ``amount`` may be admitted (0: now)."""
        amount = self.fit(amount)
        self._expire(now)
        pace = max(0.0, self.tat - self.tolerance - now) if self.tat > -math.inf else 0.0
        excess = self.used + amount - self.limit
        if excess <= 1e-9:
            return pace
        freed = 0.0
        for entry in self.log:
            freed += entry.amount
            if freed >= excess - 1e-9:
                return max(pace, entry.at + self.hold - now)
        return max(pace, self.hold)  # unreachable: the log holds at least ``used``

    def take(self, now: float, amount: float) -> _Entry:
        amount = self.fit(amount)
        entry = _Entry(now, amount)
        self.log.append(entry)
        self.used += amount
        self.tat = max(self.tat, now) + amount * self.period / self.limit
        return entry

    def settle(self, entry: _Entry, amount: float) -> None:
        """Correct an admitted amount (a reservation) to what the call really used."""
        amount = self.fit(amount)
        delta = amount - entry.amount
        if entry in self.log:  # still inside the window
            self.used += delta
        entry.amount = amount
        self.tat += delta * self.period / self.limit


# --------------------------------------------------------------------------- one model


class Ticket(BaseModel):
    """What an admitted call holds until it settles (crosses the actor boundary)."""

    model_config = ConfigDict(frozen=True)
    key: str
    number: int
    prompt_tokens: int = Field(description="Estimated prompt tokens admitted.")
    reserved: int = Field(description="Completion tokens reserved.")
    waited_s: float = Field(description="Seconds the call waited for admission.")


@dataclass
class _Held:
    request: _Entry | None
    tokens: _Entry | None
    chars: int


@dataclass
class ModelQuota:
    limits: Limits
    clock: Callable[[], float] = time.monotonic
    period: float = PERIOD_S
    requests: Window | None = None
    tokens: Window | None = None
    ratios: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    completions: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    delays: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    paused_until: float = -math.inf
    held: dict[int, _Held] = field(default_factory=dict)
    admitted: int = 0
    waited_s: float = 0.0
    pauses: int = 0

    def __post_init__(self) -> None:
        self._lock: asyncio.Lock | None = None
        self._changed: asyncio.Event | None = None
        self.set_limits(self.limits)

    def set_limits(self, limits: Limits) -> None:
        self.limits = limits
        if limits.rpm and (self.requests is None or self.requests.quota != limits.rpm):
            self.requests = Window(limits.rpm, self.period)
        if limits.tpm and (self.tokens is None or self.tokens.quota != limits.tpm):
            self.tokens = Window(limits.tpm, self.period)
        self._wake()

    # --- estimates -------------------------------------------------------------------
    def estimate(self, chars: int, max_tokens: int | None) -> tuple[int, int]:
        """(prompt tokens, completion tokens to reserve) for a prompt of ``chars`` characters."""
        ratio = max(self.ratios) if self.ratios else FIRST_RATIO
        prompt = math.ceil(chars * ratio)
        seen = max(self.completions) if self.completions else FIRST_COMPLETION
        reserve = max_tokens if max_tokens is not None else seen
        return prompt, int(reserve)

    def wait(self, now: float, tokens: float) -> float:
        waits = [self.paused_until - now]
        if self.requests is not None:
            waits.append(self.requests.wait(now, 1))
        if self.tokens is not None:
            waits.append(self.tokens.wait(now, tokens))
        return max(0.0, *waits)

    # --- admission ---------------------------------------------------------------------
    async def acquire(self, number: int, key: str, chars: int, max_tokens: int | None) -> Ticket:
        """Wait (first come, first served) until the call fits, then admit it."""
        if self._lock is None:
            self._lock, self._changed = asyncio.Lock(), asyncio.Event()
        started = self.clock()
        async with self._lock:
            while True:
                prompt, reserve = self.estimate(chars, max_tokens)
                now = self.clock()
                delay = self.wait(now, prompt + reserve)
                if delay <= 0:
                    break
                self._changed.clear()
                try:  # a settle or a new limit may shorten the wait
                    await asyncio.wait_for(self._changed.wait(), timeout=delay)
                except asyncio.TimeoutError:
                    pass
            self.held[number] = _Held(
                request=self.requests.take(now, 1) if self.requests is not None else None,
                tokens=self.tokens.take(now, prompt + reserve) if self.tokens is not None else None,
                chars=chars)
        self.admitted += 1
        waited = self.clock() - started
        self.waited_s += waited
        return Ticket(key=key, number=number, prompt_tokens=prompt, reserved=reserve, waited_s=waited)

    def settle(self, number: int, prompt_tokens: int | None, completion_tokens: int | None,
               sent: bool = True, delay: float | None = None) -> None:
        """The call's real usage (``None`` when the reply reported none: the estimate stands).
        ``sent=False``: the provider refused it (a 429), so it used no tokens. ``delay``: at
        most how long after its admission the call went out (see :data:`GUARD_S`)."""
        held = self.held.pop(number, None)
        if held is None:
            return
        if delay is not None:
            self.delays.append(delay)
            for window in (self.requests, self.tokens):
                if window is not None:
                    window.set_margin(max(self.delays))
        if prompt_tokens is not None and held.chars > 0:
            self.ratios.append(prompt_tokens / held.chars)
        if completion_tokens is not None:
            self.completions.append(completion_tokens)
        if held.tokens is not None:
            if not sent:
                self.tokens.settle(held.tokens, 0)
            elif prompt_tokens is not None and completion_tokens is not None:
                self.tokens.settle(held.tokens, prompt_tokens + completion_tokens)
        self._wake()

    def pause(self, seconds: float) -> None:
        """Nobody calls the model for ``seconds`` (the provider said 429)."""
        until = self.clock() + max(0.0, seconds)
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def stats(self) -> dict[str, Any]:
        return {"rpm": self.limits.rpm, "tpm": self.limits.tpm, "admitted": self.admitted,
                "in_flight": len(self.held), "waited_s": round(self.waited_s, 3), "pauses": self.pauses,
                "tokens_per_char": round(max(self.ratios), 4) if self.ratios else None,
                "send_delay_s": round(max(self.delays), 3) if self.delays else None}


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
        elif limits != quota.limits:  # every caller of one model must meet the tightest limit
            quota.set_limits(quota.limits.tighter(limits))
        return quota

    async def acquire(self, key: str, limits: Limits, chars: int, max_tokens: int | None = None) -> Ticket:
        return await self._model(key, limits).acquire(next(self._numbers), key, chars, max_tokens)

    def settle(self, key: str, number: int, prompt_tokens: int | None, completion_tokens: int | None,
               sent: bool = True, delay: float | None = None) -> None:
        quota = self.models.get(key)
        if quota is not None:
            quota.settle(number, prompt_tokens, completion_tokens, sent, delay)

    def pause(self, key: str, seconds: float) -> None:
        quota = self.models.get(key)
        if quota is not None:
            quota.pause(seconds)

    def stats(self) -> dict[str, dict[str, Any]]:
        return {key: quota.stats() for key, quota in self.models.items()}


# --------------------------------------------------------------------------- the process's view


class Gate:
    """How a process reaches the quota book: the cluster's actor, or a book of its own."""

    def __init__(self, book: QuotaBook | None = None, actor: Any = None) -> None:
        self.book = book
        self.actor = actor

    async def acquire(self, key: str, limits: Limits, chars: int, max_tokens: int | None) -> Ticket:
        if self.actor is not None:
            return await self.actor.acquire.remote(key, limits, chars, max_tokens)
        return await self.book.acquire(key, limits, chars, max_tokens)

    def settle(self, ticket: Ticket, prompt_tokens: int | None, completion_tokens: int | None,
               sent: bool = True, delay: float | None = None) -> None:
        if self.actor is not None:
            self.actor.settle.remote(ticket.key, ticket.number, prompt_tokens, completion_tokens, sent, delay)
        else:
            self.book.settle(ticket.key, ticket.number, prompt_tokens, completion_tokens, sent, delay)

    def pause(self, key: str, seconds: float) -> None:
        if self.actor is not None:
            self.actor.pause.remote(key, seconds)
        else:
            self.book.pause(key, seconds)


_GATE: tuple[str | None, Gate] | None = None


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


_BOOK: tuple[str | None, Any] | None = None


# --------------------------------------------------------------------------- one quota per model


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


__all__ = ["ACTOR_NAME", "Gate", "Limits", "ModelQuota", "QuotaBook", "Ticket", "Window", "gate", "quota_actor",
           "quota_key", "reset_gate", "shared_limits", "with_quota"]
