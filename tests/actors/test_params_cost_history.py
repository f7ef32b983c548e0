"""What is sent, priced and adapted, decided from litellm's own tables (no network).

Each test names the rule it checks; each failed on the code before this change (noted).
"""

from __future__ import annotations

import pytest

from tauray.actors.llm import ModelConfigError, ModelSpec, adapt_history, request_params
from tauray.actors.llm.history import CONTINUE, OPENING, mistral_id
from tauray.actors.llm.model_map import is_priced, litellm_price
from tauray.actors.llm.replies import reply_of
from tauray.actors.llm.usable import budget_refusal

# --- parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["openai/o4-mini", "openai/gpt-5", "openai/o3-mini"])
def test_reasoning_models_that_refuse_it_get_no_default_temperature(model):
    # OpenAI reasoning models take only temperature=1 (litellm: "Only temperature=1 is supported");
    # before, tauray sent its default 0.0 and every call was refused before reaching the wire.
    req = request_params(ModelSpec(model=model))
    assert "temperature" not in req.params and "temperature" in req.dropped and req.reasoning
    assert "temperature=0.0" in req.reasons["temperature"]  # litellm's own reason, named


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1",
                                   "gemini/gemini-2.5-flash", "gemini/gemini-2.5-pro", "vertex_ai/gemini-2.5-pro"])
def test_reasoning_models_that_take_it_get_the_default_temperature(model):
    # Issue 37: litellm flags Claude 4.x and Gemini 2.5 as reasoning models, and tauray sent them no
    # temperature (the provider's default) although both take 0 without thinking.
    req = request_params(ModelSpec(model=model))
    assert req.reasoning and req.params["temperature"] == 0.0 and "temperature" not in req.dropped
    assert "temperature" not in request_params(ModelSpec(model=model, extra_params={"thinking": {
        "type": "enabled", "budget_tokens": 2048}})).params


def test_an_explicit_temperature_a_reasoning_model_refuses_names_model_and_param():
    # litellm: "O-series models don't support temperature=0.0. Only temperature=1 is supported".
    with pytest.raises(ModelConfigError, match=r"'openai/o4-mini'.*temperature=0\.0"):
        request_params(ModelSpec(model="openai/o4-mini", temperature=0.0))
    assert request_params(ModelSpec(model="openai/o4-mini", temperature=1.0)).params["temperature"] == 1.0


def test_thinking_gets_no_temperature_and_a_max_tokens_above_its_budget():
    # Anthropic: thinking "isn't compatible with temperature"; budget_tokens must be below max_tokens.
    thinking = {"type": "enabled", "budget_tokens": 8000}
    req = request_params(ModelSpec(model="anthropic/claude-sonnet-4-5-20250929", extra_params={"thinking": thinking}))
    assert "temperature" not in req.params and req.params["max_tokens"] > 8000
    with pytest.raises(ModelConfigError, match="temperature"):
        request_params(ModelSpec(model="anthropic/claude-sonnet-4-5-20250929", temperature=0.2,
                                 extra_params={"thinking": thinking}))


def test_max_tokens_is_finite_by_default_and_within_the_models_maximum():
    # Before: unset, so litellm sent Anthropic the model maximum (64,000).
    assert request_params(ModelSpec(model="anthropic/claude-sonnet-4-5-20250929")).params["max_tokens"] == 16384
    assert request_params(ModelSpec(model="openai/gpt-4o")).params["max_tokens"] == 4096
    assert request_params(ModelSpec(model="openai/gpt-4o", max_tokens=99)).params["max_tokens"] == 99
    # an unknown self-hosted model is left to its server (vLLM refuses max_tokens above its context)
    assert "max_tokens" not in request_params(ModelSpec(model="hosted_vllm/my/model")).params


def test_non_reasoning_models_keep_the_default_temperature():
    assert request_params(ModelSpec(model="openai/gpt-4o")).params["temperature"] == 0.0


# --- cost ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["vertex_ai/gemini-2.5-pro", "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                   "bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0", "openai/gpt-4o"])
def test_litellm_prices_what_the_old_label_check_missed(model):
    # Before: the price entry's provider label had to equal the model's, so vertex_ai Gemini and
    # Bedrock us./global. Claude ids had cost None although litellm prices them.
    assert is_priced(model) and litellm_price(model)[0] > 0


def test_a_router_registered_model_is_not_priced_at_zero():
    import litellm

    litellm.Router(model_list=[{"model_name": "hosted_vllm/x/y", "litellm_params": {"model": "hosted_vllm/x/y"}}])
    assert litellm.cost_per_token(model="hosted_vllm/x/y", prompt_tokens=10, completion_tokens=10) == (0.0, 0.0)
    assert not is_priced("hosted_vllm/x/y")


def test_a_budget_sweep_with_an_unpriced_model_is_refused_in_one_line():
    models = [("agent", "openai/gpt-4o", False), ("local", "hosted_vllm/x/y", False), ("ref", "oracle", False)]
    line = budget_refusal(models, 5.0)
    assert line is not None and "\n" not in line and "local (hosted_vllm/x/y)" in line and "gpt-4o" not in line
    assert budget_refusal(models, None) is None
    assert budget_refusal([("local", "hosted_vllm/x/y", True)], 5.0) is None  # an explicit price counts


# --- histories (pure) ---------------------------------------------------------------------


def test_openai_family_gets_the_view_unchanged():
    view = [{"role": "system", "content": "s"}, {"role": "assistant", "content": ""}]
    assert adapt_history(view, "openai") == (view, ())


def test_assistant_first_view_gets_a_user_opening_and_no_empty_turns():
    view = [{"role": "system", "content": "s"}, {"role": "assistant", "content": "Hi"},
            {"role": "user", "content": "help"}, {"role": "assistant", "content": ""},
            {"role": "user", "content": "hello?"}]
    out, marks = adapt_history(view, "bedrock")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[1]["content"] == OPENING and out[3]["content"] == "help\n\nhello?"
    assert marks == ("empty_dropped", "merged", "user_first")
    assert view[1]["content"] == "Hi" and len(view) == 5  # the view itself is not changed


def test_a_view_ending_on_the_speakers_words_gets_a_user_turn():
    view = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "no signal"},
            {"role": "user", "content": ""}]
    out, marks = adapt_history(view, "mistral")
    assert out[-1] == {"role": "user", "content": CONTINUE} and "ends_on_user" in marks


def test_mistral_ids_are_nine_alphanumerics_and_stable():
    # Mistral: "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9".
    view = [{"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                                                   "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    out, marks = adapt_history(view, "mistral")
    new = out[1]["tool_calls"][0]["id"]
    assert len(new) == 9 and new.isalnum() and out[2]["tool_call_id"] == new and marks == ("mistral_ids",)
    assert mistral_id("abcDEF123") == "abcDEF123"


# --- replies ------------------------------------------------------------------------------


def _response(message, finish, usage=None):
    return {"choices": [{"message": message, "finish_reason": finish}], "usage": usage or {}}


@pytest.mark.parametrize("finish,stop", [("length", "length"), ("max_tokens", "length"), ("MAX_TOKENS", "length"),
                                         ("content_filter", "content_filter"), ("SAFETY", "content_filter"),
                                         ("stop", "stop"), ("tool_calls", "tool_calls"), ("weird", "other")])
def test_stop_reasons_in_one_vocabulary(finish, stop):
    reply = reply_of(_response({"content": "x"}, finish), latency_s=0, model="m", cost_usd=None, seed_applied=None)
    assert reply.stop == stop and reply.finish_reason == finish


def test_a_refusal_and_its_text_are_kept_and_a_cut_tool_call_is_truncated():
    refused = reply_of(_response({"content": None, "refusal": "I can't help with that."}, "stop"),
                       latency_s=0, model="m", cost_usd=None, seed_applied=None)
    assert refused.stop == "refusal" and refused.refusal == "I can't help with that."
    cut = reply_of(_response({"content": None, "tool_calls": [{"id": "c", "function": {
        "name": "f", "arguments": '{"a": "unfinis'}}]}, "length"), latency_s=0, model="m", cost_usd=None,
        seed_applied=None)
    assert cut.truncated and cut.tool_calls[0].arguments == '{"a": "unfinis'


def test_reasoning_and_cached_tokens_are_kept():
    usage = {"prompt_tokens": 100, "completion_tokens": 50, "completion_tokens_details": {"reasoning_tokens": 30},
             "prompt_tokens_details": {"cached_tokens": 64}}
    reply = reply_of(_response({"content": "x", "reasoning_content": "think"}, "stop", usage), latency_s=0,
                     model="m", cost_usd=None, seed_applied=None)
    assert (reply.reasoning_tokens, reply.cached_tokens, reply.reasoning_content) == (30, 64, "think")


def test_a_refused_explicit_setting_is_named_even_when_a_package_turned_drop_params_on(monkeypatch):
    # tau2.utils.llm_utils sets litellm.drop_params = True at import; litellm would then drop the
    # user's temperature silently. The check asks with drop_params off and leaves it as it was.
    import litellm

    monkeypatch.setattr(litellm, "drop_params", True)
    with pytest.raises(ModelConfigError, match="temperature"):
        request_params(ModelSpec(model="openai/o4-mini", temperature=0.5))
    assert litellm.drop_params is True


def test_models_check_tells_what_will_be_sent_offline(capsys):
    import json

    from tauray.pipeline.cli.main import main

    code = main(["models", "check", "openai/gpt-5", "vertex_ai/gemini-2.5-pro",
                 "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [c["provider"] for c in out] == ["openai", "vertex_ai", "bedrock"]
    gpt5, gemini, claude = out
    assert "temperature" in gpt5["dropped"] and gpt5["sends"]["max_tokens"] == 16384 and gpt5["priced"]
    assert gemini["history"]["agent's first call (greeting first)"] == ["user_first"] and gemini["priced"]
    bare = "a tool without arguments"
    assert gemini["history"][bare] == ["tool_schemas"] and not gpt5["history"][bare]
    assert claude["seed"] is False and claude["priced"] and claude["context_window"] == 200000
    assert main(["models", "check", "notaprovider-model-xyz"]) == 2  # cannot be used: said, exit 2


# --- tool schemas -------------------------------------------------------------------------


def _domain_tools():
    from tauray.scenarios import get_scenario

    tools = {}
    for name in ("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy",):
        scenario = get_scenario(name)
        for side in ("agent", "user"):
            tools.update({t.name: t.openai() for t in scenario.tools_by_side[side]})
    return list(tools.values())


def test_strict_tools_are_valid_for_openai_strict_mode():
    # OpenAI structured outputs: additionalProperties false, every property required, no default.
    from tauray.actors.llm.tool_schemas import strict_problems, strict_tool

    tools = _domain_tools()
    assert sum(bool(strict_problems(t["function"]["parameters"])) for t in tools) == len(tools)  # none valid as written
    strict = [strict_tool(t) for t in tools]
    assert all(not strict_problems(t["function"]["parameters"]) and t["function"]["strict"] for t in strict)
    assert tools[0]["function"].get("strict") is None  # the originals are not changed


def test_gemini_gets_no_object_without_properties():
    # Gemini: "properties: should be non-empty for OBJECT type"; a tool without arguments is sent bare.
    from tauray.actors.llm.tool_schemas import tools_for

    tools = _domain_tools()
    empty = {t["function"]["name"] for t in tools if not t["function"]["parameters"].get("properties")}
    out, changed = tools_for("vertex_ai", tools)
    assert empty and changed and all("parameters" not in t["function"] for t in out if t["function"]["name"] in empty)
    assert all("parameters" in t["function"] for t in out if t["function"]["name"] not in empty)
    assert tools_for("openai", tools) == (tools, False)


def test_the_free_readiness_check_names_a_refused_setting_before_any_call(monkeypatch):
    # Before, o4-mini with temperature 0 passed the free check and failed on its first call.
    from tauray.actors.llm import check_model_ready

    monkeypatch.setenv("OPENAI_API_KEY", "test-openai")
    with pytest.raises(ModelConfigError, match=r"'openai/o4-mini'.*temperature"):
        check_model_ready(ModelSpec(model="openai/o4-mini", temperature=0.0))
    check_model_ready(ModelSpec(model="openai/o4-mini"))  # the default temperature is left out, not refused


def test_a_refused_setting_is_named_without_its_value_when_that_could_be_a_secret():
    spec = ModelSpec(model="anthropic/claude-3-5-sonnet-20240620",
                     extra_params={"logit_bias": {"sk-live-SECRET123456": 1}})
    with pytest.raises(ModelConfigError) as info:
        request_params(spec)
    assert "logit_bias" in str(info.value) and "SECRET" not in str(info.value)
