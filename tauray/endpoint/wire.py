"""The test endpoint in providers' own wire formats: stop reasons as each provider sends them.

litellm maps every provider's stop reason onto OpenAI's few words, and some of them are lost
on the way (Gemini's ``MALFORMED_FUNCTION_CALL`` becomes ``stop``, Anthropic's ``refusal``
becomes ``content_filter``). To test what tauray makes of them through litellm for real, the
endpoint also answers as these providers document their APIs:

=====================================  ==========================================================
Route (litellm model, api_base root)   Named replies (the model name picks one)
=====================================  ==========================================================
``POST /v1/messages``                  ``refusal``: Anthropic's ``stop_reason: "refusal"`` (partial
(``anthropic/<name>``)                 text, no refusal message, as the streaming-refusals page
                                       shows); ``refusal-explained``: the same with
                                       ``stop_details``; ``cut-tool``: ``max_tokens`` inside a
                                       ``tool_use`` block whose ``input`` is ``{}``; anything
                                       else: plain text, ``end_turn``
``POST /models/{model}:generateContent``  ``malformed-call``: a candidate with ``finishReason``
(``gemini/<name>``; also under         ``MALFORMED_FUNCTION_CALL``, a ``finishMessage`` and no
``/v1beta``)                           content; ``prompt-blocked``: ``promptFeedback.blockReason``
                                       and no candidates; anything else: plain text, ``STOP``
``POST /openai/deployments/{d}/chat/completions``  Azure OpenAI: the deployment's request
(``azure/<behaviour>``)                answered by the endpoint's behaviour of that name
                                       (``prompt-filter``: Azure's HTTP 400 ``content_filter``)
=====================================  ==========================================================

Like the OpenAI-format shapes (:mod:`.shapes`), a named reply answers every request but one
that hands back a tool result, which gets plain text, so a conversation goes on as it would.
"""

from __future__ import annotations

import json
import random
from typing import Any, Callable

from aiohttp import web

from tauray.scenarios.conventions import HARNESS_TOOLS

PLAIN = "I have checked that for you; everything looks fine now."
"""What every named reply says to a tool result (and any other model name, always)."""

REFUSAL_PARTIAL = "Hello.."
"""The partial text of Anthropic's refusal (the documented example)."""

REFUSAL_EXPLANATION = "This request was declined because it could enable harm."

MALFORMED_MESSAGE = "Malformed function call: print(default_api.check_status_bar(verbose=True)"
"""Gemini's finishMessage for a call it could not parse (the model wrote code, not a call)."""


def _words(value: Any) -> int:
    """A rough token count of any JSON value: its words."""
    return len(json.dumps(value).split())


# --------------------------------------------------------------------------- Anthropic


def _anthropic_message(body: dict[str, Any], content: list[dict[str, Any]], stop: str,
                       **extra: Any) -> dict[str, Any]:
    return {"id": f"msg_{random.getrandbits(64):016x}", "type": "message", "role": "assistant",
            "model": body.get("model", ""), "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": _words(body.get("messages")), "output_tokens": max(1, _words(content))},
            **extra}


def _last_parts(turns: list[Any], key: str) -> list[Any]:
    last = turns[-1] if turns and isinstance(turns[-1], dict) else {}
    parts = last.get(key)
    return parts if isinstance(parts, list) else []


def _anthropic_tool_result(body: dict[str, Any]) -> bool:
    return any(isinstance(p, dict) and p.get("type") == "tool_result"
               for p in _last_parts(body.get("messages") or [], "content"))


def _first_tool(tools: list[Any]) -> str:
    names = [str(t["name"]) for t in tools if isinstance(t, dict) and t.get("name")]
    return next((n for n in names if n not in HARNESS_TOOLS), names[0] if names else "no_such_tool")


ANTHROPIC: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "refusal": lambda b: _anthropic_message(b, [{"type": "text", "text": REFUSAL_PARTIAL}], "refusal"),
    "refusal-explained": lambda b: _anthropic_message(
        b, [{"type": "text", "text": REFUSAL_PARTIAL}], "refusal",
        stop_details={"type": "refusal", "category": "cyber", "explanation": REFUSAL_EXPLANATION}),
    "cut-tool": lambda b: _anthropic_message(
        b, [{"type": "tool_use", "id": f"toolu_{random.getrandbits(48):012x}",
             "name": _first_tool(b.get("tools") or []), "input": {}}], "max_tokens"),
}
"""Anthropic model names and the odd reply each gives first."""


async def anthropic_messages(request: web.Request) -> web.Response:
    body = await request.json()
    make = ANTHROPIC.get(str(body.get("model", "")))
    if make is None or _anthropic_tool_result(body):
        return web.json_response(_anthropic_message(body, [{"type": "text", "text": PLAIN}], "end_turn"))
    return web.json_response(make(body))


# --------------------------------------------------------------------------- Gemini


def _usage(body: dict[str, Any], completion: int) -> dict[str, Any]:
    prompt = _words(body.get("contents"))
    usage = {"promptTokenCount": prompt, "totalTokenCount": prompt + completion}
    return usage | ({"candidatesTokenCount": completion} if completion else {})


GEMINI: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
    "malformed-call": lambda b, model: {
        "candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": MALFORMED_MESSAGE, "index": 0}],
        "usageMetadata": _usage(b, 0), "modelVersion": model},
    "prompt-blocked": lambda b, model: {
        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]},
        "usageMetadata": _usage(b, 0), "modelVersion": model},
}
"""Gemini model names and the odd reply each gives first."""


async def gemini_generate(request: web.Request) -> web.Response:
    model, _, method = request.match_info["target"].partition(":")
    if method != "generateContent":
        return web.json_response({"error": {"code": 404, "message": f"method {method!r} is not served here",
                                            "status": "NOT_FOUND"}}, status=404)
    body = await request.json()
    tool_result = any(isinstance(p, dict) and ("functionResponse" in p or "function_response" in p)
                      for p in _last_parts(body.get("contents") or [], "parts"))
    make = GEMINI.get(model)
    if make is not None and not tool_result:
        return web.json_response(make(body, model))
    return web.json_response({
        "candidates": [{"content": {"parts": [{"text": PLAIN}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(body, len(PLAIN.split())), "modelVersion": model})


# --------------------------------------------------------------------------- Azure OpenAI

AZURE_PROMPT_FILTER = {
    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
               "Please modify your prompt and retry. To learn more about our content filtering policies please read "
               "our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
    "type": None, "param": "prompt", "code": "content_filter", "status": 400,
    "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
        "hate": {"filtered": False, "severity": "safe"}, "jailbreak": {"filtered": True, "detected": True},
        "self_harm": {"filtered": False, "severity": "safe"}, "sexual": {"filtered": False, "severity": "safe"},
        "violence": {"filtered": False, "severity": "safe"}}},
}
"""Azure OpenAI's documented error object for a prompt its content filter flagged (HTTP 400)."""


def add_wire_routes(app: web.Application, chat_completions: Callable[[web.Request], Any]) -> None:
    """Serve the providers' own routes beside the OpenAI-compatible ones; Azure's deployment
    route answers with the same behaviours as ``/v1/chat/completions`` (the body names it)."""
    app.router.add_post("/v1/messages", anthropic_messages)
    for prefix in ("", "/v1beta"):
        app.router.add_post(prefix + "/models/{target}", gemini_generate)
    app.router.add_post("/openai/deployments/{deployment}/chat/completions", chat_completions)


__all__ = ["ANTHROPIC", "AZURE_PROMPT_FILTER", "GEMINI", "MALFORMED_MESSAGE", "PLAIN", "REFUSAL_EXPLANATION",
           "REFUSAL_PARTIAL", "add_wire_routes", "anthropic_messages", "gemini_generate"]
