"""The audit in the loop: a run through the real driver audits each conversation once, on
the coordinator, and its rows (findings, one attribution) land with the conversation's
other rows, in one place: the audit tables, which ``conversations_df`` joins; the run's
summary counts them; ``--no-audit`` leaves all of that out, and a later ``tauray audit``
appends a newer audit that every reader then shows."""

from __future__ import annotations

import json
import logging

import pandas as pd

from tauray.actors.audit import INLOOP_AUDIT_ID
from tauray.pipeline.cli.main import main
from tauray.results.tables.readers import conversations_df, sim_attributions_df, sim_findings_df

SCENARIOS = ["tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
             "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card"]


def _run(out, endpoint, capsys, *extra):
    capsys.readouterr()  # what ran before in the test (a model call's log line) is not the command's
    code = main(["run", *SCENARIOS, "--domain", "telecom",
                 "--agent-model", "openai/scripted-agent-writes", "--agent-api-base", endpoint.base_url,
                 "--agent-reference-steps", "--user-model", "openai/faulty-user:different_action:heldout",
                 "--user-api-base", endpoint.base_url, "--out", str(out), "--json", "--no-probe", *extra])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    return json.loads(stdout)


def test_every_row_says_who_failed_and_the_findings_land(ray_local, endpoint, tmp_path, capsys, cli_json):
    out = tmp_path / "audited"
    summary = _run(out, endpoint, capsys)
    assert "attribution" not in pd.read_parquet(out / "conversations").columns  # one home: the audit's rows
    stored = pd.read_parquet(out / "sim_attributions")
    assert len(stored) == summary["ran"] == 2 and set(stored["audit_id"]) == {INLOOP_AUDIT_ID}  # audited once
    rows = conversations_df(out).sort_values("conversation_id")
    assert list(rows["attribution"]) == ["simulator", "simulator"]
    assert set(rows["decisive_finding"]) == {"unasked_write@1"}
    assert summary["attributions"] == {"simulator": 2} and summary["audit_findings"] == 2
    findings = sim_findings_df(out).sort_values("conversation_id")
    assert list(rows["decisive_turn"]) == list(findings["turn"])
    # the report marks the flagged message on each transcript page, and the audit page links to it
    from tauray.pipeline.report import write_report

    write_report(out, tmp_path / "report")
    for f in findings.to_dict("records"):
        page = next((tmp_path / "report" / "transcripts").rglob(f"{f['conversation_id']}*.html")).read_text()
        assert page.count('class="flag" data-fault-class="different_action"') == 1
        assert f'id="seq-{f["message_seq"]}"' in page and "simulator (unasked_write@1 at turn" in page
    audit_page = (tmp_path / "report" / "audit.html").read_text()
    assert audit_page.count("#seq-") == 2
    assert 'data-agent="openai/scripted-agent-writes" data-raw-rank="1"' in audit_page
    # a re-audit appends rows under a newer audit id, which every reader then shows (once per conversation)
    newer = cli_json("audit", str(out))["audit_id"]
    assert set(sim_attributions_df(out)["audit_id"]) == {newer} and len(sim_findings_df(out)) == 2
    assert len(sim_attributions_df(out, all_attempts=True)) == 4 and len(conversations_df(out)) == 2


def test_no_audit_leaves_the_columns_empty_and_a_later_audit_shows_through(ray_local, endpoint, tmp_path, capsys):
    out = tmp_path / "plain"
    summary = _run(out, endpoint, capsys, "--no-audit")
    assert summary["attributions"] == {} and summary["audit_findings"] == 0
    assert sim_attributions_df(out).empty and sim_findings_df(out).empty
    assert conversations_df(out)["attribution"].isna().all()
    before = pd.read_parquet(out / "conversations")
    assert main(["audit", str(out), "--json"]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(pd.read_parquet(out / "conversations"), before)  # rows are never rewritten
    shown = conversations_df(out)
    assert list(shown["attribution"]) == ["simulator", "simulator"]
    assert set(shown["decisive_finding"]) == {"unasked_write@1"}
    assert shown["decisive_turn"].notna().all()
    assert list(conversations_df(out, attribution="simulator")["conversation_id"]) == list(shown["conversation_id"])


def test_an_audit_that_breaks_keeps_the_conversation(monkeypatch, caplog):
    from tauray.actors.audit import inloop
    from tauray.actors.conversation import failed_result
    from tests.units import make_units

    unit = make_units("r", SCENARIOS[:1], 1, {"model": "oracle"}, {"model": "scripted"})[0]
    result = failed_result(unit, "infra", "no reply")
    (row,) = inloop.audit_result(result).sim_attributions
    assert row.attribution == "harness" and row.audit_id == INLOOP_AUDIT_ID

    def broken(*_a, **_k):
        raise RuntimeError("detector bug")

    monkeypatch.setattr(inloop, "audit_trajectory", broken)
    with caplog.at_level(logging.WARNING):
        kept = inloop.audit_result(result)
    assert kept == result and kept.sim_attributions == [] and kept.sim_findings == []
    assert "detector bug" in caplog.text


def test_the_attribution_row_counts_findings_per_side():
    from datetime import UTC, datetime

    from tauray.actors.audit import ConversationAudit, Finding
    from tauray.actors.audit.runner import audit_records

    def finding(side: str, seq: int) -> Finding:
        return Finding(detector=f"{side}_rule", detector_version=1, fault_class="x", blamed_side=side,
                       effect="outcome", tier="rule", turn=seq, message_seq=seq, evidence="e")

    keys = {"run_id": "r", "conversation_id": "c", "unit_id": "c", "attempt": 0, "scenario": SCENARIOS[0]}
    audit = ConversationAudit(keys=keys, user_model="u", success=False, attribution="mixed",
                              findings=(finding("agent", 1), finding("user", 2), finding("agent", 3)),
                              decisive=None, reason="both")
    findings, row = audit_records(audit, "a1", datetime.now(UTC), ["user_rule@1", "agent_rule@1"])
    assert (row.findings, row.user_findings, row.agent_findings) == (3, 1, 2) and len(findings) == 3
    assert row.detectors == ["user_rule@1", "agent_rule@1"] and {f.audit_id for f in findings} == {"a1"}
