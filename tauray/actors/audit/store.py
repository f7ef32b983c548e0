"""Where a re-audit lands: its rows appended to the audited run's directory.

The audit made in the loop travels inside each ``ConversationResult`` and the run's writer
stores it with the other detail tables; ``tauray audit`` appends part files (never rewrites
one) under the run's lock, so it cannot interleave with a writer of the same run. Every row
carries its ``audit_id``; readers keep each conversation's newest audit, so re-auditing with
new rule versions supersedes the old findings without deleting them.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tauray.results.tables.layout import next_seq, part_name, table_dir
from tauray.results.tables.lock import RunLock
from tauray.results.tables.records import SimAttributionRecord, SimFindingRecord
from tauray.results.tables.schemas import schema_for
from tauray.results.tables.writer import commit_file


def write_audit(run_dir: Path | str, run_id: str, findings: list[SimFindingRecord],
                attributions: list[SimAttributionRecord]) -> dict[str, int]:
    """Write one audit's rows of one run (both tables, even when empty): rows per table."""
    run_dir = Path(run_dir)
    written = {}
    with RunLock(run_dir):
        seq = next_seq(run_dir, run_id)
        for table, rows in (("sim_findings", findings), ("sim_attributions", attributions)):
            if any(r.run_id != run_id for r in rows):
                raise ValueError(f"{table} rows of another run than {run_id!r}")
            arrow = pa.Table.from_pylist([r.model_dump() for r in rows], schema=schema_for(table))
            commit_file(table_dir(run_dir, table) / part_name(run_id, seq), arrow)
            written[table] = len(rows)
    return written


__all__ = ["write_audit"]
