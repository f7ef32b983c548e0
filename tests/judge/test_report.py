"""judge-report on a hand-checked fixture: every figure below was worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tauray.pipeline.cli.main import main as judge_main
from tauray.results.stats.judges import judge_report
from tauray.results.stats.metrics import wilson_interval as wilson
from tauray.results.tables.records import ConversationRecord, JudgeVerdictRecord
from tauray.results.tables.writer import write_records

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _conversation(cid: str, truth: bool | None, error: bool = False) -> ConversationRecord:
    fields = {name: None for name, f in ConversationRecord.model_fields.items() if f.is_required()}
    fields |= {"unit_id": cid} if "unit_id" in fields else {}
    counts = {n: 0 for n, f in ConversationRecord.model_fields.items() if f.annotation is int or "Count" in str(f)}
    fields |= counts | dict(
        run_id="fx", conversation_id=cid, scenario="s", domain="telecom", upstream_id="u", policy_variant="manual",
        agent_model="a", agent_kind="llm", user_model="u", user_kind="llm", trial=0, seed=0,
        termination_reason="user_stop", success=truth, success_reason="r", gating_signals=["DB_STATE_ASSERTION"],
        excluded_signals=[], signal_db_state_assertion=truth, started_at=NOW, duration_s=1.0,
        error_kind="infra" if error else None, tauray_version="x", upstream_version="y")
    return ConversationRecord(**fields)


PROVENANCE = dict(judge_api_base=None, judge_temperature=0.0, judge_seed=None, judge_max_tokens=None,
                  judge_extra_params="{}", structured="auto", response_format_sent=False, nl_pack=None,
                  nl_pack_hash=None, context_hash="c")


def _verdicts(config: str, model: str, cid: str, samples: list[bool | None], transcript: str = "t",
              at: datetime = NOW) -> list[JudgeVerdictRecord]:
    scored = sum(v is not None for v in samples)
    return [JudgeVerdictRecord(
        run_id="fx", conversation_id=cid, scenario="s", judge_model=model, prompt_id="p", prompt_version="1",
        prompt_hash="h", judge_config_id=config, transcript_hash=transcript, sample_index=i, passed=v, majority=None,
        agreement=None, scored_samples=scored, item_samples=len(samples), unscored_share=1 - scored / len(samples),
        unscored_reason=None if v is not None else "empty reply", reasoning=None, raw_output=None,
        prompt_tokens=0, completion_tokens=0, cost_usd=None, latency_s=None, created_at=at, **PROVENANCE)
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
    write_records(out, "conversations", convs, "fx")
    rows = [r for c, (_, s) in FIXTURE.items() for r in _verdicts("A", "judge-a", c, s)]
    rows += _verdicts("A", "judge-a", "err", [T, T, T])  # no ground truth: left out
    rows += [r for c, (truth, _) in FIXTURE.items() for r in _verdicts("B", "judge-b", c, [truth])]
    write_records(out, "judge_verdicts", rows, "fx")
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
    # interval: at least the Wilson interval of po = 7/10 mapped at pe = .5, i.e. ((.3968-.5)/.5, (.8922-.5)/.5),
    # widened by the bootstrap over conversations where that is wider; reproducible (fixed seed)
    lo, hi = a["kappa_ci"]
    assert lo <= (0.39676 - 0.5) / 0.5 + 1e-4 and hi >= (0.89224 - 0.5) / 0.5 - 1e-4 and -1 <= lo and hi <= 1
    assert judge_report(fixture_run)["judges"][0]["kappa_ci"] == a["kappa_ci"]
    # a property of the judge alone, so over every judged item with >= 2 scored samples (12, the
    # no-truth one included): 9 unanimous, 2 split 2-1, the tie 0.5
    assert a["self_consistency"] == pytest.approx((9 * 1 + 2 * 2 / 3 + 0.5) / 12)
    assert a["sample_unscored_rate"] == pytest.approx(4 / 39)
    b = next(j for j in report["judges"] if j["judge_config_id"] == "B")
    assert b["accuracy"] == 1.0 and b["kappa"] == 1.0 and b["unscored_rate"] == 0.0 and b["self_consistency"] is None
    assert b["kappa_ci"][1] == 1.0 and b["kappa_ci"][0] < 0.9  # perfect agreement on 12 items is not certainty
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
    assert all(x != x for x in wilson(0, 0))  # nan: no interval without items


def test_cli_report_json(fixture_run, capsys, cli_json):
    report = cli_json("judge-report", str(fixture_run))
    for j in report["judges"]:
        for key in ("judge_model", "prompt_id", "n", "accuracy", "kappa", "sensitivity", "specificity",
                    "unscored_rate", "accuracy_ci", "kappa_ci", "sensitivity_ci", "specificity_ci"):
            assert key in j
    assert judge_main(["judge-report", str(fixture_run)]) == 0
    assert "kappa 0.400" in capsys.readouterr().out


def test_perfect_agreement_on_a_tiny_fixture_is_not_a_point(tmp_path, capsys):
    """Two conversations, the judge right on both: kappa 1, but its interval keeps a width."""
    out = tmp_path / "tiny"
    write_records(out, "conversations", [_conversation("c1", True), _conversation("c2", False)], "fx")
    write_records(out, "judge_verdicts", [*_verdicts("J", "judge-j", "c1", [T]), *_verdicts("J", "judge-j", "c2", [F])],
               "fx")
    [j] = judge_report(out)["judges"]
    assert j["n"] == 2 and j["kappa"] == 1.0
    lo, hi = j["kappa_ci"]
    assert hi == 1.0 and lo < 0.0  # Wilson(2/2) = [.342, 1] at pe = .5 -> [-.317, 1]
    assert lo == pytest.approx((wilson(2, 2)[0] - 0.5) / 0.5)
    assert judge_main(["judge-report", str(out)]) == 0
    assert "kappa 1.000 [-0.32,1.00]" in capsys.readouterr().out


def test_samples_of_different_renderings_are_not_merged(tmp_path):
    """Judging keys samples on the transcript hash; so does the report. Before, [pass, pass] of one rendering and
    [fail, fail, fail] of another merged into one 'conversation' with a 3-2 majority for fail."""
    out = tmp_path / "renderings"
    later = datetime(2025, 1, 2, tzinfo=UTC)
    write_records(out, "conversations", [_conversation("c1", True), _conversation("c2", False)], "fx")
    rows = [*_verdicts("J", "judge-j", "c1", [T, T], transcript="old"),
            *_verdicts("J", "judge-j", "c1", [F, F, F], transcript="new", at=later),
            *_verdicts("J", "judge-j", "c2", [F, F], transcript="old")]
    write_records(out, "judge_verdicts", rows, "fx")
    [j] = judge_report(out)["judges"]
    assert j["items"] == 3 and j["conversations"] == 2 and j["conversations_with_several_renderings"] == 1
    assert j["self_consistency"] == 1.0  # every rendering's samples agree among themselves
    assert (j["tp"], j["fn"], j["tn"]) == (0, 1, 1)  # c1 stands as its latest rendering's verdict (fail)
