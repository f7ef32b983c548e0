"""The user-simulator audit's rules, in one tuple: the detectors of how the customer ends
the call (``user_ends``), what it does with its phone (``user_actions``) and what it says
(``user_words``) and what it brings that its task never gave it (``user_reasons``), each a versioned rule over the record (``finding``)."""

from __future__ import annotations

from tauray.actors.audit.finding import Detector
from tauray.actors.audit.user_actions import (
                                               BundledTurn,
                                               DoneWithoutCall,
                                               IgnoredRequest,
                                               RepeatedWrite,
                                               UnaskedWrite,
                                               WrongArguments,
)
from tauray.actors.audit.user_ends import (
                                               NoEndAfterResolved,
                                               PrematureStop,
                                               StopAfterFailure,
                                               StopWithRequest,
                                               TransferWithoutAgent,
)
from tauray.actors.audit.user_reasons import InventedConstraint, NewProblem
from tauray.actors.audit.user_words import (
                                               ConstraintBroken,
                                               FaultNamedEarly,
                                               IdentityInvented,
                                               KnownInfoContradicted,
                                               ResultContradiction,
                                               StateWithoutTool,
)

USER_DETECTORS: tuple[Detector, ...] = (
    PrematureStop(name="premature_stop", version=11, fault_class="premature_stop", effect="outcome"),
    StopWithRequest(name="stop_with_request", version=2, fault_class="stop_with_request"),
    TransferWithoutAgent(name="transfer_without_agent", version=1, fault_class="transfer_without_agent",
                         effect="outcome"),
    UnaskedWrite(name="unasked_write", version=1, fault_class="unrequested_write", effect="outcome"),
    WrongArguments(name="wrong_arguments", version=1, fault_class="different_action", effect="outcome"),
    DoneWithoutCall(name="done_without_call", version=12, fault_class="done_without_call", effect="outcome"),
    ResultContradiction(name="result_contradiction", version=16, fault_class="result_contradiction"),
    KnownInfoContradicted(name="known_info_contradicted", version=11, fault_class="known_info_contradicted"),
    IdentityInvented(name="identity_invented", version=2, fault_class="identity_invented"),
    RepeatedWrite(name="repeated_write", version=1, fault_class="repeated_write", effect="outcome"),
    StateWithoutTool(name="state_without_tool", version=19, fault_class="state_without_tool"),
    FaultNamedEarly(name="fault_named_early", version=13, fault_class="fault_named_early"),
    StopAfterFailure(name="stop_after_failure", version=1, fault_class="stop_after_failure", effect="outcome"),
    NoEndAfterResolved(name="no_end_after_resolved", version=1, fault_class="no_end_after_resolved"),
    ConstraintBroken(name="constraint_broken", version=7, fault_class="constraint_broken"),
    BundledTurn(name="bundled_turn", version=1, fault_class="bundled_turn"),
    IgnoredRequest(name="ignored_request", version=9, fault_class="ignored_request", effect="outcome"),
    InventedConstraint(name="invented_constraint", version=10, fault_class="invented_constraint", effect="outcome"),
    NewProblem(name="new_problem", version=11, fault_class="new_problem"),
)
"""The user simulator's rule detectors, in the order findings are listed."""

USER_FAULT_CLASSES: tuple[str, ...] = tuple(dict.fromkeys((*(d.fault_class for d in USER_DETECTORS), "different_action")))
"""Every fault class the simulator's rules report (``unasked_write`` also reports ``different_action``)."""

__all__ = ["USER_DETECTORS", "USER_FAULT_CLASSES"]
