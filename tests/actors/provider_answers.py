"""A loopback server that answers as a provider documents: a scripted run of errors (the
provider's status, JSON body and headers), then real replies in the provider's own format.

Formats: OpenAI chat completions (``/v1/chat/completions``), Anthropic messages
(``/v1/messages``) and Gemini ``generateContent``. Every request is counted, so a test
asserts how many calls reached the provider, never how long anything took.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web

# The error bodies as the providers document them (status, body).
OPENAI_INSUFFICIENT_QUOTA = (429, {"error": {
    "message": "You exceeded your current quota, please check your plan and billing details. For more information "
               "on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}})
OPENAI_RATE_LIMITED = (429, {"error": {"message": "Rate limit reached for gpt-4o-mini on tokens per min (TPM).",
                                       "type": "tokens", "param": None, "code": "rate_limit_exceeded"}})
OPENAI_UNAVAILABLE = (503, {"error": {"message": "The server is overloaded or not ready yet.",
                                      "type": "server_error", "param": None, "code": None}})
ANTHROPIC_OVERLOADED = (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
ANTHROPIC_CREDIT = (400, {"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade "
               "or purchase credits."}})
GEMINI_PER_DAY = (429, {"error": {
    "code": 429, "status": "RESOURCE_EXHAUSTED",
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
        "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}, "quotaValue": "200"}]}]}})


def _reply(path: str) -> dict[str, Any]:
    if path.endswith("/messages"):
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-5-sonnet-20240620",
                "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 2}}
    if ":generateContent" in path:
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello."}]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 2, "totalTokenCount": 14}}
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}}


class LoopbackServer:
    """An aiohttp server on 127.0.0.1 (a free port) in its own thread, answering every path
    with ``_handle``; ``close`` stops it."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    async def _handle(self, request: web.Request) -> web.Response:
        raise NotImplementedError

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        async def stop() -> None:
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class ProviderAnswers(LoopbackServer):
    """Answers the first ``len(errors)`` requests with ``errors`` (each ``(status, body)`` or
    ``(status, body, headers)``), or every request with ``forever`` when set; then replies."""

    def __init__(self, errors: list[tuple] | None = None, forever: tuple | None = None) -> None:
        self.errors = list(errors or [])
        self.forever = forever
        self.requests = 0
        super().__init__()

    async def _handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.requests += 1
        answer = self.forever or (self.errors.pop(0) if self.errors else None)
        if answer is None:
            return web.json_response(_reply(request.path))
        status, body, *rest = answer
        return web.json_response(body, status=status, headers=rest[0] if rest else None)
