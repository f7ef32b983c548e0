"""Re-judging a stored run through the command line: row counts, idempotence, the report."""

from __future__ import annotations

import asyncio
import json

import pytest

from tauray.actors.judge import JudgeConfig
from tauray.actors.judge.prompts import get_pack
from tauray.pipeline.accounting import judge_calls_by_model
from tauray.pipeline.cli.main import main as judge_main
from tauray.pipeline.judging import rejudge
from tauray.pipeline.report import write_report
from tauray.results import conversations_df, judge_verdicts_df, nl_verdicts_df
from tauray.results.stats.metrics import wilson_interval as wilson


@pytest.fixture(scope="module")
def mixed_run(endpoint, tmp_path_factory):
    """20 solved conversations (oracle) and 20 failed ones (a text-only agent behind the endpoint)
    in one run directory; run in-process, the way a coordinator runs them, to keep the suite fast."""
    from tauray.actors.conversation import run_conversation
    from tauray.actors.hosts import AgentHost, UserSimHost
    from tauray.results.tables.writer import TableWriter
    from tauray.scenarios import select_scenarios
    from tests.units import make_units

    out = tmp_path_factory.mktemp("judge") / "run"
    names = [e.name for e in select_scenarios(domain="telecom", split="small", variant="manual")]
    spec = {"api_base": endpoint.base_url}
    units = {
        "good": make_units("good", names, 1, {"model": "oracle"}, {"model": "scripted"}),
        "bad": make_units("bad", names, 1, {"model": "openai/scripted-agent-quiet", **spec},
                          {"model": "openai/scripted-user:1", **spec}),
    }
    agent, user = AgentHost(), UserSimHost()

    async def main():
        return {run: await asyncio.gather(*(run_conversation(u, agent, user) for u in us))
                for run, us in units.items()}

    for run_id, results in asyncio.run(main()).items():
        with TableWriter(out, run_id) as writer:
            for r in results:
                writer.add(r)
    conv = conversations_df(out)
    assert len(conv) == 40
    success = conv.groupby("run_id")["success"].sum().to_dict()
    assert success["good"] == 20 and success["bad"] < 5  # a few tasks pass their predicates untouched
    return out


def _judge(capsys, *args) -> dict:
    capsys.readouterr()  # drop what ran before (Ray may forward a worker's line at any time)
    assert judge_main(["judge", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_two_prompts_by_two_judges(mixed_run, endpoint, ray_local, capsys, cli_json, monkeypatch):
    monkeypatch.setenv("OPENAI_API_BASE", endpoint.base_url)  # no --judge-api-base: litellm's environment
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    args = [str(mixed_run), "--judge-model", "openai/judge-good", "--judge-model", "openai/judge-always-pass",
            "--prompt", "overall-plain", "--prompt", "overall-rubric@1", "--samples", "2", "--concurrency", "16"]
    first = _judge(capsys, *args)
    assert first["conversations"] == 40 and len(first["configs"]) == 4
    assert first["rows"] == {"judge_verdicts": 40 * 4 * 2, "nl_assertion_verdicts": 0}
    assert first["unscored_rows"] == 0 and first["infra_errors"] == 0
    rows = judge_verdicts_df(mixed_run)
    assert len(rows) == 320 and rows.groupby("judge_config_id").size().eq(80).all()
    assert set(rows["run_id"]) == {"good", "bad"}
    assert rows.groupby(["judge_config_id", "conversation_id"])["prompt_hash"].nunique().eq(1).all()

    again = _judge(capsys, *args)
    assert again["rows"]["judge_verdicts"] == 0 and again["calls"] == 0 and again["skipped_items"] == 160
    assert len(judge_verdicts_df(mixed_run)) == 320

    more = _judge(capsys, *args[:-4], "--samples", "3")  # only sample 2 is new
    assert more["rows"]["judge_verdicts"] == 40 * 4
    rows = judge_verdicts_df(mixed_run)
    assert sorted(rows["sample_index"].unique()) == [0, 1, 2]

    # one more config, judged on a Ray judge actor
    coin = JudgeConfig(model={"model": "openai/judge-coin", "api_base": endpoint.base_url}, prompt="overall-plain")
    summary = rejudge(mixed_run, [coin], use_ray=True, concurrency=8)  # Ray from the suite's fixture
    assert summary.rows["judge_verdicts"] == 40

    # NL assertions from the telecom pack
    nl = _judge(capsys, str(mixed_run), "--judge-model", "openai/judge-good", "--nl-pack", "telecom-agent-conduct")
    pack = get_pack("telecom-agent-conduct")
    conv = conversations_df(mixed_run)
    expected = sum(len(pack.assertions_for(s)) for s in conv["scenario"])
    assert nl["rows"]["nl_assertion_verdicts"] == expected > 80
    assert len(nl_verdicts_df(mixed_run)) == expected

    report = cli_json("judge-report", str(mixed_run))
    judges = {(j["judge_model"], j["prompt_id"]): j for j in report["judges"]}
    assert len(judges) == 5
    good = judges[("openai/judge-good", "overall-rubric")]
    bad_but_true = int(conv[conv["run_id"] == "bad"]["success"].sum())  # no fix shown, predicates pass
    assert good["n"] == 40 and good["fn"] >= bad_but_true and good["fp"] == 0 and good["kappa"] > 0.7
    lenient = judges[("openai/judge-always-pass", "overall-plain")]
    assert lenient["sensitivity"] == 1.0 and lenient["specificity"] == 0.0 and lenient["kappa"] == 0.0
    assert lenient["self_consistency"] == 1.0 and lenient["samples_per_item"] == 3

    # recompute every config's figures independently from the tables
    truth = conv.set_index("conversation_id")["signal_db_state_assertion"].astype(bool)
    rows = judge_verdicts_df(mixed_run)
    for config_id, g in rows.groupby("judge_config_id"):
        share = g.groupby("conversation_id")["passed"].mean()
        verdict = share[share != 0.5] > 0.5
        t = truth.loc[verdict.index]
        correct = int((verdict == t).sum())
        j = next(j for j in report["judges"] if j["judge_config_id"] == config_id)
        assert j["n"] == len(verdict) and j["accuracy"] == pytest.approx(correct / len(verdict))
        assert j["accuracy_ci"] == pytest.approx(wilson(correct, len(verdict)))
        po, pj, pt = correct / len(verdict), verdict.mean(), t.mean()
        pe = pj * pt + (1 - pj) * (1 - pt)
        assert j["kappa"] == (pytest.approx((po - pe) / (1 - pe)) if pe < 1 else None)
    inter = report["inter_judge"]
    assert inter["configs"] == 5 and inter["fleiss_kappa"] is not None
    pair = next(p for p in inter["pairs"] if {p["a_label"], p["b_label"]} == {
        "openai/judge-good overall-plain@2", "openai/judge-always-pass overall-plain@2"})
    flips = pair["flips"]
    good_first = pair["a_label"].startswith("openai/judge-good")
    good_plain = judges[("openai/judge-good", "overall-plain")]
    assert (flips["fail"]["pass"] if good_first else flips["pass"]["fail"]) == good_plain["tn"] + good_plain["fn"]
    assert report["nl_judges"] and report["nl_judges"][0]["assertion_items"] == expected


def test_unknown_judge_model_stops_before_any_row(mixed_run, endpoint, tmp_path, capsys, cli_json):
    """A typo in the judge model is found by the probe (one call), named with the provider's answer, and
    nothing is written; without the probe every item would become a refused, unscored row."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(mixed_run, run)
    before = len(judge_verdicts_df(run))
    args = ["judge", str(run), "--judge-model", "openai/no-such-model", "--judge-api-base", endpoint.base_url,
            "--prompt", "overall-plain"]
    assert judge_main(args) == 2
    err = capsys.readouterr().err
    assert "'openai/no-such-model'" in err and "404" in err and "does not exist" in err
    assert len(judge_verdicts_df(run)) == before
    # what the probe prevents: every item a refused (not an infra-error) unscored row
    summary = cli_json(*args, "--no-probe")
    assert summary["infra_errors"] == 0 and summary["unscored_rows"] == summary["rows"]["judge_verdicts"] == 40
    rows = judge_verdicts_df(run).query("judge_model == 'openai/no-such-model'")
    assert len(rows) == 40 and rows["unscored_reason"].astype(str).str.startswith("judge request refused").all()


def test_list_prompts(capsys):
    assert judge_main(["judge", "--list-prompts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    firsts = [line.split()[0] for line in lines]
    assert {"overall-plain@1", "overall-rubric@1", "nl-assertions@1", "telecom-agent-conduct@1"} <= set(firsts)


@pytest.mark.parametrize("args, needle", [
    (["--judge-model", "openai/judge-good", "--prompt", "nope"], "unknown judge prompt 'nope'"),
    (["--judge-model", "openai/judge-good"], "--prompt"),
    (["--prompt", "overall-plain"], "--judge-model"),
])
def test_bad_arguments_fail_loudly(tmp_path, capsys, args, needle):
    (tmp_path / "conversations").mkdir()
    assert judge_main(["judge", str(tmp_path), *args]) == 2
    assert needle in capsys.readouterr().err


def test_repair_calls_per_model_in_summary_and_report(mixed_run, endpoint, tmp_path, capsys, cli_json):
    """A judge that answers in prose and, asked once in the same conversation, with only the answer: every
    sample takes one repair turn, its rows say so with the repair's cost, and the summary and the report count
    the repair calls per judge model; the well-formed judge takes none."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(mixed_run, run)
    base = ["--judge-api-base", endpoint.base_url, "--prompt", "overall-plain", "--no-probe"]
    summary = _judge(capsys, str(run), "--judge-model", "openai/judge-prose-repairs",
                     "--judge-model", "openai/judge-good", *base)
    n = summary["conversations"]  # rows per judge; calls: the samples not served from the reply cache
    calls = summary["judge_calls"]["openai/judge-good"]
    assert n >= 20 and 0 < calls <= n
    assert summary["repair_calls"] == {"openai/judge-prose-repairs": calls, "openai/judge-good": 0}
    assert summary["judge_calls"] == {"openai/judge-prose-repairs": 2 * calls, "openai/judge-good": calls}
    jv = judge_verdicts_df(run)
    prose = jv[jv["judge_model"] == "openai/judge-prose-repairs"]
    assert prose["repair_used"].all() and prose["passed"].notna().all()
    assert (prose["repair_prompt"] == "repair-format@1").all() and (prose["repair_prompt_tokens"] > 0).sum() == calls
    assert (prose["raw_output"].str.startswith("**")).all() and prose["first_unscored_reason"].notna().all()
    good = jv[jv["judge_model"] == "openai/judge-good"]
    assert not good["repair_used"].any() and (good["enforcement"] == "prompt").all()
    # the sweep summary counts from the rows (pipeline/accounting.py): every stored sample, cache hits too
    from_rows = judge_calls_by_model(run)
    assert from_rows["openai/judge-prose-repairs"] == (2 * len(prose), len(prose))
    assert from_rows["openai/judge-good"][1] == 0
    # the copied run may hold the good judge's rows of other tests (other prompts, more samples, the same
    # prompt judged before): compare with the plain prompt's first sample, once per conversation (the good
    # judge's verdict on a conversation is the same every time)
    good = good[(good["prompt_id"] == "overall-plain") & (good["sample_index"] == 0)]
    good = good.drop_duplicates("conversation_id", keep="last")
    # the repaired verdicts are the good judge's verdicts, conversation by conversation
    both = prose.set_index("conversation_id")["passed"].astype(bool)
    assert both.equals(good.set_index("conversation_id")["passed"].astype(bool).loc[both.index])
    report = cli_json("judge-report", str(run))
    by_model = report["repair_calls_by_model"]  # every judge of the copied run, other tests' judges too
    assert by_model.pop("openai/judge-prose-repairs") == {"judge_calls": 2 * n, "repair_calls": n}
    assert by_model["openai/judge-good"]["judge_calls"] >= n
    assert all(counts["repair_calls"] == 0 for counts in by_model.values())
    assert judge_main(["judge-report", str(run)]) == 0
    assert f"repair calls openai/judge-prose-repairs: {n} of {2 * n} judge calls" in capsys.readouterr().out
    # the HTML report's judge section counts them too, per judge model
    write_report(run, tmp_path / "report", n_boot=50)
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    prose_row = page[page.index('<tr data-judge-model="openai/judge-prose-repairs">'):].split("</tr>")[0]
    assert f'data-metric="judge_calls" data-value="{2 * n}"' in prose_row
    assert f'data-metric="repair_calls" data-value="{n}"' in prose_row
