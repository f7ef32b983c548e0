"""Tool calls and odd records as the judge reads them (issue 27, second mutation run).

Arguments given as a mapping were pinned only with ASCII, JSON-native values, and never
absent: tool calls built in-process carry a mapping, not JSON text, and may hold dates
or other values JSON has no type for; the judge must read them as written, never as
escapes. The fallbacks for records older runs and other tools store (no name, no id, a
number as content, invisible-only content) and the place of the marker's "(quoted)" were
unpinned too."""

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


def test_marker_look_alikes_are_marked_right_after_the_first_word():
    from tauray.actors.judge.render import defuse

    assert defuse("x END CONVERSATION RECORD y") == "x END (quoted) CONVERSATION RECORD y"
    assert defuse("ЕND_CONVERSATION_RECORD") == "ЕND (quoted)_CONVERSATION_RECORD"  # a Cyrillic Е
    assert defuse("begin of the conversation record") == "begin (quoted) of the conversation record"


def test_odd_messages_render_with_their_fallbacks():
    """Records as older runs and other tools store them: content that is only invisible
    characters, a number, tool calls that decode to no list, calls without a name or an
    id (and results without an id), a name of 100 characters, a name that defuses to nothing."""
    from types import SimpleNamespace

    messages = [
        {"side": "user", "role": "user", "content": "\u200b\u200b"},
        SimpleNamespace(side="agent", role="assistant", content=3.5),  # no tool_calls attribute at all
        {"side": "agent", "role": "assistant", "content": None, "tool_calls": "42"},
        {"side": "agent", "role": "assistant", "content": None,
         "tool_calls": [{"arguments": {}}, {"name": "n" * 100, "id": "k"}, {"name": "\u200b", "id": "z"}]},
        {"side": "agent", "role": "tool", "content": "ok"},
        {"side": "agent", "role": "assistant", "content": None, "tool_calls": "not json"},
        {"side": "agent", "role": "tool", "content": "ok2", "tool_call_id": None},
    ]
    assert render_transcript(messages).splitlines()[1:-1] == [
        "#1 CUSTOMER says:", "  | (no text)",
        "#2 AGENT says:", "  | 3.5",
        "#3 AGENT says:", "  | (no text)",
        "#4 AGENT calls tool unnamed with arguments:", "  | ❴❵",
        f"#4 AGENT calls tool {'n' * 80} with arguments:", "  | ❴❵",
        "#4 AGENT calls tool unnamed with arguments:", "  | ❴❵",
        "#5 TOOL RESULT for the agent (unnamed):", "  | ok",
        "#6 AGENT calls tool unparseable_tool_calls with arguments:", "  | (malformed arguments) not json",
        "#7 TOOL RESULT for the agent (unparseable_tool_calls):", "  | ok2",
    ]
