"""What an audit rule finds, and the rule itself: a :class:`Finding` is one fault in one
conversation (detector, version, class, side, turn, evidence); a :class:`Detector` is a small
versioned object with one rule over what a run recorded.

A rule reads the trajectory only (both sides' messages, tool calls and results, the task's
known information and family); it never calls a model. Bump a detector's ``version`` whenever
its rule changes: findings carry it, so audits made with different rules are never mixed up.

``effect`` says what a fault of the class can do to the verdict: ``outcome`` faults change
the state or end the call early, ``talk`` faults only say something wrong (whether the other
side was misled needs judgement).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.audit.trajectory import Message, Trajectory
from tauray.scenarios.conventions import OUT_OF_SCOPE, STOP, TRANSFER

Blame = Literal["agent", "user", "harness"]
Tier = Literal["rule", "judge"]
Effect = Literal["outcome", "talk"]


class Finding(BaseModel):
    """One fault a detector found in one conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    detector: str = Field(description="Detector that found it.")
    detector_version: int = Field(ge=1, description="Version of the detector's rule.")
    fault_class: str = Field(description="Fault class found.")
    blamed_side: Blame = Field(description="Side at fault.")
    effect: Effect = Field(description="'outcome' (state changed or call ended) or 'talk' (only words).")
    tier: Tier = Field(description="'rule' (a rule over the record) or 'judge' (a model's judgement).")
    turn: int | None = Field(description="Conversation turn of the fault.")
    message_seq: int | None = Field(description="Message (seq) that shows it.")
    evidence: str = Field(description="What the rule saw, in one line.")
    flips_verdict: bool | None = Field(default=None, description="Whether correcting the fault and replaying the "
                                       "recorded calls changes the verdict (``counterfactual``); None: cannot say.")


class Detector(BaseModel):
    """A rule over one recorded conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: int = Field(ge=1)
    fault_class: str
    blamed_side: Blame = "user"
    effect: Effect = "talk"
    tier: Tier = "rule"
    description: ClassVar[str] = ""

    def finding(self, message: Message, evidence: str, fault_class: str | None = None,
                effect: Effect | None = None) -> Finding:
        return Finding(detector=self.name, detector_version=self.version, fault_class=fault_class or self.fault_class,
                       blamed_side=self.blamed_side, effect=effect or self.effect, tier=self.tier, turn=message.turn,
                       message_seq=message.seq, evidence=" ".join(evidence.split())[:300])

    def detect(self, t: Trajectory) -> list[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


def strip_tokens(text: str) -> str:
    for token in (STOP, TRANSFER, OUT_OF_SCOPE):
        text = text.replace(token, " ")
    return text.strip()


def detect_all(t: Trajectory, detectors: tuple[Detector, ...]) -> list[Finding]:
    """Every finding of every detector on one conversation, in message order."""
    found = [f for d in detectors for f in d.detect(t)]
    return sorted(found, key=lambda f: (f.message_seq if f.message_seq is not None else -1, f.detector))


__all__ = ["Blame", "Detector", "Effect", "Finding", "Tier", "detect_all", "strip_tokens"]
