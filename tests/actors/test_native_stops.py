"""Stop reasons as the provider gave them (issue 37, 2), through litellm for real: the test
endpoint answers in each provider's own wire format (tauray.endpoint.wire) and tauray keeps the
native reason beside litellm's mapped one, each kind counted in its own column.

Before: Gemini's MALFORMED_FUNCTION_CALL was a normal ``stop`` with an empty reply, Anthropic's
``refusal`` was counted as filtered, an Azure prompt-filter HTTP 400 ended the conversation as a
model failure with filtered_replies=0, and a vLLM server without a tool parser sent its tool calls
as text that the customer heard, unnoticed."""

from __future__ import annotations

import pytest

from tauray.actors.llm import ModelClient, ModelSpec
from tauray.actors.policies import LLMPolicy
from tauray.actors.session import SideSession
from tauray.endpoint.wire import REFUSAL_PARTIAL
from tauray.scenarios import domain_spec, get_scenario

SCENARIO = "tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy"
TOOLS = [{"type": "function", "function": {"name": "check_status_bar", "description": "d",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _spec(endpoint, model: str) -> ModelSpec:
    """A spec reaching the endpoint as the model's own provider: Anthropic, Gemini and Azure at
    the server's root (litellm adds their paths), OpenAI-compatible servers under /v1."""
    base = endpoint.base_url if model.startswith("openai/") else endpoint.base_url.removesuffix("/v1")
    return ModelSpec(model=model, api_base=base, num_retries=0)


def _complete(endpoint, loop, model: str):
    client = ModelClient(_spec(endpoint, model))
    try:
        return loop.run_until_complete(client.complete([{"role": "user", "content": "hi"}], TOOLS))
    finally:
        loop.run_until_complete(client.aclose())


def _user_session(endpoint, model: str) -> SideSession:
    client = ModelClient(_spec(endpoint, model))
    return SideSession(get_scenario(SCENARIO), "user", domain_spec("telecom").fresh_side("user"), LLMPolicy(client),
                       seed=1, run_id="r", conversation_id="c")


def test_gemini_malformed_function_call_is_kept_and_counted(endpoint, loop):
    reply = _complete(endpoint, loop, "gemini/malformed-call")
    assert reply.stop == "malformed_call"
    assert reply.finish_reason == "stop"  # litellm's word for it
    assert (reply.native_finish_reason, reply.stop) == ("MALFORMED_FUNCTION_CALL", "malformed_call")
    session = _user_session(endpoint, "gemini/malformed-call")
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=1))
    message = result.rounds[0].message
    assert (message.native_finish_reason, message.stop) == ("MALFORMED_FUNCTION_CALL", "malformed_call")
    assert session.counters["malformed_call_replies"] == 1


def test_anthropic_refusal_is_a_refusal_not_a_filter(endpoint, loop):
    reply = _complete(endpoint, loop, "anthropic/refusal")
    assert reply.stop == "refusal"
    assert reply.finish_reason == "content_filter"  # litellm maps refusal so
    assert (reply.native_finish_reason, reply.stop, reply.content) == ("refusal", "refusal", REFUSAL_PARTIAL)
    session = _user_session(endpoint, "anthropic/refusal")
    loop.run_until_complete(session.step("Check your phone.", max_rounds=1))
    assert (session.counters["refused_replies"], session.counters["filtered_replies"]) == (1, 0)


def test_an_explained_anthropic_refusal_keeps_its_explanation(endpoint, loop):
    reply = _complete(endpoint, loop, "anthropic/refusal-explained")
    assert reply.stop == "refusal" and reply.refusal and reply.native_finish_reason == "refusal"


def test_azure_prompt_filter_is_a_filtered_prompt_not_a_model_failure(endpoint, loop):
    session = _user_session(endpoint, "azure/prompt-filter")
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=1))
    message = result.rounds[0].message
    assert result.kind == "text" and message.content == "" and message.stop == "prompt_filter"
    c = session.counters
    assert (c["prompt_filtered_replies"], c["filtered_replies"], c["llm_calls"]) == (1, 0, 1)


def test_gemini_blocked_prompt_arrives_as_a_filter_litellm_keeps_no_reason_for(endpoint, loop):
    # documented limit: litellm hands a blocked Gemini prompt back as finish_reason content_filter and
    # keeps neither promptFeedback.blockReason nor a native reason, so it counts as a filtered reply
    reply = _complete(endpoint, loop, "gemini/prompt-blocked")
    assert (reply.stop, reply.native_finish_reason) == ("content_filter", None)


def test_a_tool_call_written_as_text_is_named_and_counted(endpoint, loop):
    reply = _complete(endpoint, loop, "openai/tool-call-text")
    assert not reply.tool_calls and reply.content.startswith("<tool_call>")
    session = _user_session(endpoint, "openai/tool-call-text")
    loop.run_until_complete(session.step("Check your phone.", max_rounds=1))
    assert session.counters.get("text_tool_call_replies") == 1
    assert reply.tool_call_text == "<tool_call>" and reply.stop == "stop"


def test_the_probe_fails_a_server_that_answers_tool_calls_as_text(endpoint):
    from tauray.actors.llm.usable import ProbeError, probe_models

    spec = {"model": "openai/tool-call-text", "api_base": endpoint.base_url, "num_retries": 0}
    with pytest.raises(ProbeError) as info:
        probe_models({"agent": spec})
    text = str(info.value)
    assert "as text" in text and "--enable-auto-tool-choice --tool-call-parser hermes" in text, text
    probe_models({"judge": spec})  # a judge is offered no tools: nothing to parse


def test_the_probe_still_passes_servers_that_call_tools(endpoint):
    from tauray.actors.llm.usable import probe_models

    for model in ("scripted-agent", "scripted-user", "stop-length-tool"):
        probe_models({"agent": {"model": f"openai/{model}", "api_base": endpoint.base_url, "num_retries": 0}})


@pytest.mark.parametrize("text,marker", [
    ('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', "<tool_call>"),
    ('<|python_tag|>{"name": "f", "parameters": {}}', "<|python_tag|>"),
    ('[TOOL_CALLS][{"name": "f", "arguments": {}}]', "[TOOL_CALLS]"),
    ('{"name": "get_customer", "parameters": {"customer_id": "C1"}}', "json"),
    ('```json\n{"name": "get_customer", "arguments": {"customer_id": "C1"}}\n```', "json"),
    ("Let me check your line now.", None),
    ('{"verdict": "pass", "reason": "fine"}', None),
])
def test_tool_call_text_formats(text, marker):
    from tauray.actors.llm.replies import tool_call_text

    assert tool_call_text(text) == marker


def test_native_reason_beside_the_mapped_one_in_each_place_litellm_keeps_it():
    from tauray.actors.llm.replies import reply_of

    def response(choice_fields=None, message_fields=None, finish="stop"):
        return {"choices": [{"finish_reason": finish, "provider_specific_fields": choice_fields,
                             "message": {"content": "x", "provider_specific_fields": message_fields}}]}

    common = dict(latency_s=0.0, model="m", cost_usd=None, seed_applied=None)
    gemini = reply_of(response({"native_finish_reason": "OTHER"}, finish="content_filter"), **common)
    assert (gemini.finish_reason, gemini.native_finish_reason, gemini.stop) == ("content_filter", "OTHER", "other")
    claude = reply_of(response(None, {"stop_reason": "pause_turn"}, finish="length"), **common)
    assert (claude.native_finish_reason, claude.stop) == ("pause_turn", "other")
    plain = reply_of(response(), **common)
    assert (plain.native_finish_reason, plain.stop) == (None, "stop")
    unknown = reply_of(response({"native_finish_reason": "SOMETHING_NEW"}, finish="content_filter"), **common)
    assert unknown.stop == "content_filter"  # a word tauray does not know: litellm's mapping stands


def test_counters_name_each_kind(loop):
    from tauray.actors.llm.replies import ModelReply

    class Scripted:
        def __init__(self, *replies):
            self.replies = list(replies)

        async def reply(self, view, tools, seed):
            return self.replies.pop(0)

    replies = [ModelReply(content="", model="m", stop="malformed_call", empty="no_content"),
               ModelReply(content="", model="m", stop="prompt_filter", empty="no_content"),
               ModelReply(content="<tool_call>{}</tool_call>", model="m", stop="stop", tool_call_text="<tool_call>"),
               ModelReply(content="", model="m", stop="content_filter", empty="no_content"),
               ModelReply(content="no", model="m", stop="refusal")]
    session = SideSession(get_scenario(SCENARIO), "user", domain_spec("telecom").fresh_side("user"),
                          Scripted(*replies), seed=1, run_id="r", conversation_id="c")
    for _ in replies:
        loop.run_until_complete(session.step("Hi", max_rounds=1))
    counters = session.final(check=False).counters
    assert (counters.malformed_call_replies, counters.prompt_filtered_replies, counters.text_tool_call_replies,
            counters.filtered_replies, counters.refused_replies) == (1, 1, 1, 1, 1)


def test_the_run_summary_names_each_kind_it_saw():
    from tauray.pipeline.cli.drive import stop_line

    cells = [{"truncated_replies": 2, "truncated_tool_calls": 1, "prompt_filtered_replies": 0},
             {"refused_replies": 1, "malformed_call_replies": 3, "text_tool_call_replies": 0, "filtered_replies": 0}]
    assert stop_line(cells) == ("cut at max_tokens 2, tool calls cut (not run) 1, refused 1, "
                                "tool calls the provider could not parse 3")
    assert stop_line([{}]) == ""
    assert "--tool-call-parser" in stop_line([{"text_tool_call_replies": 4}])


@pytest.mark.parametrize("cut_calls,requests", [("tell", 2), ("retry", 3)])
def test_anthropic_cut_tool_use_is_never_run_told_or_retried(endpoint, loop, cut_calls, requests):
    # Anthropic's max_tokens inside a tool_use block: litellm hands back the call with arguments "{}"
    client = ModelClient(_spec(endpoint, "anthropic/cut-tool"))
    session = SideSession(get_scenario(SCENARIO), "user", domain_spec("telecom").fresh_side("user"),
                          LLMPolicy(client), seed=1, run_id="r", conversation_id="c", cut_calls=cut_calls)
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=5, max_errors=5))
    c = session.counters
    assert result.kind == "text" and c["llm_calls"] == requests and c["truncated_replies"] == requests - 1
    assert c["truncated_tool_calls"] == requests - 1 and c["tool_errors"] == 0 and c["malformed_tool_calls"] == 0
    assert all(e.truncated and not e.outcome.is_write for r in result.rounds for e in r.events)


def test_a_content_policy_error_is_a_filter_reply_and_nothing_else_is():
    from tauray.actors.llm import ModelCallError
    from tauray.actors.llm.replies import filtered_prompt

    azure = ModelCallError("model", "azure/x: ContentPolicyViolationError: The response was filtered due to the "
                           "prompt triggering Azure OpenAI's content management policy.", status_code=400,
                           error_type="ContentPolicyViolationError")
    vertex = ModelCallError("model", "vertex_ai/claude: ContentPolicyViolationError: Output blocked by content "
                            "filtering policy", status_code=400, error_type="ContentPolicyViolationError")
    bad = ModelCallError("model", "x: BadRequestError: bad", status_code=400, error_type="BadRequestError")
    assert filtered_prompt(azure, "azure/x").stop == "prompt_filter"
    assert filtered_prompt(vertex, "vertex_ai/claude").stop == "content_filter"
    assert filtered_prompt(bad, "x") is None
