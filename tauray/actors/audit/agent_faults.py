"""Rule detectors of agent faults: what the agent did against what the scenario's reference
actions say a solved conversation does.

The agent's *moves* are read from the record: each write tool call, each phone write it
asks the customer for in words (the reference policies' tagged request exactly, else the
phone tools its words name, as :func:`phone.requested_tools` reads a request), and its exit
(``end_conversation``, ``transfer_to_human_agents``, or a last message that asks nothing
after which the customer hung up). They are aligned in order with the reference actions
that change something (writes of either side, and the reference transfer): a move that does
a pending reference action with its arguments consumes it; anything else is a finding,
blamed on the agent at the move's turn:

* ``wrong_arguments``: a write of a pending reference tool with other arguments (compared on
  the action's ``compare_args``, numbers as numbers);
* ``unrequested_agent_write``: a write the reference does not contain (or one done again);
* ``wrong_instruction``: the customer asked for a phone write the reference does not need, or
  for the right one with other (tagged) arguments;
* ``premature_transfer`` / ``premature_end``: an exit while reference actions after
  everything it did remain (the reference transfer at its place is no fault);
* ``skipped_write`` / ``skipped_instruction``: a reference action never done (an agent
  write) or never asked for (a customer action), though the agent went past it: the finding
  is at the first move after the reference action before it. A customer action the agent
  asked for and the customer did not do is the customer's (the simulator detectors'), and
  an action the agent never reached because the customer ended the call is nobody's here.

Every finding's effect is ``outcome``: each changes state or ends the call. The reference
policies (oracle, the writing agent) do exactly the reference, so they get none.

For attribution, each finding can also be corrected in the recorded calls (``corrected_calls``)
and applied alone to the reference run (``alone_calls``): whether the fault by itself fails
an otherwise solved conversation, which tells a harmless extra write from one that matters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from tauray.actors.audit import phone
from tauray.actors.audit.finding import Blame, Detector, Effect, Finding
from tauray.actors.audit.trajectory import Call, Message, Trajectory
from tauray.scenarios.conventions import (
    HARNESS_TOOLS,
    TRANSFER_TO_HUMAN,
    parse_phone_request,
)
from tauray.scenarios.registry import UnknownScenarioError, default_registry

USER_ENDS = ("user_stop", "user_transfer", "user_out_of_scope")


@dataclass(frozen=True)
class Ref:
    """One reference action that changes something (or the reference transfer)."""

    index: int
    side: str
    tool: str
    args: dict[str, Any]
    compare: tuple[str, ...] | None


@dataclass(frozen=True)
class Move:
    """One thing the agent did that the reference could contain."""

    kind: Literal["write", "ask", "exit"]
    tool: str | None  # None: an exit in words
    args: dict[str, Any] | None  # None: not known (an untagged request, an exit in words)
    message: Message
    error: bool = False


@dataclass
class Alignment:
    """The agent's moves against the reference: what each move was, what was skipped."""

    refs: list[Ref]
    moves: list[Move]
    status: list[str] = field(default_factory=list)  # per move: "ok", "repeat" or a fault class
    target: list[Ref | None] = field(default_factory=list)  # the reference action a faulty move stood for
    frontier: list[int] = field(default_factory=list)  # highest reference index handled before each move
    skipped: list[tuple[Ref, int]] = field(default_factory=list)  # (reference action, index of the blamed move)


@dataclass(frozen=True)
class AgentFacts:
    refs: tuple[Ref, ...]
    agent_writes: frozenset[str]
    gold: tuple[tuple[str, str, dict[str, Any]], ...]  # every reference call the replay runs, in order


@lru_cache(maxsize=4096)
def agent_facts(scenario: str) -> AgentFacts:
    """The scenario's reference actions that the alignment uses (unknown names: none)."""
    try:
        s = default_registry().get(scenario)
    except (UnknownScenarioError, KeyError):
        return AgentFacts(refs=(), agent_writes=frozenset(), gold=())
    agent_writes = frozenset(t.name for t in s.agent_tools if t.is_write)
    user_writes = frozenset(t.name for t in s.user_tools if t.is_write)
    refs = tuple(Ref(index=i, side=a.side, tool=a.name, args=dict(a.arguments),
                     compare=tuple(a.compare_args) if a.compare_args is not None else None)
                 for i, a in enumerate(s.reference_actions)
                 if (a.side == "agent" and (a.name in agent_writes or a.name == TRANSFER_TO_HUMAN))
                 or (a.side == "user" and a.name in user_writes))
    gold = tuple((a.side, a.name, dict(a.arguments)) for a in s.reference_actions if a.name not in HARNESS_TOOLS)
    return AgentFacts(refs=refs, agent_writes=agent_writes, gold=gold)


def _args(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else (raw or {})
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def same_arguments(ref: Ref, args: dict[str, Any] | None) -> bool:
    """Whether a call's arguments are the reference's (on its compared keys); unknown ones are."""
    if args is None:
        return True
    keys = ref.compare if ref.compare is not None else tuple(ref.args)
    return all(k in args and _equal(args[k], ref.args.get(k)) for k in keys)


def moves(t: Trajectory, facts: AgentFacts) -> list[Move]:
    """The agent's moves, in order (turn 0, the greeting, is the harness's, not the agent's)."""
    errors: dict[str, list[bool]] = {}
    for a in t.actions:
        if a.get("kind") == "tool_call" and a.get("side") == "agent":
            errors.setdefault(str(a.get("tool")), []).append(bool(a.get("error")))
    seen: dict[str, int] = {}
    agent_msgs = [m for m in t.messages if m.side == "agent" and m.role == "assistant" and m.turn > 0]
    ended_by_user = str(t.row.get("termination_reason") or "") in USER_ENDS
    out: list[Move] = []
    for m in agent_msgs:
        for c in m.tool_calls:
            name = str(c.get("name"))
            n = seen.get(name, 0)
            seen[name] = n + 1
            error = errors.get(name, [])[n] if n < len(errors.get(name, [])) else False
            if name in HARNESS_TOOLS:
                out.append(Move("exit", name, _args(c.get("arguments")), m))
            elif name in facts.agent_writes:
                out.append(Move("write", name, _args(c.get("arguments")), m, error))
        if m.tool_calls or not m.content:
            continue
        tagged = parse_phone_request(m.content)
        if tagged is not None:
            asked: dict[str, dict[str, Any] | None] = {tagged[0]: _args(tagged[1])}
        else:
            asked = {tool: None for tool in sorted(phone.requested_tools(m.content, t.task.user_writes))}
        asked = {k: v for k, v in asked.items() if k in t.task.user_writes}
        out += [Move("ask", tool, args, m) for tool, args in asked.items()]
        if not asked and m is agent_msgs[-1] and ended_by_user:
            out.append(Move("exit", None, None, m))  # its last word asked nothing, and the customer hung up
    return out


def align(t: Trajectory) -> Alignment:
    """The agent's moves against the scenario's reference actions (see the module doc)."""
    facts = agent_facts(str(t.row.get("scenario")))
    al = Alignment(refs=list(facts.refs), moves=moves(t, facts) if facts.refs else [])
    done: dict[int, int] = {}  # reference index -> move that did it
    tried: dict[int, int] = {}  # reference index -> move that did it wrongly (or asked for something else instead)
    covered: set[int] = set()  # reference indexes an early exit left undone
    for k, mv in enumerate(al.moves):
        handled = set(done) | set(tried)
        al.frontier.append(max(handled, default=-1))
        pending = [r for r in al.refs if r.index not in handled]
        status, target = "ok", None
        if mv.kind in ("write", "ask"):
            side = "agent" if mv.kind == "write" else "user"
            same_tool = [r for r in pending if r.side == side and r.tool == mv.tool]
            # a later right move still does an action an earlier wrong one stood in for
            stood_in = [r for r in al.refs if r.index in tried and r.index not in done and r.side == side
                        and r.tool == mv.tool and same_arguments(r, mv.args)]
            match = next((r for r in same_tool if same_arguments(r, mv.args)), None) or next(iter(stood_in), None)
            if match is not None:
                done[match.index] = k
                target = match
                wrong = tried.get(match.index)
                if wrong is not None and al.status[wrong] == "wrong_instruction" and al.moves[wrong].tool != mv.tool:
                    al.target[wrong] = None  # it was an extra request after all, not one in place of this
            elif same_tool:
                status, target = ("wrong_arguments" if mv.kind == "write" else "wrong_instruction"), same_tool[0]
                tried[same_tool[0].index] = k
            elif mv.kind == "ask" and any(r.side == "user" and r.tool == mv.tool for r in al.refs):
                status = "repeat"  # asked again for a reference action (a retry): not a fault on its own
            elif mv.kind == "ask":
                # a request for a phone action the fix does not need stands in for the customer action due next
                status = "wrong_instruction"
                target = next((r for r in pending if r.side == "user" and r.index > al.frontier[-1]), None)
                if target is not None:
                    tried[target.index] = k
            else:
                status = "unrequested_agent_write"
        else:
            frontier = al.frontier[-1]
            remaining = [r for r in pending if r.index > frontier and r.tool != TRANSFER_TO_HUMAN]
            if remaining:
                status = "premature_transfer" if mv.tool == TRANSFER_TO_HUMAN else "premature_end"
                covered |= {r.index for r in remaining}
            elif mv.tool == TRANSFER_TO_HUMAN:
                ref = next((r for r in pending if r.tool == TRANSFER_TO_HUMAN), None)
                if ref is not None:
                    done[ref.index] = k
        al.status.append(status)
        al.target.append(target)
        if mv.kind == "exit":
            break  # the call ended there
    # a wrong write that failed and was then done right changed nothing: no fault left
    for ref_index, k in list(tried.items()):
        if ref_index in done and al.moves[k].error:
            al.status[k] = "ok"
    handled = set(done) | set(tried)
    last = max(handled, default=-1)
    for r in al.refs:
        if r.index in handled or r.index in covered or r.index > last or r.tool == TRANSFER_TO_HUMAN:
            continue
        before = [i for i in handled if i < r.index]
        after_move = (max(done.get(i, tried.get(i, -1)) for i in before) + 1) if before else 0
        if after_move >= len(al.status):
            continue
        if al.status[after_move] == "unrequested_agent_write" and al.target[after_move] is None:
            al.target[after_move] = r  # the faulty move took the skipped action's place: one fault, not two
            continue
        al.skipped.append((r, after_move))
    return al


# --- the detectors ---------------------------------------------------------------------------


def _describe(mv: Move) -> str:
    if mv.kind == "exit":
        return mv.tool or "its last message"
    return f"{mv.tool} {json.dumps(mv.args, sort_keys=True) if mv.args is not None else '(in words)'}"


class _AgentDetector(Detector):
    blamed_side: Blame = "agent"
    effect: Effect = "outcome"
    statuses: tuple[str, ...] = ()

    def detect(self, t: Trajectory) -> list[Finding]:
        al = align(t)
        out = []
        for k, (mv, status) in enumerate(zip(al.moves, al.status)):
            if status in self.statuses:
                out.append(self.finding(mv.message, self.evidence(al, k), status))
        return out

    def evidence(self, al: Alignment, k: int) -> str:
        mv, target = al.moves[k], al.target[k]
        want = f"; the reference has {target.tool} {json.dumps(target.args, sort_keys=True)}" if target else ""
        return f"agent {al.status[k].replace('_', ' ')}: {_describe(mv)}{want}"


class AgentWrongArguments(_AgentDetector):
    """A write of a pending reference tool with other arguments than the reference's."""

    statuses: tuple[str, ...] = ("wrong_arguments",)


class AgentUnrequestedWrite(_AgentDetector):
    """A write the reference does not contain (or one already done)."""

    statuses: tuple[str, ...] = ("unrequested_agent_write",)


class AgentWrongInstruction(_AgentDetector):
    """The customer asked for a phone write the reference does not need (or with other arguments)."""

    statuses: tuple[str, ...] = ("wrong_instruction",)


class AgentEarlyExit(_AgentDetector):
    """A transfer or an end (a call, or a last message asking nothing) while reference actions remain."""

    statuses: tuple[str, ...] = ("premature_transfer", "premature_end")

    def evidence(self, al: Alignment, k: int) -> str:
        left = [r.tool for r in al.refs if r.index > al.frontier[k] and r.tool != TRANSFER_TO_HUMAN]
        words = f": {al.moves[k].message.content!r}" if al.moves[k].tool is None else ""
        return f"agent ended with {_describe(al.moves[k])} while {', '.join(left)} remained{words}"


class AgentSkippedAction(_AgentDetector):
    """A reference action the agent went past without doing it (or asking for it)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        al = align(t)
        out = []
        for ref, k in al.skipped:
            cls = "skipped_write" if ref.side == "agent" else "skipped_instruction"
            verb = "never did" if ref.side == "agent" else "never asked for"
            out.append(self.finding(al.moves[k].message, f"agent {verb} {ref.tool} "
                                    f"{json.dumps(ref.args, sort_keys=True)}; went on with {_describe(al.moves[k])}",
                                    cls))
        return out


AGENT_DETECTORS: tuple[Detector, ...] = (
    AgentSkippedAction(name="agent_skipped_action", version=1, fault_class="skipped_write"),
    AgentWrongArguments(name="agent_wrong_arguments", version=1, fault_class="wrong_arguments"),
    AgentUnrequestedWrite(name="agent_unrequested_write", version=1, fault_class="unrequested_agent_write"),
    AgentWrongInstruction(name="agent_wrong_instruction", version=1, fault_class="wrong_instruction"),
    AgentEarlyExit(name="agent_early_exit", version=1, fault_class="premature_end"),
)
"""The agent-side rule detectors, in the order findings are listed."""

AGENT_FAULT_CLASSES: tuple[str, ...] = ("skipped_write", "skipped_instruction", "wrong_arguments",
                                        "unrequested_agent_write", "wrong_instruction", "premature_transfer",
                                        "premature_end")


# --- corrections: the recorded calls without the fault, and the reference run with it -------------


def _calls(t: Trajectory) -> list[tuple[str, str, dict[str, Any], int, int]]:
    """(side, tool, arguments, turn, message seq) of every recorded non-harness call, in order."""
    return [(m.side, str(c.get("name")), _args(c.get("arguments")), m.turn, m.seq)
            for m in t.messages if m.role in ("assistant", "user") for c in m.tool_calls
            if str(c.get("name")) not in HARNESS_TOOLS]


def _find(al: Alignment, f: Finding) -> int | None:
    if f.fault_class.startswith("skipped_"):
        return next((k for r, k in al.skipped if al.moves[k].message.seq == f.message_seq
                     and ("skipped_write" if r.side == "agent" else "skipped_instruction") == f.fault_class), None)
    return next((k for k, mv in enumerate(al.moves) if mv.message.seq == f.message_seq
                 and al.status[k] == f.fault_class), None)


def corrected_calls(t: Trajectory, f: Finding) -> list[Call] | None:
    """The recorded calls with one agent fault corrected (the customer's calls kept as they were);
    None when it cannot be corrected: an exit leaves no recorded future, and a wrong instruction
    the customer did not carry out says nothing of whether it would have carried out the right one."""
    al = align(t)
    k = _find(al, f)
    if k is None or f.fault_class in ("premature_transfer", "premature_end"):
        return None
    mv = al.moves[k]
    calls = _calls(t)
    at = next((i for i, c in enumerate(calls) if c[4] >= mv.message.seq), len(calls))
    if f.fault_class.startswith("skipped_"):
        ref = next(r for r, j in al.skipped if j == k and
                   ("skipped_write" if r.side == "agent" else "skipped_instruction") == f.fault_class)
        calls.insert(at, (ref.side, ref.tool, dict(ref.args), mv.message.turn, mv.message.seq))
    elif mv.kind == "write":  # wrong arguments / unrequested write: the call at the move
        i = next((i for i, c in enumerate(calls) if c[0] == "agent" and c[4] == mv.message.seq and c[1] == mv.tool),
                 None)
        if i is None:
            return None
        target = al.target[k]
        if target is None:
            del calls[i]
        else:
            calls[i] = (target.side, target.tool, dict(target.args), calls[i][3], calls[i][4])
    else:  # wrong instruction: what the customer did on it goes; what was due comes instead
        nxt = next((x.seq for x in t.messages if x.seq > mv.message.seq and x.side == "agent"
                    and x.role == "assistant"), None)
        answered = [i for i, c in enumerate(calls) if c[0] == "user" and c[1] == mv.tool and c[4] > mv.message.seq
                    and (nxt is None or c[4] < nxt)]
        if not answered:
            return None  # the customer did not do what it was asked: whether it would have done the right thing is unknown
        where = answered[0]
        calls = [c for i, c in enumerate(calls) if i not in answered]
        target = al.target[k]
        if target is not None:
            calls.insert(min(where, len(calls)), (target.side, target.tool, dict(target.args), mv.message.turn,
                                                  mv.message.seq))
    return [(side, tool, args, turn) for side, tool, args, turn, _ in calls]


def gold_run(t: Trajectory, al: Alignment) -> list[tuple[int | None, tuple[str, str, dict[str, Any]]]]:
    """The reference run's calls, each with the index of the reference action it is (None for
    reference calls the alignment does not use)."""
    facts = agent_facts(str(t.row.get("scenario")))
    by_key = {(r.side, r.tool, json.dumps(r.args, sort_keys=True)): r.index for r in al.refs}
    return [(by_key.get((side, tool, json.dumps(args, sort_keys=True))), (side, tool, args))
            for side, tool, args in facts.gold]


def alone_calls(t: Trajectory, f: Finding) -> list[Call] | None:
    """The reference run with this one agent fault in it (the customer doing what it is asked):
    whether the fault alone fails an otherwise solved conversation."""
    al = align(t)
    k = _find(al, f)
    if k is None:
        return None
    mv = al.moves[k]
    gold = gold_run(t, al)
    frontier = al.frontier[k]
    cut = next((i for i, (idx, _) in enumerate(gold) if idx is not None and idx > frontier), len(gold))
    target = al.target[k]
    if f.fault_class in ("premature_transfer", "premature_end"):
        gold = gold[:cut]
    elif f.fault_class.startswith("skipped_"):
        ref = next(r for r, j in al.skipped if j == k and
                   ("skipped_write" if r.side == "agent" else "skipped_instruction") == f.fault_class)
        gold = [g for g in gold if g[0] != ref.index]
    else:
        wrong = ("agent" if mv.kind == "write" else "user", str(mv.tool), dict(mv.args or {}))
        if target is not None:
            gold = [(i, wrong) if i == target.index else (i, c) for i, c in gold]
        else:
            gold.insert(cut, (None, wrong))
    return [(side, tool, args, 0) for _, (side, tool, args) in gold]


__all__ = [
    "AGENT_DETECTORS",
    "AGENT_FAULT_CLASSES",
    "Alignment",
    "Move",
    "Ref",
    "agent_facts",
    "align",
    "alone_calls",
    "corrected_calls",
    "gold_run",
    "moves",
    "same_arguments",
]
