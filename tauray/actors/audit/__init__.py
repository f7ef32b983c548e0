"""Who failed, in one room: the audit of conversations.

Rule detectors of user-simulator faults (``user_ends``, ``user_actions``, ``user_words``,
``user_reasons``; a customer's words read into claims by ``claims``/``claim_words``, the
user-side DB by ``user_db``) and of agent faults (``agent_faults``), each a versioned rule over
the record (``finding``); the judge tier for what a rule cannot decide (``judge_checks``,
``judge_tier``); the counterfactual replays that say whether a fault decides the verdict; the
attribution of each conversation; its rows, made once per conversation in the loop
(``inloop``) or again by ``tauray audit`` (``runner``, ``store``); what it says about a run
(``summary``) and its page of the report (``report``). How far the findings can be trusted is
measured outside the package (``dev/calibration``) and shipped as data (docs/audit.md).
"""

from tauray.actors.audit.agent_faults import AGENT_DETECTORS, AGENT_FAULT_CLASSES
from tauray.actors.audit.attribution import ATTRIBUTIONS, WhoFailed, attribute
from tauray.actors.audit.finding import Detector, Finding, detect_all
from tauray.actors.audit.inloop import audit_result
from tauray.actors.audit.runner import (
                                         DETECTORS,
                                         INLOOP_AUDIT_ID,
                                         AuditSummary,
                                         ConversationAudit,
                                         JudgeTier,
                                         audit_path,
                                         audit_records,
                                         audit_run_dir,
                                         audit_trajectory,
)
from tauray.actors.audit.store import write_audit
from tauray.actors.audit.summary import adjusted_success, faults_per_100, rank_agents, ranking, who_failed
from tauray.actors.audit.trajectory import Trajectory, trajectories, trajectory
from tauray.actors.audit.user_faults import USER_DETECTORS, USER_FAULT_CLASSES

__all__ = ["AGENT_DETECTORS", "AGENT_FAULT_CLASSES", "ATTRIBUTIONS", "DETECTORS", "INLOOP_AUDIT_ID",
           "USER_DETECTORS", "USER_FAULT_CLASSES", "AuditSummary", "ConversationAudit", "Detector", "Finding",
           "JudgeTier", "Trajectory", "WhoFailed", "adjusted_success", "attribute", "audit_path", "audit_result",
           "audit_records", "audit_run_dir", "audit_trajectory", "detect_all", "faults_per_100", "rank_agents",
           "ranking", "trajectories", "trajectory", "who_failed", "write_audit"]
