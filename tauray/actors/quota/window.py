"""One dimension of a per-minute quota: what was admitted in the last period, and pacing."""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass

PERIOD_S = 60.0
"""Providers state quotas per minute."""

BURST = 0.05
"""Share of the quota that may go out at once above the steady rate (3 s of the rate)."""

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


@dataclass(eq=False)  # an entry is itself, not any entry of the same time and amount
class _Entry:
    at: float
    amount: float


class Window:
    """One dimension of a per-minute quota: a log of what was admitted in the last period
    (hard cap) and a GCRA schedule (pacing at the quota's rate, ``burst`` of it at once)."""

    def __init__(self, limit: float, period: float = PERIOD_S, burst: float = BURST,
                 headroom: float = HEADROOM) -> None:
        self.period = period
        self.burst = burst
        self.headroom = headroom
        self.hold = period + max(GUARD_S, 0.01 * period)
        self.log: deque[_Entry] = deque()
        self.used = 0.0
        self.tat = -math.inf  # theoretical arrival time of the next unit (GCRA)
        self.resize(limit)

    def resize(self, limit: float) -> None:
        """A new quota (a tighter one declared, or one learned); what was admitted stays."""
        self.quota = float(limit)
        self.limit = max(1.0, float(limit) * (1.0 - self.headroom))  # what admission aims at
        self.tolerance = self.burst * self.period

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
        """Admit ``amount`` at ``now`` (an earlier ``now``: a call admitted before this window
        existed, entered where it belongs in the log)."""
        amount = self.fit(amount)
        entry = _Entry(now, amount)
        if self.log and now < self.log[-1].at:
            self.log.insert(bisect.bisect_right([e.at for e in self.log], now), entry)
        else:
            self.log.append(entry)
        self.used += amount
        self.tat = max(self.tat, now) + amount * self.period / self.limit
        return entry

    def used_at(self, now: float) -> float:
        """What the window holds at ``now``."""
        self._expire(now)
        return self.used

    def settle(self, entry: _Entry, amount: float) -> None:
        """Correct an admitted amount (a reservation) to what the call really used."""
        amount = self.fit(amount)
        delta = amount - entry.amount
        if entry in self.log:  # still inside the window
            self.used += delta
        entry.amount = amount
        self.tat += delta * self.period / self.limit


__all__ = ["BURST", "GUARD_S", "HEADROOM", "PERIOD_S", "Window"]
