"""What a 429 says and how long to wait it out.

Providers answer an over-quota call with HTTP 429 and, usually, a ``retry-after`` header
(seconds, or an HTTP date; OpenAI also sends ``retry-after-ms``). The client waits that
long, or, when the provider names no time, backs off exponentially from one second, and
tries again, until the spec's ``rate_limit_wait`` is spent; only then does the call fail
as an infra error.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Mapping
from typing import Any

FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0


def is_rate_limit(error: BaseException) -> bool:
    import openai

    return isinstance(error, openai.RateLimitError) or getattr(error, "status_code", None) == 429


def _headers(error: BaseException) -> Mapping[str, Any]:
    for source in (getattr(error, "litellm_response_headers", None),
                   getattr(getattr(error, "response", None), "headers", None)):
        if source:
            try:
                return {str(k).lower(): v for k, v in dict(source).items()}
            except (TypeError, ValueError):
                continue
    return {}


def retry_after_s(error: BaseException, now: float | None = None) -> float | None:
    """The wait the provider asked for with this 429, in seconds (None: it named none)."""
    headers = _headers(error)
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except (TypeError, ValueError):
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        parsed = email.utils.parsedate_tz(str(value))
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))


def backoff_s(attempt: int, rng: random.Random | None = None) -> float:
    """Wait before retry ``attempt`` (0-based) when the provider named no time: 1, 2, 4, …
    seconds up to 30, each ±25% so that many waiting calls do not return together."""
    base = min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2.0 ** attempt)
    return base * (0.75 + 0.5 * (rng or random).random())


def prompt_chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """Size of a request's prompt in characters (what the quota estimates tokens from)."""
    return len(json.dumps(messages, default=str)) + (len(json.dumps(tools, default=str)) if tools else 0)


__all__ = ["backoff_s", "is_rate_limit", "prompt_chars", "retry_after_s"]
