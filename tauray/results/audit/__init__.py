"""Who failed: the audit of conversations. Rule detectors of user-simulator faults
(``user_ends``, ``user_actions``, ``user_words``, ``user_reasons``; a customer's words read into
claims by ``claims``/``claim_words``, the user-side DB by ``user_db``) and of agent faults (``agent_faults``),
each a versioned rule over the record (``finding``); the counterfactual replays that say
whether a fault decides the verdict; the attribution of each conversation; and its rows,
made once per conversation in the loop (``inloop``) or again by ``tauray audit``
(``runner``, ``store``). It reads only scenarios and the result records
(``docs/audit.md``).
"""

from tauray.results.audit.agent_faults import AGENT_DETECTORS, AGENT_FAULT_CLASSES
from tauray.results.audit.attribution import ATTRIBUTIONS, WhoFailed, attribute
from tauray.results.audit.finding import Detector, Finding, detect_all
from tauray.results.audit.inloop import audit_result
from tauray.results.audit.runner import (DETECTORS, INLOOP_AUDIT_ID, AuditSummary, ConversationAudit, JudgeTier,
                                         audit_path, audit_rows, audit_run_dir, audit_trajectory)
from tauray.results.audit.store import write_audit
from tauray.results.audit.summary import adjusted_success, faults_per_100, rank_agents, ranking, who_failed
from tauray.results.audit.trajectory import Trajectory, trajectories, trajectory
from tauray.results.audit.user_faults import USER_DETECTORS, USER_FAULT_CLASSES

__all__ = ["AGENT_DETECTORS", "AGENT_FAULT_CLASSES", "ATTRIBUTIONS", "DETECTORS", "INLOOP_AUDIT_ID",
           "USER_DETECTORS", "USER_FAULT_CLASSES", "AuditSummary", "ConversationAudit", "Detector", "Finding",
           "JudgeTier", "Trajectory", "WhoFailed", "adjusted_success", "attribute", "audit_path", "audit_result",
           "audit_rows", "audit_run_dir", "audit_trajectory", "detect_all", "faults_per_100", "rank_agents",
           "ranking", "trajectories", "trajectory", "who_failed", "write_audit"]
