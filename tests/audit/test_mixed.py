"""Attribution on a mixed set, end to end: conversations of faulty endpoint agents, faulty
customers and both, stored by the real writer, audited from the tables, and compared with
the replayed behaviours' ground truth (never with the detectors)."""

from __future__ import annotations

import asyncio

from dev.calibration import mixed
from dev.calibration.truth_agent import replay_agent
from tauray.actors.audit.trajectory import trajectories
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.results.tables.readers import actions_df, conversations_df, messages_df
from tauray.results.tables.writer import TableWriter
from tests.units import make_units

# every one has an agent write and a customer action: both sides can err
SCENARIOS = ["tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded__user_abroad_roaming_disabled_off__persona_hard",
             "tau2_telecom__service_issue__airplane_mode_on__overdue_bill_suspension",
             "tau2_telecom__mobile_data_issue__airplane_mode_on__data_saver_mode_on__user_abroad_roaming_disabled_on"]


def _store(out, run_id, endpoint, agent, user):
    a = {"model": f"openai/{agent}", "api_base": endpoint.base_url, "reference_steps": True}
    u = {"model": f"openai/{user}", "api_base": endpoint.base_url}
    units = make_units(run_id, SCENARIOS, 1, a, u)

    async def go():
        return await asyncio.gather(*(run_conversation(x, AgentHost(), UserSimHost()) for x in units))

    with TableWriter(out / run_id, run_id) as writer:
        for result in asyncio.run(go()):
            writer.add(result)
    return out / run_id


def _trajectories(path):
    return trajectories(conversations_df(path), messages_df(path), actions_df(path))


def test_expected_attribution_rules():
    assert mixed.expected_of(True, 3, 5, None) == ("none", None)
    assert mixed.expected_of(False, 3, None, None) == ("agent", 3)
    assert mixed.expected_of(False, None, 5, None) == ("simulator", 5)
    assert mixed.expected_of(False, 3, 5, (True, False)) == ("agent", 3)
    assert mixed.expected_of(False, 3, 5, (False, True)) == ("simulator", 5)
    assert mixed.expected_of(False, 7, 5, (True, True)) == ("mixed", 5)
    assert mixed.expected_of(False, 7, 5, (False, False)) == ("mixed", 5)


def test_the_agents_replay_finds_the_injected_turn(tmp_path, endpoint):
    run = _store(tmp_path, "skip", endpoint, "faulty-agent:wrong_arguments", "scripted-user-writes")
    truths = [replay_agent(t) for t in _trajectories(run)]
    assert all(x.mismatch is None and x.committed for x in truths), truths
    clean = _store(tmp_path, "clean", endpoint, "scripted-agent-writes", "scripted-user-writes")
    assert [replay_agent(t).fault for t in _trajectories(clean)] == [None] * 3


def test_side_and_turn_on_each_cell(tmp_path, endpoint):
    runs = [_store(tmp_path, "agent", endpoint, "faulty-agent:skipped_write", "scripted-user-writes"),
            _store(tmp_path, "user", endpoint, "scripted-agent-writes", "faulty-user:different_action"),
            _store(tmp_path, "both", endpoint, "faulty-agent:wrong_arguments", "faulty-user:different_action"),
            _store(tmp_path, "none", endpoint, "scripted-agent-writes", "scripted-user-writes")]
    items = []
    for run in runs:
        found, mismatches, _, _ = mixed.cases(run, endpoint.base_url)
        assert mismatches == 0
        items += found
    figures = mixed.figures(items)
    assert {c: figures.cells[c].conversations > 0 for c in mixed.CELLS} == dict.fromkeys(mixed.CELLS, True)
    wrong = [c for c in items if c.attribution != c.expected or (c.expected != "none" and c.decisive_turn != c.expected_turn)]
    assert not wrong, wrong
    assert figures.side.k == figures.side.n and figures.turn.k == figures.turn.n
    assert {c.expected for c in items if c.cell == "agent"} == {"agent"}
    assert {c.attribution for c in items if c.cell == "none"} == {"none"}
