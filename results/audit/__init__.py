"""The user-simulator audit: rule detectors of simulator faults over stored runs, who
failed in each conversation, and the tables both land in (``docs/audit.md``)."""

from tauray.results.audit.attribution import ATTRIBUTIONS, Verdict, attribute
from tauray.results.audit.agent_faults import AGENT_DETECTORS
from tauray.results.audit.detectors import DETECTORS as USER_DETECTORS
from tauray.results.audit.detectors import FAULT_CLASSES, Detector, Finding, detect_all
from tauray.results.audit.runner import (DETECTORS, AuditSummary, ConversationAudit, JudgeTier, audit_path,
                                         audit_run_dir, audit_trajectory)
from tauray.results.audit.store import read_audit, write_audit
from tauray.results.audit.trajectory import Trajectory, trajectories

__all__ = ["AGENT_DETECTORS", "ATTRIBUTIONS", "DETECTORS", "FAULT_CLASSES", "USER_DETECTORS", "AuditSummary",
           "ConversationAudit", "Detector", "Finding", "JudgeTier",
           "Trajectory", "Verdict", "attribute", "audit_path", "audit_run_dir", "audit_trajectory", "detect_all",
           "read_audit", "trajectories", "write_audit"]
