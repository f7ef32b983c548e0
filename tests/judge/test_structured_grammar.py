"""The llama.cpp deployment turns a judge's response_format into a schema grammar and names it."""

from __future__ import annotations

from tauray.actors.judge.parse import response_format
from tauray.actors.serving.llamacpp import _response_format, grammar_name


def test_judge_schema_becomes_a_named_grammar():
    for kind in ("overall", "nl"):
        converted = _response_format(response_format(kind))
        assert converted["type"] == "json_object" and converted["schema"] == response_format(kind)[
            "json_schema"]["schema"]
        name = grammar_name(converted)
        assert name is not None and name.startswith("json-schema:")
    assert grammar_name(_response_format(response_format("overall"))) != grammar_name(
        _response_format(response_format("nl")))
    assert grammar_name({"type": "json_object"}) == "json"
    assert grammar_name(None) is None and grammar_name({"type": "text"}) is None


def test_llama_cpp_builds_a_grammar_from_the_judge_schema():
    """llama-cpp-python's own conversion (what create_chat_completion does with the converted format)
    accepts the judge schema, so the reply is constrained, not left free."""
    from llama_cpp.llama_chat_format import _grammar_for_response_format

    grammar = _grammar_for_response_format(_response_format(response_format("overall")))
    assert grammar is not None
