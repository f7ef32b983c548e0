"""Tool schemas as each provider family accepts them.

The scenarios' tools are written once, as OpenAI function schemas. Two families need more:

* **Gemini / Vertex AI** refuse a function whose ``parameters`` is an object with no
  properties ("properties: should be non-empty for OBJECT type"); litellm passes
  ``{"type": "object"}`` on as it is. A tool without arguments is sent without
  ``parameters`` (Gemini's documented form for a function that takes none).
* **OpenAI structured outputs** (``strict: true``) accept a schema only when every object
  has ``additionalProperties: false`` and lists every property in ``required`` (an
  optional one is made nullable instead), and no ``default``. :func:`strict_tool` rewrites
  a tool so; a tool's meaning is unchanged (a null argument is the same as an absent one
  for the domains' tools, whose optional parameters default to None).
"""

from __future__ import annotations

import copy
from typing import Any

GEMINI_FAMILIES = frozenset({"gemini", "vertex_ai", "vertex_ai_beta"})


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function") or {} if isinstance(tool, dict) else {}


def tools_for(provider: str, tools: list[dict[str, Any]] | None) -> tuple[list[dict[str, Any]] | None, bool]:
    """The tools as ``provider`` accepts them, and whether any was changed. Pure."""
    if not tools or provider not in GEMINI_FAMILIES:
        return tools, False
    out, changed = [], False
    for tool in tools:
        params = _function(tool).get("parameters")
        if isinstance(params, dict) and params.get("type") == "object" and not params.get("properties"):
            function = {k: v for k, v in _function(tool).items() if k != "parameters"}
            out.append({**tool, "function": function})
            changed = True
        else:
            out.append(tool)
    return out, changed


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    schema = {k: v for k, v in schema.items() if k != "default"}
    if isinstance(schema.get("items"), dict):
        schema["items"] = _strict(schema["items"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            schema[key] = [_strict(s) for s in schema[key]]
    if schema.get("type") == "object":
        props = {name: _strict(p) for name, p in (schema.get("properties") or {}).items()}
        required = set(schema.get("required") or ())
        for name, prop in props.items():
            if name not in required:
                props[name] = _nullable(prop)
        schema.update(properties=props, required=list(props), additionalProperties=False)
    return schema


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    kind = prop.get("type")
    if isinstance(kind, str):
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**prop, "type": [*kind, "null"]} if "null" not in kind else prop
    return {"anyOf": [prop, {"type": "null"}]}


def strict_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool with a schema OpenAI's strict mode accepts and ``strict: true``."""
    tool = copy.deepcopy(tool)
    function = tool.setdefault("function", {})
    function["parameters"] = _strict(function.get("parameters") or {"type": "object", "properties": {}})
    function["strict"] = True
    return tool


def strict_problems(schema: Any, where: str = "parameters") -> list[str]:
    """Why ``schema`` is not valid for OpenAI strict mode (empty when it is)."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    if "default" in schema:
        problems.append(f"{where}: default")
    if schema.get("type") == "object" or (isinstance(schema.get("type"), list) and "object" in schema["type"]):
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties not false")
        if set(schema.get("required") or ()) != set(props):
            problems.append(f"{where}: optional properties")
        for name, prop in props.items():
            problems += strict_problems(prop, f"{where}.{name}")
    if isinstance(schema.get("items"), dict):
        problems += strict_problems(schema["items"], f"{where}[]")
    for option in schema.get("anyOf") or []:
        problems += strict_problems(option, where)
    return problems


__all__ = ["GEMINI_FAMILIES", "strict_problems", "strict_tool", "tools_for"]
