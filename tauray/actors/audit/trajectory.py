"""One stored conversation as the audit reads it: its row, its messages and tool calls in
order, and what the task gave the customer (known information, phone tools, family).

Built from the stored tables only (plus the scenario registry for the task's own text),
so any stored run can be audited without running anything again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pandas as pd

from tauray.scenarios.registry import UnknownScenarioError, default_registry

Call = tuple[str, str, dict[str, Any], int]
"""One tool call as the counterfactual replays see it: side, tool, arguments, turn."""


@dataclass(frozen=True)
class Message:
    """One transcript message (a row of the messages table)."""

    seq: int
    turn: int
    side: str
    role: str
    content: str | None
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class TaskFacts:
    """What the task gave the customer, read from the scenario registry."""

    known_info: str | None
    issue_type: str | None
    user_tools: frozenset[str]
    user_writes: frozenset[str]
    user_text: str | None = None  # the customer's whole prompt: what its task told it


@dataclass(frozen=True)
class Trajectory:
    """A stored conversation with the task facts the detectors need."""

    row: dict[str, Any]
    messages: tuple[Message, ...]
    actions: tuple[dict[str, Any], ...]
    task: TaskFacts
    keys: dict[str, Any] = field(default_factory=dict)

    @property
    def user_texts(self) -> list[Message]:
        return [m for m in self.messages if m.side == "user" and m.role == "user" and m.content]

    def agent_text_before(self, seq: int) -> Message | None:
        """The agent's latest message with text before ``seq`` (what the customer was last told)."""
        for m in reversed(self.messages):
            if m.seq < seq and m.side == "agent" and m.role == "assistant" and m.content and not m.tool_calls:
                return m
        return None

    def user_calls(self, after: int, before: int | None = None) -> list[tuple[Message, str]]:
        """(message, tool) of each phone call the customer made between two seqs."""
        out = []
        for m in self.messages:
            if m.side == "user" and m.role == "user" and after < m.seq and (before is None or m.seq < before):
                out += [(m, str(c.get("name"))) for c in m.tool_calls]
        return out

    def tool_result_before(self, seq: int, side: str = "user") -> Message | None:
        for m in reversed(self.messages):
            if m.seq < seq and m.side == side and m.role == "tool":
                return m
        return None


def _calls(value: Any) -> tuple[dict[str, Any], ...]:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ()
    calls = json.loads(value) if isinstance(value, str) else value
    return tuple(calls or ())


def _text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


@lru_cache(maxsize=4096)
def task_facts(scenario: str) -> TaskFacts:
    """The customer's side of a registered scenario (unknown names give empty facts)."""
    try:
        s = default_registry().get(scenario)
    except (UnknownScenarioError, KeyError):
        return TaskFacts(known_info=None, issue_type=None, user_tools=frozenset(), user_writes=frozenset())
    return TaskFacts(known_info=s.user.known_info, issue_type=s.issue_type,
                     user_tools=frozenset(t.name for t in s.user_tools),
                     user_writes=frozenset(t.name for t in s.user_tools if t.is_write), user_text=s.user_prompt)


KEY_COLUMNS = ("run_id", "conversation_id", "unit_id", "attempt", "scenario")


def _by_conversation(frame: pd.DataFrame) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    """The rows of a detail table per (run_id, conversation_id), in ``seq`` order: one
    conversion of the whole table (per-group conversions cost most of an audit's time)."""
    out: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    if frame.empty:
        return out
    for r in frame.sort_values(["run_id", "conversation_id", "seq"], kind="stable").to_dict("records"):
        out.setdefault((r["run_id"], r["conversation_id"]), []).append(r)
    return out


def trajectory(row: dict[str, Any], messages: list[dict[str, Any]], actions: list[dict[str, Any]]) -> Trajectory:
    """One conversation from its rows as dicts (a table's records, or the records a
    conversation is about to add, which the in-loop audit reads without a DataFrame)."""
    by_seq = sorted(messages, key=lambda m: m["seq"])
    message_list = [Message(seq=int(m["seq"]), turn=int(m["turn"]), side=str(m["side"]), role=str(m["role"]),
                            content=_text(m["content"]), tool_calls=_calls(m["tool_calls"]),
                            tool_call_id=_text(m["tool_call_id"])) for m in by_seq]
    return Trajectory(row=row, messages=tuple(message_list), actions=tuple(sorted(actions, key=lambda a: a["seq"])),
                      task=task_facts(str(row["scenario"])),
                      keys={k: (str(row[k]) if k != "attempt" else int(row[k])) for k in KEY_COLUMNS})


def trajectories(conversations: pd.DataFrame, messages: pd.DataFrame, actions: pd.DataFrame) -> list[Trajectory]:
    """One trajectory per conversation row (the newest attempts, as the readers return them)."""
    by_msg, by_act = _by_conversation(messages), _by_conversation(actions)
    return [trajectory(row, by_msg.get(key := (row["run_id"], row["conversation_id"]), []), by_act.get(key, []))
            for row in conversations.to_dict("records")]


__all__ = ["KEY_COLUMNS", "Call", "Message", "TaskFacts", "Trajectory", "task_facts", "trajectories", "trajectory"]
