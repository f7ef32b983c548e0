"""The audit made as each conversation finishes, on the coordinator after judging: its rows
(findings and one attribution) travel inside the conversation's ``ConversationResult`` and
the run's writer stores them like the other detail tables. It runs the same trajectory,
rules and attribution as ``tauray audit`` on stored tables, so the two agree on a record.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from tauray.actors.audit.runner import DETECTORS, INLOOP_AUDIT_ID, audit_records, audit_trajectory
from tauray.actors.audit.trajectory import trajectory
from tauray.results.tables.records import ConversationResult

log = logging.getLogger(__name__)
_NAMES = [d.key for d in DETECTORS]


def audit_result(result: ConversationResult) -> ConversationResult:
    """``result`` with its audit rows; unchanged (and a warning logged) if the audit itself
    fails, since the conversation's rows matter more (``tauray audit`` can redo it)."""
    conv = result.conversation
    try:
        audit = audit_trajectory(trajectory(conv.model_dump(), [m.model_dump() for m in result.messages],
                                            [a.model_dump() for a in result.actions]))
        findings, attribution = audit_records(audit, INLOOP_AUDIT_ID, datetime.now(UTC), _NAMES)
    except Exception as exc:  # noqa: BLE001 - an audit bug must not cost the conversation
        log.warning("audit of conversation %s failed: %s: %s", conv.conversation_id, type(exc).__name__, exc)
        return result
    return result.model_copy(update={"sim_findings": findings, "sim_attributions": [attribution]})


__all__ = ["audit_result"]
