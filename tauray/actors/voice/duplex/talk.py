"""What the two sides of a duplex call exchange as text: messages in a history, an agent's reply
with its tool calls, and the callables that stand for the models (a text agent, a caller's
policy, a tool runner), sync or async.

A history is what its owner knows: the agent's holds what its recogniser heard the caller say
(``user``), what it said itself (``assistant``, cut to the words actually spoken when it was
interrupted, as realtime APIs truncate) and tool results (``tool``); the caller's holds what it
heard the agent say (``assistant``) and what it said (``user``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentReply", "CallerPolicy", "Message", "TextAgent", "ToolCall", "ToolRunner", "resolve"]

T = TypeVar("T")


class ToolCall(BaseModel):
    """One tool call an agent's reply makes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="The call's id, echoed by its result.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments, as the model gave them.")


class Message(BaseModel):
    """One entry of a side's history."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["user", "assistant", "tool"] = Field(description="'user' (the caller), 'assistant' (the agent), "
                                                       "'tool' (a tool result).")
    content: str = Field("", description="The words (as heard, for the other side's words), or a tool result.")
    tool_calls: tuple[ToolCall, ...] = Field((), description="Tool calls of an assistant message.")
    tool_call_id: str | None = Field(None, description="The call a tool result answers.")
    at_s: float = Field(0.0, description="When it entered the history, seconds on the simulated clock.")
    truncated: bool = Field(False, description="An assistant message cut to the words spoken before a barge-in.")


class AgentReply(BaseModel):
    """What a text agent returns for one step: words to say and tool calls to run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field("", description="What the agent says ('' for a step of tool calls only).")
    tool_calls: tuple[ToolCall, ...] = Field((), description="Tool calls; their results arrive the next tick.")


TextAgent = Callable[[Sequence[Message]], "str | AgentReply | Awaitable[str | AgentReply]"]
"""Any chat model as a duplex agent's brain: its history in, its reply out (sync or async)."""
CallerPolicy = Callable[[Sequence[Message]], "str | None | Awaitable[str | None]"]
"""The caller's words for its next turn given what it heard; None or a stop token ends the call."""
ToolRunner = Callable[[Sequence[ToolCall]], "Sequence[str] | Awaitable[Sequence[str]]"]
"""Runs an agent's tool calls (the coordinator's tool execution and sync), one result each."""


async def resolve(value: T | Awaitable[T]) -> T:
    """A callable's result, awaited when it is awaitable (sync and async models alike)."""
    return await value if inspect.isawaitable(value) else value  # type: ignore[return-value]
