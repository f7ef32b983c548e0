"""judge-report shows where a judge's unscored items fall on the ground truth, and why: a judge that
leaves honest fails unscored more often than honest passes shifts what a run reports about it."""

from __future__ import annotations

import pytest

from tauray.pipeline.cli.main import main as judge_main
from tauray.results.stats.judges import judge_report
from tauray.results.stats.metrics import unscored_by_truth, unscored_reason_class
from tauray.results.tables.writer import write_records
from tests.judge.test_report import _conversation, _verdicts

AMBIGUOUS = "ambiguous: verdict='fail' but issue_resolved=True in one object at char 0"


def _run(tmp_path):
    out = tmp_path / "lopsided"
    truth = {f"s{i}": True for i in range(10)} | {f"f{i}": False for i in range(10)}
    write_records(out, "conversations", [_conversation(c, t) for c, t in truth.items()], "fx")
    rows = []
    for c, t in truth.items():
        # L: scores every success, leaves 6 of 10 failures unscored as ambiguous; E: one unscored on each side
        lopsided = None if c in ("f0", "f1", "f2", "f3", "f4", "f5") else t
        rows += [r.model_copy(update={"unscored_reason": AMBIGUOUS}) if r.passed is None else r
                 for r in _verdicts("L", "judge-lopsided", c, [lopsided])]
        rows += _verdicts("E", "judge-even", c, [None if c in ("s0", "f0") else t])
    write_records(out, "judge_verdicts", rows, "fx")
    return out


def test_lopsided_unscored_items_are_shown(tmp_path, capsys):
    report = judge_report(_run(tmp_path))
    lop = next(j for j in report["judges"] if j["judge_config_id"] == "L")["unscored_by_truth"]
    assert (lop["success"]["unscored"], lop["success"]["items"]) == (0, 10)
    assert (lop["failure"]["unscored"], lop["failure"]["items"]) == (6, 10)
    assert lop["gap"] == pytest.approx(-0.6)
    assert lop["failure"]["reasons"] == {"ambiguous": 6}
    even = next(j for j in report["judges"] if j["judge_config_id"] == "E")["unscored_by_truth"]
    assert even["gap"] == pytest.approx(0.0) and even["success"]["reasons"] == {"empty reply": 1}
    assert judge_main(["judge-report", str(tmp_path / "lopsided")]) == 0
    text = capsys.readouterr().out
    print(text)
    assert "unscored by truth: success 0.000 (0/10)  failure 0.600 (6/10; ambiguous 6)  gap -0.600" in text


def test_reason_classes_and_ties():
    assert unscored_reason_class("reply JSON starting at char 12 could not be decoded: x") == (
        "reply JSON could not be decoded")
    assert unscored_reason_class("no 'verdict' key in the reply's JSON (top-level keys: passed)") == (
        "no '…' key in the reply's JSON")
    u = unscored_by_truth({"a": None, "b": True, "c": None}, {"a": True, "b": True, "c": False})
    assert u["success"]["reasons"] == {"tie among scored samples": 1} and u["gap"] == pytest.approx(-0.5)
