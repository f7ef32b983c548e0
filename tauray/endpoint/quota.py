"""A provider-like quota on the test endpoint: requests and tokens per minute, per model.

What a hosted provider does, at the scale of a test: each model (the request's ``model``
field) has a requests-per-minute and a tokens-per-minute quota over a rolling window; a
request that would go over either is answered 429, with a ``retry-after`` header (seconds
until enough of the window has expired) or without one, as some providers do. A request is
charged on arrival with its prompt (the usage the endpoint reports) plus its
``max_tokens`` when it sets one; what happens when it is answered is the accounting:

* ``settled``: the charge is corrected to prompt + completion (a refund of the unused
  ``max_tokens``; Anthropic and Bedrock settle output tokens this way);
* ``upfront``: the charge stays (OpenAI and Azure OpenAI count prompt + ``max_tokens``
  when the request arrives and give nothing back); a request without ``max_tokens`` is
  charged its completion too.

Every answer, a 429 included, carries OpenAI's rate-limit headers
(``x-ratelimit-limit-requests``/``-tokens``, ``x-ratelimit-remaining-*``,
``x-ratelimit-reset-*``) unless they are switched off. Every arrival is logged (time,
model, tokens, status, the tokens charged), so a benchmark can read the busiest window of
what a client *sent*, not only of what was let through.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

from tauray.endpoint.replies import prompt_words

PERIOD_S = 60.0

Accounting = Literal["settled", "upfront"]
ACCOUNTINGS: tuple[Accounting, ...] = ("settled", "upfront")


def prompt_tokens_of(body: dict[str, Any]) -> int:
    """The prompt's size as the endpoint reports and meters it: words of the messages and of
    the tool definitions (providers count tool schemas as prompt tokens too)."""
    tools = body.get("tools")
    return prompt_words(body) + (len(json.dumps(tools).split()) if tools else 0)


def duration(seconds: float) -> str:
    """A wait as OpenAI writes it in ``x-ratelimit-reset-*``: ``12ms``, ``1.5s``, ``6m0s``."""
    seconds = max(0.0, seconds)
    if seconds < 1.0:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    return f"{int(minutes)}m{rest:.3g}s" if minutes else f"{rest:.3g}s"


@dataclass
class _Arrival:
    t: float
    model: str
    prompt: int
    max_tokens: int | None
    status: int
    charged: float
    completion: int = 0

    def row(self) -> list[Any]:
        return [round(self.t, 4), self.model, self.prompt, self.completion, self.status, round(self.charged)]


class _Model:
    def __init__(self) -> None:
        self.window: deque[_Arrival] = deque()  # admitted requests, in arrival order
        self.tokens = 0.0

    def expire(self, now: float, period: float) -> None:
        while self.window and self.window[0].t <= now - period:
            self.tokens -= self.window.popleft().charged


class EndpointQuota:
    """The quota of every model served by one endpoint (lives on its event loop)."""

    def __init__(self, rpm: int | None, tpm: int | None, retry_after: bool = True, period: float = PERIOD_S,
                 accounting: Accounting = "settled", send_headers: bool = True) -> None:
        self.rpm, self.tpm, self.retry_after, self.period = rpm, tpm, retry_after, period
        self.accounting, self.send_headers = accounting, send_headers
        self.models: dict[str, _Model] = {}
        self.log: list[_Arrival] = []
        self.refused = 0
        self.started = time.monotonic()

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def _now(self) -> float:
        return time.monotonic() - self.started

    def admit(self, model: str, prompt_tokens: int, max_tokens: int | None) -> tuple[_Arrival | None, float | None]:
        """(the admitted request, None), or (None, seconds to wait) when it is over quota."""
        now = self._now()
        state = self.models.setdefault(model, _Model())
        state.expire(now, self.period)
        upfront = prompt_tokens + (max_tokens or 0)
        wait = 0.0
        if self.rpm is not None and len(state.window) + 1 > self.rpm:
            wait = state.window[len(state.window) - self.rpm].t + self.period - now
        if self.tpm is not None and state.tokens + upfront > self.tpm:
            excess, freed = state.tokens + upfront - self.tpm, 0.0
            for arrival in state.window:
                freed += arrival.charged
                if freed >= excess:
                    wait = max(wait, arrival.t + self.period - now)
                    break
            else:
                wait = max(wait, self.period)
        if wait > 0:
            self.refused += 1
            self.log.append(_Arrival(now, model, prompt_tokens, max_tokens, 429, float(upfront)))
            return None, wait
        arrival = _Arrival(now, model, prompt_tokens, max_tokens, 200, float(upfront))
        state.window.append(arrival)
        state.tokens += upfront
        self.log.append(arrival)
        return arrival, None

    def settle(self, arrival: _Arrival, completion_tokens: int) -> None:
        """The request was answered with ``completion_tokens``: its charge as the accounting says."""
        arrival.completion = completion_tokens
        if self.accounting == "upfront" and arrival.max_tokens:
            return  # counted up front, no refund
        charged = arrival.prompt + completion_tokens
        state = self.models[arrival.model]
        if arrival in state.window:
            state.tokens += charged - arrival.charged
        arrival.charged = float(charged)

    def refusal(self, model: str, wait: float) -> tuple[dict[str, Any], dict[str, str]]:
        """The 429 body and headers for a request to ``model`` over the quota (chat and audio routes)."""
        body = {"error": {"message": f"Rate limit reached for {model}: over the test quota (rpm={self.rpm}, "
                          f"tpm={self.tpm}). Try again later.", "type": "rate_limit_error", "param": None,
                          "code": "rate_limit_exceeded"}}
        return body, self.headers(model, wait)

    def headers(self, model: str, wait: float | None = None) -> dict[str, str]:
        """The headers of an answer to ``model``: ``retry-after`` on a refusal (when enabled),
        and the rate-limit headers as OpenAI sends them (limit, remaining, time to a full reset)."""
        out: dict[str, str] = {}
        if wait is not None and self.retry_after:
            out["retry-after"] = str(max(1, math.ceil(wait)))
        if not self.send_headers or not self.active:
            return out
        now = self._now()
        state = self.models.setdefault(model, _Model())
        state.expire(now, self.period)
        reset = duration(state.window[-1].t + self.period - now if state.window else 0.0)
        if self.rpm is not None:
            out |= {"x-ratelimit-limit-requests": str(self.rpm),
                    "x-ratelimit-remaining-requests": str(max(0, self.rpm - len(state.window))),
                    "x-ratelimit-reset-requests": reset}
        if self.tpm is not None:
            out |= {"x-ratelimit-limit-tokens": str(self.tpm),
                    "x-ratelimit-remaining-tokens": str(max(0, math.floor(self.tpm - state.tokens))),
                    "x-ratelimit-reset-tokens": reset}
        return out

    def snapshot(self) -> dict[str, Any]:
        return {"rpm": self.rpm, "tpm": self.tpm, "period_s": self.period, "retry_after": self.retry_after,
                "accounting": self.accounting, "headers": self.send_headers, "refused": self.refused,
                "log": [a.row() for a in self.log]}


def charged(row: list[Any]) -> float:
    """Tokens a log row counts for: what the endpoint charged (a refused request: what it
    would have been charged); older logs without that column: prompt + completion."""
    return row[5] if len(row) > 5 else row[2] + row[3]


def busiest_window(rows: list[list[Any]], period: float = PERIOD_S) -> tuple[int, int]:
    """(most requests, most tokens) that arrived within any ``period`` seconds (``rows``:
    the endpoint's log, in arrival order; refused requests count, they were sent)."""
    most_requests = most_tokens = 0
    start, tokens = 0, 0.0
    for end, row in enumerate(rows):
        tokens += charged(row)
        while rows[start][0] <= row[0] - period:
            tokens -= charged(rows[start])
            start += 1
        most_requests = max(most_requests, end - start + 1)
        most_tokens = max(most_tokens, round(tokens))
    return most_requests, most_tokens


__all__ = ["ACCOUNTINGS", "Accounting", "EndpointQuota", "PERIOD_S", "busiest_window", "charged", "duration",
           "prompt_tokens_of"]
