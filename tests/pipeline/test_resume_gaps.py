"""What resume reads when a folder holds more than one run, and every error kind
(issue 27: reading every run's rows, or miscounting internal errors, passed)."""

from __future__ import annotations

from tauray.pipeline.resume import resume_state
from tauray.results import TableWriter
from tests.results.test_tables import RUN, result

OTHER = "run-other"


def test_resume_reads_only_its_own_run_and_counts_each_error_kind(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
        w.add(result("c1", success=None, error_kind="infra", error_message="provider down"))
        w.add(result("c2", success=None, error_kind="internal", error_message="bug"))
        w.add(result("c3", success=False, error_kind="model", error_message="bad reply"))
    with TableWriter(tmp_path, OTHER) as w:  # another run in the same folder
        w.add(result("c0", run_id=OTHER, success=None, error_kind="infra", error_message="x"))
        w.add(result("c9", run_id=OTHER))
        w.add(result("c9", run_id=OTHER))
    st = resume_state(tmp_path, RUN)
    assert st.done == {"c0", "c1", "c2", "c3"} and st.to_retry == set()
    assert (st.rows, st.attempts, st.infra_rows, st.internal_rows) == (4, 4, 1, 1)
    st = resume_state(tmp_path, RUN, retry_errors=True)
    assert st.done == {"c0", "c3"}  # a model error is a verdict on the model: not retried
    assert st.to_retry == {"c1", "c2"}
    other = resume_state(tmp_path, OTHER, retry_errors=True)
    assert other.done == {"c9"} and other.to_retry == {"c0"}
    assert (other.rows, other.attempts, other.infra_rows, other.internal_rows) == (2, 3, 1, 0)
    assert resume_state(tmp_path / "empty", RUN) == type(st)()  # no tables yet: nothing done
