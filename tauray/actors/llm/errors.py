"""What can go wrong with a model, and how it is told: the two error classes the engine
scores differently, their classification, and the scrubbing every error text gets.

A :class:`ModelConfigError` is raised before any conversation starts (the model cannot be
used as configured); a :class:`ModelCallError` is a call that produced no reply, and its
``kind`` says whether the provider (``infra``) or the request (``model``) was at fault.
Secrets never leave in a message: :func:`scrub` removes the key and anything shaped like one.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

from tauray.results.tables.records import INFRA, MODEL

# What a failed call is: the provider's or network's doing, or the request's.
CallErrorKind = Literal["infra", "model"]


class ModelConfigError(ValueError):
    """The model cannot be used as configured; raised before any conversation starts."""


class ModelCallError(Exception):
    """A call that produced no reply.

    ``kind`` decides how the run treats it: ``"infra"`` means the provider or the
    network failed even after the Router's retries (the work unit may be retried,
    and the conversation is not the model's fault); ``"model"`` means the request
    itself was refused (bad request, context window, content policy, unknown
    model, credentials), which retrying would not change.
    """

    def __init__(self, kind: CallErrorKind, message: str, *, status_code: int | None = None, error_type: str = "") -> None:
        super().__init__(message)
        self.kind: CallErrorKind = kind
        self.message = message
        self.status_code = status_code
        self.error_type = error_type

    def __repr__(self) -> str:
        return f"ModelCallError(kind={self.kind!r}, message={self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # It crosses Ray actor boundaries; the default reduction would drop ``kind``.
        return (self.__class__, (self.kind, self.message), {"status_code": self.status_code, "error_type": self.error_type})


_SECRET_PATTERNS = (
    (re.compile(r"(?i)\b(bearer)\s+[^\s'\",;]+"), r"\1 [REDACTED]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{4,}"), "sk-[REDACTED]"),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization)['\"]?\s*[:=]\s*['\"]?)[^\s'\",;}]+"), r"\1[REDACTED]"),
)


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` without the given secret values or anything that looks like a credential."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# Keys whose values are credentials wherever they stand in a model's extra parameters
# (extra_headers, aws_secret_access_key, vertex_credentials, api_key, ...).
_SECRET_KEYS = re.compile(r"key|secret|passw|credential|auth|header|cookie|session|access_token|^token$", re.I)
REDACTED = "<redacted>"


def redacted_params(params: Any) -> Any:
    """Extra parameters as they may be stored (a table, a run folder): credential-like keys'
    values replaced by ``<redacted>``, at any depth."""
    if isinstance(params, dict):
        return {k: REDACTED if _SECRET_KEYS.search(str(k)) else redacted_params(v) for k, v in params.items()}
    if isinstance(params, list):
        return [redacted_params(v) for v in params]
    return params


def classify(error: BaseException) -> tuple[Literal["infra", "model"], int | None]:
    import openai

    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    infra_types: tuple[type[BaseException], ...] = (
        openai.RateLimitError,
        openai.APIConnectionError,  # includes timeouts
        openai.InternalServerError,
        asyncio.TimeoutError,
        ConnectionError,
    )
    model_types: tuple[type[BaseException], ...] = (
        openai.BadRequestError,  # includes context window and content policy
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
        openai.UnprocessableEntityError,
    )
    if isinstance(error, infra_types):
        return INFRA, status
    if isinstance(error, model_types):
        return MODEL, status
    if status is not None and 400 <= status < 500 and status not in (408, 409, 429):
        return MODEL, status
    # 5xx, 408/409/429, ServiceUnavailable/BadGateway, and failures with no status
    # (the Router finding no deployment, broken transports): not the model's doing.
    return INFRA, status


__all__ = ["ModelCallError", "ModelConfigError", "classify", "scrub"]
