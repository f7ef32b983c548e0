"""Row records of the result tables.

Each class is one row of one flat table; the field order is the column order on disk
(``schemas.py`` declares the same columns and a test keeps the two in step). One module
per concern: the column types and key columns (``columns``), the conversation and cell
rows (``conversation``), the detail rows of scoring and acting (``detail``), the message
record (``message``), the judge's rows (``judge``), a conversation's whole result and the
tables (``result``), the audit's rows (``audit``).
"""

from tauray.results.tables.records.audit import (
    AUDIT_ID_DOC,
    AuditAttribution,
    AuditBlame,
    SimAttributionRecord,
    SimFindingRecord,
)
from tauray.results.tables.records.columns import (
    ATTEMPT_DOC,
    ERROR_KINDS,
    INFRA,
    INTERNAL,
    MODEL,
    UNIT_ID_DOC,
    ActionKind,
    AgentKind,
    Attempt,
    Count,
    ErrorKind,
    JsonText,
    Role,
    Side,
    ToolCallsJson,
    UnitId,
    UtcDatetime,
    as_json_text,
)
from tauray.results.tables.records.conversation import CellRecord, ConversationRecord
from tauray.results.tables.records.detail import ActionRecord, PredicateRecord
from tauray.results.tables.records.judge import JudgeVerdictRecord, NLAssertionRecord
from tauray.results.tables.records.message import MessageRecord
from tauray.results.tables.records.result import TABLES, ConversationResult, records_by_table

__all__ = [
    "ATTEMPT_DOC", "AUDIT_ID_DOC", "ERROR_KINDS", "INFRA", "INTERNAL", "MODEL", "TABLES",
    "UNIT_ID_DOC", "ActionKind", "ActionRecord", "AgentKind", "Attempt", "AuditAttribution", "AuditBlame",
    "CellRecord", "ConversationRecord", "ConversationResult", "Count", "ErrorKind", "JsonText", "JudgeVerdictRecord",
    "MessageRecord", "NLAssertionRecord", "PredicateRecord", "Role", "Side", "SimAttributionRecord",
    "SimFindingRecord", "ToolCallsJson", "UnitId", "UtcDatetime", "as_json_text", "records_by_table",
]
