"""Dual state: each side owns its DB and may run only its own tools.

A ``SideState`` wraps one upstream toolkit (which holds the DB); a
``DualState`` pairs the agent side with the user side (None outside telecom)
and runs the domain's sync after initialization and after every write. Gold
replay, the parity checks and the actors all act through these objects, so a
tool behaves the same everywhere.
"""

from __future__ import annotations

import copy
import json
from datetime import date, datetime
from enum import Enum
from typing import Any, Callable, Mapping

from pydantic import BaseModel, Field

from tauray.scenarios.model import EnvCall, Frozen, Side


class ToolOutcome(Frozen):
    """The result of one executed tool call."""

    side: Side = Field(description="Side that made the call.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(description="Arguments as called.")
    result: str = Field(description="Result as the model sees it (JSON or text); 'Error: ...' on failure.")
    error: bool = Field(description="True when the call failed.")
    is_write: bool = Field(description="True when the tool may change state.")


class SyncEvent(Frozen):
    """The updates one sync applied, per side (empty dicts when nothing changed)."""

    after: str = Field(description="What triggered the sync: 'init', or 'side:tool'.")
    agent: dict[str, Any] = Field(description="Updates applied to the agent DB.")
    user: dict[str, Any] = Field(description="Updates applied to the user DB.")


def render_result(value: Any) -> str:
    """Tool results as text for the model, as upstream's environment renders them (the parity
    oracle replays a trajectory and compares these strings): text as it is; otherwise JSON in
    which plain numbers and booleans are written as strings, while a pydantic record keeps its
    own dump (numbers stay numbers) and dates their ISO form."""
    if isinstance(value, str):
        return value
    return json.dumps(_as_upstream(value), default=str)


def _as_upstream(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _as_upstream(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_as_upstream(v) for v in value)
    if isinstance(value, list):
        return [_as_upstream(v) for v in value]
    return value


class SideState:
    """One side's DB and toolkit; executes only the tools that side owns."""

    def __init__(self, side: Side, toolkit: Any, tool_kinds: Mapping[str, str]):
        self.side = side
        self.toolkit = toolkit
        self.tool_kinds = tool_kinds

    @property
    def db(self) -> Any:
        return self.toolkit.db

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        kind = self.tool_kinds.get(name)
        if kind is None or kind == "harness":
            return ToolOutcome(
                side=self.side, name=name, arguments=arguments, error=True, is_write=False,
                result=f"Error: the {self.side} side has no tool named '{name}'.",
            )
        try:
            value = getattr(self.toolkit, name)(**arguments)
            result, error = render_result(value), False
        except Exception as exc:  # a failing tool is a result the model sees, not a crash
            result, error = f"Error: {exc}", True
        return ToolOutcome(
            side=self.side, name=name, arguments=arguments, result=result, error=error, is_write=kind == "write"
        )

    def call_function(self, func_name: str, arguments: dict[str, Any]) -> Any:
        """Initialization and assertion functions: any public method of the toolkit."""
        if func_name.startswith("_") or not callable(getattr(self.toolkit, func_name, None)):
            raise AttributeError(f"the {self.side} side has no function '{func_name}'")
        return getattr(self.toolkit, func_name)(**arguments)

    def update_db(self, data: dict[str, Any]) -> None:
        self.toolkit.update_db(data)

    def db_hash(self) -> str:
        return self.toolkit.get_db_hash()

    def dump(self) -> dict[str, Any]:
        return self.db.model_dump(mode="json")


SyncFn = Callable[[Any, Any], Any]


def no_side_state(side: Side) -> ValueError:
    """The error of asking a scenario for a side it keeps no state for."""
    return ValueError(f"this scenario has no {side}-side state")


class DualState:
    """Both sides of one conversation's world, kept consistent by ``sync``."""

    def __init__(self, agent: SideState, user: SideState | None, sync: SyncFn | None,
                 apply: dict[str, Callable[[Any, dict[str, Any]], None]] | None = None):
        self.agent = agent
        self.user = user
        self._sync = sync
        self._apply = apply or {}
        self.sync_events: list[SyncEvent] = []

    def side(self, side: Side) -> SideState:
        state = self.agent if side == "agent" else self.user
        if state is None:
            raise no_side_state(side)
        return state

    def sync(self, after: str) -> SyncEvent | None:
        if self._sync is None or self.user is None:
            return None
        updates = self._sync(self.agent.db, self.user.db)
        if updates.empty:
            return None
        event = SyncEvent(after=after, agent=updates.for_side("agent"), user=updates.for_side("user"))
        if event.agent:
            self._apply["agent"](self.agent.db, event.agent)
        if event.user:
            self._apply["user"](self.user.db, event.user)
        self.sync_events.append(event)
        return event

    def initialize(self, initialization_data: dict[str, Any] | None, actions: tuple[EnvCall, ...] | None) -> None:
        if initialization_data:
            if initialization_data.get("agent_data"):
                self.agent.update_db(copy.deepcopy(initialization_data["agent_data"]))
            if initialization_data.get("user_data") and self.user is not None:
                self.user.update_db(copy.deepcopy(initialization_data["user_data"]))
        self.sync("init")
        for action in actions or ():
            self.side(action.side).call_function(action.func_name, dict(action.arguments))
            self.sync("init")

    def execute(self, side: Side, name: str, arguments: dict[str, Any]) -> tuple[ToolOutcome, SyncEvent | None]:
        outcome = self.side(side).call_tool(name, arguments)
        event = self.sync(f"{side}:{name}") if outcome.is_write else None
        return outcome, event

    def hashes(self) -> dict[str, str | None]:
        return {"agent": self.agent.db_hash(), "user": self.user.db_hash() if self.user else None}
