"""One model's quota: admission before a call, settlement after it, and what the provider's
answers teach (its limits, its count, a spent quota)."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.quota.headers import RateInfo
from tauray.actors.quota.window import PERIOD_S, Window, _Entry

FIRST_RATIO = 0.5
"""Tokens per character assumed before a model has reported any usage (English BPE runs
about 0.25-0.3, JSON and code up to 0.4: an over-estimate that the first reply corrects)."""

FIRST_COMPLETION = 1024
"""Completion tokens reserved before any has been seen (when the spec sets no max_tokens)."""

RECENT = 64
"""Replies whose usage sets the estimates (largest ratio and completion among them)."""

PROBE_S = 120.0
"""Longest the other calls of a model wait for its first answer (the probe) before another
call probes: its limits are not known until an answer reports them."""


class Limits(BaseModel):
    """A model's quota: requests and tokens per minute (either may be unset)."""

    model_config = ConfigDict(frozen=True)
    rpm: int | None = Field(None, gt=0, description="Requests per minute.")
    tpm: int | None = Field(None, gt=0, description="Tokens (prompt + completion) per minute.")

    def tighter(self, other: Limits) -> Limits:
        def low(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else min(a, b)

        return Limits(rpm=low(self.rpm, other.rpm), tpm=low(self.tpm, other.tpm))

    def filled(self, other: Limits) -> Limits:
        """These limits, with ``other``'s where these set none."""
        return Limits(rpm=self.rpm or other.rpm, tpm=self.tpm or other.tpm)

    @property
    def any(self) -> bool:
        return self.rpm is not None or self.tpm is not None


class Ticket(BaseModel):
    """What an admitted call holds until it settles (crosses the actor boundary)."""

    model_config = ConfigDict(frozen=True)
    key: str
    number: int
    prompt_tokens: int = Field(0, description="Estimated prompt tokens admitted.")
    reserved: int = Field(0, description="Completion tokens reserved.")
    waited_s: float = Field(0.0, description="Seconds the call waited for admission.")
    metered: bool = Field(True, description="False: the model has no known quota and its answers carry no "
                          "rate-limit headers, so its calls need not ask the book.")
    stopped: str | None = Field(None, description="The model's calls are stopped (its quota or spend cap is spent): "
                                "why, in one line; the call was not admitted.")


class Settlement(BaseModel):
    """How an admitted call went (crosses the actor boundary)."""

    model_config = ConfigDict(frozen=True)
    prompt_tokens: int | None = Field(None, description="Prompt tokens the reply reported (None: the estimate stands).")
    completion_tokens: int | None = Field(None, description="Completion tokens the reply reported.")
    sent: bool = Field(True, description="False: the provider refused it with a 429, so it used no tokens.")
    replied: bool = Field(False, description="A reply came back (not an error).")
    delay: float | None = Field(None, description="At most how long after its admission the call went out.")
    rate: RateInfo | None = Field(None, description="The quota the answer's rate-limit headers reported.")


@dataclass
class _Held:
    at: float
    request: _Entry | None
    tokens: _Entry | None
    chars: int
    amount: float  # tokens admitted (estimated prompt + reservation)
    reserve: int
    upfront: bool  # the reservation is max_tokens counted up front: it is never refunded
    probe: bool


@dataclass
class ModelQuota:
    limits: Limits  # the declared limits (the tightest any spec of the model set)
    clock: Callable[[], float] = time.monotonic
    period: float = PERIOD_S
    requests: Window | None = None
    tokens: Window | None = None
    learned: Limits = field(default_factory=Limits)
    ratios: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    completions: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    delays: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    paused_until: float = -math.inf
    headers: bool | None = None  # whether its answers carry rate-limit headers (None: no answer yet)
    probe_at: float | None = None  # admission time of the call whose answer is awaited to learn the limits
    stopped: str | None = None
    held: dict[int, _Held] = field(default_factory=dict)
    admitted: int = 0
    waited_s: float = 0.0
    pauses: int = 0
    corrections: int = 0

    def __post_init__(self) -> None:
        self._lock: asyncio.Lock | None = None
        self._changed: asyncio.Event | None = None
        self.set_limits(self.limits)

    @property
    def effective(self) -> Limits:
        """The declared limits, filled in by the learned ones."""
        return self.limits.filled(self.learned)

    def set_limits(self, limits: Limits) -> None:
        self.limits = limits
        self._apply()

    def _apply(self) -> None:
        """Windows for the effective limits: a new one counts the calls in flight."""
        limits = self.effective
        for name, limit in (("requests", limits.rpm), ("tokens", limits.tpm)):
            window: Window | None = getattr(self, name)
            if limit is None:
                continue
            if window is not None:
                if window.quota != limit:
                    window.resize(limit)
                continue
            window = Window(limit, self.period)
            setattr(self, name, window)
            for held in self.held.values():
                entry = window.take(held.at, 1 if name == "requests" else held.amount)
                setattr(held, name, entry)
        self._wake()

    # --- estimates -------------------------------------------------------------------
    def estimate(self, chars: int, max_tokens: int | None) -> tuple[int, int]:
        """(prompt tokens, completion tokens to reserve) for a prompt of ``chars`` characters."""
        ratio = max(self.ratios) if self.ratios else FIRST_RATIO
        prompt = math.ceil(chars * ratio)
        seen = max(self.completions) if self.completions else FIRST_COMPLETION
        reserve = max_tokens if max_tokens is not None else seen
        return prompt, int(reserve)

    def _probing(self, now: float) -> float:
        """Seconds a call must wait for the probe's answer (0: it need not)."""
        if self.headers is not None or self.limits.any:
            return 0.0  # known, or declared (an undeclared dimension is learned as answers come)
        if self.probe_at is None or now - self.probe_at >= PROBE_S:
            return 0.0  # no probe out: this call probes
        return PROBE_S - (now - self.probe_at)

    def wait(self, now: float, tokens: float) -> float:
        waits = [self.paused_until - now, self._probing(now)]
        if self.requests is not None:
            waits.append(self.requests.wait(now, 1))
        if self.tokens is not None:
            waits.append(self.tokens.wait(now, tokens))
        return max(0.0, *waits)

    # --- admission ---------------------------------------------------------------------
    async def acquire(self, number: int, key: str, chars: int, max_tokens: int | None,
                      upfront: bool = False) -> Ticket:
        """Wait (first come, first served) until the call fits, then admit it. ``upfront``:
        the provider counts ``max_tokens`` when the call arrives and refunds nothing."""
        if self._lock is None:
            self._lock, self._changed = asyncio.Lock(), asyncio.Event()
        started = self.clock()
        async with self._lock:
            while self.stopped is None:
                prompt, reserve = self.estimate(chars, max_tokens)
                now = self.clock()
                delay = self.wait(now, prompt + reserve)
                if delay <= 0:
                    break
                self._changed.clear()
                try:  # a settle, a new limit or a stop may shorten the wait
                    await asyncio.wait_for(self._changed.wait(), timeout=delay)
                except asyncio.TimeoutError:
                    pass
            if self.stopped is not None:
                return Ticket(key=key, number=number, stopped=self.stopped)
            probe = self.headers is None and not self.limits.any
            if probe:
                self.probe_at = now
            amount = float(prompt + reserve)
            self.held[number] = _Held(
                at=now, request=self.requests.take(now, 1) if self.requests is not None else None,
                tokens=self.tokens.take(now, amount) if self.tokens is not None else None, chars=chars,
                amount=amount, reserve=reserve, upfront=upfront and max_tokens is not None, probe=probe)
        self.admitted += 1
        waited = self.clock() - started
        self.waited_s += waited
        metered = self.effective.any or self.headers is not False or self.paused_until > now
        return Ticket(key=key, number=number, prompt_tokens=prompt, reserved=reserve, waited_s=waited,
                      metered=metered)

    def settle(self, number: int, s: Settlement) -> None:
        """The call's outcome: its real usage (an up-front reservation is kept), and what
        its answer's headers say about the quota."""
        held = self.held.pop(number, None)
        if held is None:
            return
        if s.delay is not None:
            self.delays.append(s.delay)
            for window in (self.requests, self.tokens):
                if window is not None:
                    window.set_margin(max(self.delays))
        if s.prompt_tokens is not None and held.chars > 0:
            self.ratios.append(s.prompt_tokens / held.chars)
        if s.completion_tokens is not None:
            self.completions.append(s.completion_tokens)
        if held.probe:
            self.probe_at = None
        amount = held.amount
        if not s.sent:
            amount = 0.0
        elif s.prompt_tokens is not None and held.upfront:
            amount = s.prompt_tokens + held.reserve
        elif s.prompt_tokens is not None and s.completion_tokens is not None:
            amount = s.prompt_tokens + s.completion_tokens
        if held.tokens is not None:
            self.tokens.settle(held.tokens, amount)
        if s.rate is not None:
            self.learn(s.rate, held, amount if s.sent else None)
        elif s.replied and self.headers is None:
            self.headers = False  # the provider's replies carry no rate-limit headers
        self._wake()

    def learn(self, rate: RateInfo, held: _Held | None = None, amount: float | None = None) -> None:
        """An answer's headers: a limit nobody declared becomes the model's, and a count above
        the book's own (calls it never admitted, or counted for less) is added to it."""
        self.headers = True
        learned = Limits(rpm=rate.limit_requests or self.learned.rpm, tpm=rate.limit_tokens or self.learned.tpm)
        fresh = [name for name, window in (("requests", self.requests), ("tokens", self.tokens)) if window is None]
        if learned != self.learned:
            self.learned = learned
            self._apply()
        now = self.clock()
        for name, limit, remaining, units in (("requests", rate.limit_requests, rate.remaining_requests, 1.0),
                                              ("tokens", rate.limit_tokens, rate.remaining_tokens, amount)):
            window: Window | None = getattr(self, name)
            if window is None:
                continue
            if held is not None and name in fresh and units:
                window.take(held.at, units)  # the settling call, admitted before the window existed
            if remaining is None:
                continue
            counted = (limit or window.quota) - remaining  # what the provider holds against the quota
            missing = counted - window.used_at(now)
            if missing >= 1:
                window.take(now, missing)
                self.corrections += 1

    def pause(self, seconds: float) -> None:
        """Nobody calls the model for ``seconds`` (the provider said 429, or overloaded)."""
        until = self.clock() + max(0.0, seconds)
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1

    def stop(self, reason: str) -> None:
        """No more calls of the model: its quota or spend cap is spent."""
        if self.stopped is None:
            self.stopped = reason
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def stats(self) -> dict[str, Any]:
        limits = self.effective
        return {"rpm": limits.rpm, "tpm": limits.tpm, "declared_rpm": self.limits.rpm,
                "declared_tpm": self.limits.tpm, "learned_rpm": self.learned.rpm, "learned_tpm": self.learned.tpm,
                "headers": self.headers, "admitted": self.admitted, "in_flight": len(self.held),
                "waited_s": round(self.waited_s, 3), "pauses": self.pauses, "corrections": self.corrections,
                "stopped": self.stopped,
                "tokens_per_char": round(max(self.ratios), 4) if self.ratios else None,
                "send_delay_s": round(max(self.delays), 3) if self.delays else None}


__all__ = ["FIRST_COMPLETION", "FIRST_RATIO", "Limits", "ModelQuota", "PROBE_S", "RECENT", "Settlement", "Ticket"]
