"""Where a run lands: result records, declared table schemas, the writer, and the
one way in: one reader per table (``conversations_df`` ... ``cells_df``)."""

from tauray.results.stats import (
    analysis,  # noqa: E402  (pandas helpers: `from tauray.results import metrics`)
    metrics,
)
from tauray.results.tables.layout import run_dirs
from tauray.results.tables.lock import RunLock, RunLockedError
from tauray.results.tables.readers import (
    actions_df,
    cells_df,
    conversations_df,
    judge_verdicts_df,
    list_tables,
    messages_df,
    nl_verdicts_df,
    predicates_df,
    segments_df,
    sim_attributions_df,
    sim_findings_df,
    table_df,
    utterances_df,
)
from tauray.results.tables.records import (
    TABLES,
    ActionRecord,
    CellRecord,
    ConversationRecord,
    ConversationResult,
    JudgeVerdictRecord,
    MessageRecord,
    NLAssertionRecord,
    PredicateRecord,
    records_by_table,
)
from tauray.results.tables.schemas import SCHEMAS, UnknownTableError, schema_for
from tauray.results.tables.writer import (
    WRITE_ORDER,
    TableWriter,
    WriterStats,
    write_records,
)

__all__ = [
    "analysis",
    "metrics",
    "SCHEMAS",
    "TABLES",
    "WRITE_ORDER",
    "ActionRecord",
    "CellRecord",
    "ConversationRecord",
    "ConversationResult",
    "JudgeVerdictRecord",
    "MessageRecord",
    "NLAssertionRecord",
    "PredicateRecord",
    "RunLock",
    "RunLockedError",
    "TableWriter",
    "UnknownTableError",
    "WriterStats",
    "actions_df",
    "cells_df",
    "segments_df",
    "utterances_df",
    "conversations_df",
    "judge_verdicts_df",
    "sim_attributions_df",
    "sim_findings_df",
    "list_tables",
    "messages_df",
    "nl_verdicts_df",
    "predicates_df",
    "records_by_table",
    "run_dirs",
    "schema_for",
    "table_df",
    "write_records",
]
