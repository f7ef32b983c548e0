"""The audit's accuracy as shipped (data/audit_accuracy.json, shown on the report's audit page) is the
measurement docs/audit.md publishes: a figure changed in one place and not the other fails here."""

from __future__ import annotations

import json
from pathlib import Path

from tauray.actors.audit.report import audit_accuracy

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_accuracy_is_the_documented_holdout_measurement():
    record = json.loads((ROOT / "tauray" / "data" / "audit_accuracy.json").read_text(encoding="utf-8"))
    doc = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    assert record["split"] == "holdout" and record["date"] in doc
    assert "--split holdout" in record["command"]
    for fault, r in record["recall"].items():
        assert r["n"] >= 100, fault  # the floor per class
        assert f"{r['k']:,}/{r['n']:,} = {r['k'] / r['n']:.3f} [{r['low']:.3f}, {r['high']:.3f}]" in doc, fault
    total = record["recall_all"]
    assert f"{total['k']:,}/{total['n']:,} = {total['k'] / total['n']:.3f}" in doc
    for agent, r in record["false_positives"].items():
        assert f"{r['k']}/{r['n']} [{r['low']:.3f}, {r['high']:.3f}]" in doc, agent
    a = record["attribution_simulator"]
    assert f"{a['k']}/{a['n']} = {a['k'] / a['n']:.3f} [{a['low']:.3f}, {a['high']:.3f}]" in doc


def test_the_page_reads_it_as_shipped():
    accuracy = audit_accuracy()
    assert accuracy is not None and accuracy["conversations"] > 0
    assert {r["fault"] for r in accuracy["rows"]} >= {"misreport", "state_without_tool", "new_problem"}
    assert all(0.0 <= r["recall"] <= 1.0 for r in accuracy["rows"])
