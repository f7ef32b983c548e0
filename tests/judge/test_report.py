"""judge-report on a hand-checked fixture: every figure below was worked out by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tauray.pipeline.judge_cmd import main as judge_main
from tauray.pipeline.judge_report import judge_report, wilson
from tauray.results.records import ConversationRecord, JudgeVerdictRecord
from tauray.results.writer import write_rows

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _conversation(cid: str, truth: bool | None, error: bool = False) -> ConversationRecord:
    fields = {name: None for name in ConversationRecord.model_fields}
    counts = {n: 0 for n, f in ConversationRecord.model_fields.items() if f.annotation is int or "Count" in str(f)}
    fields |= counts | dict(
        run_id="fx", conversation_id=cid, scenario="s", domain="telecom", upstream_id="u", policy_variant="manual",
        agent_model="a", agent_kind="llm", user_model="u", user_kind="llm", trial=0, seed=0,
        termination_reason="user_stop", success=truth, success_reason="r", gating_signals=["DB_STATE_ASSERTION"],
        excluded_signals=[], signal_db_state_assertion=truth, started_at=NOW, duration_s=1.0,
        error_kind="infra" if error else None, tauray_version="x", upstream_version="y")
    return ConversationRecord(**fields)


def _verdicts(config: str, model: str, cid: str, samples: list[bool | None]) -> list[JudgeVerdictRecord]:
    return [JudgeVerdictRecord(
        run_id="fx", conversation_id=cid, scenario="s", judge_model=model, prompt_id="p", prompt_version="1",
        prompt_hash="h", judge_config_id=config, transcript_hash="t", sample_index=i, passed=v, majority=None,
        agreement=None, unscored_reason=None if v is not None else "empty reply", reasoning=None, raw_output=None,
        prompt_tokens=0, completion_tokens=0, cost_usd=None, latency_s=None, created_at=NOW)
        for i, v in enumerate(samples)]


T, F, N = True, False, None
# conversation: (ground truth, judge A's three samples)
FIXTURE = {
    "tp1": (T, [T, T, T]), "tp2": (T, [T, T, T]), "tp3": (T, [T, T, F]), "tp4": (T, [T, T, T]),
    "tn1": (F, [F, F, F]), "tn2": (F, [F, F, F]), "tn3": (F, [F, T, F]),
    "fp1": (F, [T, T, T]),
    "fn1": (T, [F, F, F]), "fn2": (T, [F, F, F]),
    "tie": (T, [T, F, N]),          # a tie: unscored
    "none": (F, [N, N, N]),         # nothing scored: unscored
}


@pytest.fixture()
def fixture_run(tmp_path):
    out = tmp_path / "fx"
    convs = [_conversation(c, truth) for c, (truth, _) in FIXTURE.items()]
    convs.append(_conversation("err", None, error=True))
    write_rows(out, "conversations", convs, "fx")
    rows = [r for c, (_, s) in FIXTURE.items() for r in _verdicts("A", "judge-a", c, s)]
    rows += _verdicts("A", "judge-a", "err", [T, T, T])  # no ground truth: left out
    rows += [r for c, (truth, _) in FIXTURE.items() for r in _verdicts("B", "judge-b", c, [truth])]
    write_rows(out, "judge_verdicts", rows, "fx")
    return out


def test_metrics_match_the_hand_computation(fixture_run):
    report = judge_report(fixture_run)
    a = next(j for j in report["judges"] if j["judge_config_id"] == "A")
    assert (a["tp"], a["tn"], a["fp"], a["fn"]) == (4, 3, 1, 2)
    assert a["n"] == 10 and a["with_truth"] == 12 and a["unscored"] == 2
    assert a["unscored_rate"] == pytest.approx(2 / 12)
    assert a["accuracy"] == pytest.approx(0.7)
    assert a["accuracy_ci"] == pytest.approx((0.3968, 0.8922), abs=1e-4)     # Wilson 7/10
    assert a["sensitivity"] == pytest.approx(4 / 6)
    assert a["sensitivity_ci"] == pytest.approx((0.3000, 0.9032), abs=1e-4)  # Wilson 4/6
    assert a["specificity"] == pytest.approx(0.75)
    assert a["specificity_ci"] == pytest.approx((0.3006, 0.9544), abs=1e-4)  # Wilson 3/4
    # kappa: po = .7, judge passes 5/10, truth passes 6/10, pe = .5*.6 + .5*.4 = .5 -> (.7-.5)/.5
    assert a["kappa"] == pytest.approx(0.4)
    # SE = sqrt(po(1-po) / (n (1-pe)^2)) = sqrt(.21/2.5) = .28983
    assert a["kappa_ci"] == pytest.approx((0.4 - 1.95996 * 0.289828, 0.4 + 1.95996 * 0.289828), abs=1e-4)
    # a property of the judge alone, so over every judged item with >= 2 scored samples (12, the
    # no-truth one included): 9 unanimous, 2 split 2-1, the tie 0.5
    assert a["self_consistency"] == pytest.approx((9 * 1 + 2 * 2 / 3 + 0.5) / 12)
    assert a["sample_unscored_rate"] == pytest.approx(4 / 39)
    b = next(j for j in report["judges"] if j["judge_config_id"] == "B")
    assert b["accuracy"] == 1.0 and b["kappa"] == 1.0 and b["unscored_rate"] == 0.0 and b["self_consistency"] is None
    inter = report["inter_judge"]
    # Fleiss over the 10 items both scored: p_pass = 11/20, pe = .55^2 + .45^2 = .505, P-bar = .7
    assert inter["items_all_scored"] == 10
    assert inter["fleiss_kappa"] == pytest.approx((0.7 - 0.505) / 0.495)
    [pair] = inter["pairs"]
    assert pair["kappa"] == pytest.approx(0.4) and pair["agreement"] == pytest.approx(0.7)
    assert pair["flips"] == {"pass": {"pass": 4, "fail": 1, "unscored": 0},
                             "fail": {"pass": 2, "fail": 3, "unscored": 0},
                             "unscored": {"pass": 1, "fail": 1, "unscored": 0}}


def test_wilson_against_the_closed_form():
    # Independent form: roots of (p - x)^2 = z^2 x (1 - x) / n
    for k, n in [(0, 5), (5, 5), (7, 10), (123, 400)]:
        z, p = 1.959963984540054, k / n
        a, b, c = 1 + z * z / n, -(2 * p + z * z / n), p * p
        disc = (b * b - 4 * a * c) ** 0.5
        assert wilson(k, n) == pytest.approx(((-b - disc) / (2 * a), (-b + disc) / (2 * a)), abs=1e-12)
    assert wilson(0, 0) is None


def test_cli_report_json(fixture_run, capsys):
    assert judge_main(["judge-report", str(fixture_run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for j in report["judges"]:
        for key in ("judge_model", "prompt_id", "n", "accuracy", "kappa", "sensitivity", "specificity",
                    "unscored_rate", "accuracy_ci", "kappa_ci", "sensitivity_ci", "specificity_ci"):
            assert key in j
    assert judge_main(["judge-report", str(fixture_run)]) == 0
    assert "kappa 0.400" in capsys.readouterr().out
