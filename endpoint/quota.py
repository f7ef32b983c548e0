"""A provider-like quota on the test endpoint: requests and tokens per minute, per model.

What a hosted provider does, at the scale of a test: each model (the request's ``model``
field) has a requests-per-minute and a tokens-per-minute quota over a rolling window; a
request that would go over either is answered 429, with a ``retry-after`` header (seconds
until enough of the window has expired) or without one, as some providers do. Tokens are
the usage the endpoint reports: the prompt's when the request arrives (plus ``max_tokens``
when the request sets it, which OpenAI counts against the quota up front), corrected to
prompt + completion when it is answered.

Every arrival is logged (time, model, tokens, whether it was refused), so a benchmark can
read the busiest window of what a client *sent*, not only of what was let through.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from typing import Any

from tauray.endpoint.replies import prompt_words

PERIOD_S = 60.0


def prompt_tokens_of(body: dict[str, Any]) -> int:
    """The prompt's size as the endpoint reports and meters it: words of the messages and of
    the tool definitions (providers count tool schemas as prompt tokens too)."""
    tools = body.get("tools")
    return prompt_words(body) + (len(json.dumps(tools).split()) if tools else 0)


class _Model:
    def __init__(self) -> None:
        self.window: deque[list[float]] = deque()  # [arrival, tokens] of admitted requests
        self.tokens = 0.0

    def expire(self, now: float, period: float) -> None:
        while self.window and self.window[0][0] <= now - period:
            self.tokens -= self.window.popleft()[1]


class EndpointQuota:
    """The quota of every model served by one endpoint (lives on its event loop)."""

    def __init__(self, rpm: int | None, tpm: int | None, retry_after: bool = True, period: float = PERIOD_S) -> None:
        self.rpm, self.tpm, self.retry_after, self.period = rpm, tpm, retry_after, period
        self.models: dict[str, _Model] = {}
        self.log: list[list[Any]] = []  # [t, model, prompt tokens, completion tokens, status]
        self.refused = 0
        self.started = time.monotonic()

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def admit(self, model: str, prompt_tokens: int, max_tokens: int | None) -> tuple[list[Any] | None, float | None]:
        """(the admitted request's log row, None), or (None, seconds to wait) when it is over quota."""
        now = time.monotonic() - self.started
        state = self.models.setdefault(model, _Model())
        state.expire(now, self.period)
        upfront = prompt_tokens + (max_tokens or 0)
        wait = 0.0
        if self.rpm is not None and len(state.window) + 1 > self.rpm:
            wait = state.window[len(state.window) - self.rpm][0] + self.period - now
        if self.tpm is not None and state.tokens + upfront > self.tpm:
            excess, freed = state.tokens + upfront - self.tpm, 0.0
            for at, tokens in state.window:
                freed += tokens
                if freed >= excess:
                    wait = max(wait, at + self.period - now)
                    break
            else:
                wait = max(wait, self.period)
        if wait > 0:
            self.refused += 1
            self.log.append([round(now, 4), model, prompt_tokens, 0, 429])
            return None, wait
        entry = [now, float(upfront)]
        state.window.append(entry)
        state.tokens += upfront
        row = [round(now, 4), model, prompt_tokens, 0, 200, entry]
        self.log.append(row)
        return row, None

    def settle(self, row: list[Any], completion_tokens: int) -> None:
        """The request was answered: its tokens are what the reply reports."""
        entry = row.pop()
        used = row[2] + completion_tokens
        row[3] = completion_tokens
        state = self.models[row[1]]
        if entry in state.window:
            state.tokens += used - entry[1]
        entry[1] = used

    def headers(self, wait: float) -> dict[str, str]:
        return {"retry-after": str(max(1, math.ceil(wait)))} if self.retry_after else {}

    def snapshot(self) -> dict[str, Any]:
        rows = [r[:5] for r in self.log]
        return {"rpm": self.rpm, "tpm": self.tpm, "period_s": self.period, "retry_after": self.retry_after,
                "refused": self.refused, "log": rows}


def busiest_window(rows: list[list[Any]], period: float = PERIOD_S) -> tuple[int, int]:
    """(most requests, most tokens) that arrived within any ``period`` seconds (``rows``:
    the endpoint's log, in arrival order; refused requests count, they were sent)."""
    most_requests = most_tokens = 0
    start, tokens = 0, 0
    for end, row in enumerate(rows):
        tokens += row[2] + row[3]
        while rows[start][0] <= row[0] - period:
            tokens -= rows[start][2] + rows[start][3]
            start += 1
        most_requests = max(most_requests, end - start + 1)
        most_tokens = max(most_tokens, tokens)
    return most_requests, most_tokens


__all__ = ["EndpointQuota", "PERIOD_S", "busiest_window", "prompt_tokens_of"]
