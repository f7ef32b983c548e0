"""The audit in the loop: a run through the real driver writes who failed into every
conversation row (plain ``pd.read_parquet`` sees it), its findings tables when the run
ends, and the count in its summary; ``--no-audit`` leaves all of that out, and a later
``tauray audit`` shows through the readers."""

from __future__ import annotations

import json
import logging

import pandas as pd
from tauray.pipeline.cli.main import main
from tauray.results.audit import read_audit
from tauray.results.readers import conversations_df

SCENARIOS = ["tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
             "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card"]


def _run(out, endpoint, capsys, *extra):
    code = main(["run", *SCENARIOS, "--domain", "telecom",
                 "--agent-model", "openai/scripted-agent-writes", "--agent-api-base", endpoint.base_url,
                 "--agent-reference-steps", "--user-model", "openai/faulty-user:different_action:heldout",
                 "--user-api-base", endpoint.base_url, "--out", str(out), "--json", "--no-probe", *extra])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    return json.loads(stdout)


def test_every_row_says_who_failed_and_the_findings_land(ray_local, endpoint, tmp_path, capsys):
    out = tmp_path / "audited"
    summary = _run(out, endpoint, capsys)
    rows = pd.read_parquet(out / "conversations")
    assert len(rows) == summary["ran"] == 2
    assert list(rows["attribution"]) == ["simulator", "simulator"]
    assert set(rows["decisive_finding"]) == {"unasked_write@1"}
    assert summary["attributions"] == {"simulator": 2} and summary["audit_findings"] == 2
    findings = read_audit(out, "sim_findings").sort_values("conversation_id")
    # the row's decisive turn is the stored finding's: one audit, two places
    assert list(rows.sort_values("conversation_id")["decisive_turn"]) == list(findings["turn"])
    # the report marks the flagged message on each transcript page, and the audit page links to it
    from tauray.results.report import build_report

    build_report(out, tmp_path / "report")
    for f in findings.to_dict("records"):
        page = next((tmp_path / "report" / "transcripts").rglob(f"{f['conversation_id']}*.html")).read_text()
        assert page.count('class="flag" data-fault-class="different_action"') == 1
        assert f'id="seq-{f["message_seq"]}"' in page and "simulator (unasked_write@1 at turn" in page
    audit_page = (tmp_path / "report" / "audit.html").read_text()
    assert audit_page.count("#seq-") == 2
    assert 'data-agent="openai/scripted-agent-writes" data-raw-rank="1"' in audit_page


def test_no_audit_leaves_the_columns_empty_and_a_later_audit_shows_through(ray_local, endpoint, tmp_path, capsys):
    out = tmp_path / "plain"
    summary = _run(out, endpoint, capsys, "--no-audit")
    assert summary["attributions"] == {} and summary["audit_findings"] == 0
    assert pd.read_parquet(out / "conversations")["attribution"].isna().all()
    assert read_audit(out, "sim_attributions").empty
    assert conversations_df(out)["attribution"].isna().all()
    assert main(["audit", str(out), "--json"]) == 0
    capsys.readouterr()
    assert pd.read_parquet(out / "conversations")["attribution"].isna().all()  # rows are never rewritten
    shown = conversations_df(out)
    assert list(shown["attribution"]) == ["simulator", "simulator"]
    assert set(shown["decisive_finding"]) == {"unasked_write@1"}
    assert shown["decisive_turn"].notna().all()
    assert list(conversations_df(out, attribution="simulator")["conversation_id"]) == list(shown["conversation_id"])


def test_an_audit_that_breaks_keeps_the_conversation(monkeypatch, caplog):
    from tauray.actors.conversation import failed_result
    from tests.units import make_units
    from tauray.results.audit import inloop, runner

    unit = make_units("r", SCENARIOS[:1], 1, {"model": "oracle"}, {"model": "scripted"})[0]
    result = failed_result(unit, "infra", "no reply")
    assert inloop.audit_result(result).conversation.attribution == "harness"

    def broken(*_a, **_k):
        raise RuntimeError("detector bug")

    monkeypatch.setattr(runner, "audit_trajectory", broken)
    with caplog.at_level(logging.WARNING):
        kept = inloop.audit_result(result)
    assert kept == result and kept.conversation.attribution is None
    assert "detector bug" in caplog.text


def test_the_attribution_row_counts_findings_per_side():
    from datetime import UTC, datetime

    from tauray.results.audit import ConversationAudit, Finding
    from tauray.results.audit.runner import audit_rows

    def finding(side: str, seq: int) -> Finding:
        return Finding(detector=f"{side}_rule", detector_version=1, fault_class="x", blamed_side=side,
                       effect="outcome", tier="rule", turn=seq, message_seq=seq, evidence="e")

    keys = {"run_id": "r", "conversation_id": "c", "unit_id": "c", "attempt": 0, "scenario": SCENARIOS[0]}
    audit = ConversationAudit(keys=keys, user_model="u", success=False, attribution="mixed",
                              findings=(finding("agent", 1), finding("user", 2), finding("agent", 3)),
                              decisive=None, reason="both")
    (row,) = audit_rows([audit], "a1", datetime.now(UTC))["sim_attributions"]
    assert (row.findings, row.user_findings, row.agent_findings) == (3, 1, 2)
