"""Faulty reference agents: ground truth for the agent side of the audit's attribution.

``faulty-agent:<class>[:<split>]`` plays ``scripted-agent-writes`` (it performs the
reference steps its system prompt lists, one per reply: its own steps as tool calls, the
customer's as tagged phone requests, then a closing line) but commits one agent fault of
``<class>`` once, at a seeded step: the fault's eligible positions in the step list are
known from the start, and the conversation's ``seed`` picks one. Where a scenario has no
eligible position (no agent write to skip, no customer id to suspend a line with) the
agent plays clean, which the ground-truth replay reports as "not committed".

The fault is a change of the plan, not of the moment: the agent's place in its (faulty)
plan is counted from its own past step messages, as the clean agent counts its place in
the reference, so the behaviour stays a pure function of the request and the audit's
ground truth can replay a recorded conversation through it and through the clean agent
(``dev/calibration/truth_agent.py``): the first reply where they differ is the fault.

Where words carry the fault (a transfer's summary, an early goodbye, a wrong instruction)
there are several phrasings; ``:tune`` uses the even-numbered ones, ``:heldout`` the odd
ones, no split all of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tauray.endpoint.replies import (
    BehaviourError,
    Reply,
    conversation_digest,
    model_param,
    request_messages,
    text_reply,
    tool_call_reply,
)
from tauray.endpoint.writers import (
    CLOSING,
    NoReferenceSteps,
    _functions,
    _took_step,
    reference_steps,
)
from tauray.scenarios.conventions import END_CONVERSATION, TRANSFER_TO_HUMAN

SPLITS = ("tune", "heldout")
Step = tuple[str, str, dict[str, Any]]  # side ("agent" | "user"), tool, arguments

# Phone actions without arguments an agent may wrongly ask for (telecom's customer tools).
_WRONG_PHONE = ("toggle_wifi", "toggle_data_saver_mode", "toggle_wifi_calling", "toggle_airplane_mode",
                "toggle_roaming", "toggle_data", "reseat_sim_card", "reboot_device")
_WRONG_MODES = ("2g_only", "3g_only", "4g_only", "3g_2g")
# Agent writes a faulty agent may do unasked (each needs the customer and line ids).
_EXTRA_WRITES = ("suspend_line", "disable_roaming", "refuel_data")


@dataclass(frozen=True)
class Plan:
    """The moves the faulty agent makes, in order, then its last word."""

    moves: tuple[tuple[str, str, dict[str, Any], str | None], ...]  # kind ("call" | "ask"), tool, args, words
    last: Reply  # what it says (or calls) once the moves are done
    committed_at: int | None  # index in ``moves`` (or len(moves) for ``last``) of the fault; None: played clean


def _phrasings(options: tuple[Any, ...], split: str | None) -> tuple[Any, ...]:
    return options if split is None else options[SPLITS.index(split)::2]


def _choose(options: tuple[Any, ...], seed: int, salt: int) -> Any:
    return options[(seed // salt) % len(options)]


def _closing() -> Reply:
    return text_reply(CLOSING)


def _clean_moves(steps: list[Step]) -> list[tuple[str, str, dict[str, Any], str | None]]:
    return [("call" if side == "agent" else "ask", name, args, None) for side, name, args in steps]


def _ids(steps: list[Step]) -> dict[str, str]:
    """Customer and line ids the reference steps use (what an extra write needs)."""
    out: dict[str, str] = {}
    for side, _, args in steps:
        if side == "agent":
            for key in ("customer_id", "line_id"):
                if isinstance(args.get(key), str):
                    out.setdefault(key, args[key])
    return out


# --- the fault classes: where each can be committed, and the plan it makes ------------------

Eligible = Callable[[list[Step], dict[str, dict[str, Any]]], list[int]]
Apply = Callable[[list[Step], int, int, str | None], Plan]


@dataclass(frozen=True)
class AgentFault:
    """One fault class of the faulty agent."""

    name: str
    eligible: Eligible  # positions in the step list where the fault can be committed
    apply: Apply  # (steps, position, seed, split) -> the faulty plan


def _agent_writes(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    return [i for i, (side, name, _) in enumerate(steps) if side == "agent" and name != TRANSFER_TO_HUMAN]


def _not_last(positions: list[int], steps: list[Step]) -> list[int]:
    # skipping the last step would be the same plan as ending early: keep the classes apart
    return [i for i in positions if i < len(steps) - 1]


def _skip(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
    moves = _clean_moves(steps[:at] + steps[at + 1:])
    return Plan(moves=tuple(moves), last=_closing(), committed_at=at)


def _wrong_value(key: str, value: Any, seed: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        options = tuple(v for v in (1.0, 3.0, 5.0, 10.0) if v != float(value))
        return type(value)(_choose(options, seed, 7))
    text = str(value)
    m = re.fullmatch(r"(?P<head>\D*)(?P<num>\d+)", text)
    if m:  # a neighbouring id: another line, another bill (it may not exist: an error is still a wrong write)
        num = int(m["num"]) + 1 + seed % 3
        return f"{m['head']}{num:0{len(m['num'])}d}"
    return f"{text}-x"


def _wrong_arguments(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
    _, name, args = steps[at]
    numeric = [k for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    ids = [k for k in args if k in ("line_id", "bill_id")]
    keys = numeric or ids or list(args)
    key = _choose(tuple(keys), seed, 11)
    wrong = {**args, key: _wrong_value(key, args[key], seed)}
    moves = _clean_moves(steps)
    moves[at] = ("call", name, wrong, None)
    return Plan(moves=tuple(moves), last=_closing(), committed_at=at)


def _with_args(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    return [i for i in _agent_writes(steps, offered) if steps[i][2]]


def _extra_options(steps: list[Step], offered: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    used = {name for _, name, _ in steps}
    return tuple(t for t in _EXTRA_WRITES if t in offered and t not in used
                 and not (t == "disable_roaming" and "enable_roaming" in used))


def _can_extra(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    ids = _ids(steps)
    if "customer_id" not in ids or "line_id" not in ids or not _extra_options(steps, offered):
        return []
    return list(range(len(steps) + 1))  # before any step, or after the last one


_SUSPEND_REASONS = ("Customer request", "Suspected misuse of the line", "Line maintenance",
                    "Temporary hold while troubleshooting")


def _extra_write(offered: dict[str, dict[str, Any]]) -> Apply:
    def apply(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
        ids = _ids(steps)
        tool = _choose(_extra_options(steps, offered), seed, 13)
        args: dict[str, Any] = {"customer_id": ids["customer_id"], "line_id": ids["line_id"]}
        if tool == "suspend_line":
            args["reason"] = _choose(_phrasings(_SUSPEND_REASONS, split), seed, 17)
        if tool == "refuel_data":
            args["gb_amount"] = 1.0
        moves = _clean_moves(steps)
        moves.insert(at, ("call", tool, args, None))
        return Plan(moves=tuple(moves), last=_closing(), committed_at=at)
    return apply


def _customer_steps(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    return [i for i, (side, _, _) in enumerate(steps) if side == "user"]


def _can_instruct_wrongly(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    used = {n for _, n, _ in steps}
    return [i for i in _customer_steps(steps, offered)
            if "mode" in steps[i][2] or any(t not in used for t in _WRONG_PHONE)]


_WRONG_ASK = ("Could you please {w} on your phone and tell me what it shows?",
              "Let's try this next: please {w} on your phone, then tell me what you see.",
              "Next, please {w} on your phone and let me know the result.",
              "I think this will help: could you {w} on your phone and tell me what happens?")


def _ask_words(name: str, args: dict[str, Any], seed: int, split: str | None) -> str:
    words = name.replace("_", " ") + (f" ({', '.join(f'{k} {v}' for k, v in args.items())})" if args else "")
    plain = _choose(_phrasings(_WRONG_ASK, split), seed, 19).format(w=words)
    return f"{plain}\n(phone action: {name} {json.dumps(args)})"


def _wrong_instruction(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
    _, name, args = steps[at]
    if "mode" in args:  # the right setting, the wrong value
        options = tuple(m for m in _WRONG_MODES if m != args["mode"])
        wrong_name, wrong_args = name, {**args, "mode": _choose(options, seed, 23)}
    else:  # another phone action than the one the fix needs
        used = {n for _, n, _ in steps}
        wrong_name, wrong_args = _choose(tuple(t for t in _WRONG_PHONE if t not in used), seed, 23), {}
    moves = _clean_moves(steps)
    moves[at] = ("ask", wrong_name, wrong_args, _ask_words(wrong_name, wrong_args, seed, split))
    return Plan(moves=tuple(moves), last=_closing(), committed_at=at)


def _before_any_remaining(steps: list[Step], offered: dict[str, dict[str, Any]]) -> list[int]:
    # ending at step i leaves steps[i:] undone; ending where only the reference transfer is left
    # would be the reference transfer itself
    return [i for i in range(len(steps)) if any(name != TRANSFER_TO_HUMAN for _, name, _ in steps[i:])]


_SUMMARIES = ("The customer has a problem with their phone that I could not fix.",
              "Customer needs further help with their line; handing over.",
              "Escalating: troubleshooting did not resolve the issue yet.",
              "Transferring the customer to a specialist for the remaining steps.")


def _premature_transfer(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
    summary = _choose(_phrasings(_SUMMARIES, split), seed, 29)
    last = tool_call_reply(TRANSFER_TO_HUMAN, json.dumps({"summary": summary}), "call_transfer")
    return Plan(moves=tuple(_clean_moves(steps[:at])), last=last, committed_at=at)


_GOODBYES = (("text", "That should take care of it. Thanks for contacting us, have a great day!"),
             ("call", "The issue should be resolved now."),
             ("text", "I've done what I can from my side; everything should work now. Goodbye!"),
             ("call", "Nothing more to do on this request."),
             ("text", "You're all set. Is there anything else I can help you with?"),
             ("call", "The customer's issue has been handled."))


def _premature_end(steps: list[Step], at: int, seed: int, split: str | None) -> Plan:
    kind, words = _choose(_phrasings(_GOODBYES, split), seed, 31)
    last = text_reply(words) if kind == "text" else tool_call_reply(
        END_CONVERSATION, json.dumps({"reason": words}), "call_end")
    return Plan(moves=tuple(_clean_moves(steps[:at])), last=last, committed_at=at)


def _faults(offered: dict[str, dict[str, Any]]) -> dict[str, AgentFault]:
    return {f.name: f for f in (
        AgentFault("skipped_write", lambda s, o: _not_last(_agent_writes(s, o), s), _skip),
        AgentFault("skipped_instruction", lambda s, o: _not_last(_customer_steps(s, o), s), _skip),
        AgentFault("wrong_arguments", _with_args, _wrong_arguments),
        AgentFault("unrequested_agent_write", _can_extra, _extra_write(offered)),
        AgentFault("wrong_instruction", _can_instruct_wrongly, _wrong_instruction),
        AgentFault("premature_transfer", lambda s, o: _before_any_remaining(s, o) if TRANSFER_TO_HUMAN in o else [],
                   _premature_transfer),
        AgentFault("premature_end", _before_any_remaining, _premature_end),
    )}


AGENT_FAULT_CLASSES: tuple[str, ...] = tuple(_faults({}))
"""The fault classes a faulty agent can commit."""


def parse_param(param: str | None) -> tuple[str, str | None]:
    """The fault class and phrasing split a ``faulty-agent:<class>[:<split>]`` model names."""
    name, _, split = (param or "").partition(":")
    name = name.strip()
    if name not in AGENT_FAULT_CLASSES:
        raise BehaviourError(400, f"faulty-agent needs a fault class after the colon, one of: "
                             f"{', '.join(AGENT_FAULT_CLASSES)}; got {name!r}", code="unknown_fault")
    split = split.strip() or None
    if split is not None and split not in SPLITS:
        raise BehaviourError(400, f"faulty-agent split must be one of {', '.join(SPLITS)}; got {split!r}",
                             code="unknown_split")
    return name, split


def _seed(body: dict[str, Any], system: str) -> int:
    seed = body.get("seed")
    return seed if isinstance(seed, int) else conversation_digest({"messages": [{"content": system}]})


def plan_for(body: dict[str, Any], fault: str, split: str | None) -> Plan:
    """The faulty agent's whole plan for this conversation (the same at every request of it)."""
    messages = request_messages(body)
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    offered = _functions(body)
    steps = reference_steps(system, offered)
    if not steps:
        raise NoReferenceSteps("the system prompt lists no reference steps: give tauray's agent reference_steps=true")
    f = _faults(offered)[fault]
    positions = f.eligible(steps, offered)
    if not positions:
        return Plan(moves=tuple(_clean_moves(steps)), last=_closing(), committed_at=None)
    seed = _seed(body, system)
    return f.apply(steps, positions[(seed // 5) % len(positions)], seed, split)


def faulty_agent(body: dict[str, Any], settings: Any) -> Reply:
    """The writing agent, with one fault of the class the model names (see the module doc)."""
    from tauray.actors.policies import phone_request
    from tauray.scenarios.model import ReferenceAction

    fault, split = parse_param(model_param(body))
    plan = plan_for(body, fault, split)
    done = sum(_took_step(m) for m in request_messages(body))
    if done >= len(plan.moves):
        return plan.last
    kind, name, args, words = plan.moves[done]
    if kind == "call":
        return tool_call_reply(name, json.dumps(args), f"call_step_{done}")
    if words is not None:
        return text_reply(words)
    return text_reply(phone_request(ReferenceAction(action_id=str(done), side="user", name=name, arguments=args)))


FAULTY_AGENT_BEHAVIOURS = {"faulty-agent": faulty_agent}
"""Registered into the endpoint's behaviour registry under this name."""

__all__ = ["AGENT_FAULT_CLASSES", "FAULTY_AGENT_BEHAVIOURS", "SPLITS", "AgentFault", "Plan", "faulty_agent",
           "parse_param", "plan_for"]
