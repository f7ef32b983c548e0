"""Every tool of every domain, as it is actually sent: the request body is caught on a
loopback server (no network) and checked against the provider's documented schema rules.

* OpenAI structured outputs (``strict: true``): every object, in ``$defs`` too, has
  ``additionalProperties: false`` and lists all its properties in ``required``; no ``default``.
* Gemini: no object without properties at any depth ("properties: should be non-empty for
  OBJECT type"), after litellm has inlined ``$defs``.

Before, the strict rewrite skipped ``$defs`` and the checker did not look there, so airline
``book_reservation``, ``update_reservation_flights``, ``update_reservation_passengers`` and
telecom ``set_apn_settings`` were sent invalid while the checker passed them; the same four
went to Gemini with a free-form object option inside ``anyOf``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tauray.actors.llm import ModelCallError, ModelClient, ModelSpec
from tauray.actors.llm.tool_schemas import gemini_problems, strict_problems, strict_tool, tools_for
from tauray.scenarios.domains import DOMAINS
from tests.actors.test_provider_matrix import Capture

NESTED = {"book_reservation", "update_reservation_flights", "update_reservation_passengers", "set_apn_settings"}


def _all_tools() -> list[dict[str, Any]]:
    return [t.openai() for spec in DOMAINS.values() for side in ("agent", "user") for t in spec.tool_specs(side)]


@pytest.fixture(scope="module")
def capture():
    return Capture()


def _sent(capture: Capture, loop, model: str, base: str, tools: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    client = ModelClient(ModelSpec(model=model, api_base=base, num_retries=0, **fields))
    try:
        loop.run_until_complete(client.complete([{"role": "user", "content": "Hello."}], tools))
    except ModelCallError:
        pass  # the loopback answers 502; the request is what is checked
    finally:
        loop.run_until_complete(client.aclose())
    return capture.requests[-1]["body"]


def test_every_tool_is_sent_valid_for_openai_strict_mode(capture, loop, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai")
    tools = _all_tools()
    body = _sent(capture, loop, "openai/gpt-4o", f"{capture.base}/v1", tools, strict=True)
    assert len(body["tools"]) == len(tools)
    problems = {t["function"]["name"]: strict_problems(t["function"]["parameters"]) for t in body["tools"]}
    assert {n: p for n, p in problems.items() if p} == {}
    assert all(t["function"]["strict"] is True for t in body["tools"])
    assert NESTED <= {t["function"]["name"] for t in body["tools"] if "$defs" in t["function"]["parameters"]}


def test_every_tool_is_sent_to_gemini_without_an_object_lacking_properties(capture, loop, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-gemini")
    tools = _all_tools()
    body = _sent(capture, loop, "gemini/gemini-2.5-flash", capture.base, tools)
    declarations = [d for t in body["tools"] for d in t.get("function_declarations") or []]
    assert len(declarations) == len(tools)
    problems = {d["name"]: gemini_problems(d.get("parameters")) for d in declarations}
    assert {n: p for n, p in problems.items() if p} == {}
    # the nested records are still described, not dropped
    apn = next(d for d in declarations if d["name"] == "set_apn_settings")
    assert "apn_name" in json.dumps(apn["parameters"])


def test_the_checkers_fail_the_schemas_as_written():
    # Without the rewrites the same four tools break both rules, in $defs and nested anyOf.
    tools = {t["function"]["name"]: t for t in _all_tools()}
    for name in NESTED:
        params = tools[name]["function"]["parameters"]
        assert any("$defs" in p or "anyOf" in p for p in strict_problems(params)), name
        assert gemini_problems(params), name
    # a strict rewrite that left $defs alone is caught
    closed = strict_tool(tools["update_reservation_passengers"])["function"]["parameters"]
    assert not strict_problems(closed)
    assert strict_problems({**closed, "$defs": tools["update_reservation_passengers"]["function"]["parameters"]["$defs"]})
    assert strict_problems({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}},
                            "required": ["a"], "additionalProperties": False})


def test_the_rewrites_leave_the_originals_alone_and_other_providers_untouched():
    tools = _all_tools()
    before = json.dumps(tools, sort_keys=True)
    [strict_tool(t) for t in tools]
    out, changed = tools_for("gemini", tools)
    assert changed and json.dumps(tools, sort_keys=True) == before
    assert tools_for("openai", tools) == (tools, False)
