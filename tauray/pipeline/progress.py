"""The live progress display of a sweep: one bar for the sweep, one line per model.

The sweep bar counts done units against the units this driver has to run and
shows failed / errors / in flight, tokens and cost so far, with tqdm's ETA;
each model's line shows its conversations, errors, tokens and cost. Drawn on
stderr, and only when stderr is a terminal unless forced, so ``--json``
output and logs stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from tqdm import tqdm


def _money(x: float) -> str:
    return f"${x:,.4f}" if x < 10 else f"${x:,.2f}"


def _tokens(n: float) -> str:
    n = int(n)
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


class SweepProgress:
    def __init__(self, title: str, total: int, models: list[str], already: int = 0, enabled: bool | None = None,
                 refresh_s: float = 0.5, label: str = "sweep"):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.refresh_s = refresh_s
        self._last = 0.0
        self.bars = {}
        if not self.enabled:
            return
        self.bars["_sweep"] = tqdm(total=total, desc=f"{label} {title}", unit="conv", dynamic_ncols=True,
                                   file=sys.stderr, position=0, leave=True)
        if already:
            self.bars["_sweep"].set_description(f"{label} {title} (+{already} done before)")
        for i, name in enumerate(models, start=1):
            self.bars[name] = tqdm(total=0, desc=f"  {name}", bar_format="{desc}: {postfix}", file=sys.stderr,
                                   position=i, leave=True)
        self._done = 0

    def update(self, sched: Any) -> None:
        if not self.enabled:
            return
        self.bars["_sweep"].update(1)
        self.tick(sched)

    def tick(self, sched: Any, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.refresh_s:
            return
        self._last = now
        live = sched.live
        c = live.counts
        self.bars["_sweep"].set_postfix_str(
            f"ok={c.get('success', 0)} failed={c.get('failed', 0)} "
            f"err={c.get('infra', 0) + c.get('model', 0) + c.get('internal', 0)} "
            f"in_flight={sched.in_flight} retried={sched.retried} tok={_tokens(live.tokens)} "
            f"cost={_money(live.cost)}" + (" BUDGET REACHED" if sched.budget_reached else ""), refresh=True)
        for name, bar in self.bars.items():
            if name == "_sweep":
                continue
            m = live.by_model.get(name, {})
            bar.set_postfix_str(f"conv={int(m.get('done', 0))} err={int(m.get('errors', 0))} "
                                f"in_flight={sched.model_in_flight.get(name, 0)} tok={_tokens(m.get('tokens', 0))} "
                                f"cost={_money(m.get('cost', 0.0))}", refresh=True)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
