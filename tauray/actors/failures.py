"""What a failure is: the one place that sorts exceptions into kinds.

The kind decides what happens next, so it is decided once, here, for the
conversation loop (an exception from a host) and for the driver (an exception
out of a coordinator's call) alike:

* ``infra``: the infrastructure failed, not the model and not us. Either an
  actor, its worker, its node or the owner of an object died (``actor_death``:
  the scheduler retries the unit on fresh actors), or a provider still failed
  after the Router's retries and the client's wait (429, overloaded, 5xx,
  timeouts, connection errors), or said the model's quota or spend cap is spent
  (the row is excluded from rates and rerun by ``--retry-errors``).
* ``model``: the provider refused the request for what it is (a verdict).
* ``config``: a model cannot be used as configured where the call ran (e.g. its
  key variable is set on the driver but not on a worker). Every conversation
  would fail the same way, so the run stops with the message instead of
  writing a row per unit.
* ``internal``: anything else, which is a bug of ours (or of a policy): a row
  with the traceback, never retried and never counted as infra.

Ray re-raises a remote exception as ``RayTaskError(X)``, an instance of both
``RayTaskError`` and ``X``; the classification looks through it at ``X``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NamedTuple

from tauray.results.tables.records import INFRA, INTERNAL, MODEL, ErrorKind

CONFIG: Final = "config"  # never a row's kind: the run stops with the message
FailureKind = Literal[ErrorKind, "config"]

# Ray's exceptions that mean a process or node (or an object's owner) went away:
# the work was lost, and a fresh actor can do it again.
ACTOR_DEATHS = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError",
                "OwnerDiedError", "ObjectLostError", "ObjectReconstructionFailedError", "NodeDiedError",
                "LocalRayletDiedError", "OutOfMemoryError")

MAX_MESSAGE = 4000


class Failure(NamedTuple):
    kind: FailureKind
    message: str
    actor_death: bool


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _cause(exc: BaseException) -> BaseException:
    """The exception a remote call raised, through Ray's wrapper (and ours, if nested)."""
    seen = 0
    while seen < 8:
        seen += 1
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException) and "RayTaskError" in _names(exc):
            exc = cause
            continue
        break
    return exc


def _text(exc: BaseException, name: str | None = None) -> str:
    text = f"{name or type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + " …"


def classify(exc: BaseException) -> Failure:
    """The kind of ``exc`` (see the module docstring) and a bounded message that
    starts with the exception's class name."""
    cause = _cause(exc)  # e.g. a coordinator that re-raised its host's death
    cause_names = _names(cause)
    death = next((d for d in ACTOR_DEATHS if d in cause_names), None)
    if death is not None:
        name = type(cause).__name__
        return Failure(INFRA, _text(cause, name if name in ACTOR_DEATHS else death), True)
    if "ModelConfigError" in cause_names:
        return Failure(CONFIG, _text(cause), False)
    kind = getattr(cause, "kind", None)
    if "ModelCallError" in cause_names and kind in (INFRA, MODEL):
        return Failure(kind, str(getattr(cause, "message", None) or cause)[:MAX_MESSAGE], False)
    return Failure(INTERNAL, _text(cause), False)


def is_actor_death(error_kind: Any, error_message: Any) -> bool:
    """Whether a result row says an actor died under its conversation (the scheduler
    retries such units); the message starts with the class name, as ``classify`` writes it."""
    return error_kind == INFRA and str(error_message or "").startswith(ACTOR_DEATHS)
