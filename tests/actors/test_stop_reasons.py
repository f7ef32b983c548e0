"""Stop reasons are data: each endpoint stop behaviour, through real HTTP and the model client,
ends as its documented ModelReply (table in tauray.actors.llm.replies). Before, finish_reason
was the only trace (stop was not kept), OpenAI's refusal text was dropped and a cut tool call
looked like the model's malformed JSON."""

from __future__ import annotations

import pytest

from tauray.actors.endpoint.shapes import CUT_ARGUMENTS, CUT_TEXT, REFUSAL
from tauray.actors.llm import ModelClient, ModelSpec

TOOLS = [{"type": "function", "function": {"name": "check_status_bar", "description": "d",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _complete(endpoint, loop, behaviour):
    client = ModelClient(ModelSpec(model=f"openai/{behaviour}", api_base=endpoint.base_url, num_retries=0))
    try:
        return loop.run_until_complete(client.complete([{"role": "user", "content": "hi"}], TOOLS))
    finally:
        loop.run_until_complete(client.aclose())


def test_a_reply_cut_mid_text_is_length(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-length-text")
    assert (reply.stop, reply.finish_reason, reply.content, reply.truncated) == ("length", "length", CUT_TEXT, True)


def test_a_tool_call_cut_mid_arguments_is_truncated_not_the_models_malformed_json(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-length-tool")
    assert reply.truncated and reply.tool_calls[0].arguments == CUT_ARGUMENTS


def test_a_content_filter_stop_is_filtered_not_just_empty(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-content-filter")
    assert reply.stop == "content_filter" and reply.empty == "no_content"


def test_a_refusal_keeps_its_text(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-refusal")
    assert reply.stop == "refusal" and reply.refusal == REFUSAL


@pytest.mark.parametrize("behaviour", ["stop-length-text", "stop-refusal"])
def test_after_a_tool_result_the_stop_behaviours_answer_plainly(endpoint, loop, behaviour):
    client = ModelClient(ModelSpec(model=f"openai/{behaviour}", api_base=endpoint.base_url, num_retries=0))
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "check_status_bar", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    try:
        reply = loop.run_until_complete(client.complete(messages, TOOLS))
    finally:
        loop.run_until_complete(client.aclose())
    assert reply.stop == "stop" and reply.refusal is None
