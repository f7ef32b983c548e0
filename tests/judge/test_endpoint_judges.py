"""Judges served by the local test endpoint over real HTTP (litellm, no mocks)."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest

from tauray.actors.judge import JudgeConfig, JudgeHost, judge_result
from tauray.actors.llm import ModelConfigError, ModelSpec, check_model_ready
from tauray.scenarios import get_scenario
from tauray.scenarios.model import SuccessSignal, SuccessSignals

from .conftest import failed_copy

ASSERTIONS = ("The agent greeted the customer.", "The agent refunded the customer. (test: not met)")

# behaviour -> (overall verdict on a fixed / an unfixed conversation, or the unscored reason),
#              (NL verdicts for ASSERTIONS, each True/False or an unscored-reason fragment)
# A reply that is not one value of the format gets one repair turn; these judges answer it in the same
# broken shape, so they end unscored "after the repair turn"; judge-prose-repairs answers it properly.
AFTER = "after the repair turn either"
EXPECTED = {
    "judge-good": ("right", [True, False]),
    "judge-fenced": ("right", [True, False]),
    "judge-prose": (AFTER, [AFTER, AFTER]),
    "judge-prose-repairs": ("right", [True, False]),
    "judge-repeat": (AFTER, [AFTER, AFTER]),  # two values: neither is the answer
    "judge-injected": (AFTER, [AFTER, AFTER]),  # text after the value: not one value
    "judge-extra": (AFTER, ["'A3', which was not asked", "'A3', which was not asked"]),
    "judge-missing": ("verdict None", ["no answer for A2", "no answer for A2"]),
    # overall: a second answer under a key the format does not declare (`passed`) is no answer either
    "judge-contradict": ("does not declare: 'passed'", ["A1 is answered twice", "A1 is answered twice"]),
    "judge-empty": ("empty reply", ["empty reply", "empty reply"]),
}
REPAIRED = {"judge-good": False, "judge-fenced": False, "judge-contradict": None, "judge-extra": None}


def _scenario(result):
    s = get_scenario(result.conversation.scenario)
    return s.model_copy(update={"nl_assertions": ASSERTIONS, "success_signals": SuccessSignals(
        gating=(SuccessSignal.DB_STATE_ASSERTION, SuccessSignal.NL_ASSERTION),
        informational=(SuccessSignal.DB_STATE_MATCH, SuccessSignal.ACTION_MATCH, SuccessSignal.JUDGE_PASSED))})


def _configs(model: str, base: str, samples: int = 1) -> list[JudgeConfig]:
    spec = {"model": f"openai/{model}", "api_base": base}
    return [JudgeConfig(model=spec, prompt="overall-rubric", samples=samples),
            JudgeConfig(model=spec, prompt="nl-assertions", samples=samples)]


@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_stored_verdicts_are_exactly_right(behaviour, endpoint, reference_result):
    overall_expected, nl_expected = EXPECTED[behaviour]
    host = JudgeHost()
    cases = [(reference_result, True), (failed_copy(reference_result), False),
             (failed_copy(reference_result, inject=True), False)]

    async def main():
        return await asyncio.gather(*(judge_result(r, _scenario(r), _configs(behaviour, endpoint.base_url), host)
                                      for r, _ in cases))

    judged = asyncio.run(main())
    for (_, fixed), out in zip(cases, judged):
        [v] = out.judge_verdicts
        assert v.prompt_id == "overall-rubric" and v.prompt_version == "2" and len(v.prompt_hash) == 16
        if overall_expected == "right":
            assert v.passed is fixed and v.unscored_reason is None, (v.raw_output, v.unscored_reason)
            assert out.conversation.signal_judge_passed is fixed
        else:
            assert v.passed is None and overall_expected in v.unscored_reason
            assert out.conversation.signal_judge_passed is None
        rows = sorted(out.nl_assertions, key=lambda r: r.assertion_index)
        assert [r.assertion for r in rows] == list(ASSERTIONS)
        for row, want in zip(rows, nl_expected):
            if isinstance(want, bool):
                assert row.met is want and row.unscored_reason is None, (row.raw_output, row.unscored_reason)
            else:
                assert row.met is None and want in row.unscored_reason
        # NL gates here (predicates passed in every case): not met fails, unscored leaves it unscored
        nl = [r.met for r in rows]
        nl_signal = False if False in nl else (True if all(x is True for x in nl) else None)
        assert out.conversation.signal_db_state_assertion is True
        assert out.conversation.signal_nl_assertion is nl_signal and out.conversation.success is nl_signal
        assert "JUDGE_PASSED" not in out.conversation.gating_signals  # never gates unless asked


def test_empty_reply_never_passes_anything(endpoint, reference_result):
    out = asyncio.run(judge_result(reference_result, _scenario(reference_result),
                                   _configs("judge-empty", endpoint.base_url, samples=3), JudgeHost()))
    assert len(out.judge_verdicts) == 3 and all(v.passed is None and v.majority is None for v in out.judge_verdicts)
    assert out.conversation.success is None and out.conversation.signal_judge_passed is None


def test_samples_majority_cache_and_prompt_change(endpoint, reference_result):
    host = JudgeHost()
    spec = {"model": "openai/judge-good", "api_base": endpoint.base_url, "seed": 7}
    cfg = JudgeConfig(model=spec, prompt="overall-plain", samples=3)
    scenario = get_scenario(reference_result.conversation.scenario)
    first = asyncio.run(judge_result(reference_result, scenario, [cfg], host))
    assert [v.sample_index for v in first.judge_verdicts] == [0, 1, 2]
    assert all(v.majority is True and v.agreement == 1.0 for v in first.judge_verdicts)
    assert all(v.judge_config_id == cfg.config_id for v in first.judge_verdicts)
    calls = host.counts["calls"]
    assert calls == 3
    again = asyncio.run(judge_result(reference_result, scenario, [cfg], host))
    assert host.counts["calls"] == calls and host.counts["cache_hits"] == 3  # a repeat costs nothing
    assert all(v.prompt_tokens == 0 and v.cost_usd == 0.0 for v in again.judge_verdicts)
    other = JudgeConfig(model=spec, prompt="overall-rubric", samples=3)
    asyncio.run(judge_result(reference_result, scenario, [other], host))
    assert host.counts["calls"] == calls + 3  # another prompt is never served from the cache
    assert other.config_id != cfg.config_id
    hotter = JudgeConfig(model={**spec, "temperature": 0.7}, prompt="overall-plain", samples=3)
    assert hotter.config_id != cfg.config_id


@pytest.mark.parametrize("change", [
    {"structured": "always"}, {"structured": "never"}, {"model": {"temperature": 0.5}}, {"model": {"seed": 8}},
    {"model": {"max_tokens": 300}}, {"model": {"extra_params": {"top_p": 0.9}}}, {"model": {"api_base": "/v1/"}},
])
def test_every_request_shaping_field_changes_the_id_and_misses_the_cache(change, endpoint, reference_result):
    """structured mode and sampling parameters are part of the config id and of the cache key, and every
    row carries them as columns (so an ablation is a groupby)."""
    host = JudgeHost()
    spec = {"model": "openai/judge-good", "api_base": endpoint.base_url, "seed": 7}
    base = JudgeConfig(model=spec, prompt="overall-plain", samples=2, structured="auto")
    model = {**spec, **change.get("model", {})}
    if "api_base" in change.get("model", {}):
        model["api_base"] = endpoint.base_url.rstrip("/") + "/../v1"  # same server, another base string
    changed = JudgeConfig(model=model, prompt="overall-plain", samples=2,
                          structured=change.get("structured", "auto"))
    assert changed.config_id != base.config_id
    scenario = get_scenario(reference_result.conversation.scenario)
    first = asyncio.run(judge_result(reference_result, scenario, [base], host))
    assert host.counts["calls"] == 2
    second = asyncio.run(judge_result(reference_result, scenario, [changed], host))
    assert host.counts["calls"] == 4 and host.counts["cache_hits"] == 0  # never served the other's replies
    for out, cfg in ((first, base), (second, changed)):
        for v in out.judge_verdicts:
            assert v.judge_config_id == cfg.config_id and v.structured == cfg.structured
            assert v.judge_temperature == cfg.model.temperature and v.judge_max_tokens == cfg.model.max_tokens
            assert v.judge_seed == cfg.model.seed + v.sample_index
            assert json.loads(v.judge_extra_params) == cfg.model.extra_params
            assert v.judge_api_base == cfg.model.api_base.rstrip("/")
            assert v.response_format_sent is (cfg.structured == "always")  # the endpoint's model is unknown to litellm
            assert v.context_hash and v.nl_pack is None and v.scored_samples == 2 and v.item_samples == 2
    table = pd.DataFrame([v.model_dump() for v in [*first.judge_verdicts, *second.judge_verdicts]])
    table["base_seed"] = table["judge_seed"] - table["sample_index"]
    by = table.groupby(["structured", "judge_temperature", "judge_max_tokens", "judge_api_base", "judge_extra_params",
                        "base_seed"], dropna=False)
    assert by.ngroups == 2 and table["judge_config_id"].nunique() == 2


def test_judge_gates_only_when_asked(endpoint, reference_result):
    scenario = get_scenario(reference_result.conversation.scenario)
    failed = failed_copy(reference_result)  # predicates say success; the transcript shows no fix
    cfg = [JudgeConfig(model={"model": "openai/judge-good", "api_base": endpoint.base_url}, prompt="overall-plain")]
    plain = asyncio.run(judge_result(failed, scenario, cfg, JudgeHost()))
    assert plain.conversation.signal_judge_passed is False and plain.conversation.success is True
    gated = asyncio.run(judge_result(failed, scenario, [c.model_dump() for c in cfg], JudgeHost(), judge_gates=True))
    assert gated.conversation.success is False and "JUDGE_PASSED" in gated.conversation.gating_signals


def test_judge_model_from_the_standard_environment(endpoint, reference_result, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    spec = ModelSpec(model="openai/judge-good")
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        check_model_ready(spec)
    monkeypatch.setenv("OPENAI_API_BASE", endpoint.base_url)
    check_model_ready(spec)  # does not block: the server comes from the environment
    out = asyncio.run(judge_result(reference_result, get_scenario(reference_result.conversation.scenario),
                                   [JudgeConfig(model=spec, prompt="overall-plain")], JudgeHost()))
    assert out.judge_verdicts[0].passed is True


def test_refused_request_is_unscored_and_keeps_secrets_out(endpoint, reference_result, monkeypatch):
    secret = "sk-tauray-test-" + "secret-1234567890"
    monkeypatch.setenv("TAURAY_TEST_JUDGE_KEY", secret)
    spec = {"model": "openai/no-such-judge", "api_base": endpoint.base_url, "api_key_env": "TAURAY_TEST_JUDGE_KEY",
            "num_retries": 0}
    out = asyncio.run(judge_result(reference_result, get_scenario(reference_result.conversation.scenario),
                                   [JudgeConfig(model=spec, prompt="overall-plain")], JudgeHost()))
    [v] = out.judge_verdicts
    assert v.passed is None and v.unscored_reason.startswith("judge request refused")
    assert secret not in out.model_dump_json()


def test_errored_conversation_is_not_judged(endpoint, reference_result):
    broken = reference_result.model_copy(update={"conversation": reference_result.conversation.model_copy(
        update={"error_kind": "infra", "error_message": "x", "success": None})})
    out = asyncio.run(judge_result(broken, get_scenario(broken.conversation.scenario),
                                   _configs("judge-good", endpoint.base_url), JudgeHost()))
    assert out is broken


def test_no_credential_in_extra_params_reaches_a_judge_row(endpoint, reference_result):
    """Headers and credential-like parameters are sent with the call but stored redacted
    (issue 23: no header or credential value in a table)."""
    spec = {"model": "openai/judge-good", "api_base": endpoint.base_url,
            "extra_params": {"extra_headers": {"Authorization": "Bearer S3CRET-H"}, "top_p": 0.9}}
    out = asyncio.run(judge_result(reference_result, _scenario(reference_result),
                                   [JudgeConfig(model=spec, prompt="overall-plain")], JudgeHost()))
    [row] = out.judge_verdicts
    stored = json.loads(row.judge_extra_params) if isinstance(row.judge_extra_params, str) else row.judge_extra_params
    assert "S3CRET" not in json.dumps(stored) and stored["top_p"] == 0.9 and row.passed is not None
