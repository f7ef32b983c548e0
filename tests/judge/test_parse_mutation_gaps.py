"""What a reply that contradicts itself, or says nothing, reads as (issue 27, second
mutation run: the reasons and the reasoning kept for these replies were unpinned).
The reason is what a report counts unscored replies by (``unscored_reason_class``), and
the reasoning is what a reviewer reads, so both are part of the parser's answer."""

from __future__ import annotations

import json

import pytest
from tauray.actors.judge.parse import parse_nl, parse_overall


@pytest.mark.parametrize("reply", [None, "", "  \n\t"])
def test_an_empty_reply_is_unscored_as_empty(reply):
    assert parse_overall(reply).model_dump() == {"verdict": None, "reasoning": None, "unscored_reason": "empty reply"}
    assert [p.unscored_reason for p in parse_nl(reply, 2)] == ["empty reply", "empty reply"]


def test_an_object_that_contradicts_itself_unscores_the_reply_with_its_own_reason_and_reasoning():
    clean = '{"reasoning": "r2", "verdict": "pass"}'
    torn = '{"reasoning": "r1", "verdict": "pass", "Verdict": "fail"}'
    for reply, at in ((torn, 0), (f"{clean} {torn}", len(clean) + 1), (f"{torn} {clean}", 0)):
        parsed = parse_overall(reply)
        assert parsed.verdict is None and parsed.reasoning == "r1"
        assert parsed.unscored_reason == f"ambiguous: verdict='pass' but Verdict='fail' in one object at char {at}"


# --- why there is no verdict: the reason names what was (not) found -------------------------

@pytest.mark.parametrize("reply, reason", [
    ('{"reasoning": "looks fine"}', "no 'verdict' key in the reply's JSON (top-level keys: reasoning)"),
    ('{"a": 1} {"b": {"c": 2}}', "no 'verdict' key in the reply's JSON (top-level keys: a, b)"),
    ("[1, 2]", "no 'verdict' key in the reply's JSON (top-level keys: none)"),
    ("no json here", "no JSON 'verdict' key found in reply"),
    ('{"a": 1, "a": 2} and {"b": ', ("reply JSON starting at char 0 could not be decoded: duplicate key 'a' (and 1 more); "
                                     "nothing inside a broken value is read, and no other 'verdict' key was found")),
    ("Verdict: FAIL", "verdict text 'fail' appears only outside any decoded JSON value; no JSON verdict found in reply"),
    ("Verdict: FAIL and verdict: pass", ("ambiguous: verdict text 'fail', 'pass' appears only outside any decoded "
                                         "JSON value; no JSON verdict found in reply")),
    ('{"verdict": "<pass|fail>"}', "echo of the reply-format example (verdict='<pass|fail>')"),
    ('{"verdict": "pass"} {"verdict": "maybe"}',
     "ambiguous: the reply holds 2 verdicts that disagree: 'pass' at char 0; 'maybe' at char 20"),
    ('{"verdict": "pass", "reasoning": "a"} Verdict: FAIL',
     "ambiguous: the reply holds 2 verdicts that disagree: 'pass' at char 0; 'fail' outside any decoded JSON value"),
    ("<think>verdict: pass</think>",
     "the reply holds only a reasoning section (<think>…</think> or kin) and no answer after it"),
])
def test_overall_unscored_reasons(reply, reason):
    parsed = parse_overall(reply)
    assert (parsed.verdict, parsed.unscored_reason) == (None, reason)


def test_overall_reasoning_of_an_unrecognised_value_and_of_repeated_agreeing_verdicts():
    parsed = parse_overall('{"verdict": "maybe", "reasoning": "hmm"}')
    assert (parsed.verdict, parsed.reasoning) == (None, "hmm")
    assert parsed.unscored_reason == "unrecognised verdict value 'maybe' (expected fail or pass)"
    # the same verdict twice: scored, with the last statement's reasoning
    parsed = parse_overall('{"verdict": "pass", "reasoning": "a"} {"verdict": "pass", "reasoning": "b"}')
    assert (parsed.verdict, parsed.reasoning, parsed.unscored_reason) == (True, "b", None)
    # an echo of the example beside a real verdict is not a second voice
    parsed = parse_overall('{"verdict": "<pass|fail>", "reasoning": "x"} {"verdict": "pass", "reasoning": "y"}')
    assert (parsed.verdict, parsed.reasoning) == (True, "y")
    # prose that agrees is no conflict
    parsed = parse_overall('{"verdict": "pass", "reasoning": "a"} Verdict: PASS')
    assert (parsed.verdict, parsed.reasoning) == (True, "a")


def test_a_long_reason_is_cut_at_1000_characters():
    many = " ".join(f'{{"verdict": "{"pass" if i % 2 else "fail"}"}}' for i in range(200))
    reason = parse_overall(many).unscored_reason
    assert reason.startswith("ambiguous: the reply holds 200 verdicts that disagree: 'fail' at char 0;")
    assert len(reason) == 1000
    nl = " ".join(json.dumps({"id": f"A{i}", "verdict": "met"}) for i in range(1, 200))
    assert {len(p.unscored_reason) for p in parse_nl(nl, 1)} == {1000}


# --- NL assertions ------------------------------------------------------------------------


def _items(*items) -> str:
    return json.dumps({"results": [{"id": i, "verdict": v, "reasoning": f"r{n}"} for n, (i, v) in enumerate(items)]})


@pytest.mark.parametrize("stray, shown", [("A3", "'A3'"), ("A0", "'A0'"), (None, "None"), (True, "True"), ("x1", "'x1'")])
def test_an_item_for_an_assertion_not_asked_unscores_the_whole_reply(stray, shown):
    got = parse_nl(_items(("A1", "met"), (stray, "met")), 2)
    reason = f"reply has verdicts for assertions that were not asked (or without an id): {shown} at char 0.results[1]"
    assert [(p.verdict, p.unscored_reason) for p in got] == [(None, reason), (None, reason)]


def test_ids_are_read_loosely_but_only_as_asked_positions():
    got = parse_nl(_items((" a2 ", "met"), (1, "not_met")), 2)
    assert [(p.verdict, p.reasoning) for p in got] == [(False, "r1"), (True, "r0")]
    got = parse_nl(_items(("A1", "met"), ("A2", "met"), ("A1", "met")), 2)  # the same verdict twice
    assert [(p.verdict, p.reasoning) for p in got] == [(True, "r2"), (True, "r1")]


def test_nl_reasons_per_assertion():
    got = parse_nl(_items(("A1", "maybe"), ("A2", "met")), 2)
    assert (got[0].verdict, got[0].reasoning) == (None, "r0")
    assert got[0].unscored_reason == "A1: unrecognised verdict value 'maybe' (expected met or not_met)"
    got = parse_nl(_items(("A1", "met")) + " A1: not met", 2)
    assert got[0].unscored_reason == ("ambiguous: contradictory verdicts for A1: 'met' at char 0.results[0]; "
                                      "'a1: not met' outside any decoded JSON value")
    assert got[1].unscored_reason == "no verdict for A2"
    got = parse_nl(_items(("A1", "maybe"), ("A1", "met")), 1)
    assert got[0].unscored_reason == ("ambiguous: contradictory verdicts for A1: 'maybe' at char 0.results[0]; "
                                      "'met' at char 0.results[1]")
    torn = json.dumps({"results": [{"id": "A1", "verdict": "met", "Verdict": "not_met", "reasoning": "rr"},
                                   {"id": "A2", "verdict": "met", "reasoning": "q"}]})
    got = parse_nl(torn, 2)
    assert (got[0].verdict, got[0].reasoning) == (None, "rr")
    assert got[0].unscored_reason == "A1: ambiguous: verdict='met' but Verdict='not_met' in one object at char 0.results[0]"
    assert (got[1].verdict, got[1].reasoning) == (True, "q")


@pytest.mark.parametrize("reply, detail", [
    ('{"reasoning": "x"}', "no item with an id and a verdict in the reply's JSON (top-level keys: reasoning)"),
    ("A1: not met", "no JSON item with an id and a verdict found in reply"),
    ("Verdict: met", ("verdict text only outside any decoded JSON value; no JSON item with an id and a verdict "
                      "found in reply")),
])
def test_a_reply_without_any_item_says_why_for_every_assertion(reply, detail):
    got = parse_nl(reply, 2)
    assert [p.unscored_reason for p in got] == [f"no verdict for A1 ({detail})", f"no verdict for A2 ({detail})"]


def test_only_a_reasoning_section_is_unscored_for_every_assertion():
    reason = "the reply holds only a reasoning section (<think>…</think> or kin) and no answer after it"
    assert [p.unscored_reason for p in parse_nl("<think>A1: met</think>", 2)] == [reason, reason]


# --- the schema asked for -------------------------------------------------------------------


def test_the_reply_schemas_are_pinned():
    """Sent verbatim to providers (and part of the prompt hash): a change here is a new contract."""
    from tauray.actors.judge.parse import reply_schema, response_format

    overall = {"type": "object",
               "properties": {"reasoning": {"type": "string"}, "verdict": {"type": "string", "enum": ["pass", "fail"]}},
               "required": ["reasoning", "verdict"], "additionalProperties": False}
    item = {"type": "object",
            "properties": {"id": {"type": "string"}, "reasoning": {"type": "string"},
                           "verdict": {"type": "string", "enum": ["met", "not_met"]}},
            "required": ["id", "reasoning", "verdict"], "additionalProperties": False}
    nl = {"type": "object", "properties": {"results": {"type": "array", "items": item}},
          "required": ["results"], "additionalProperties": False}
    assert reply_schema("overall") == overall and reply_schema("nl") == nl
    for kind, schema in (("overall", overall), ("nl", nl)):
        assert response_format(kind) == {"type": "json_schema", "json_schema": {
            "name": f"judge_{kind}_verdict", "schema": schema, "strict": True}}


# --- added after the second full run (its survivors) ----------------------------------------


def test_one_broken_value_is_named_alone_and_more_are_counted():
    one = parse_overall('{"a": 1, "a": 2}').unscored_reason
    assert one == ("reply JSON starting at char 0 could not be decoded: duplicate key 'a'; "
                   "nothing inside a broken value is read, and no other 'verdict' key was found")


def test_an_echo_of_the_example_around_a_real_value_still_disagrees():
    echo = '{"reasoning": "<your reasoning>", "verdict": "fail"}'
    parsed = parse_overall('{"verdict": "pass", "reasoning": "ok"} ' + echo)
    assert parsed.verdict is None and parsed.unscored_reason == (
        "ambiguous: the reply holds 2 verdicts that disagree: 'pass' at char 0; "
        "'fail' at char 39 (in an echo of the format example)")
    got = parse_nl(json.dumps({"results": [{"id": "A1", "verdict": "met", "reasoning": "ok"},
                                           {"id": "A1", "verdict": "not_met", "reasoning": "<your reasoning>"}]}), 1)
    assert got[0].verdict is None and got[0].unscored_reason == (
        "ambiguous: contradictory verdicts for A1: 'met' at char 0.results[0]; "
        "'not_met' at char 0.results[1] (in an echo of the format example)")


def test_two_different_unrecognised_values_are_ambiguous_not_just_unrecognised():
    assert parse_overall('{"verdict": "maybe"} {"verdict": "perhaps"}').unscored_reason == (
        "ambiguous: the reply holds 2 verdicts that disagree: 'maybe' at char 0; 'perhaps' at char 21")
    got = parse_nl(_items(("A1", "maybe"), ("A1", "perhaps")), 1)
    assert got[0].unscored_reason == ("ambiguous: contradictory verdicts for A1: 'maybe' at char 0.results[0]; "
                                      "'perhaps' at char 0.results[1]")


def test_an_item_that_contradicts_itself_wins_over_a_clean_twin():
    torn = {"id": "A1", "verdict": "met", "Verdict": "not_met", "reasoning": "x"}
    got = parse_nl(json.dumps({"results": [torn, {"id": "A1", "verdict": "met", "reasoning": "y"}]}), 1)
    assert (got[0].verdict, got[0].reasoning) == (None, "x")
    assert got[0].unscored_reason == "A1: ambiguous: verdict='met' but Verdict='not_met' in one object at char 0.results[0]"


def test_every_unasked_id_is_listed():
    got = parse_nl(_items(("A3", "met"), ("A4", "met")), 2)
    assert got[0].unscored_reason == ("reply has verdicts for assertions that were not asked (or without an id): "
                                      "'A3' at char 0.results[0], 'A4' at char 0.results[1]")


def test_every_long_reason_is_cut_at_1000_characters():
    assert len(parse_overall("verdict: pass. verdict: fail. " * 100).unscored_reason) == 1000
    flips = json.dumps({"results": [{"id": "A1", "verdict": "met" if i % 2 else "not_met"} for i in range(200)]})
    assert len(parse_nl(flips, 1)[0].unscored_reason) == 1000
    keys = json.dumps({f"key{i}": 1 for i in range(300)})
    assert [len(p.unscored_reason) for p in parse_nl(keys, 2)] == [1000, 1000]
