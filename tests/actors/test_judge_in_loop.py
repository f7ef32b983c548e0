"""The coordinator judges a conversation right after scoring it when the unit names judges."""

from __future__ import annotations

import asyncio

from tauray.actors.coordinator import CoordinatorHost
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.pipeline.units import make_units


def test_coordinator_calls_every_judge_config(endpoint):
    names = ["tau2_telecom__mobile_data_issue__data_mode_off"]
    unit = make_units("j", names, 1, {"model": "oracle"}, {"model": "scripted"}, 100, 10)[0].model_dump()
    judge = {"model": "openai/judge-good", "api_base": endpoint.base_url}
    unit["judge_configs"] = [
        {"model": judge, "prompt": "overall-plain"},
        {"model": judge, "prompt": "overall-rubric", "samples": 3},
        {"model": judge, "prompt": "nl-assertions", "nl_pack": "telecom-agent-conduct"},
    ]
    coordinator = CoordinatorHost([AgentHost()], [UserSimHost()])
    result = asyncio.run(coordinator.run(unit))
    c = result.conversation
    assert c.success is True and c.error_kind is None
    verdicts = result.judge_verdicts
    assert len(verdicts) == 1 + 3
    assert {v.prompt_id for v in verdicts} == {"overall-plain", "overall-rubric"}
    assert all(v.passed is True for v in verdicts)  # judge-good reads the predicate outcome markers
    assert c.signal_judge_passed is True
    assert result.nl_assertions and all(r.prompt_id == "nl-assertions" for r in result.nl_assertions)
    assert c.judge_prompt_tokens > 0
    # telecom has no NL assertions of its own: NL_ASSERTION does not gate; a pack only adds diagnostics
    assert "NL_ASSERTION" not in c.gating_signals
