"""What a provider's answer says about its quota: the rate-limit headers.

OpenAI (and Azure OpenAI, Groq, Mistral, OpenRouter and other OpenAI-compatible hosts) send
``x-ratelimit-limit-requests``/``-tokens``, ``x-ratelimit-remaining-requests``/``-tokens``
and ``x-ratelimit-reset-requests``/``-tokens`` (a duration: ``1s``, ``6m0s``, ``12ms``) on
every answer, a 429 included. Anthropic sends ``anthropic-ratelimit-requests-limit``,
``-remaining`` and ``-reset`` (an RFC 3339 time), the same for ``tokens`` (the most
restrictive token limit in effect), ``input-tokens`` and ``output-tokens``. litellm hands
them on in a response's ``_hidden_params["additional_headers"]``: the OpenAI names as they
are (Anthropic's limit and remaining translated to them) and every header of the answer
again under ``llm_provider-<name>``; an error carries them in ``litellm_response_headers``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


class RateInfo(BaseModel):
    """The quota an answer reported (crosses the actor boundary to the book)."""

    model_config = ConfigDict(frozen=True)
    limit_requests: int | None = Field(None, description="Requests per minute the provider allows.")
    limit_tokens: int | None = Field(None, description="Tokens per minute the provider allows.")
    remaining_requests: int | None = Field(None, description="Requests left in the provider's current window.")
    remaining_tokens: int | None = Field(None, description="Tokens left in the provider's current window.")
    reset_requests_s: float | None = Field(None, description="Seconds until the request budget is full again.")
    reset_tokens_s: float | None = Field(None, description="Seconds until the token budget is full again.")


def _number(value: Any) -> int | None:
    try:
        number = int(float(str(value).strip()))
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None  # Azure sends -1 where it has nothing to say


def reset_seconds(value: Any, now: float | None = None) -> float | None:
    """A reset header in seconds: OpenAI's duration (``6m0s``, ``1.5s``, ``12ms``), a bare
    number of seconds, or Anthropic's RFC 3339 time."""
    text = str(value or "").strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if parts and "".join(f"{n}{u}" for n, u in parts) == text:
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


def _lookup(headers: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        for key in (name, f"llm_provider-{name}"):
            if key in headers:
                return headers[key]
    return None


def rate_info(headers: Mapping[str, Any] | None, now: float | None = None) -> RateInfo | None:
    """The quota ``headers`` report (None: they report none)."""
    if not headers:
        return None
    h = {str(k).lower(): v for k, v in dict(headers).items()}
    values: dict[str, Any] = {}
    for dim in ("requests", "tokens"):
        values[f"limit_{dim}"] = _number(_lookup(h, f"x-ratelimit-limit-{dim}", f"anthropic-ratelimit-{dim}-limit"))
        values[f"remaining_{dim}"] = _number(
            _lookup(h, f"x-ratelimit-remaining-{dim}", f"anthropic-ratelimit-{dim}-remaining"))
        values[f"reset_{dim}_s"] = reset_seconds(
            _lookup(h, f"x-ratelimit-reset-{dim}", f"anthropic-ratelimit-{dim}-reset"), now)
    if values["limit_requests"] is None and values["limit_tokens"] is None:
        return None  # a remaining count without its limit says nothing the book can use
    return RateInfo(**values)


def response_headers(response: Any) -> Mapping[str, Any] | None:
    """The headers litellm kept of a reply."""
    hidden = getattr(response, "_hidden_params", None) or {}
    return hidden.get("additional_headers") if isinstance(hidden, dict) else None


__all__ = ["RateInfo", "rate_info", "reset_seconds", "response_headers"]
