"""Who failed: one attribution per conversation from its verdict and its findings.

* ``harness``: the conversation ended in an infrastructure or tauray error;
* ``undetermined``: no verdict (unscored, model error), or it failed and the only
  simulator faults found are words (``talk``) whose effect on the agent needs judgement;
* ``none``: it succeeded (findings are still listed);
* ``simulator``: it failed and the simulator committed an ``outcome`` fault (changed the
  phone unasked, skipped or faked an action, ended or handed off the call itself) that
  explains it: correcting it flips the verdict, or it cannot be corrected (the call ended);
* ``agent``: it failed with an agent fault (``agent_faults``: a skipped, wrong or unrequested
  write, a wrong instruction, an early end) and no simulator outcome fault that matters, or
  with no fault found at all (then without a decisive finding);
* ``mixed``: it failed with outcome faults of both sides that matter, or with simulator
  faults whose correction does not rescue the verdict (the failure has another cause too).

When both sides have outcome faults, a fault *matters* unless applying it alone to the
reference run still passes (``alone``: a harmless extra write does not); if only one side's
faults matter, that side failed it; if both do, the side whose correction alone rescues the
recorded calls failed it; otherwise it is ``mixed`` and the decisive finding is the earlier
of the two sides' decisive ones.

The decisive finding of a side is its first outcome fault whose correction flips the verdict,
else its first outcome fault that cannot be corrected, else its first outcome fault (the
earliest finding when there is none). Flips come from ``counterfactual`` (the recorded
calls replayed with the fault corrected, ignoring how the other side would have reacted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.audit.finding import Finding

Attribution = Literal["none", "agent", "simulator", "mixed", "harness", "undetermined"]
ATTRIBUTIONS: tuple[str, ...] = ("none", "agent", "simulator", "mixed", "harness", "undetermined")
_HARNESS_ERRORS = ("infra", "internal")


class WhoFailed(BaseModel):
    """Who failed in one conversation, and the finding that decides it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attribution: Attribution = Field(description="none / agent / simulator / mixed / harness / undetermined.")
    decisive: Finding | None = Field(description="The finding that decides it, if any.")
    reason: str = Field(description="Why, in one line.")


FindingKey = tuple[str, int | None, str]


def finding_key(f: Finding) -> FindingKey:
    """How ``alone`` names a finding."""
    return (f.detector, f.message_seq, f.fault_class)


def _decisive(faults: list[Finding]) -> Finding | None:
    """The first fault whose correction flips the verdict, else the first that cannot be
    corrected, else the first."""
    return next((f for f in faults if f.flips_verdict), None) or next(
        (f for f in faults if f.flips_verdict is None), None) or (faults[0] if faults else None)


def attribute(success: bool | None, error_kind: str | None, findings: list[Finding],
              alone: Mapping[FindingKey, bool | None] | None = None) -> WhoFailed:
    """The attribution of one conversation (see the module doc). ``alone`` says, per finding
    (``finding_key``), whether its fault by itself fails the reference run (None: cannot say,
    taken as mattering); it is asked only when both sides have outcome faults."""
    alone = alone or {}
    user = [f for f in findings if f.blamed_side == "user"]
    agent = [f for f in findings if f.blamed_side == "agent"]
    outcome = [f for f in user if f.effect == "outcome"]
    decisive_user = _decisive(outcome)
    unexplained = bool(outcome) and all(f.flips_verdict is False for f in outcome)
    first = decisive_user or (findings[0] if findings else None)
    if error_kind in _HARNESS_ERRORS:
        return WhoFailed(attribution="harness", decisive=None, reason=f"ended in a {error_kind} error")
    if success is None:
        return WhoFailed(attribution="undetermined", decisive=first, reason="no verdict")
    if success:
        return WhoFailed(attribution="none", decisive=None, reason="succeeded")
    agent_outcome = [f for f in agent if f.effect == "outcome"]
    if decisive_user is not None and agent_outcome:
        matters_a = [f for f in agent_outcome if alone.get(finding_key(f)) is not False]
        matters_u = [f for f in outcome if alone.get(finding_key(f)) is not False]
        du, da = _decisive(matters_u), _decisive(matters_a)
        if da is None:  # the agent's faults fail nothing by themselves: the simulator's rules decide
            agent_outcome = []
        elif du is None:
            return WhoFailed(attribution="agent", decisive=da, reason=f"agent {da.fault_class} at turn {da.turn}; "
                           f"simulator {decisive_user.fault_class} fails nothing by itself")
        elif du.flips_verdict and not da.flips_verdict:
            return WhoFailed(attribution="simulator", decisive=du, reason=f"simulator {du.fault_class} at turn "
                           f"{du.turn}; correcting it rescues the verdict despite agent {da.fault_class}")
        elif da.flips_verdict and not du.flips_verdict:
            return WhoFailed(attribution="agent", decisive=da, reason=f"agent {da.fault_class} at turn {da.turn}; "
                           f"correcting it rescues the verdict despite simulator {du.fault_class}")
        else:
            early = min((du, da), key=lambda f: (f.message_seq if f.message_seq is not None else -1))
            return WhoFailed(attribution="mixed", decisive=early,
                           reason=f"simulator {du.fault_class} (turn {du.turn}) and agent {da.fault_class} "
                           f"(turn {da.turn}) both matter")
    if decisive_user is not None and unexplained:
        return WhoFailed(attribution="mixed", decisive=decisive_user,
                       reason=f"simulator {decisive_user.fault_class} at turn {decisive_user.turn}, but correcting "
                       "it does not rescue the verdict")
    if decisive_user is not None:
        return WhoFailed(attribution="simulator", decisive=decisive_user,
                       reason=f"simulator {decisive_user.fault_class} at turn {decisive_user.turn}")
    if agent:
        da = _decisive(agent_outcome) or agent[0]
        return WhoFailed(attribution="agent", decisive=da, reason=f"agent {da.fault_class} at turn {da.turn}")
    if user:
        return WhoFailed(attribution="undetermined", decisive=user[0],
                       reason=f"failed; only simulator talk faults ({user[0].fault_class})")
    return WhoFailed(attribution="agent", decisive=None, reason="failed with no simulator fault found")


__all__ = ["ATTRIBUTIONS", "Attribution", "FindingKey", "WhoFailed", "attribute", "finding_key"]
