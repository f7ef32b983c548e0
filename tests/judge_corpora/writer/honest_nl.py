"""NL-assertion reply styles of the honest corpus, one function per style."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.judge_corpora.writer.honest_overall import Out
from tests.judge_corpora.writer.scenes import NLScene

Items = list[tuple[str, str, str]]
"""(id, verdict, reasoning) per asked assertion, in asked order."""


def items_of(scene: NLScene, pattern: list[str]) -> Items:
    out = []
    for n, (item, v) in enumerate(zip(scene.items, pattern, strict=True), start=1):
        out.append((f"A{n}", v, item.met if v == "met" else item.not_met))
    return out


def results(items: Items, order: list[int] | None = None) -> dict[str, object]:
    order = order if order is not None else list(range(len(items)))
    return {"results": [{"id": items[k][0], "reasoning": items[k][2], "verdict": items[k][1]} for k in order]}


def repair(items: Items) -> str:
    return json.dumps(results(items), ensure_ascii=False)


def nl_bare(items: Items, i: int) -> Out:
    return Out(json.dumps(results(items)), True, None, None, "gpt-4o")


def nl_fenced(items: Items, i: int) -> Out:
    return Out("```json\n" + json.dumps(results(items), indent=2) + "\n```\n", True, None, None, "claude-sonnet")


def nl_reordered(items: Items, i: int) -> Out:
    order = list(range(len(items)))[::-1] if i % 2 else list(range(1, len(items))) + [0]
    return Out(json.dumps(results(items, order), indent=2), True, None, None, "gemini-2.5-flash")


def nl_extra_fields(items: Items, i: int) -> Out:
    body = {"results": [{"id": a, "verdict": v, "reasoning": r, "confidence": ["high", "medium"][(k + i) % 2],
                         "evidence": [f"#{4 + 2 * k}"]} for k, (a, v, r) in enumerate(items)],
            "summary": f"{sum(v == 'met' for _, v, _ in items)} of {len(items)} statements hold."}
    return Out(json.dumps(body, indent=2), False, repair(items), True, "gpt-4.1")  # undeclared keys (issue 47)


def nl_braces_words(items: Items, i: int) -> Out:
    body = results(items)
    first = body["results"][0]  # type: ignore[index]
    first["reasoning"] += (' The agent wrote {"id": "A1", "verdict": "met"} into its notes; that is content, not '
                           "evidence, and words like met / not met / pass / fail in it are ignored.")
    return Out(json.dumps(body, ensure_ascii=i % 2 == 0), True, None, None, "claude-opus")


def nl_think(items: Items, i: int) -> Out:
    lines = "\n".join(f"{a}: {r} -> {v.replace('_', ' ')}" for a, v, r in items)
    think = ["Let me check each statement against the record.\n", "Okay. Statements one by one. Wait, re-read A1 "
             "first.\n"][i % 2] + lines
    return Out(f"<think>\n{think}\n</think>\n" + json.dumps(results(items)), False, repair(items), True,
               ["qwen3-14b", "deepseek-r1-distill"][i % 2])


def nl_cot_then_json(items: Items, i: int) -> Out:
    prose = "\n".join(f"**{a}** — {r} So: {'met' if v == 'met' else 'not met'}." for a, v, r in items)
    return Out("I'll go through each statement.\n\n" + prose + "\n\n```json\n" + json.dumps(results(items), indent=2)
               + "\n```", False, repair(items), True, "llama-3.3-70b")


def nl_dict_by_id(items: Items, i: int) -> Out:
    body = {a: v for a, v, _ in items}
    return Out(json.dumps(body), False, repair(items), True, "mistral-7b")


def nl_trailing_comma(items: Items, i: int) -> Out:
    rows = ",\n".join('    {"id": "%s", "reasoning": %s, "verdict": "%s"}' % (a, json.dumps(r), v) for a, v, r in items)
    return Out('{\n  "results": [\n' + rows + ",\n  ],\n}", False, repair(items), True, "smollm2-1.7b")


def nl_python(items: Items, i: int) -> Out:
    rows = ", ".join("{'id': '%s', 'reasoning': '%s', 'verdict': '%s', 'checked': True}"
                     % (a, r.replace("'", ""), v) for a, v, r in items)
    return Out("{'results': [" + rows + "]}", False, repair(items), True, "qwen2.5-0.5b")


def nl_bool_verdict(items: Items, i: int) -> Out:
    body = {"results": [{"id": a, "reasoning": r, "verdict": v == "met"} for a, v, r in items]}
    return Out(json.dumps(body), False, repair(items), True, "phi-3.5-mini")


NL_STYLES: list[tuple[str, Callable[[Items, int], Out], int]] = [
    ("nl_bare", nl_bare, 6),
    ("nl_fenced", nl_fenced, 6),
    ("nl_reordered", nl_reordered, 6),
    ("nl_extra_fields", nl_extra_fields, 6),
    ("nl_braces_words", nl_braces_words, 4),
    ("nl_think", nl_think, 6),
    ("nl_cot_then_json", nl_cot_then_json, 6),
    ("nl_dict_by_id", nl_dict_by_id, 4),
    ("nl_trailing_comma", nl_trailing_comma, 4),
    ("nl_python", nl_python, 4),
    ("nl_bool_verdict", nl_bool_verdict, 2),
]
