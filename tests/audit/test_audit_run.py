"""End to end: conversations stored by the real writer, audited by ``tauray audit`` from the
tables alone; a faithful pair gives no finding, a faulty endpoint customer is found at the
turn the replay says it was injected, and the audit tables land next to the run's."""

from __future__ import annotations

import asyncio
import json
import re

from dev.calibration.measure import calibrate_path
from tauray.actors.audit.report import audit_accuracy
from tauray.actors.audit.summary import adjusted_success, faults_per_100
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.pipeline.cli.main import main
from tauray.pipeline.report import write_report
from tauray.results.tables.readers import sim_attributions_df, sim_findings_df
from tauray.results.tables.writer import TableWriter
from tests.units import make_units

SCENARIOS = ["tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
             "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card"]


def _store(out, run_id, agent, user, scenarios=SCENARIOS):
    units = make_units(run_id, scenarios, 1, agent, user)

    async def go():
        a, u = AgentHost(), UserSimHost()
        return await asyncio.gather(*(run_conversation(x, a, u) for x in units))

    with TableWriter(out, run_id) as writer:
        for result in asyncio.run(go()):
            writer.add(result)


def _audit_json(path, capsys, *extra):
    capsys.readouterr()  # the stored conversations' model calls may have logged to stdout
    assert main(["audit", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_reference_pair_has_no_finding(tmp_path, capsys):
    _store(tmp_path / "clean", "clean", {"model": "oracle"}, {"model": "scripted"})
    summary = _audit_json(tmp_path / "clean", capsys)
    assert summary["conversations"] == 2 and summary["findings"] == 0
    assert summary["attributions"] == {"none": 2}
    attributions = sim_attributions_df(tmp_path / "clean")
    assert len(attributions) == 2 and set(attributions["attribution"]) == {"none"}
    assert main(["audit", str(tmp_path / "clean"), "--no-write"]) == 0  # text output, nothing written
    assert "findings                     0" in capsys.readouterr().out


def test_faulty_customer_is_found_attributed_and_stored(tmp_path, capsys, endpoint):
    agent = {"model": "openai/scripted-agent-writes", "api_base": endpoint.base_url, "reference_steps": True}
    user = {"model": "openai/faulty-user:different_action:heldout", "api_base": endpoint.base_url}
    _store(tmp_path / "faulty", "faulty", agent, user)
    summary = _audit_json(tmp_path / "faulty", capsys)
    assert summary["findings_by_class"] == {"different_action": 2}
    findings = sim_findings_df(tmp_path / "faulty")
    assert list(findings["fault_class"]) == ["different_action"] * 2
    assert set(findings["detector"]) == {"unasked_write"} and set(findings["tier"]) == {"rule"}
    # replaying the recorded calls with the asked action instead of the wrong one passes: the fault decided it
    assert list(findings["flips_verdict"]) == [True, True]
    attributions = sim_attributions_df(tmp_path / "faulty")
    assert set(attributions["attribution"]) == {"simulator"}
    assert list(attributions["decisive_turn"]) == list(findings["turn"])
    calibration = calibrate_path(tmp_path / "faulty")
    assert calibration.replay_mismatches == 0
    assert calibration.classes["different_action"].recall.k == 2  # found at the replayed injection turn
    adjusted = adjusted_success(tmp_path / "faulty").iloc[0]
    assert (adjusted["raw_rate"], adjusted["simulator_failures"], adjusted["adjusted_rate"]) == (0.0, 2, None)
    assert faults_per_100(tmp_path / "faulty")["different_action"].tolist() == [100.0]
    write_report(tmp_path / "faulty", tmp_path / "report")
    page = (tmp_path / "report" / "audit.html").read_text()
    assert re.search(r'data-metric="raw_success"[^>]*data-value="0"', page)
    assert re.search(r'data-fault-class="different_action" data-value="100"', page)
    assert page.count('href="transcripts/') == 2  # the flagged turns link to their transcripts
    # the audit's measured accuracy (data/audit_accuracy.json) beside its findings, per injected fault
    accuracy = audit_accuracy()
    assert accuracy is not None and accuracy["split"] == "holdout"
    for row in accuracy["rows"]:
        assert f'<tr data-fault="{row["fault"]}">' in page
    # a re-audit supersedes the old one, and an audit that finds nothing still counts
    _audit_json(tmp_path / "faulty", capsys)
    assert len(sim_findings_df(tmp_path / "faulty")) == 2
    assert sim_attributions_df(tmp_path / "faulty")["audit_id"].nunique() == 1


def test_audit_of_a_folder_that_is_no_run_says_so(tmp_path, capsys):
    assert main(["audit", str(tmp_path)]) == 2
    assert "neither a run directory" in capsys.readouterr().err


def test_a_faulty_agent_is_blamed_at_its_turn_and_the_non_solving_agent_for_every_failure(tmp_path, capsys, endpoint):
    from dev.calibration.truth_agent import replay_agent
    from tauray.actors.audit.trajectory import trajectories
    from tauray.results.tables.readers import actions_df, conversations_df, messages_df

    agent = {"model": "openai/faulty-agent:premature_transfer:heldout", "api_base": endpoint.base_url,
             "reference_steps": True}
    user = {"model": "openai/scripted-user-writes", "api_base": endpoint.base_url}
    _store(tmp_path / "agent", "agent", agent, user)
    summary = _audit_json(tmp_path / "agent", capsys)
    assert summary["findings_by_class"] == {"premature_transfer": 2} and summary["attributions"] == {"agent": 2}
    findings = sim_findings_df(tmp_path / "agent")
    assert set(findings["blamed_side"]) == {"agent"} and set(findings["detector"]) == {"agent_early_exit"}
    path = tmp_path / "agent"
    truth = {t.keys["conversation_id"]: replay_agent(t).turn
             for t in trajectories(conversations_df(path), messages_df(path), actions_df(path))}
    attributions = sim_attributions_df(path)
    assert {r.conversation_id: r.decisive_turn for r in attributions.itertuples()} == truth
    # the endpoint's non-solving agent with the faithful customer: every failure is the agent's
    _store(tmp_path / "lazy", "lazy", {"model": "openai/scripted-agent", "api_base": endpoint.base_url}, user)
    summary = _audit_json(tmp_path / "lazy", capsys)
    rows = sim_attributions_df(tmp_path / "lazy")
    failed = rows[rows["success"] == False]
    assert len(failed) and set(failed["attribution"]) == {"agent"} and failed["user_findings"].sum() == 0


def test_an_ignored_request_is_corrected_by_doing_what_was_asked(tmp_path, capsys, endpoint):
    """The customer answers a request for a phone action with small talk; the writing agent moves
    on, so the action never happens: replaying the recorded calls with the asked call added where
    the request was ignored passes, so the failure is the simulator's, decided at that turn."""
    agent = {"model": "openai/scripted-agent-writes", "api_base": endpoint.base_url, "reference_steps": True}
    user = {"model": "openai/faulty-user:ignored_request:heldout", "api_base": endpoint.base_url}
    _store(tmp_path / "ignored", "ignored", agent, user)
    _audit_json(tmp_path / "ignored", capsys)
    findings = sim_findings_df(tmp_path / "ignored")
    assert set(findings["fault_class"]) == {"ignored_request"} and len(findings) == 2
    attributions = sim_attributions_df(tmp_path / "ignored").merge(
        findings[["conversation_id", "flips_verdict", "turn"]], on="conversation_id")
    failed = attributions[attributions["success"] == False]  # noqa: E712 - a nullable column
    assert len(failed) >= 1
    assert failed["flips_verdict"].tolist() == [True] * len(failed)
    assert set(failed["attribution"]) == {"simulator"}
    assert failed["decisive_turn"].tolist() == failed["turn"].tolist()
