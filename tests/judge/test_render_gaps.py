"""The judge's whole view of a conversation, pinned (issue 27: the mutation run found
the kept and dropped character classes, OpenAI-shaped and unparseable tool calls, the
argument rendering and the fallbacks unpinned). A change to this text changes what
every judge reads, so it is deliberate and this expected text changes with it."""

from __future__ import annotations

import json

from tauray.actors.judge.render import render_transcript, text_hash

MESSAGES = [
    # CRLF, a tab (kept), a bell (control), a zero-width space (format), private use,
    # an unassigned code point and a lone surrogate (all dropped); a rule and a fence.
    {"side": "user", "role": "user", "content": "Hi,\r\nmy data\tis off\x07\u200b\ue000\u0378\ud800 ====== ```x```",
     "tool_calls": None},
    # OpenAI's nested shape; NaN content as pandas gives it; a tool name that needs cleaning.
    {"side": "agent", "role": "assistant", "content": float("nan"),
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get line!", "arguments": '{"b": 1, "a": "é"}'}}]},
    {"side": "agent", "role": "tool", "content": "", "tool_call_id": "c1"},
    # tool calls stored as JSON text, arguments as a mapping (keys sorted)
    {"side": "agent", "role": "assistant", "content": "Please toggle.",
     "tool_calls": json.dumps([{"id": "c2", "name": "toggle_data", "arguments": {"z": [1], "y": None}}])},
    {"side": "user", "role": "assistant", "content": None,
     "tool_calls": [{"id": "p1", "name": "toggle_data", "arguments": "{bad"}]},
    {"side": "user", "role": "tool", "content": "Mobile data: ON", "tool_call_id": "p1"},
    {"side": "agent", "role": "tool", "content": "late", "tool_call_id": "zz"},
    {"side": "agent", "role": "assistant", "content": "  ", "tool_calls": "[not json"},
    {"side": "agent", "role": "assistant", "content": None, "tool_calls": None},
]

EXPECTED = """===== BEGIN CONVERSATION RECORD =====
#1 CUSTOMER says:
  | Hi,
  | my data\tis off = = = '''x'''
#2 AGENT calls tool get_line_ with arguments:
  | ❴"a": "é", "b": 1❵
#3 TOOL RESULT for the agent (get_line_):
  | (empty result)
#4 AGENT says:
  | Please toggle.
#4 AGENT calls tool toggle_data with arguments:
  | ❴"y": null, "z": ⟦1⟧❵
#5 CUSTOMER performs phone action toggle_data with arguments:
  | (malformed arguments) ❴bad
#6 DEVICE RESULT on the customer's phone (toggle_data):
  | Mobile data: ON
#7 TOOL RESULT for the agent (unknown tool):
  | late
#8 AGENT calls tool unparseable_tool_calls with arguments:
  | (malformed arguments) ⟦not json
#9 AGENT says:
  | (no text)
===== END CONVERSATION RECORD ====="""


def test_the_rendered_transcript_is_pinned():
    assert render_transcript(MESSAGES) == EXPECTED


def test_records_and_mappings_render_alike():
    from types import SimpleNamespace

    as_objects = [SimpleNamespace(**m) for m in MESSAGES]
    assert render_transcript(as_objects) == EXPECTED
    assert render_transcript([]) == "===== BEGIN CONVERSATION RECORD =====\n===== END CONVERSATION RECORD ====="


def test_text_hash_is_pinned():
    assert text_hash("abc") == "ba7816bf8f01cfea"  # the first 16 hex digits of sha256
