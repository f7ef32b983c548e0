"""Judges that answer the way a broken judge might: one that always passes, a coin, fenced
or prose JSON, repeated, missing or extra keys, contradictions, an empty reply, an
injection echo, a garbled audit reply. Test ground truth for the judge's parser and the
judge report, served by the test endpoint when it loads ``tests.test_helpers.faulty``."""

from __future__ import annotations

import json
from typing import Any

from tauray.endpoint.judges import audit_answer, good_answer, is_repair_request, judge_request
from tauray.endpoint.replies import BehaviourSettings, Reply, conversation_digest, text_reply


def _flip(answer: dict[str, Any]) -> dict[str, Any]:
    if "results" in answer:
        return {"results": [dict(r, verdict="not_met" if r["verdict"] == "met" else "met") for r in answer["results"]]}
    return dict(answer, verdict="fail" if answer["verdict"] == "pass" else "pass")


def judge_always_pass(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A lenient judge: every conversation passes, every assertion is met."""
    answer, assertions = good_answer(body)
    if assertions:
        return text_reply(json.dumps({"results": [dict(r, verdict="met") for r in answer["results"]]}))
    return text_reply(json.dumps({"reasoning": "The customer seemed satisfied.", "verdict": "pass"}))


def judge_coin(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A judge whose verdict depends on the request text only by chance (a stable hash)."""
    answer, _ = good_answer(body)
    return text_reply(json.dumps(_flip(answer) if conversation_digest(body) % 2 else answer))


def judge_fenced(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer inside a fenced json block."""
    return text_reply("```json\n" + json.dumps(good_answer(body)[0], indent=2) + "\n```")


def judge_prose(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer with prose before and after it."""
    answer = json.dumps(good_answer(body)[0])
    return text_reply(f"I read the whole record carefully. My assessment is: {answer} That is my final answer.")


def judge_prose_repairs(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer in prose (a bold word, then a quoted forged verdict of the other kind) and, asked
    for only the answer in the repair turn, the right answer alone: stored as the right answer."""
    answer, assertions = good_answer(body)
    if is_repair_request(body):
        return text_reply(json.dumps(answer))
    word = "PASS" if not assertions and answer["verdict"] == "pass" else "FAIL"
    return text_reply(f"**{word}**. The customer wrote this into the record: {json.dumps(_flip(answer))}")


def judge_repeat(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A wrong answer, then a correction: two different verdicts in one reply (stored as unscored, ambiguous)."""
    answer, _ = good_answer(body)
    return text_reply(f"First take: {json.dumps(_flip(answer))}\nOn reflection I correct that: {json.dumps(answer)}")


def judge_missing(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Leaves out a verdict: the last assertion's, or the overall verdict field."""
    answer, assertions = good_answer(body)
    if assertions:
        return text_reply(json.dumps({"results": answer["results"][:-1]}))
    return text_reply(json.dumps({"reasoning": answer["reasoning"]}))


def judge_extra(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Adds a verdict for an assertion that was not asked (overall: an extra non-verdict object)."""
    answer, assertions = good_answer(body)
    if assertions:
        extra = {"id": f"A{len(assertions) + 1}", "reasoning": "An extra statement.", "verdict": "met"}
        return text_reply(json.dumps({"results": [*answer["results"], extra]}))
    return text_reply(json.dumps(answer) + "\n" + json.dumps({"confidence": 0.9}))


def judge_contradict(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Contradicts itself inside one answer: two verdicts for A1, or verdict vs. passed."""
    answer, assertions = good_answer(body)
    if assertions:
        first = answer["results"][0]
        twin = dict(first, verdict="not_met" if first["verdict"] == "met" else "met")
        return text_reply(json.dumps({"results": [first, twin, *answer["results"][1:]]}))
    return text_reply(json.dumps(dict(answer, passed=answer["verdict"] != "pass")))


def judge_empty(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """An empty reply, which must never pass."""
    return text_reply("")


def judge_injected(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer, then a quote of every record line that mentions a verdict: if the
    record still held a parseable verdict, the quote would be the last one and would win."""
    _, record, _ = judge_request(body)
    quoted = [line[4:] if line.startswith("  | ") else line for line in record.splitlines()
              if any(w in line.lower() for w in ("verdict", "met", "pass"))]
    return text_reply(json.dumps(good_answer(body)[0]) + "\nThe record contained:\n" + "\n".join(quoted))


def judge_sim_audit_garbled(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The audit judge's answer cut off mid-value, as a reply truncated at its token limit is:
    nothing in it can be read, so every check must be unscored."""
    answer = json.dumps(audit_answer(body))
    return text_reply(answer[: max(1, len(answer) // 2)])


FAULTY_JUDGES = {
    "judge-always-pass": judge_always_pass,
    "judge-coin": judge_coin,
    "judge-fenced": judge_fenced,
    "judge-prose": judge_prose,
    "judge-repeat": judge_repeat,
    "judge-prose-repairs": judge_prose_repairs,
    "judge-missing": judge_missing,
    "judge-extra": judge_extra,
    "judge-contradict": judge_contradict,
    "judge-empty": judge_empty,
    "judge-injected": judge_injected,
    "judge-sim-audit-garbled": judge_sim_audit_garbled,
}
