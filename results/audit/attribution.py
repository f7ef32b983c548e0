"""Who failed: one attribution per conversation from its verdict and its findings.

* ``harness``: the conversation ended in an infrastructure or tauray error;
* ``undetermined``: no verdict (unscored, model error), or it failed and the only
  simulator faults found are words (``talk``) whose effect on the agent needs judgement;
* ``none``: it succeeded (findings are still listed);
* ``simulator``: it failed and the simulator committed an ``outcome`` fault (changed the
  phone unasked, skipped or faked an action, ended or handed off the call itself) that
  explains it: correcting it flips the verdict, or it cannot be corrected (the call ended);
* ``agent``: it failed and no simulator fault was found;
* ``mixed``: it failed with an outcome fault of the simulator and a fault of the agent, or
  with simulator faults whose correction does not rescue the verdict (the failure has
  another cause too).

The decisive finding is the first outcome fault whose correction flips the verdict, else
the first outcome fault that cannot be corrected, else the first outcome fault (the
earliest finding when there is none). Flips come from ``counterfactual`` (the recorded
calls replayed with the fault corrected, ignoring how the agent would have reacted).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from tauray.results.audit.detectors import Finding

Attribution = Literal["none", "agent", "simulator", "mixed", "harness", "undetermined"]
ATTRIBUTIONS: tuple[str, ...] = ("none", "agent", "simulator", "mixed", "harness", "undetermined")
_HARNESS_ERRORS = ("infra", "internal")


class Verdict(BaseModel):
    """Who failed in one conversation, and the finding that decides it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attribution: Attribution = Field(description="none / agent / simulator / mixed / harness / undetermined.")
    decisive: Finding | None = Field(description="The finding that decides it, if any.")
    reason: str = Field(description="Why, in one line.")


def attribute(success: bool | None, error_kind: str | None, findings: list[Finding]) -> Verdict:
    """The attribution of one conversation (see the module doc)."""
    user = [f for f in findings if f.blamed_side == "user"]
    agent = [f for f in findings if f.blamed_side == "agent"]
    outcome = [f for f in user if f.effect == "outcome"]
    decisive_user = next((f for f in outcome if f.flips_verdict), None) or next(
        (f for f in outcome if f.flips_verdict is None), None) or (outcome[0] if outcome else None)
    unexplained = bool(outcome) and all(f.flips_verdict is False for f in outcome)
    first = decisive_user or (findings[0] if findings else None)
    if error_kind in _HARNESS_ERRORS:
        return Verdict(attribution="harness", decisive=None, reason=f"ended in a {error_kind} error")
    if success is None:
        return Verdict(attribution="undetermined", decisive=first, reason="no verdict")
    if success:
        return Verdict(attribution="none", decisive=None, reason="succeeded")
    if decisive_user is not None and agent:
        return Verdict(attribution="mixed", decisive=decisive_user,
                       reason=f"simulator {decisive_user.fault_class} and agent {agent[0].fault_class}")
    if decisive_user is not None and unexplained:
        return Verdict(attribution="mixed", decisive=decisive_user,
                       reason=f"simulator {decisive_user.fault_class} at turn {decisive_user.turn}, but correcting "
                       "it does not rescue the verdict")
    if decisive_user is not None:
        return Verdict(attribution="simulator", decisive=decisive_user,
                       reason=f"simulator {decisive_user.fault_class} at turn {decisive_user.turn}")
    if agent:
        return Verdict(attribution="agent", decisive=agent[0], reason=f"agent {agent[0].fault_class}")
    if user:
        return Verdict(attribution="undetermined", decisive=user[0],
                       reason=f"failed; only simulator talk faults ({user[0].fault_class})")
    return Verdict(attribution="agent", decisive=None, reason="failed with no simulator fault found")


__all__ = ["ATTRIBUTIONS", "Attribution", "Verdict", "attribute"]
