"""Bad duplex input as one line: the error class, and how a settings model is loaded from a
sweep file's mapping so that pydantic's multi-line report becomes one line naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tauray.actors.voice.errors import SpeechConfigError

__all__ = ["DuplexConfigError", "load_settings"]

M = TypeVar("M", bound=BaseModel)


class DuplexConfigError(SpeechConfigError):
    """Bad duplex input (a tick out of range, an unknown turn-taking or pipeline parameter, a VAD
    whose package is missing): one line that names the field and what is allowed, raised before
    anything runs or is written."""


def one_line(exc: ValidationError, what: str, model: type[BaseModel]) -> DuplexConfigError:
    """The first error of a pydantic validation as one line: ``what.field: message (got value)``,
    or for an unknown field the known ones."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first.get("loc", ()))
    if first.get("type") == "extra_forbidden":
        return DuplexConfigError(f"{what}: unknown parameter {field!r}; known: {', '.join(model.model_fields)}")
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    got = first.get("input")
    shown = "" if isinstance(got, Mapping) else f" (got {got!r})"
    return DuplexConfigError(f"{what}.{field}: {message}{shown}" if field else f"{what}: {message}{shown}")


def load_settings(model: type[M], data: Mapping[str, Any] | M | None, what: str) -> M:
    """``model`` from a mapping (a sweep file's section), or the model itself; None gives the
    defaults. Raises :class:`DuplexConfigError` (one line) on an unknown or bad parameter."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(dict(data or {}))
    except ValidationError as exc:
        raise one_line(exc, what, model) from None
