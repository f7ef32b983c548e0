"""With --json, stdout is the JSON document alone: what else a command's libraries print
while it runs (Ray's forwarded worker and raylet lines, a log handler bound to stdout, a
stray print) goes to stderr, and stdout parses as it is."""

from __future__ import annotations

import json
import logging
import sys

import pytest


@pytest.fixture()
def noisy_selection(monkeypatch):
    """Scenario selection that prints and logs to stdout, as Ray's log forwarding or
    litellm's logger do from inside a command; yields the logger (the test binds a
    handler to its stdout before the command runs, as a library does at import)."""
    import tauray.scenarios as scenarios

    logger = logging.getLogger("tests.noisy-library")
    logger.setLevel(logging.INFO)
    real = scenarios.select_scenarios

    def noisy(*args, **kwargs):
        print("(raylet) a line Ray forwards to the driver")
        logger.info("INFO a library's log line")
        return real(*args, **kwargs)

    monkeypatch.setattr(scenarios, "select_scenarios", noisy)
    yield logger
    logger.handlers.clear()


def test_json_stdout_holds_only_the_document(noisy_selection, capsys):
    from tauray.pipeline.cli.main import main

    handler = logging.StreamHandler(sys.stdout)
    noisy_selection.addHandler(handler)
    capsys.readouterr()
    assert main(["scenarios", "list", "tau2_mock__*", "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)  # the whole of stdout is one JSON document
    assert len(doc) == 9 and {e["domain"] for e in doc} == {"mock"}
    assert "(raylet) a line Ray forwards" in err and "a library's log line" in err
    assert handler.stream is sys.stdout  # the handler got its stream back


def test_nested_json_only_stdout_keeps_the_real_stdout_for_the_document(capsys):
    from tauray.pipeline.output import json_only_stdout, print_json

    capsys.readouterr()
    with json_only_stdout():
        print("noise")
        with json_only_stdout():  # nested: still the real stdout for the document
            print_json({"ok": True})
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": True} and err == "noise\n"


def test_without_json_stdout_is_left_alone(noisy_selection, capsys):
    from tauray.pipeline.cli.main import main

    noisy_selection.addHandler(logging.StreamHandler(sys.stdout))
    assert main(["scenarios", "list", "tau2_mock__*"]) == 0
    out, _ = capsys.readouterr()
    assert "(raylet) a line" in out and "a library's log line" in out and "tau2_mock__" in out
