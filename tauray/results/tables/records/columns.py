"""Column types, failure kinds and the key columns every row of a conversation starts with.

JSON-shaped values (tool arguments, sync updates, tool calls) are kept as JSON text so
every column has one plain Arrow type and the tables stay readable without this package.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

Side = Literal["agent", "user"]
AgentKind = Literal["llm", "reference", "phone", "realtime"]
# Why a conversation failed, when it did (``results.outcomes`` says how each kind counts;
# ``actors.failures`` sorts exceptions into them): the one definition of the kinds.
ErrorKind = Literal["infra", "model", "internal"]
INFRA: Final = "infra"  # the infrastructure failed (provider outage, actor died): says nothing about the model
MODEL: Final = "model"  # the provider refused the request: a verdict on the model
INTERNAL: Final = "internal"  # a bug of ours (or of a policy)
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
assert ERROR_KINDS == (INFRA, MODEL, INTERNAL)
ActionKind = Literal["tool_call", "sync"]
Role = Literal["assistant", "user", "tool"]


def as_json_text(value: Any) -> Any:
    # A str is taken to be JSON already and only checked; anything else is
    # serialised here so producers can hand over the structured value.
    if value is None:
        return None
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON text: {value[:80]!r}") from exc
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"value cannot be stored as JSON: {exc}") from exc


def _check_tool_calls(value: str | None) -> str | None:
    if value is None:
        return None
    calls = json.loads(value)
    if not isinstance(calls, list):
        raise ValueError("tool_calls must be a JSON list")  # noqa: TRY004 - pydantic expects ValueError
    for call in calls:
        if not isinstance(call, dict) or not {"id", "name", "arguments"} <= call.keys():
            raise ValueError("each tool call must be an object with id, name and arguments")
    return value


def _to_utc(value: datetime) -> datetime:
    # Naive datetimes are ambiguous once they leave the process that made
    # them, so they are refused rather than guessed.
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError("datetime must be timezone-aware")
    return value.astimezone(UTC)


JsonText = Annotated[str, BeforeValidator(as_json_text)]
ToolCallsJson = Annotated[str, BeforeValidator(as_json_text), AfterValidator(_check_tool_calls)]
UtcDatetime = Annotated[datetime, AfterValidator(_to_utc)]
Count = Annotated[int, Field(ge=0)]

_ROW_CONFIG = ConfigDict(frozen=True, extra="forbid")

# Attempts are data: every per-unit row says which unit and which attempt of it
# produced it, so "the newest attempt wins" is a groupby on columns, readable
# with plain pandas (docs/tables.md), never a rule about file names.
UnitId = str
Attempt = Annotated[int, Field(ge=0)]
UNIT_ID_DOC = ("Work unit the row belongs to (deterministic from cell, scenario and trial; "
               "the conversation id of every attempt of the unit).")
ATTEMPT_DOC = ("Attempt of the unit that wrote the row (0 = first run; a rerun after a kill or "
               "--retry-errors writes a higher one). Rows of the unit's newest attempt count.")


def _fill_unit_id(data: Any) -> Any:
    # A unit's conversation id is its unit id (pipeline/plan.py); producers
    # that predate the column may omit it.
    if isinstance(data, dict) and "unit_id" not in data and "conversation_id" in data:
        return {**data, "unit_id": data["conversation_id"]}
    return data


class _DetailRow(BaseModel):
    """Columns every per-conversation detail row starts with."""

    model_config = _ROW_CONFIG

    run_id: str = Field(description="Run the conversation belongs to.")
    conversation_id: str = Field(description="Conversation the row belongs to.")
    unit_id: UnitId = Field(description=UNIT_ID_DOC)
    attempt: Attempt = Field(default=0, description=ATTEMPT_DOC)
    scenario: str = Field(description="Scenario name.")

    @model_validator(mode="before")
    @classmethod
    def _unit_from_conversation(cls, data: Any) -> Any:
        return _fill_unit_id(data)

