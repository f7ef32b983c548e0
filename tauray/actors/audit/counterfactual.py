"""Would the conversation have passed without the simulator's fault? Replay the recorded
tool calls of both sides on fresh state with the fault corrected, and score again.

The correction ignores how the agent would have reacted: the agent's recorded calls are
kept as they were. So only faults in the middle of a conversation are corrected (the
rest of it still happened): a write done instead of the asked one is replaced by the
asked one, an unasked write is dropped, an action claimed without the call gets the
call, a write done twice is done once. A fault that ended the call (a premature stop, a transfer) leaves no recorded
future to replay, and a fault in words changes no state: for those ``flips`` is None.
The uncorrected replay must reproduce the stored verdict, else nothing is claimed.

Agent faults (``agent_faults``) are corrected the same way, keeping the customer's calls: a
skipped reference action is put where the agent went past it, a wrong write gets the
reference's arguments, an unrequested one is dropped, a wrong instruction's phone call is
replaced by the one that was due; an early end has no future to replay. ``alone`` asks the
other question attribution needs when both sides erred: does this fault by itself fail the
reference run?
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from tauray.actors.audit import agent_faults, phone
from tauray.actors.audit.agent_faults import align, gold_run
from tauray.actors.audit.finding import Finding
from tauray.actors.audit.trajectory import Call, Trajectory
from tauray.scenarios.conventions import HARNESS_TOOLS, parse_phone_request
from tauray.scenarios.gold import replay
from tauray.scenarios.registry import default_registry
from tauray.scenarios.scoring import ExecutedCall, score

CORRECTABLE = frozenset({"different_action", "unrequested_write", "done_without_call", "repeated_write",
                         "ignored_request", "invented_constraint"})


def recorded_calls(t: Trajectory) -> list[Call]:
    """The tool calls the run recorded, in order (harness tools left out)."""
    out = []
    for a in t.actions:
        if a.get("kind") != "tool_call" or a.get("tool") in HARNESS_TOOLS or a.get("tool") is None:
            continue
        args = a.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else (args or {})
        except ValueError:
            parsed = {}
        out.append((str(a["side"]), str(a["tool"]), parsed if isinstance(parsed, dict) else {}, int(a["turn"])))
    return out


def _asked(t: Trajectory, f: Finding) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """Tools the agent had asked for when the fault was committed, with the tagged arguments."""
    msg = t.agent_text_before(f.message_seq if f.message_seq is not None else 0)
    text = msg.content if msg else None
    tagged = parse_phone_request(text)
    args = {tagged[0]: json.loads(tagged[1])} if tagged else {}
    return phone.requested_tools(text, t.task.user_tools, need_cue=False), args


def _other_arguments(call: Call, tagged: dict[str, dict[str, Any]]) -> bool:
    """The asked tool called with other arguments than the tagged request gave (wrong arguments)."""
    return call[1] in tagged and call[2] != tagged[call[1]]


def corrected_calls(t: Trajectory, f: Finding) -> list[Call] | None:
    """The recorded calls with one fault corrected; None when the fault cannot be corrected."""
    if f.fault_class not in CORRECTABLE or f.turn is None:
        return None
    calls = recorded_calls(t)
    asked, tagged = _asked(t, f)
    turn = f.turn
    in_turn = [i for i, c in enumerate(calls) if c[0] == "user" and c[3] == turn]
    unasked = [i for i in in_turn if calls[i][1] in t.task.user_writes
               and (calls[i][1] not in asked or _other_arguments(calls[i], tagged))]
    done = {calls[i][1] for i in in_turn if i not in unasked}
    missing = [(  "user", tool, tagged.get(tool, {}), turn) for tool in sorted(asked - done)]
    if f.fault_class == "unrequested_write":
        return [c for i, c in enumerate(calls) if i not in unasked]
    if f.fault_class == "repeated_write":  # keep the first of each write the customer did in the turn
        firsts = {}
        for i in in_turn:
            firsts.setdefault(calls[i][1], i)
        return [c for i, c in enumerate(calls) if i not in in_turn or firsts[c[1]] == i
                or c[1] not in t.task.user_writes]
    # different_action / done_without_call / ignored_request / invented_constraint: the asked calls where the fault was
    # (or at the turn's end)
    where = unasked[0] if unasked else (in_turn[-1] + 1 if in_turn else next(
        (i for i, c in enumerate(calls) if c[3] > turn), len(calls)))
    kept = [c for i, c in enumerate(calls) if i not in unasked]
    where -= sum(i < where for i in unasked)
    return kept[:where] + missing + kept[where:]


def replay_success(t: Trajectory, calls: list[Call]) -> bool | None:
    """The verdict of these calls on fresh state (the scenario's own scoring)."""
    scenario = default_registry().get(str(t.row["scenario"]))
    state, _ = replay(scenario, [(side, tool, args) for side, tool, args, _ in calls])
    executed = [ExecutedCall(side=side, name=tool, arguments=args) for side, tool, args, _ in calls]
    return score(scenario, state, executed).verdict.success


def _missing(value: Any) -> bool:
    return value is None or bool(pd.isna(value))


def flips(t: Trajectory, f: Finding) -> bool | None:
    """Whether correcting the fault changes the stored verdict (None: cannot say)."""
    stored = t.row.get("success")
    if f.blamed_side not in ("user", "agent") or _missing(stored):
        return None
    corrected = corrected_calls(t, f) if f.blamed_side == "user" else agent_faults.corrected_calls(t, f)
    if corrected is None:
        return None
    try:
        if replay_success(t, recorded_calls(t)) != bool(stored):
            return None  # the replay does not reproduce the run: claim nothing
        fixed = replay_success(t, corrected)
    except Exception:  # noqa: BLE001 - a replay that breaks says nothing about the fault
        return None
    return None if fixed is None else fixed != bool(stored)


def user_alone_calls(t: Trajectory, f: Finding) -> list[Call] | None:
    """The reference run with this one simulator fault in it (the agent doing the reference):
    the asked reference action dropped, doubled or replaced by what the customer did, or an
    unasked write added where the conversation was. None for faults that ended the call or
    changed no state (those are taken to matter, or are not asked about)."""
    if f.fault_class not in CORRECTABLE or f.turn is None or f.message_seq is None:
        return None
    al = align(t)
    before = [j for j, mv in enumerate(al.moves) if mv.message.seq < f.message_seq]
    handled = [al.target[j].index for j in before if al.target[j] is not None]
    frontier = max(handled, default=-1)
    ask = next((j for j in reversed(before) if al.moves[j].kind == "ask"), None)
    due = al.target[ask] if ask is not None and al.status[ask] == "ok" else None
    gold = gold_run(t, al)
    asked, tagged = _asked(t, f)
    unasked = [c for c in recorded_calls(t) if c[0] == "user" and c[3] == f.turn and c[1] in t.task.user_writes
               and (c[1] not in asked or _other_arguments(c, tagged))]
    extra = [(None, (side, tool, args)) for side, tool, args, _ in unasked]
    cut = next((i for i, (idx, _) in enumerate(gold) if idx is not None and idx > frontier), len(gold))
    at = next((i for i, (idx, _) in enumerate(gold) if due is not None and idx == due.index), None)
    if f.fault_class == "unrequested_write":
        gold = gold[:cut] + extra + gold[cut:]
    elif f.fault_class == "different_action":
        gold = gold[:at] + extra + gold[at + 1:] if at is not None else gold[:cut] + extra + gold[cut:]
    elif f.fault_class in ("done_without_call", "ignored_request", "invented_constraint"):  # the asked action never happens
        if at is None:
            return None
        gold = gold[:at] + gold[at + 1:]
    elif f.fault_class == "repeated_write":
        if at is None:
            return None
        gold = gold[:at + 1] + [gold[at]] + gold[at + 1:]
    return [(side, tool, args, 0) for _, (side, tool, args) in gold]


def alone(t: Trajectory, f: Finding) -> bool | None:
    """Whether the fault by itself fails the reference run (None: cannot say, e.g. a fault
    that ended the call, which ``attribution`` takes as mattering)."""
    if f.effect != "outcome":
        return False  # words change no state
    calls = agent_faults.alone_calls(t, f) if f.blamed_side == "agent" else user_alone_calls(t, f)
    if calls is None:
        return None
    try:
        ok = replay_success(t, calls)
    except Exception:  # noqa: BLE001 - a replay that breaks says nothing about the fault
        return None
    return None if ok is None else not ok


__all__ = ["CORRECTABLE", "alone", "corrected_calls", "flips", "recorded_calls", "replay_success",
           "user_alone_calls"]
