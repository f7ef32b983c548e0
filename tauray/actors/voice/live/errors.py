"""A live call's faults, each one line: what a user sees when a bot cannot be called, speaks
another protocol, never answers or hangs up at once, or when a message on the line is bad."""

from __future__ import annotations

from typing import Literal

__all__ = ["CallFault", "FaultKind", "MediaStreamError", "ToolServerError"]

FaultKind = Literal["unreachable", "wrong_protocol", "no_answer", "hung_up", "timeout", "harness_late",
                    "provider_error"]
"""Why a live call failed. ``unreachable``, ``harness_late`` and ``provider_error`` (a realtime
provider's ``error`` event: a refused key, a quota, its server's fault) are the harness's side (an
infrastructure row, rerun by ``--retry-errors``); the others are the bot's."""

INFRA_FAULTS: frozenset[str] = frozenset({"unreachable", "harness_late", "provider_error"})


class MediaStreamError(ValueError):
    """A message that is not a valid media-stream message: one line naming the field; values of
    custom parameters (which may hold a bot's secrets) are never echoed."""


class CallFault(RuntimeError):
    """A live call that could not go on: one line, and the kind of fault for the row."""

    def __init__(self, kind: FaultKind, message: str):
        super().__init__(message)
        self.kind: FaultKind = kind

    @property
    def infra(self) -> bool:
        """True when the harness, not the bot, is at fault (an infrastructure row)."""
        return self.kind in INFRA_FAULTS


class ToolServerError(RuntimeError):
    """Bad use of the tool server (a conversation registered twice, an unknown one): one line."""
