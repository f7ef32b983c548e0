"""Scripted behaviours served by the local test endpoint.

A behaviour stands in for a model: it looks at one Chat Completions request
body and decides what the assistant says next. Behaviours are pure functions
of the request (plus the endpoint's config), so the same conversation always
gets the same answer and any number of requests can run side by side without
shared state. Where a behaviour needs to "choose", it hashes the conversation
so far instead of drawing from a random generator.

The request's ``model`` field names the behaviour. Anything after a colon is
a parameter for it, e.g. ``scripted-user:5``. New behaviours are added by
putting a function into :data:`BEHAVIOURS`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from .endpoint_shapes import SHAPE_BEHAVIOURS
from .endpoint_writers import WRITING_BEHAVIOURS
from tauray.scenarios.conventions import HARNESS_TOOLS, STOP

STOP_TOKEN = STOP
"""Marker a simulated user appends to its last message (τ²'s convention)."""

# Tools a scripted agent never picks on its own: calling them would end or hand
# off the conversation, which is not what a scripted look-up should do.
_NEVER_CALLED = HARNESS_TOOLS
_PREFERRED_PREFIXES = ("get_", "check_")


class BehaviourSettings(Protocol):
    """The part of the endpoint config a behaviour may read."""

    @property
    def user_turns(self) -> int: ...


@dataclass(frozen=True)
class Reply:
    """What a behaviour answers: the assistant message and why it stopped."""

    message: dict[str, Any]
    finish_reason: str  # "stop" or "tool_calls"
    empty_choices: bool = False  # answer with a completion whose "choices" list is empty


Behaviour = Callable[[dict[str, Any], BehaviourSettings], Reply]


class UnknownBehaviour(KeyError):
    """The request named a model that no behaviour answers to."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.model = model


class BehaviourError(Exception):
    """A behaviour's way to answer with an HTTP error, as a provider refusing a request does."""

    def __init__(self, status: int, message: str, err_type: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type
        self.code = code


# --------------------------------------------------------------------------- helpers


def split_model(model: str) -> tuple[str, str | None]:
    """Split ``name:param`` into its name and optional parameter."""
    name, sep, param = model.partition(":")
    return name.strip(), (param.strip() if sep else None)


def model_param(body: dict[str, Any]) -> str | None:
    """The parameter after the colon in the request's model name, if any."""
    return split_model(str(body.get("model", "")))[1]


def conversation_digest(body: dict[str, Any]) -> int:
    """A stable integer for the conversation so far.

    Python's built-in ``hash`` is salted per process, so it cannot give the
    same choice across runs; a blake2b digest of the canonical JSON can.
    """
    raw = json.dumps(body.get("messages", []), sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(raw.encode(), digest_size=8).digest(), "big")


def _pick(options: list[Any] | tuple[Any, ...], digest: int, salt: int = 0) -> Any:
    return options[(digest + salt) % len(options)]


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages") or []
    return [m for m in messages if isinstance(m, dict)]


def _offered_functions(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function specs offered in the request, in order."""
    specs = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function") if tool.get("type", "function") == "function" else None
            if isinstance(fn, dict) and fn.get("name"):
                specs.append(fn)
    return specs


def text_reply(content: str) -> Reply:
    return Reply({"role": "assistant", "content": content}, "stop")


def tool_call_reply(name: str, arguments: str, call_id: str) -> Reply:
    """An assistant message with one function call; ``arguments`` is sent as given."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return Reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def placeholder_for(schema: Any) -> Any:
    """A value that fits a JSON-schema property well enough for a scripted call."""
    if not isinstance(schema, dict):
        return "unknown"
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict)]
        non_null = [o for o in options if o.get("type") != "null"]
        if non_null:
            return placeholder_for(non_null[0])
    kind = schema.get("type")
    if isinstance(kind, list):  # e.g. ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    return {
        "string": "unknown",
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "object": {},
        "array": [],
        "null": None,
    }.get(kind, "unknown")


def arguments_for(function: dict[str, Any]) -> dict[str, Any]:
    """Placeholder arguments for a function's required parameters."""
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    return {name: placeholder_for(props.get(name)) for name in params.get("required") or []}


def _word_count(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):  # content parts
        return sum(_word_count(p.get("text") if isinstance(p, dict) else p) for p in value)
    return 0


def prompt_words(body: dict[str, Any]) -> int:
    """Rough token count of the request: words across all messages."""
    total = 0
    for m in _messages(body):
        total += _word_count(m.get("content"))
        for call in m.get("tool_calls") or []:
            fn = (call.get("function") or {}) if isinstance(call, dict) else {}
            total += 1 + _word_count(str(fn.get("arguments", "")))
    return total


def completion_words(message: dict[str, Any]) -> int:
    """Rough token count of an assistant message."""
    total = _word_count(message.get("content"))
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        total += 1 + len(str(fn.get("arguments", "")).split())
    return total


# --------------------------------------------------------------------------- agents

_GREETINGS = (
    "Hello, thanks for contacting support. How can I help you today?",
    "Hi there! I'm the support assistant. What can I do for you?",
    "Good day, you've reached customer service. How may I assist you?",
)
_AFTER_TOOL = (
    "I looked that up in our system and have the details now. Is there anything else you need?",
    "Thanks for waiting, I checked your account and everything is in order.",
    "I've looked into it: the information is on file and I can help from here.",
)
_AGENT_TEXT = (
    "I understand. Could you give me a little more detail so I can help?",
    "Thanks for the information. Let me make sure I have this right before we continue.",
    "Understood. I can help with that; please confirm that you'd like me to proceed.",
    "Sorry for the trouble. Could you try that again and tell me what you see?",
)


def _is_first_agent_turn(messages: list[dict[str, Any]]) -> bool:
    return not any(m.get("role") == "assistant" for m in messages)


def _agent_text(messages: list[dict[str, Any]], digest: int) -> Reply:
    if _is_first_agent_turn(messages):
        return text_reply(_pick(_GREETINGS, digest))
    if messages and messages[-1].get("role") == "tool":
        return text_reply(_pick(_AFTER_TOOL, digest))
    return text_reply(_pick(_AGENT_TEXT, digest))


def _choose_tool(body: dict[str, Any], digest: int) -> dict[str, Any] | None:
    allowed = [f for f in _offered_functions(body) if f["name"] not in _NEVER_CALLED]
    preferred = [f for f in allowed if f["name"].startswith(_PREFERRED_PREFIXES)]
    if preferred:
        return _pick(preferred, digest)
    return allowed[0] if allowed else None


def scripted_agent(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A support agent that looks one thing up after each customer message.

    The first turn is a greeting. When tools are offered and the customer has
    just spoken, it calls one read-style tool (``get_*``/``check_*``) with
    placeholder arguments; after the tool result it says what it found.
    """
    messages = _messages(body)
    digest = conversation_digest(body)
    if (
        body.get("tools")
        and not _is_first_agent_turn(messages)
        and messages
        and messages[-1].get("role") == "user"
    ):
        function = _choose_tool(body, digest)
        if function is not None:
            args = json.dumps(arguments_for(function))
            return tool_call_reply(function["name"], args, f"call_{digest:016x}")
    return _agent_text(messages, digest)


def scripted_agent_quiet(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The same agent without tool use: text only, so sweeps have a contrast."""
    messages = _messages(body)
    return _agent_text(messages, conversation_digest(body))


# --------------------------------------------------------------------------- users

_USER_OPENINGS = (
    "Hi, my mobile data stopped working this morning and I need it fixed.",
    "Hello, I was charged twice on my last bill and would like a refund.",
    "Hi, I can't make any calls from my phone since yesterday.",
    "Hello, I'd like to change my reservation to a later date please.",
)
_USER_FOLLOW_UPS = (
    "Okay, I did that. What should I do next?",
    "My account number should be on file, the phone number is the one I'm calling from.",
    "I restarted the phone but it still doesn't work.",
    "Sure, please go ahead.",
    "Can you check again? I still see the same problem.",
)
_USER_CLOSINGS = (
    "Great, that's all I needed. Thank you!",
    "Thanks for your help, goodbye.",
    "Alright, I'll leave it there for today. Bye.",
)


def _user_turn_limit(body: dict[str, Any], default: int) -> int:
    param = model_param(body)
    if param:
        try:
            return max(0, int(param))
        except ValueError:
            pass
    return default


def _user_reply(body: dict[str, Any], turns: int) -> Reply:
    """Reply as the customer; in this view the agent speaks as ``user``.

    Having already replied ``turns`` times, the customer wraps up and marks the
    end with the stop token.
    """
    messages = _messages(body)
    digest = conversation_digest(body)
    own_replies = sum(1 for m in messages if m.get("role") == "assistant")
    if own_replies >= turns:
        return text_reply(f"{_pick(_USER_CLOSINGS, digest)} {STOP_TOKEN}")
    if own_replies == 0:
        return text_reply(_pick(_USER_OPENINGS, digest))
    return text_reply(_pick(_USER_FOLLOW_UPS, digest))


def scripted_user(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A customer who replies ``user_turns`` times (or ``:N``), then stops."""
    return _user_reply(body, _user_turn_limit(body, settings.user_turns))


def scripted_user_impatient(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A customer who gives up after a single reply."""
    return _user_reply(body, _user_turn_limit(body, 1))


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


def _judge_request(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(text before the record, the record, assertion texts) of a judge request."""
    text = "\n".join(str(m.get("content") or "") for m in _messages(body) if m.get("role") in ("system", "user"))
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


def _good_answer(body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The right answer for this request, as the reply object, and the assertions asked."""
    _, record, assertions = _judge_request(body)
    if assertions:
        results = [{"id": f"A{i + 1}", "reasoning": "Scripted check of the statement.",
                    "verdict": "met" if _nl_expected(a) else "not_met"} for i, a in enumerate(assertions)]
        return {"results": results}, assertions
    acted = _record_acted(record)
    return {"reasoning": "The record shows a fix being applied." if acted else "No fix was applied.",
            "verdict": "pass" if acted else "fail"}, assertions


def _flip(answer: dict[str, Any]) -> dict[str, Any]:
    if "results" in answer:
        return {"results": [dict(r, verdict="not_met" if r["verdict"] == "met" else "met") for r in answer["results"]]}
    return dict(answer, verdict="fail" if answer["verdict"] == "pass" else "pass")


def judge_good(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A judge that is right: overall passes iff the record shows a state-changing step;
    an assertion is met unless its text carries the marker "(test: not met)"."""
    return text_reply(json.dumps(_good_answer(body)[0]))


def judge_always_pass(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A lenient judge: every conversation passes, every assertion is met."""
    answer, assertions = _good_answer(body)
    if assertions:
        return text_reply(json.dumps({"results": [dict(r, verdict="met") for r in answer["results"]]}))
    return text_reply(json.dumps({"reasoning": "The customer seemed satisfied.", "verdict": "pass"}))


def judge_coin(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A judge whose verdict depends on the request text only by chance (a stable hash)."""
    answer, _ = _good_answer(body)
    return text_reply(json.dumps(_flip(answer) if conversation_digest(body) % 2 else answer))


def judge_fenced(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer inside a fenced json block."""
    return text_reply("```json\n" + json.dumps(_good_answer(body)[0], indent=2) + "\n```")


def judge_prose(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The right answer with prose before and after it."""
    answer = json.dumps(_good_answer(body)[0])
    return text_reply(f"I read the whole record carefully. My assessment is: {answer} That is my final answer.")


def judge_repeat(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A wrong answer, then a correction: two different verdicts in one reply (stored as unscored, ambiguous)."""
    answer, _ = _good_answer(body)
    return text_reply(f"First take: {json.dumps(_flip(answer))}\nOn reflection I correct that: {json.dumps(answer)}")


def judge_missing(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Leaves out a verdict: the last assertion's, or the overall verdict field."""
    answer, assertions = _good_answer(body)
    if assertions:
        return text_reply(json.dumps({"results": answer["results"][:-1]}))
    return text_reply(json.dumps({"reasoning": answer["reasoning"]}))


def judge_extra(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Adds a verdict for an assertion that was not asked (overall: an extra non-verdict object)."""
    answer, assertions = _good_answer(body)
    if assertions:
        extra = {"id": f"A{len(assertions) + 1}", "reasoning": "An extra statement.", "verdict": "met"}
        return text_reply(json.dumps({"results": [*answer["results"], extra]}))
    return text_reply(json.dumps(answer) + "\n" + json.dumps({"confidence": 0.9}))


def judge_contradict(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Contradicts itself inside one answer: two verdicts for A1, or verdict vs. passed."""
    answer, assertions = _good_answer(body)
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
    _, record, _ = _judge_request(body)
    quoted = [line[4:] if line.startswith("  | ") else line for line in record.splitlines()
              if any(w in line.lower() for w in ("verdict", "met", "pass"))]
    return text_reply(json.dumps(_good_answer(body)[0]) + "\nThe record contained:\n" + "\n".join(quoted))


# --------------------------------------------------------------------------- refusals

REFUSE_MARK = "[refuse]"
"""A message containing this makes ``refuse-marked`` refuse the request."""


def refuse_marked(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Refuses (with the HTTP status after the colon, default 400) any request whose messages
    carry :data:`REFUSE_MARK`, and answers every other one: a provider that refuses some requests
    for what they are while the deployment stays healthy."""
    status = int(model_param(body) or 400)
    if any(REFUSE_MARK in str(m.get("content") or "") for m in _messages(body)):
        raise BehaviourError(status, f"Refused: the request carries {REFUSE_MARK}.", code="refused")
    return text_reply("ready")


def no_seed(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """A server that refuses the ``seed`` parameter (as some OpenAI-compatible servers do)."""
    if "seed" in body:
        raise BehaviourError(400, "Unrecognized request argument supplied: seed", code="unsupported_parameter")
    return text_reply("ready")


BEHAVIOURS: dict[str, Behaviour] = {
    "scripted-agent": scripted_agent,
    "scripted-agent-quiet": scripted_agent_quiet,
    "scripted-user": scripted_user,
    "scripted-user-impatient": scripted_user_impatient,
    "judge-json": judge_json,
    "judge-good": judge_good,
    "judge-always-pass": judge_always_pass,
    "judge-coin": judge_coin,
    "judge-fenced": judge_fenced,
    "judge-prose": judge_prose,
    "judge-repeat": judge_repeat,
    "judge-missing": judge_missing,
    "judge-extra": judge_extra,
    "judge-contradict": judge_contradict,
    "judge-empty": judge_empty,
    "judge-injected": judge_injected,
    "refuse-marked": refuse_marked,
    "no-seed": no_seed,
    **WRITING_BEHAVIOURS,
    **SHAPE_BEHAVIOURS,
}
"""Behaviour registry: model name (before any ``:param``) to behaviour."""


def resolve(model: str) -> tuple[str, Behaviour]:
    """The registered name and behaviour for a request's model field."""
    name, _ = split_model(model)
    behaviour = BEHAVIOURS.get(name)
    if behaviour is None:
        raise UnknownBehaviour(model)
    return name, behaviour


__all__ = [
    "BEHAVIOURS",
    "REFUSE_MARK",
    "STOP_TOKEN",
    "BehaviourError",
    "Behaviour",
    "BehaviourSettings",
    "Reply",
    "UnknownBehaviour",
    "arguments_for",
    "completion_words",
    "conversation_digest",
    "model_param",
    "placeholder_for",
    "prompt_words",
    "resolve",
    "split_model",
    "text_reply",
    "tool_call_reply",
]
