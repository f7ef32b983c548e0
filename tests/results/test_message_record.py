"""The message record's tool calls: JSON text in the column, objects to its readers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tauray.results.tables.records import MessageRecord

KEY = dict(run_id="r", conversation_id="c", scenario="s", seq=0, turn=1, side="agent", role="assistant",
           content=None, tool_call_id=None, created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))


def test_calls_are_the_objects_the_json_column_holds():
    calls = [{"id": "a", "name": "get_customer", "arguments": '{"id": "ü"}'}]
    m = MessageRecord(**KEY, tool_calls=calls)
    assert m.tool_calls == '[{"id": "a", "name": "get_customer", "arguments": "{\\"id\\": \\"ü\\"}"}]'
    assert m.calls == tuple(calls)
    assert MessageRecord(**KEY, tool_calls=None).calls == ()


def test_a_call_without_its_arguments_is_refused():
    with pytest.raises(ValueError, match="id, name and arguments"):
        MessageRecord(**KEY, tool_calls=[{"id": "a", "name": "x"}])
