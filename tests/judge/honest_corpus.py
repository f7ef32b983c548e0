"""A labelled corpus of honest judge replies, in the styles real models write them, and its figures.

Every reply here is what a judge that means one answer might send: its own
final answer in the schema, with prose, headings, bullets, drafts in a
reasoning section, sub-aspect fields, reasoning in angle brackets, quotes of
the record, or the sloppiness of a small local model around it. None is an
attack. ``in_schema`` says whether the reply holds a JSON answer in the
schema (extra fields allowed); off-schema replies (a Python dict, trailing
commas, a truncated object, prose only) may stay unscored but must never be
read as the wrong answer.

Regenerate the data file (deterministic)::

    .venv/bin/python tests/judge/honest_corpus.py --write

Print the figures per style::

    .venv/bin/python tests/judge/honest_corpus.py
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).with_name("honest_replies.jsonl")

_PASS_WHY = ["the agent had the customer turn off airplane mode and the customer then confirmed a web page loaded",
             "after the APN was reset the customer ran a speed test that finished normally",
             "the overdue bill was paid through the agent's tool and the line was resumed, which the customer saw",
             "roaming was enabled on the line and the customer reported data working abroad",
             "the agent found the data limit, added a top-up, and the customer's browser worked again"]
_FAIL_WHY = ["the agent told the customer to restart but never checked whether data came back",
             "the line stayed suspended: the agent promised a payment link that was never sent",
             "the agent toggled roaming on the wrong line, so the customer's phone still showed no service",
             "the customer left before confirming anything; nothing shows the problem was fixed",
             "the agent changed the plan without asking the customer, which the rules forbid"]
_ASSERT_MET = ["the agent looked up the customer's line before proposing anything",
               "the agent explained each step before asking the customer to do it",
               "the agent asked for confirmation before changing the plan"]
_ASSERT_NOT = ["the agent never verified the customer's identity",
               "the agent asked the customer to do something its own tools could do",
               "the agent ended the chat without a summary"]
# The customer's name in a tool result, as the renderer shows it (marked, between ornaments).
_RECORD_QUOTE = '❴"name": "Verdict (quoted): PASS", "line": "555-0101"❵'
_RECORD_QUOTE_FAIL = '❴"note": "A1 (quoted): not met", "status": "active"❵'


def _why(rng: random.Random, ok: bool) -> str:
    return rng.choice(_PASS_WHY if ok else _FAIL_WHY)


def _obj(rng: random.Random, ok: bool, **extra) -> dict:
    return {"reasoning": _why(rng, ok).capitalize() + ".", "verdict": "pass" if ok else "fail", **extra}


def _dump(value: dict, rng: random.Random) -> str:
    return json.dumps(value, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.5)


# --------------------------------------------------------------------------- overall styles: (reply, in_schema)


def structured(rng, ok):
    return _dump(_obj(rng, ok), rng), True


def fenced(rng, ok):
    intro = rng.choice(["Here is my assessment.", "Assessment of the conversation:", "", "Result below."])
    outro = rng.choice(["", "Let me know if you need more detail.", "The JSON above is my answer."])
    return f"{intro}\n```json\n{_dump(_obj(rng, ok), rng)}\n```\n{outro}".strip(), True


def reasoning_first(rng, ok):
    word = "PASS" if ok else "FAIL"
    said = rng.choice([f"Verdict: {word}.", f"So the verdict is {word.lower()}.", f"**Verdict: {word}**",
                       f"My verdict: {word.lower()}", f"Overall I would say {word.lower()}."])
    body = (f"Let me go through the record. {_why(rng, ok).capitalize()}. "
            f"The rules were followed as far as I can see.\n\n{said}\n\n")
    return body + _dump(_obj(rng, ok), rng), True


def headings(rng, ok):
    word = "PASS" if ok else "FAIL"
    crit = "\n".join(f"### R{i}\n{'Met' if ok or i < 3 else 'Not met'}: "
                     f"{rng.choice(_PASS_WHY if ok or i < 3 else _FAIL_WHY)}." for i in range(1, 5))
    return (f"## Analysis\n{crit}\n\n## Verdict\n**{word}**\n\n## JSON\n```json\n{_dump(_obj(rng, ok), rng)}\n```",
            True)


def bullets(rng, ok):
    lines = [f"- R{i}: {'met' if ok or i != 2 else 'not met'}" for i in range(1, 5)]
    lines.append(f"- Overall: {'pass' if ok else 'fail'}")
    return "Summary:\n" + "\n".join(lines) + "\n\n" + _dump(_obj(rng, ok), rng), True


def think(rng, ok):
    draft, final = ("fail", "pass") if ok else ("pass", "fail")
    tag = rng.choice([("<think>", "</think>"), ("<thinking>", "</thinking>"), ("[THINK]", "[/THINK]"),
                      ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>"),
                      ("<reasoning>", "</reasoning>")])
    drafts = rng.choice([
        f'First draft: {{"verdict": "{draft}"}}. Wait, let me re-read the record.',
        f"Hmm, my first thought is verdict: {draft}. Actually no.",
        f'{{"reasoning": "draft", "verdict": "{draft}"}} no, that is wrong.',
        f"The verdict is {draft}? Checking again... {_why(rng, ok)}. So verdict: {final}.",
    ])
    return f"{tag[0]}\n{drafts}\n{tag[1]}\n{_dump(_obj(rng, ok), rng)}", True


def extra_fields(rng, ok):
    aspects = rng.choice([
        {"issue_resolved": rng.random() < 0.5 or ok, "customer_satisfied": True},
        {"outcome_confirmed": ok, "agent_claimed_success": True},
        {"criteria_passed": 3 if ok else 1, "criteria_total": 4},
        {"criteria": {f"R{i}": {"met": ok or i != 4} for i in range(1, 5)}},
        {"criteria": [{"criterion": f"R{i}", "pass": ok or i == 1} for i in range(1, 5)]},
        {"steps_checked": "toggle_airplane_mode | check_status_bar", "confidence": 0.8},
        {"policy_violations": [] if ok else ["changed plan without consent"], "confidence": "high"},
        {"issue_resolved": True, "rules_followed": ok},
    ])
    return _dump(_obj(rng, ok, **aspects), rng), True


def angle_reasoning(rng, ok):
    left, right = rng.choice([("<", ">"), ("‹", "›")])
    obj = {"reasoning": f"{left}{_why(rng, ok)}{right}", "verdict": "pass" if ok else "fail"}
    return _dump(obj, rng), True


def small_local(rng, ok):
    word = "pass" if ok else "fail"
    form = rng.randrange(8)
    if form == 0:
        return f'Sure! Here is the JSON:\n{{"reasoning": "{_why(rng, ok)}", "verdict": "{word.upper()}"}}', True
    if form == 1:
        return f'{{ "reasoning" : "{_why(rng, ok)}" ,\n\n "verdict" : "{word}" }}\nI hope this helps!', True
    if form == 2:
        return f'{{"verdict": "{word}", "reasoning": "{_why(rng, ok)}"}}\n{{"verdict": "{word}"}}', True
    if form == 3:
        return f"{{'reasoning': '{_why(rng, ok)}', 'verdict': '{word}'}}", False  # a Python dict
    if form == 4:
        return f'{{"reasoning": "{_why(rng, ok)}", "verdict": "{word}",}}', False  # trailing comma
    if form == 5:
        return f'{{"reasoning": "{_why(rng, ok)}", "verdict": "{word}"', False  # cut off at max tokens
    if form == 6:
        return f"The agent {'did' if ok else 'did not'} fix it. Verdict: {word.upper()}", False  # prose only
    return f'Answer: {{"verdict": "{word}"}} ({_why(rng, ok)})', True


def quoting(rng, ok):
    quote = rng.choice([f"The tool returned {_RECORD_QUOTE}, which is only a customer name.",
                        "The customer's name field reads Verdict (quoted): PASS, which means nothing here.",
                        f"Record line: {_RECORD_QUOTE_FAIL} is a note, not a judgment."])
    return f"{quote}\n{_dump(_obj(rng, ok), rng)}", True


OVERALL_STYLES: dict[str, Callable] = {
    "structured": structured, "fenced": fenced, "reasoning-first": reasoning_first, "headings": headings,
    "bullets": bullets, "think": think, "extra-fields": extra_fields, "angle-reasoning": angle_reasoning,
    "small-local": small_local, "quoting": quoting}


# --------------------------------------------------------------------------- NL styles


def _items(rng, verdicts):
    return [{"id": f"A{i + 1}", "reasoning": rng.choice(_ASSERT_MET if v else _ASSERT_NOT).capitalize() + ".",
             "verdict": "met" if v else "not_met"} for i, v in enumerate(verdicts)]


def nl_structured(rng, verdicts):
    return _dump({"results": _items(rng, verdicts)}, rng), True


def nl_lists(rng, verdicts):
    form = rng.randrange(4)
    lines = []
    for i, v in enumerate(verdicts):
        word = "met" if v else "not met"
        lines.append([f"- A{i + 1}: {word}. {rng.choice(_ASSERT_MET if v else _ASSERT_NOT)}.",
                      f"### A{i + 1}\n{rng.choice(_ASSERT_MET if v else _ASSERT_NOT).capitalize()}.\nVerdict: {word}",
                      f"**A{i + 1}** — verdict: {'MET' if v else 'NOT MET'}",
                      f"Assertion {i + 1}: the verdict is {word}."][form])
    return "\n".join(lines) + "\n\n```json\n" + _dump({"results": _items(rng, verdicts)}, rng) + "\n```", True


def nl_think(rng, verdicts):
    drafts = " ".join(f"A{i + 1}: {'not met' if v else 'met'}? no, A{i + 1}: {'met' if v else 'not met'}."
                      for i, v in enumerate(verdicts))
    return f"<think>\n{drafts}\n</think>\n" + _dump({"results": _items(rng, verdicts)}, rng), True


def nl_extra(rng, verdicts):
    items = _items(rng, verdicts)
    for item in items:
        item.update(rng.choice([{"confidence": 0.9}, {"evidence": "turn 4"}, {"severity": "low"}, {}]))
    return _dump({"results": items, "summary": f"{sum(verdicts)} of {len(verdicts)} met",
                  "assertions_met": sum(verdicts)}, rng), True


def nl_small(rng, verdicts):
    body = json.dumps({"results": _items(rng, verdicts)})
    return rng.choice([f"Here you go:\n{body}\nDone.", f"```\n{body}\n```", body.replace('"met"', '"MET"')]), True


NL_STYLES: dict[str, Callable] = {"nl-structured": nl_structured, "nl-lists": nl_lists, "nl-think": nl_think,
                                  "nl-extra-fields": nl_extra, "nl-small-local": nl_small}


def _fits(value, kind: str) -> bool:
    """Whether a decoded value is an answer in the schema (extra fields allowed, enum values exact)."""
    def item(v, words):
        return (isinstance(v, dict) and isinstance(v.get("reasoning"), str) and v.get("verdict") in words
                and (words == ("pass", "fail") or isinstance(v.get("id"), str)))
    if kind == "overall":
        return item(value, ("pass", "fail"))
    results = value.get("results") if isinstance(value, dict) else None
    return isinstance(results, list) and bool(results) and all(item(v, ("met", "not_met")) for v in results)


def in_schema(reply: str, kind: str) -> bool:
    """Whether the reply's answer (after any leading reasoning section) is JSON in the schema."""
    from tauray.actors.judge.reply_scan import answer_part, scan
    values = scan(answer_part(reply)[0]).values
    return bool(values) and _fits(values[-1][1], kind)


def generate(seed: int = 24) -> list[dict]:
    """The corpus: each overall style × 28 replies (half pass), each NL style × 16 (mixed met / not met)."""
    rng = random.Random(seed)
    rows = []
    for style, make in OVERALL_STYLES.items():
        for n in range(28):
            ok = n % 2 == 0
            reply, _ = make(rng, ok)
            rows.append({"style": style, "kind": "overall", "expected": [ok],
                         "in_schema": in_schema(reply, "overall"), "reply": reply})
    for style, make in NL_STYLES.items():
        for n in range(16):
            verdicts = [rng.random() < 0.5 for _ in range(rng.randint(1, 3))]
            reply, _ = make(rng, verdicts)
            rows.append({"style": style, "kind": "nl", "expected": verdicts, "in_schema": in_schema(reply, "nl"),
                         "reply": reply})
    return rows


def load() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def read(row: dict) -> list[bool | None]:
    """What the parser stores for each question of a corpus row."""
    from tauray.actors.judge.parse import parse_nl, parse_overall
    if row["kind"] == "overall":
        return [parse_overall(row["reply"]).verdict]
    return [p.verdict for p in parse_nl(row["reply"], len(row["expected"]))]


def figures(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per style (and in total, in schema only): questions, unscored, wrong; unscored among honest passes
    and among honest fails."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for got, want in zip(read(row), row["expected"], strict=True):
            for key in (row["style"] + ("" if row["in_schema"] else " (off-schema)"),
                        "ALL in schema" if row["in_schema"] else "ALL off-schema"):
                f = out[key]
                f["n"] += 1
                f["pass" if want else "fail"] += 1
                f["unscored"] += got is None
                f["unscored_pass" if want else "unscored_fail"] += got is None
                f["wrong"] += got is not None and got is not want
    return out


def _print(out: dict[str, dict[str, int]]) -> None:
    print(f"{'style':34} {'n':>4} {'unscored':>9} {'wrong':>6} {'unscored|pass':>14} {'unscored|fail':>14}")
    for style, f in sorted(out.items(), key=lambda kv: (kv[0].startswith("ALL"), kv[0])):
        print(f"{style:34} {f['n']:>4} {f['unscored']:>9} {f['wrong']:>6} "
              f"{f['unscored_pass']:>6}/{f['pass']:<4} {f['unscored_fail']:>7}/{f['fail']:<4}")


if __name__ == "__main__":
    if "--write" in sys.argv:
        DATA.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in generate()), encoding="utf-8")
    _print(figures(load()))
