"""The per-conversation detail rows of scoring and acting: predicates checked and actions
(tool calls and syncs) taken."""

from __future__ import annotations

from pydantic import Field

from tauray.results.tables.records.columns import ActionKind, JsonText, Side, _DetailRow


class PredicateRecord(_DetailRow):
    """One state predicate checked at the end of a conversation."""

    index: int = Field(ge=0, description="Position of the predicate in the scenario.")
    side: Side = Field(description="Side whose state was checked.")
    function: str = Field(description="Assertion function called.")
    arguments: JsonText = Field(description="Arguments of the call, JSON.")
    expected: bool = Field(description="Value the predicate should return.")
    actual: str | None = Field(description="Value it returned, as text; null on error.")
    met: bool = Field(description="Whether actual equals expected.")
    error: str | None = Field(description="Error raised by the check, if any.")


class ActionRecord(_DetailRow):
    """One tool call or state sync, in conversation order."""

    seq: int = Field(ge=0, description="Order of the action within the conversation.")
    turn: int = Field(ge=0, description="Turn in which it happened.")
    side: Side = Field(description="Side that acted.")
    kind: ActionKind = Field(description="'tool_call' or 'sync'.")
    tool: str | None = Field(description="Tool name; null for a sync.")
    arguments: JsonText | None = Field(description="Tool arguments, JSON.")
    result: str | None = Field(description="Tool result text.")
    error: bool = Field(description="Whether the call returned an error.")
    is_write: bool = Field(description="Whether the tool writes state.")
    matched_action_id: str | None = Field(description="Reference action it matched, if any.")
    sync_agent: JsonText | None = Field(description="Updates pushed to the agent DB, JSON.")
    sync_user: JsonText | None = Field(description="Updates pushed to the user DB, JSON.")
