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


def test_a_bounded_grammar_lets_the_verdict_close_within_the_completion_cap():
    """A small model may never end a free string by itself; the served grammar bounds every free string
    so that, at the worst case of one character per token, the whole value fits in max_tokens."""
    import json

    from tauray.actors.serving.llamacpp import bounded

    schema = response_format("overall")["json_schema"]["schema"]
    for cap in (32, 160, 1024):
        b = bounded(schema, cap)
        reasoning = b["properties"]["reasoning"]
        assert reasoning["maxLength"] >= 8 and b["properties"]["verdict"] == schema["properties"]["verdict"]
        longest = {"reasoning": "x" * reasoning["maxLength"], "verdict": "pass"}
        assert len(json.dumps(longest)) <= max(cap, len(json.dumps({"reasoning": "x" * 8, "verdict": "pass"})))
    assert "maxLength" not in schema["properties"]["reasoning"]  # the request's own schema is left alone
    assert bounded(schema, None) == schema
    nl = bounded(response_format("nl")["json_schema"]["schema"], 200)["properties"]["results"]["items"]
    assert nl["properties"]["reasoning"]["maxLength"] == nl["properties"]["id"]["maxLength"] >= 8
    # llama.cpp turns the bound into its grammar (a length-limited string rule)
    from llama_cpp.llama_chat_format import _grammar_for_response_format

    grammar = _grammar_for_response_format(_response_format(response_format("overall"), 160))
    assert grammar is not None and str(_response_format(response_format("overall"), 160)["schema"]) != str(schema)
