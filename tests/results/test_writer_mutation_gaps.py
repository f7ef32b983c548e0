"""The next attempt number is new in every table (issue 27, second mutation run:
``attempts_on_disk`` was only tried on runs whose first-written table had rows and whose
detail rows never ran ahead of their conversation rows). A reused attempt number would
make a retry's rows count together with the rows of the attempt it replaces."""

from __future__ import annotations

from tauray.results import TableWriter
from tauray.results.tables.writer import attempts_on_disk, write_records
from tests.results.test_tables import RUN, result


def test_a_run_without_predicate_rows_still_numbers_its_attempts(tmp_path):
    # predicate verdicts are written first; a domain without predicates leaves that table empty
    with TableWriter(tmp_path, RUN) as w:
        for cid in ("c0", "c1", "c1"):
            w.add(result(cid).model_copy(update={"predicates": []}))
    assert attempts_on_disk(tmp_path, RUN) == {"c0": 0, "c1": 1}


def test_detail_rows_of_a_killed_flush_count_even_when_a_later_table_is_behind(tmp_path):
    with TableWriter(tmp_path, RUN) as w:
        w.add(result("c0"))
    # the next attempt's messages landed, its conversation row never did (killed mid-flush)
    ahead = [m.model_copy(update={"attempt": 1}) for m in result("c0").messages]
    write_records(tmp_path, "messages", ahead, RUN)
    assert attempts_on_disk(tmp_path, RUN) == {"c0": 1}
