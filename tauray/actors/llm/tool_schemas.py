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

Both rewrites walk the whole schema: ``$defs`` (pydantic puts the domains' nested records
there, e.g. airline ``book_reservation``'s passengers, telecom ``set_apn_settings``), items,
and nested ``anyOf``. pydantic writes a record argument as ``anyOf: [{"$ref": ...},
{"type": "object", "additionalProperties": true}]``; the free-form option is an object
without properties, which Gemini refuses and strict mode cannot express, so both rewrites
drop it where a described option remains (the model is asked for the record, as the tool means).
"""

from __future__ import annotations

import copy
from typing import Any

GEMINI_FAMILIES = frozenset({"gemini", "vertex_ai", "vertex_ai_beta"})


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function") or {} if isinstance(tool, dict) else {}


def _free_object(schema: Any) -> bool:
    """An object that names no properties (free-form), the shape Gemini refuses."""
    return isinstance(schema, dict) and schema.get("type") == "object" and not schema.get("properties")


def _pruned(schema: Any) -> Any:
    """The schema with free-form ``anyOf`` options dropped wherever another option remains,
    walking properties, items, ``anyOf``/``oneOf`` and ``$defs``. Pure."""
    if isinstance(schema, list):
        return [_pruned(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (_pruned(v) if k in ("items", "anyOf", "oneOf") else v) for k, v in schema.items()}
    for name in ("$defs", "properties"):
        if isinstance(schema.get(name), dict):
            out[name] = {k: _pruned(v) for k, v in schema[name].items()}
    for key in ("anyOf", "oneOf"):
        options = out.get(key)
        if isinstance(options, list):
            kept = [o for o in options if not _free_object(o)]
            out[key] = kept if kept else options
    return out


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
        elif isinstance(params, dict) and (pruned := _pruned(params)) != params:
            out.append({**tool, "function": {**_function(tool), "parameters": pruned}})
            changed = True
        else:
            out.append(tool)
    return out, changed


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    schema = {k: v for k, v in schema.items() if k != "default"}
    if isinstance(schema.get("$defs"), dict):
        schema["$defs"] = {name: _strict(d) for name, d in schema["$defs"].items()}
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
    function["parameters"] = _strict(_pruned(function.get("parameters") or {"type": "object", "properties": {}}))
    function["strict"] = True
    return tool


def strict_problems(schema: Any, where: str = "parameters", defs: dict[str, Any] | None = None) -> list[str]:
    """Why ``schema`` is not valid for OpenAI strict mode (empty when it is): every object,
    in ``$defs`` too, closed with all properties required, no ``default``, every ``$ref`` found."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    if isinstance(schema.get("$defs"), dict):
        defs = {**(defs or {}), **schema["$defs"]}
        for name, d in schema["$defs"].items():
            problems += strict_problems(d, f"{where}.$defs.{name}", defs)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.removeprefix("#/$defs/") not in (defs or {}):
        problems.append(f"{where}: $ref {ref} not in $defs")
    if "default" in schema:
        problems.append(f"{where}: default")
    if schema.get("type") == "object" or (isinstance(schema.get("type"), list) and "object" in schema["type"]):
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties not false")
        if set(schema.get("required") or ()) != set(props):
            problems.append(f"{where}: optional properties")
        for name, prop in props.items():
            problems += strict_problems(prop, f"{where}.{name}", defs)
    if isinstance(schema.get("items"), dict):
        problems += strict_problems(schema["items"], f"{where}[]", defs)
    if "oneOf" in schema:
        problems.append(f"{where}: oneOf")
    for i, option in enumerate(schema.get("anyOf") or []):
        problems += strict_problems(option, f"{where}.anyOf[{i}]", defs)
    return problems


def gemini_problems(schema: Any, where: str = "parameters") -> list[str]:
    """Where ``schema`` (as sent in a Gemini function declaration) has an object without
    properties, at any depth ("properties: should be non-empty for OBJECT type")."""
    problems: list[str] = []
    if isinstance(schema, dict):
        if str(schema.get("type", "")).lower() == "object" and not schema.get("properties"):
            problems.append(f"{where}: object without properties")
        for key, value in schema.items():
            problems += gemini_problems(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            problems += gemini_problems(value, f"{where}[{i}]")
    return problems


__all__ = ["GEMINI_FAMILIES", "gemini_problems", "strict_problems", "strict_tool", "tools_for"]
