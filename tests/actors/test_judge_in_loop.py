"""The coordinator judges a conversation right after scoring it when the unit names judges."""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.coordinator import CoordinatorHost
from tauray.actors.hosts import AgentHost, UserSimHost
from tests.units import make_units


def test_coordinator_calls_every_judge_config(endpoint):
    names = ["tau2_telecom__mobile_data_issue__data_mode_off"]
    unit = make_units("j", names, 1, {"model": "oracle"}, {"model": "scripted"})[0]
    judge = {"model": "openai/judge-good", "api_base": endpoint.base_url}
    unit = unit.model_copy(update={"judge_configs": [
        {"model": judge, "prompt": "overall-plain"},
        {"model": judge, "prompt": "overall-rubric", "samples": 3},
        {"model": judge, "prompt": "nl-assertions", "nl_pack": "telecom-agent-conduct"},
    ]})
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


def _dead_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: connections are refused


def _judged_unit(judge_gates: bool):
    names = ["tau2_telecom__mobile_data_issue__data_mode_off"]
    unit = make_units("j", names, 1, {"model": "oracle"}, {"model": "scripted"})[0]
    dead = {"model": "openai/judge-good", "api_base": f"http://127.0.0.1:{_dead_port()}/v1", "num_retries": 0}
    return unit.model_copy(update={"judge_configs": [{"model": dead, "prompt": "overall-plain", "samples": 2}],
                                   "judge_gates": judge_gates})


@pytest.mark.slow
def test_a_gating_judge_that_gets_no_reply_makes_an_infra_row_not_an_unscored_one():
    """The judge's outage says nothing about the agent: when the verdict waits on a judge that
    never answered, the row is infra (left out of rates, rerun by --retry-errors), not unscored."""
    from tauray.results.stats.outcomes import outcome

    coordinator = CoordinatorHost([AgentHost()], [UserSimHost()])
    c = asyncio.run(coordinator.run(_judged_unit(judge_gates=True))).conversation
    assert outcome(c.error_kind, c.success) == "infra", (c.error_kind, c.success, c.success_reason)
    assert "judge" in c.error_message and "2 of 2 samples" in c.error_message
    assert c.signal_judge_passed is None and c.judge_infra_errors == 2


@pytest.mark.slow
def test_a_diagnostic_judge_that_gets_no_reply_leaves_the_verdict_and_says_so():
    coordinator = CoordinatorHost([AgentHost()], [UserSimHost()])
    result = asyncio.run(coordinator.run(_judged_unit(judge_gates=False)))
    c = result.conversation
    assert c.success is True and c.error_kind is None  # the predicates decided; the judge only informs
    assert c.judge_infra_errors == 2 and "tauray judge" in c.error_message
    assert result.judge_verdicts == []


class _DyingJudge:
    """A judge whose actor died under the call."""

    async def judge(self, item):
        from ray.exceptions import ActorDiedError

        raise ActorDiedError()


def test_a_gating_judge_whose_actor_died_never_leaves_the_predicate_verdict_standing():
    """judge_gates asks for the judge's verdict too: when judging dies, success must not stay
    what the predicates alone said; the row is infra and names the death."""
    from tauray.results.stats.outcomes import outcome

    coordinator = CoordinatorHost([AgentHost()], [UserSimHost()], [_DyingJudge()])
    c = asyncio.run(coordinator.run(_judged_unit(judge_gates=True))).conversation
    assert outcome(c.error_kind, c.success) == "infra", (c.error_kind, c.success, c.success_reason)
    assert "ActorDiedError" in c.error_message and "JUDGE_PASSED" in c.gating_signals
