"""A duplex cell's settings as a sweep file writes them, and what of them is the cell's identity.

A sweep's ``[voice]`` section names the turn-taking modes as an axis (``turn_taking = ["half",
"duplex"]``; ``"half"``, today's walkie-talkie, is the default and keeps its cell and unit ids) and,
for the duplex cells, three mappings: ``duplex_rules`` (the caller's :class:`~.caller.CallerRules`),
``duplex_pipeline`` (the agent's :class:`~.pipeline.PipelineSettings`) and ``duplex_clock``
(:class:`~.clock.ClockSettings`). They are parsed once, at load (:func:`duplex_settings`), into a
:class:`DuplexSettings` that the cell's units carry; a bad one is one line naming the field.

A duplex call opens like a half-duplex voice call: the caller speaks first, unless the rules say
``opening = "agent"``. The caller hears the agent as the sweep's ``hear_agent`` says, as in half
duplex (through the channel when true; the agent's own words, τ-Voice's way, when false), unless
the rules set ``hears``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.voice.duplex.caller import CallerRules
from tauray.actors.voice.duplex.clock import ClockSettings
from tauray.actors.voice.duplex.errors import DuplexConfigError, load_settings
from tauray.actors.voice.duplex.pipeline import PipelineSettings
from tauray.actors.voice.duplex.vad import silero_path

__all__ = ["HALF", "DUPLEX", "TURN_TAKING", "TurnTaking", "DuplexSettings", "check_vad", "duplex_settings"]

HALF: Final = "half"
DUPLEX: Final = "duplex"
TurnTaking = Literal["half", "duplex"]
TURN_TAKING: Final[tuple[str, ...]] = (HALF, DUPLEX)
CALL_OPENING: Final = {"opening": "caller"}  # as a half-duplex voice call opens


def _hash(model: BaseModel) -> str:
    text = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class DuplexSettings(BaseModel):
    """How a duplex cell's conversations run: the caller's rules, the agent's pipeline, the clock."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: CallerRules = Field(description="The caller's turn-taking (a sweep's duplex_rules; the caller opens "
                               "the call unless it says opening = 'agent', and hears the agent as the sweep's "
                               "hear_agent says unless it sets hears).")
    pipeline: PipelineSettings = Field(description="The cascaded agent pipeline's knobs (duplex_pipeline).")
    clock: ClockSettings = Field(description="The tick and the longest call (duplex_clock).")

    def identity(self) -> dict[str, str]:
        """What of it makes a cell: the pipeline's identity and hashes of the rules and the clock."""
        return {"pipeline": self.pipeline.identity(), "rules": _hash(self.rules), "clock": _hash(self.clock)}


def check_vad(pipeline: PipelineSettings) -> None:
    """The pipeline's VAD can be made here (its package installed), without loading its model;
    one line naming the install when not."""
    if pipeline.vad == "silero":
        silero_path()
    elif pipeline.vad == "webrtc" and importlib.util.find_spec("webrtcvad") is None:
        raise DuplexConfigError("vad 'webrtc' needs the webrtcvad package: pip install webrtcvad")


def duplex_settings(rules: Mapping[str, Any] | None = None, pipeline: Mapping[str, Any] | None = None,
                    clock: Mapping[str, Any] | None = None, *, hear_agent: bool = False) -> DuplexSettings:
    """A sweep file's three duplex mappings parsed and checked (the VAD's package included), or
    :class:`~.errors.DuplexConfigError`, one line naming the field. ``hear_agent``: the sweep's, the
    caller's ``hears`` unless the rules set it."""
    defaults = {**CALL_OPENING, "hears": "channel" if hear_agent else "text"}
    parsed = DuplexSettings(rules=load_settings(CallerRules, {**defaults, **dict(rules or {})},
                                                "voice.duplex_rules"),
                            pipeline=load_settings(PipelineSettings, dict(pipeline or {}), "voice.duplex_pipeline"),
                            clock=load_settings(ClockSettings, dict(clock or {}), "voice.duplex_clock"))
    check_vad(parsed.pipeline)
    return parsed
