"""docs/tables.md is generated from the records; it must not drift."""

from pathlib import Path

from tauray.results.tables.schemas import schema_markdown


def test_tables_doc_is_current():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "tables.md").read_text()
    assert schema_markdown() in doc, "docs/tables.md is stale: run `make docs`"
