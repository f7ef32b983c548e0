"""The audit made as each conversation finishes, so every conversation row carries who
failed (``attribution``, ``decisive_finding``, ``decisive_turn``) the moment it is written.

It runs on the coordinator, from the rows the conversation is about to add, through the
same trajectory and detectors ``tauray audit`` uses on stored tables, so the two agree on
the same record. Findings themselves land when the run ends (``audit_path`` over the
run's tables, which also supersedes the rows' columns whenever detectors change).
"""

from __future__ import annotations

import logging

from tauray.results.records import ConversationResult

log = logging.getLogger(__name__)


def audit_result(result: ConversationResult) -> ConversationResult:
    """``result`` with its conversation row's attribution columns filled; unchanged (and a
    warning logged) if the audit itself fails, since the conversation's row matters more."""
    from tauray.results.audit.runner import audit_trajectory
    from tauray.results.audit.trajectory import trajectory

    conv = result.conversation
    try:
        audit = audit_trajectory(trajectory(conv.model_dump(), [m.model_dump() for m in result.messages],
                                            [a.model_dump() for a in result.actions]))
    except Exception as exc:  # noqa: BLE001 - an audit bug must not cost the conversation
        log.warning("audit of conversation %s failed: %s: %s", conv.conversation_id, type(exc).__name__, exc)
        return result
    d = audit.decisive
    row = conv.model_copy(update={"attribution": audit.attribution,
                                  "decisive_finding": f"{d.detector}@{d.detector_version}" if d else None,
                                  "decisive_turn": d.turn if d else None})
    return result.model_copy(update={"conversation": row})


__all__ = ["audit_result"]
