"""Judge behaviours of the test endpoint: the well-behaved ones.

They read the judge request the way tauray renders it (the record between its BEGIN/END
marker lines; assertions listed as "A1. ..." before it) and answer as a good judge would:
``judge-good`` (the right verdicts), ``judge-json`` (always passes: enough for plumbing),
``judge-sim-audit`` (the audit prompt's checks, read from the customer's own words). Broken
judges (a coin, fenced or prose JSON, contradictions, an injection echo...) are test ground
truth: ``tests/test_helpers/faulty_judges.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauray.actors.judge.repair import REPAIR_OPENING
from tauray.endpoint.replies import (
    BehaviourSettings,
    Reply,
    request_messages,
    text_reply,
)
from tauray.scenarios.conventions import HARNESS_TOOLS

# --------------------------------------------------------------------------- judge


def judge_json(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A judge that always passes; enough to exercise the judging plumbing."""
    verdict = {"verdict": "pass", "reasoning": "Scripted judge: the transcript meets the criteria."}
    return text_reply(json.dumps(verdict))


# --------------------------------------------------------------------------- judges
#
# Judge behaviours read the judge request the way tauray renders it (the record
# between its BEGIN/END marker lines; assertions listed as "A1. ..." before it)
# and answer in one of the shapes a real judge might use, good or broken.

_JUDGE_BEGIN = "===== BEGIN CONVERSATION RECORD ====="
_JUDGE_END = "===== END CONVERSATION RECORD ====="
_READ_PREFIXES = ("get_", "check_", "find_", "search_", "list_", "lookup_")
_HARNESS = tuple(sorted(HARNESS_TOOLS))


def is_judge_request(body: dict[str, Any]) -> bool:
    """Whether a request carries a conversation record to judge (tauray's judge prompts do)."""
    return any(_JUDGE_BEGIN in str(m.get("content") or "") for m in request_messages(body))


def is_repair_request(body: dict[str, Any]) -> bool:
    """Whether a judge request is the repair turn (docs/judge.md): its last message asks for only the answer."""
    messages = request_messages(body)
    last = messages[-1] if messages else {}
    return last.get("role") == "user" and str(last.get("content") or "").startswith(REPAIR_OPENING)


def judge_request(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(text before the record, the record, assertion texts) of a judge request."""
    text = "\n".join(str(m.get("content") or "") for m in request_messages(body) if m.get("role") in ("system", "user"))
    head, _, rest = text.partition(_JUDGE_BEGIN)
    record = rest.partition(_JUDGE_END)[0]
    assertions = []
    for line in head.splitlines():
        name, dot, tail = line.strip().partition(". ")
        if dot and name[:1] == "A" and name[1:].isdigit():
            assertions.append(tail)
    return head, record, assertions


def _record_acted(record: str) -> bool:
    """Whether the record shows a state-changing step (a phone action or a non-read agent tool)."""
    for line in record.splitlines():
        if line.startswith("#") and "CUSTOMER performs phone action " in line:
            return True
        if line.startswith("#") and "AGENT calls tool " in line:
            tool = line.split("AGENT calls tool ", 1)[1].split(" ", 1)[0]
            if not tool.startswith(_READ_PREFIXES) and tool not in _HARNESS:
                return True
    return False


def _nl_expected(assertion: str) -> bool:
    return "(test: not met)" not in assertion


def good_answer(body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The right answer for this request, as the reply object, and the assertions asked."""
    _, record, assertions = judge_request(body)
    if assertions:
        results = [{"id": f"A{i + 1}", "reasoning": "Scripted check of the statement.",
                    "verdict": "met" if _nl_expected(a) else "not_met"} for i, a in enumerate(assertions)]
        return {"results": results}, assertions
    acted = _record_acted(record)
    return {"reasoning": "The record shows a fix being applied." if acted else "No fix was applied.",
            "verdict": "pass" if acted else "fail"}, assertions


def judge_good(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A judge that is right: overall passes iff the record shows a state-changing step;
    an assertion is met unless its text carries the marker "(test: not met)"."""
    return text_reply(json.dumps(good_answer(body)[0]))


# --------------------------------------------------------------------------- the audit judge
#
# The user-simulator audit asks its checks as lines "A1 [fault_class] ..." (data/judge_prompts/
# sim-audit-v*.toml). These answer them from the record alone, deterministically, for offline
# tests of the audit's judge tier: cues a real judge would weigh, reduced to phrases.

_AUDIT_CHECK = re.compile(r"^A(\d+) \[([a-z][a-z0-9_]*)\] ", re.MULTILINE)
_SAYS = re.compile(r"^#(\d+) CUSTOMER says:$")
_OUT_OF_ROLE = re.compile(r"\b(?:i am|i'm) (?:an? |just an? )?(?:ai|language model|simulat\w*|bot)\b|"
                          r"\bmy (?:instructions|script|prompt)\b|\bas instructed\b|\bmy task is\b", re.IGNORECASE)
_AGENT_ROLE = re.compile(r"\bhow (?:can|may) i (?:help|assist) you\b|\banything else i can help\b", re.IGNORECASE)
_STOP_WORD = re.compile(r"#\s*STOP\s*#")


def _customer_says(record: str) -> list[tuple[int, str]]:
    """(message number, text) of each thing the customer says in a rendered record."""
    out: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    for line in record.splitlines():
        if line.startswith("#"):
            m = _SAYS.match(line)
            current = [] if m else None
            if m:
                out.append((int(m.group(1)), current))
        elif current is not None and line.startswith("  | "):
            current.append(line[4:])
    return [(n, " ".join(lines)) for n, lines in out]


def _audit_verdict(fault_class: str, said: list[tuple[int, str]]) -> tuple[bool, str]:
    """(fault?, reasoning) for one check: character_broken on out-of-role phrases, persona_broken
    on the agent's phrases, unreasonable_stop on a stop in the customer's first message; any other
    class is met."""
    if fault_class == "character_broken":
        hit = next(((n, t) for n, t in said if _OUT_OF_ROLE.search(t)), None)
    elif fault_class == "persona_broken":
        hit = next(((n, t) for n, t in said if _AGENT_ROLE.search(t)), None)
    elif fault_class == "unreasonable_stop":
        hit = said[0] if said and _STOP_WORD.search(said[0][1]) else None
    else:
        hit = None
    if hit is None:
        return False, "Scripted audit: no cue for this fault."
    return True, f"#{hit[0]}: the customer says {hit[1][:160]!r}."


def audit_answer(body: dict[str, Any]) -> dict[str, Any]:
    head, record, _ = judge_request(body)
    said = _customer_says(record)
    results = []
    for m in _AUDIT_CHECK.finditer(head):
        fault, reasoning = _audit_verdict(m.group(2), said)
        results.append({"id": f"A{m.group(1)}", "reasoning": reasoning, "verdict": "not_met" if fault else "met"})
    return {"results": results}


def judge_sim_audit(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The user-simulator audit's judge, scripted: each check "A<n> [class]" of the request is
    answered from the customer's words in the record (see :func:`_audit_verdict`), a fault citing
    the message number that shows it."""
    return text_reply(json.dumps(audit_answer(body)))


JUDGE_BEHAVIOURS = {
    "judge-json": judge_json,
    "judge-good": judge_good,
    "judge-sim-audit": judge_sim_audit,
}
"""The well-behaved judges; the broken ones a test needs are ground truth of the tests
(``tests/test_helpers/faulty_judges.py``, loaded with ``--behaviours``)."""

__all__ = ["JUDGE_BEHAVIOURS", "audit_answer", "good_answer", "is_judge_request", "is_repair_request", "judge_request"]
