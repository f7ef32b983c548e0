"""The message record: one message of a transcript, built once where it is produced and
carried unchanged to the ``messages`` table."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from tauray.results.tables.records.columns import Role, Side, ToolCallsJson, UtcDatetime, _DetailRow


class MessageRecord(_DetailRow):
    """One message of the transcript, in conversation order."""

    seq: int = Field(ge=0, description="Order of the message within the conversation.")
    turn: int = Field(ge=0, description="Turn in which it was produced.")
    side: Side = Field(description="Who produced it: 'agent' or 'user'.")
    role: Role = Field(description="'assistant' (agent), 'user' (customer) or 'tool'.")
    content: str | None = Field(description="Text content, if any.")
    tool_calls: ToolCallsJson | None = Field(description="JSON list of {id, name, arguments}.")
    tool_call_id: str | None = Field(description="Call answered by a tool message.")
    retries: int | None = Field(None, ge=0, description="Retries of the model call that produced this message: the "
                                "Router's plus 429s waited out (0: first attempt); null when no model call produced it.")
    finish_reason: str | None = Field(None, description="The finish reason of the model call that produced this "
                                      "message as litellm passed it on (stop, length, tool_calls, content_filter); "
                                      "null when no model call produced it, or none came back (a filtered prompt).")
    native_finish_reason: str | None = Field(None, description="The provider's own stop reason where litellm keeps "
                                             "one beside finish_reason (Gemini's MALFORMED_FUNCTION_CALL, "
                                             "Anthropic's refusal); null otherwise (docs/providers.md).")
    stop: str | None = Field(None, description="Why the model call stopped, in tauray's words: stop, length, "
                             "content_filter (output withheld), prompt_filter (the prompt refused, no reply), "
                             "refusal, malformed_call, tool_calls, other; null when no model call produced it.")
    refusal: str | None = Field(None, description="The model's refusal text, when it refused (OpenAI's refusal).")
    created_at: UtcDatetime = Field(description="Creation time, UTC.")

    @property
    def calls(self) -> tuple[dict[str, Any], ...]:
        """The tool calls as ``{id, name, arguments}`` objects (the column keeps them as JSON
        text, one plain Arrow type); ``()`` for a message without calls. Readers of the
        record (the judge's transcript, the audit) take them from here."""
        return tuple(json.loads(self.tool_calls)) if self.tool_calls else ()
