"""``tauray models check``: a name litellm does not really know fails, with the nearest names it
knows; names a server of yours answers are not checked; sampling combinations a provider
refuses fail with one line naming the field. Offline: litellm's local model map only.

Before: litellm answers an unknown Claude name with defaults (its "capability generalization"),
so ``anthropic/claude-sonet-4-5`` was called known, and a name it reported unknown was no
error either: ``tauray models check openai/gpt-4o-mnii anthropic/claude-sonet-4-5
gemini/gemini-2.5-flsh`` exited 0. Thinking with ``top_k`` passed the check.
"""

from __future__ import annotations

import json

import pytest

from tauray.actors.llm.check import check_model
from tauray.pipeline.cli.main import main

MISSPELT = {
    "openai/gpt-4o-mnii": "openai/gpt-4o-mini",
    "anthropic/claude-sonet-4-5": "anthropic/claude-sonnet-4-5",
    "gemini/gemini-2.5-flsh": "gemini/gemini-2.5-flash",
}

THINKING = {"type": "enabled", "budget_tokens": 2048}
CLAUDE = "anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize("name", sorted(MISSPELT))
def test_a_name_without_an_exact_entry_fails_with_the_nearest_names(name):
    check = check_model(name)
    assert not check.known
    assert check.error and "model map" in check.error and name in check.error
    assert MISSPELT[name] in check.nearest and MISSPELT[name] in check.error


def test_the_cli_exits_2_on_a_misspelt_name_and_says_which(capsys):
    assert main(["models", "check", "--offline", *MISSPELT]) == 2
    out = capsys.readouterr().out
    for name, nearest in MISSPELT.items():
        assert f"{name}: cannot be used" in out and nearest in out
    assert main(["models", "check", "--offline", "openai/gpt-4o-mini", CLAUDE, "gemini/gemini-2.5-flash"]) == 0


@pytest.mark.parametrize("name", [
    "openai/gpt-4o-mini", "gpt-4o-mini", "openai/gpt-4o-2024-08-06", "openai/o4-mini", "openai/gpt-5",
    CLAUDE, "anthropic/claude-sonnet-4-5-20250929", "gemini/gemini-2.5-flash", "gemini/gemini-2.5-pro",
    "vertex_ai/gemini-2.5-pro", "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
    "bedrock/converse/us.anthropic.claude-sonnet-4-20250514-v1:0", "deepseek/deepseek-reasoner",
    "mistral/mistral-large-latest", "azure/gpt-4o", "groq/openai/gpt-oss-120b",
])
def test_names_with_an_exact_entry_pass(name):
    check = check_model(name)
    assert check.known and check.error is None and check.nearest == []


def test_a_name_must_be_known_at_its_own_provider():
    # "claude-sonnet-4-5" is an entry, but Anthropic's: OpenAI would refuse the name.
    check = check_model("openai/claude-sonnet-4-5")
    assert not check.known and check.error and "model map" in check.error


@pytest.mark.parametrize("spec", [
    {"model": "openai/scripted-agent", "api_base": "http://127.0.0.1:8999/v1"},  # the test endpoint
    {"model": "anthropic/claude-sonet-4-5", "api_base": "https://proxy.example/anthropic"},  # a server you name
    {"model": "openai/my-model", "serve": {"backend": "vllm", "model_source": "org/weights"}},  # tauray serves it
    "hosted_vllm/meta-llama/Llama-3.1-8B-Instruct",  # litellm keeps no names for the provider
    "ollama/my-own-model",  # litellm's default base for the provider is this machine
])
def test_names_a_server_of_yours_answers_are_not_refused(spec):
    check = check_model(json.dumps(spec) if isinstance(spec, dict) else spec)
    assert check.error is None, check.error
    assert "model map" in (check.name_check or "")


def test_a_base_url_from_the_environment_is_a_server_of_yours(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8999/v1")
    assert check_model("openai/scripted-agent").error is None


@pytest.mark.parametrize("extra,field", [
    ({"thinking": THINKING, "top_k": 5}, "extra_params.top_k"),
    ({"reasoning_effort": "low", "top_k": 5}, "extra_params.top_k"),  # litellm turns it into thinking for Claude
    ({"thinking": THINKING, "top_p": 0.5}, "extra_params.top_p"),
    ({"thinking": THINKING, "tool_choice": "required"}, "extra_params.tool_choice"),
    ({"thinking": {"type": "enabled", "budget_tokens": 500}}, "extra_params.thinking.budget_tokens"),
])
def test_sampling_combinations_the_provider_refuses_fail_naming_the_field(extra, field):
    check = check_model(json.dumps({"model": CLAUDE, "extra_params": extra}))
    assert check.error and field in check.error and "\n" not in check.error


@pytest.mark.parametrize("spec,field", [
    ({"model": CLAUDE, "max_tokens": 2048, "extra_params": {"thinking": THINKING}}, "max_tokens"),
    ({"model": CLAUDE, "temperature": 0.0, "extra_params": {"reasoning_effort": "low"}}, "temperature"),
])
def test_thinking_refuses_a_cap_below_its_budget_and_a_set_temperature(spec, field):
    check = check_model(json.dumps(spec))
    assert check.error and f"{field}" in check.error


def test_compatible_thinking_settings_pass():
    ok = [{"thinking": THINKING, "top_p": 0.95}, {"thinking": THINKING, "tool_choice": "auto"}, {"top_k": 5},
          {"reasoning_effort": "low"}]
    for extra in ok:
        assert check_model(json.dumps({"model": CLAUDE, "extra_params": extra})).error is None, extra


def test_a_misspelt_fallback_fails_the_check_too():
    check = check_model(json.dumps({"model": "openai/gpt-4o-mini", "fallbacks": ["anthropic/claude-sonet-4-5"]}))
    assert check.known and check.error and "'anthropic/claude-sonet-4-5'" in check.error
    assert check.nearest[0] == "anthropic/claude-sonnet-4-5"
