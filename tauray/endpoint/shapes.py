"""Endpoint behaviours that answer in the odd shapes real servers use.

Hosted providers and local servers (vLLM, llama.cpp, Ollama, proxies) disagree
on the details of a reply: tool-call arguments as ``null``, ``""`` or a JSON
object instead of a string; tool calls without ids; several calls at once,
with or without text beside them; completions with no choices at all; empty
content. Each behaviour here emits one such shape on its first turn (and plain
text once a tool result came back), so a test can assert what tauray makes of
it (the table is in :mod:`tauray.actors.llm.replies`).

Tool calls go to tools the request offers that need no arguments (a phone's
``check_status_bar``, say), so that a no-argument call is also a valid one.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from tauray.endpoint.replies import BehaviourError, Reply, arguments_for, offered_functions, request_messages
from tauray.endpoint.wire import AZURE_PROMPT_FILTER
from tauray.scenarios.conventions import HARNESS_TOOLS

AFTER_TOOL = "I checked that; all looks fine from here."
PREAMBLE = "Let me check that for you."


def _reply(message: dict[str, Any], finish: str, empty_choices: bool = False) -> Any:
    return Reply(message, finish, empty_choices=empty_choices)


def _no_arg_tools(body: dict[str, Any]) -> list[str]:
    """Offered functions that require no argument, in order."""
    names = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") and not (fn.get("parameters") or {}).get("required"):
            names.append(str(fn["name"]))
    return names


def _after_tool(body: dict[str, Any]) -> bool:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return bool(messages) and messages[-1].get("role") == "tool"


def _calls(body: dict[str, Any], arguments: Any, n: int = 1, ids: bool = True) -> list[dict[str, Any]]:
    names = _no_arg_tools(body) or ["no_such_tool"]
    calls = []
    for i in range(n):
        call: dict[str, Any] = {"type": "function", "function": {"name": names[i % len(names)], "arguments": arguments}}
        if ids:
            call["id"] = f"call_shape_{i}"
        calls.append(call)
    return calls


def _shape(make: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any], Any], Any]:
    def behaviour(body: dict[str, Any], settings: Any) -> Any:
        if _after_tool(body):
            return _reply({"role": "assistant", "content": AFTER_TOOL}, "stop")
        return make(body)

    behaviour.__doc__ = make.__doc__
    return behaviour


def _tools(body: dict[str, Any], calls: list[dict[str, Any]], content: str | None = None) -> Any:
    return _reply({"role": "assistant", "content": content, "tool_calls": calls}, "tool_calls")


SHAPE_BEHAVIOURS: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    "shape-args-null": _shape(lambda b: _tools(b, _calls(b, None))),
    "shape-args-empty": _shape(lambda b: _tools(b, _calls(b, ""))),
    "shape-args-object": _shape(lambda b: _tools(b, _calls(b, {}))),
    "shape-no-ids": _shape(lambda b: _tools(b, _calls(b, "{}", n=2, ids=False))),
    "shape-parallel": _shape(lambda b: _tools(b, _calls(b, "{}", n=3))),
    "shape-text-and-tools": _shape(lambda b: _tools(b, _calls(b, "{}"), content=PREAMBLE)),
    "shape-no-choices": lambda body, settings: _reply({"role": "assistant", "content": None}, "stop",
                                                      empty_choices=True),
    "shape-empty-content": lambda body, settings: _reply({"role": "assistant", "content": ""}, "stop"),
    "shape-null-content": lambda body, settings: _reply({"role": "assistant", "content": None}, "stop"),
}
"""Model name at the test endpoint -> behaviour emitting that shape."""

CUT_TEXT = "I have looked at your account and the problem is that your"
"""The text of a reply cut at the length limit (mid-sentence)."""

CUT_ARGUMENTS = '{"reason": "the customer asked me to che'
"""Tool-call arguments cut at the length limit (not valid JSON: the server stopped, not the model)."""

REFUSAL = "I'm sorry, but I can't help with that request."
"""The refusal text of ``stop-refusal`` (OpenAI's ``message.refusal``)."""


def _cut_call(body: dict[str, Any]) -> dict[str, Any]:
    """A call to the first offered tool that neither ends nor hands off the conversation, cut mid-arguments."""

    names = [str(t["function"]["name"]) for t in body.get("tools") or []
             if isinstance(t, dict) and isinstance(t.get("function"), dict) and t["function"].get("name")]
    name = next((n for n in names if n not in HARNESS_TOOLS), "no_such_tool")
    return {"id": "call_cut_0", "type": "function", "function": {"name": name, "arguments": CUT_ARGUMENTS}}


STOP_BEHAVIOURS: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    # Generation stopped at max_tokens mid-sentence.
    "stop-length-text": _shape(lambda b: _reply({"role": "assistant", "content": CUT_TEXT}, "length")),
    # Stopped at max_tokens while writing a tool call's arguments.
    "stop-length-tool": _shape(lambda b: _reply({"role": "assistant", "content": None,
                                                 "tool_calls": [_cut_call(b)]}, "length")),
    # The provider's content filter withheld the reply (Azure/OpenAI: finish_reason content_filter).
    "stop-content-filter": _shape(lambda b: _reply({"role": "assistant", "content": None}, "content_filter")),
    # The model refused (OpenAI: content null, message.refusal holds the text).
    "stop-refusal": _shape(lambda b: _reply({"role": "assistant", "content": None, "refusal": REFUSAL}, "stop")),
}
"""Model name at the test endpoint -> behaviour that stops for that reason (see ModelReply.stop);
each answers a tool result with plain text, like the shapes."""



def tool_call_as_text(body: dict[str, Any], settings: Any) -> Reply:
    """A vLLM server started without a tool parser (no ``--enable-auto-tool-choice
    --tool-call-parser``) serving a Hermes-style model (Qwen 2.5, Hermes): the model's tool
    call comes back as the text its chat template asks for, in ``content``, with finish reason
    ``stop`` and no ``tool_calls``. Plain text when no tool is offered or the customer has not
    just spoken."""
    functions = [f for f in offered_functions(body) if f["name"] not in HARNESS_TOOLS]
    messages = request_messages(body)
    if not functions or not messages or messages[-1].get("role") != "user":
        return _reply({"role": "assistant", "content": AFTER_TOOL}, "stop")
    call = {"name": functions[0]["name"], "arguments": arguments_for(functions[0])}
    return _reply({"role": "assistant", "content": f"<tool_call>\n{json.dumps(call)}\n</tool_call>"}, "stop")


def prompt_filter(body: dict[str, Any], settings: Any) -> Reply:
    """Azure OpenAI's content filter flagging the prompt: HTTP 400 with its documented error
    object (``code: content_filter``, ``innererror.code: ResponsibleAIPolicyViolation``), no reply."""
    raise BehaviourError(400, AZURE_PROMPT_FILTER["message"], code="content_filter", error=AZURE_PROMPT_FILTER)


STOP_BEHAVIOURS.update({"tool-call-text": tool_call_as_text, "prompt-filter": prompt_filter})
SHAPE_BEHAVIOURS.update(STOP_BEHAVIOURS)

__all__ = ["AFTER_TOOL", "CUT_ARGUMENTS", "CUT_TEXT", "PREAMBLE", "REFUSAL", "SHAPE_BEHAVIOURS",
           "STOP_BEHAVIOURS", "prompt_filter", "tool_call_as_text"]
