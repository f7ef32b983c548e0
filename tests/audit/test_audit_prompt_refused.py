"""An audit prompt judges the customer; a conversation judge given one would score the
scenario's assertions against checks that mean nothing there, so every way of naming a
conversation judge refuses it with a pointer to `tauray audit --judge`."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tauray.pipeline.cli.main import main
from tauray.pipeline.config import JudgeEntry, JudgeGrid


@pytest.mark.parametrize("ref", ["sim-audit@1", "sim-audit@2", "sim-audit"])
def test_sweep_judges_refuse_an_audit_prompt(ref):
    with pytest.raises(ValidationError, match="tauray audit RUN --judge MODEL"):
        JudgeEntry(model="j", prompt=ref)
    with pytest.raises(ValidationError, match="user-simulator audit"):
        JudgeGrid(models=["j"], prompts=["overall-plain@1", ref])


def test_conversation_prompts_still_pass():
    assert JudgeEntry(model="j", prompt="overall-plain@1").prompt == "overall-plain@1"
    assert JudgeGrid(models=["j"], prompts=["nl-assertions@2"]).prompts == ["nl-assertions@2"]


def test_tauray_judge_refuses_an_audit_prompt(tmp_path, capsys):
    code = main(["judge", str(tmp_path), "--judge-model", "openai/x", "--prompt", "sim-audit@1"])
    assert code == 2
    assert "tauray audit RUN --judge MODEL --judge-prompt sim-audit@1" in capsys.readouterr().err
