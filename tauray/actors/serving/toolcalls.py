"""Tool calls for models whose chat template knows nothing of tools (Hermes-style tags).

llama-cpp-python renders a GGUF's own chat template, and most small models'
templates (SmolLM2's among them) have no place for tools: the tools would be
dropped and the model could never call one. Its ``chatml-function-calling``
format does add them, but generates without a token limit on some paths, which
a CPU test cannot afford. So for such models the deployment uses the
convention Hermes, Qwen and SmolLM2 were tuned on: the tools are listed in the
system message inside ``<tools>``, and each ``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`` block of the reply becomes an OpenAI tool call. A block
that is not valid JSON is passed on with its raw text as the arguments, so the
engine counts it as a malformed call instead of it vanishing into the text.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')

INSTRUCTIONS = (
    "You may call functions to help with the user's request. The available functions are listed, "
    "as JSON signatures, within <tools></tools>:\n<tools>\n{tools}\n</tools>\n"
    "To call a function, reply with a JSON object inside <tool_call></tool_call> tags:\n"
    '<tool_call>\n{{"name": "<function name>", "arguments": {{<arguments as a JSON object>}}}}\n</tool_call>'
)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def render_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """The conversation as plain ``{role, content}`` text turns, tools and past calls written out."""
    out: list[dict[str, str]] = []
    listing = "\n".join(json.dumps(t.get("function", t), sort_keys=True) for t in tools or [])
    instructions = INSTRUCTIONS.format(tools=listing) if tools else ""
    for m in messages:
        role = str(m.get("role", "user"))
        text = _text(m.get("content"))
        if role == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = c.get("function", {})
                args = fn.get("arguments", "{}")
                try:
                    args_obj: Any = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    args_obj = args
                calls.append(f"<tool_call>\n{json.dumps({'name': fn.get('name', ''), 'arguments': args_obj})}\n</tool_call>")
            text = "\n".join([text, *calls]).strip()
        elif role == "tool":
            text = f"<tool_response>\n{text}\n</tool_response>"
        out.append({"role": role, "content": text})
    if instructions:
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{instructions}"}
        else:
            out.insert(0, {"role": "system", "content": instructions})
    return out


def parse_reply(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The reply's text without its ``<tool_call>`` blocks, and those blocks as OpenAI tool calls."""
    calls: list[dict[str, Any]] = []
    for block in _BLOCK.findall(text):
        name, arguments = "", block
        try:
            obj = json.loads(block)
        except ValueError:
            found = _NAME.search(block)
            name = found.group(1) if found else ""
        else:
            if isinstance(obj, dict):
                name = str(obj.get("name", ""))
                args = obj.get("arguments", obj.get("parameters", {}))
                arguments = args if isinstance(args, str) else json.dumps(args)
        calls.append({"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                      "function": {"name": name, "arguments": arguments}})
    if not calls:
        return text, []
    rest = _BLOCK.sub("", text).strip()
    return (rest or None), calls


__all__ = ["INSTRUCTIONS", "parse_reply", "render_messages"]
