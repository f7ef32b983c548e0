"""Where a run lands: result records, declared table schemas, the writer and readers."""

from tauray.results.readers import (
    list_tables,
    read_actions,
    read_conversations,
    read_messages,
    read_nl_assertions,
    read_predicates,
    read_table,
)
from tauray.results.records import (
    TABLES,
    ActionRecord,
    ConversationRecord,
    ConversationResult,
    MessageRecord,
    NLAssertionRecord,
    PredicateRecord,
    rows_by_table,
)
from tauray.results.schemas import SCHEMAS, UnknownTableError, schema_for
from tauray.results.writer import (
    WRITE_ORDER,
    TableWriter,
    WriterStats,
    next_seq,
    write_rows,
)

from tauray.results import analysis, metrics  # noqa: E402  (pandas helpers: `from tauray.results import metrics`)

__all__ = [
    "analysis",
    "metrics",
    "SCHEMAS",
    "TABLES",
    "WRITE_ORDER",
    "ActionRecord",
    "ConversationRecord",
    "ConversationResult",
    "MessageRecord",
    "NLAssertionRecord",
    "PredicateRecord",
    "TableWriter",
    "UnknownTableError",
    "WriterStats",
    "list_tables",
    "next_seq",
    "read_actions",
    "read_conversations",
    "read_messages",
    "read_nl_assertions",
    "read_predicates",
    "read_table",
    "rows_by_table",
    "schema_for",
    "write_rows",
]
