"""What a refusal for load or quota says, and how long to wait it out.

Providers answer an over-quota call with HTTP 429 and, usually, a ``retry-after`` header
(seconds, or an HTTP date; OpenAI also sends ``retry-after-ms``); an overloaded one with
503 (unavailable) or, Anthropic, 529 ``overloaded_error``. Both clear by themselves, so the
client waits the provider's time, or, when it names none, backs off exponentially from one
second, and tries again, until the spec's ``rate_limit_wait`` is spent; only then does the
call fail as an infra error. A spent quota or spend cap does not clear by waiting:
:func:`spent` names it (OpenAI's ``insufficient_quota`` 429, Anthropic's credit-balance or
usage-limit 400, a Gemini per-day quota), and the model's calls stop.
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


UPFRONT_PROVIDERS = frozenset({"openai", "azure", "text-completion-openai", "azure_text"})
"""Providers that count a request's ``max_tokens`` against the token quota when it arrives
and refund nothing (OpenAI's and Azure OpenAI's rate-limit documentation); the others'
quotas are settled with the real usage (Anthropic and Bedrock estimate output tokens from
``max_tokens`` and correct the count when the request ends)."""

_SPENT = (  # (text in the provider's answer, how the line names it)
    ("insufficient_quota", "insufficient_quota"),
    ("credit balance is too low", "credit balance too low"),
    ("reached your specified API usage limits", "API usage limit reached"),
)


def is_rate_limit(error: BaseException) -> bool:
    import openai

    return isinstance(error, openai.RateLimitError) or getattr(error, "status_code", None) == 429


def is_overloaded(error: BaseException) -> bool:
    """The provider is overloaded or unavailable (503, Anthropic's 529 ``overloaded_error``),
    which clears like a rate limit does."""
    statuses = {getattr(error, "status_code", None), getattr(error, "provider_status_code", None)}
    if statuses & {503, 529}:
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and status >= 500 and "overloaded_error" in str(error)


def spent(error: BaseException) -> str | None:
    """What says the model's quota or spend cap is spent (None: nothing does). Such an
    answer does not clear by waiting, unlike a rate limit."""
    body = getattr(error, "body", None)
    fields = body.get("error", body) if isinstance(body, dict) else {}
    if isinstance(fields, dict) and "insufficient_quota" in (fields.get("code"), fields.get("type")):
        return "insufficient_quota"
    text = str(error)
    for needle, name in _SPENT:
        if needle in text:
            return name
    if "RESOURCE_EXHAUSTED" in text and "PerDay" in text:
        return "a per-day quota is exhausted"
    return None


def upfront_accounting(accounting: str | None, provider: str) -> bool:
    """Whether a model's token quota is counted up front (``accounting``: the spec's
    ``token_accounting``; None: the provider's known way)."""
    return accounting == "upfront" if accounting else provider in UPFRONT_PROVIDERS


def error_headers(error: BaseException) -> Mapping[str, Any]:
    """The headers of the answer an error came from (lower-cased; empty when unknown)."""
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
    headers = error_headers(error)
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


__all__ = ["UPFRONT_PROVIDERS", "backoff_s", "error_headers", "is_overloaded", "is_rate_limit", "prompt_chars",
           "retry_after_s", "spent", "upfront_accounting"]
