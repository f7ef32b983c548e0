"""The user-simulator audit's rows (``tauray.actors.audit``): made once per conversation, in the loop,
and carried in its ``ConversationResult`` like the other detail rows; ``tauray audit`` appends
rows under a newer ``audit_id``. Readers keep each conversation's newest audit."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tauray.results.tables.records.columns import Count, UtcDatetime, _DetailRow

AuditBlame = Literal["agent", "user", "harness"]
AuditAttribution = Literal["none", "agent", "simulator", "mixed", "harness", "undetermined"]
AUDIT_ID_DOC = ("Audit that wrote the row: `inloop-<detectors digest>` for the audit made as the conversation "
                "finished, `audit-<time>-<hex>` for a `tauray audit`; readers keep each conversation's newest.")


class SimFindingRecord(_DetailRow):
    """One fault a detector of the user-simulator audit found in one conversation."""

    audit_id: str = Field(description=AUDIT_ID_DOC)
    detector: str = Field(description="Detector that found it.")
    detector_version: int = Field(ge=1, description="Version of the detector's rule.")
    fault_class: str = Field(description="Fault class, e.g. premature_stop, unrequested_write.")
    blamed_side: AuditBlame = Field(description="Side at fault: 'user' (the simulator), 'agent' or 'harness'.")
    effect: Literal["outcome", "talk"] = Field(description="'outcome': the fault changed the phone or ended the "
                                               "call; 'talk': it only said something wrong.")
    tier: Literal["rule", "judge"] = Field(description="'rule' (a rule over the record) or 'judge' (a model).")
    turn: int | None = Field(ge=0, description="Conversation turn of the fault.")
    message_seq: int | None = Field(ge=0, description="Message (seq in the messages table) that shows it.")
    evidence: str = Field(description="What the rule saw, one line.")
    flips_verdict: bool | None = Field(None, description="Whether correcting the fault and replaying the recorded "
                                       "calls flips the verdict (outcome faults); null: cannot say (a fault that "
                                       "ended the call, a talk fault, or a replay that does not reproduce the run).")
    audited_at: UtcDatetime = Field(description="Time of the audit, UTC.")


class SimAttributionRecord(_DetailRow):
    """Who failed in one conversation, as the user-simulator audit attributes it."""

    audit_id: str = Field(description=AUDIT_ID_DOC)
    attribution: AuditAttribution = Field(description="none / agent / simulator / mixed / harness / undetermined.")
    decisive_finding: str | None = Field(description="Detector (name@version) of the decisive finding, if any.")
    decisive_class: str | None = Field(description="Fault class of the decisive finding, if any.")
    decisive_turn: int | None = Field(ge=0, description="Turn of the decisive finding, if any.")
    reason: str = Field(description="Why, one line.")
    findings: Count = Field(description="Findings in the conversation, all sides.")
    user_findings: Count = Field(description="Findings blamed on the user simulator.")
    agent_findings: Count = Field(0, description="Findings blamed on the agent.")
    success: bool | None = Field(description="The conversation's verdict, as stored.")
    detectors: list[str] = Field(description="Detectors run (name@version).")
    audited_at: UtcDatetime = Field(description="Time of the audit, UTC.")
