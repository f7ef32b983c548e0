"""Tool-call arguments as the judge reads them (issue 27, second mutation run: arguments
given as a mapping were pinned only with ASCII, JSON-native values, and never absent).
Tool calls built in-process carry a mapping, not JSON text, and may hold dates or other
values JSON has no type for; the judge must read them as written, never as escapes."""

from __future__ import annotations

import datetime

from tauray.actors.judge.render import render_transcript


def _rendered_arguments(arguments) -> str:
    text = render_transcript([{"side": "agent", "role": "assistant", "content": None,
                               "tool_calls": [{"id": "c1", "name": "refuel", "arguments": arguments}]}])
    lines = text.splitlines()
    assert lines[1] == "#1 AGENT calls tool refuel with arguments:"
    return "\n".join(lines[2:-1])


def test_a_mapping_keeps_its_non_ascii_text():
    assert _rendered_arguments({"city": "Zürich", "note": "ça va"}) == '  | ❴"city": "Zürich", "note": "ça va"❵'


def test_a_mapping_with_values_json_has_no_type_for_renders_them_as_text():
    when = datetime.date(2025, 3, 1)
    assert _rendered_arguments({"date": when}) == '  | ❴"date": "2025-03-01"❵'


def test_a_call_without_arguments_renders_an_empty_object():
    assert _rendered_arguments(None) == "  | ❴❵"
