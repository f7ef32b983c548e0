"""The measurement script the lead runs on the holdout split (tests/audit_eval/measure.py): it takes
any split the evaluation set loads, measures each telecom task once over all three families, and
reaches the issue's 100 injected faults per class with a documented --n."""

from __future__ import annotations

import pytest

from tauray.scenarios.registry import default_registry
from tests.audit_eval import measure


def test_the_split_is_whatever_the_evaluation_set_loads_and_reaches_every_customer_model(monkeypatch, capsys) -> None:
    """measure.py hard-coded ``--split dev|test`` (argparse choices): a new split could not be measured."""
    monkeypatch.setattr(measure, "load", lambda name: ("a phrasing",) if name == "holdout" else ())
    config = measure.sweep("x", "http://127.0.0.1:1/v1", "holdout", {"mms_issue": ["s1"]}, "oracle",
                           ["misreport"], 1, 2)
    assert sorted(m["model"] for k, m in config["models"].items() if k.startswith("u-")) == [
        "openai/eval-user:holdout:faithful", "openai/eval-user:holdout:misreport"]
    assert measure._split("holdout") == "holdout"
    with pytest.raises(SystemExit):
        measure.main(["--split", "nosuch", "--out", "/tmp/unused-audit-eval", "--measure-only"])
    assert "--split 'nosuch'" in capsys.readouterr().err


def test_each_task_is_measured_once_over_all_three_families_and_lists_that_share_tasks() -> None:
    """The base and train lists share tasks, and every task has two policy variants: the first n
    scenarios of a list measured some tasks twice."""
    chosen = measure.tasks(list(measure.FAMILIES), 80, ["base", "train", "full"])
    registry = default_registry()
    ids = [registry.entry(name).upstream_id for names in chosen.values() for name in names]
    assert len(ids) == len(set(ids))
    assert {f: len(v) for f, v in chosen.items()} == {"mms_issue": 80, "mobile_data_issue": 80, "service_issue": 47}
    variants = {registry.entry(name).policy_variant for name in chosen["mms_issue"]}
    assert len(variants) == 2


def test_the_non_solving_agent_runs_only_the_classes_it_can_see_committed() -> None:
    config = measure.sweep("x", "http://127.0.0.1:1/v1", "dev", {"mms_issue": ["s1"]}, "scripted",
                           list(measure.SCRIPTED_CLASSES), 1, 2)
    assert config["agents"] == ["a-scripted"] and len(config["users"]) == 1 + len(measure.SCRIPTED_CLASSES)
