"""A GGUF model behind an OpenAI-compatible route, as a Ray Serve deployment (llama-cpp-python).

llama-cpp-python already speaks OpenAI's chat-completion shapes
(``Llama.create_chat_completion``: messages, tools, tool calls, usage); this
deployment only puts that call behind Serve's HTTP proxy so that litellm can
reach it like any OpenAI-compatible server, and lets Serve own the replicas:
placement by resources, health checks, and replacement of one that dies.

One ``Llama`` object is not safe to call from two threads, so a replica answers
one request at a time (in a worker thread, so the replica stays responsive to
health checks while it generates); Serve queues the rest and spreads them over
replicas. Errors come back in OpenAI's error shape with the status a provider
would use: 400 for a request the model cannot take (context window exceeded,
bad parameters), which litellm does not retry, and 500 for anything else,
which it does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from typing import Any

from tauray.actors.serving.llama_worker import LlamaWorker, WorkerCrashed
from tauray.actors.serving.spec import ServeSpec, replica_options, resolve_weights
from tauray.actors.serving.toolcalls import parse_reply, render_messages

# OpenAI chat parameters handed to llama-cpp-python as they are.
_PASSED = frozenset({
    "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens", "stop", "seed",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
})
# Parameters that need no action here (the model field names this deployment; n=1 is all it does).
_IGNORED = frozenset({"model", "user", "n", "stream_options", "parallel_tool_calls"})


def _error(status: int, message: str, kind: str, code: str | None = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}},
                        status_code=status)


def _free_strings(schema: Any) -> list[dict[str, Any]]:
    """The string schemas in ``schema`` whose length nothing bounds (no enum, const or maxLength)."""
    if not isinstance(schema, dict):
        return []
    if schema.get("type") == "string":
        return [] if {"enum", "const", "maxLength"} & schema.keys() else [schema]
    found = [s for sub in (schema.get("properties") or {}).values() for s in _free_strings(sub)]
    return found + _free_strings(schema.get("items"))


def bounded(schema: dict[str, Any], max_tokens: int | None) -> dict[str, Any]:
    """``schema`` with every free string given a ``maxLength`` that lets the value close within
    ``max_tokens``: a grammar-bound reply that runs into the completion cap inside a string is
    cut JSON, which no judge can read, and a small model may never end a string by itself.

    The budget counts one character per token (the worst case), less the characters of the
    value's own structure (keys, quotes, enum values), shared out over the free strings; for a
    value without arrays that guarantees it can close. Strings inside an array get the same
    per-string budget (the item count is the model's, so there it is a bound, not a guarantee).
    """
    if not max_tokens:
        return schema
    schema = json.loads(json.dumps(schema))  # a copy: the caller's schema is the request's
    free = _free_strings(schema)
    if not free:
        return schema
    skeleton = len(json.dumps(schema.get("properties", {})))  # an over-count of the structure's characters
    each = max(8, (max_tokens - skeleton) // len(free))
    for string in free:
        string["maxLength"] = each
    return schema


def _response_format(value: Any, max_tokens: int | None = None) -> Any:
    """OpenAI's ``json_schema`` response format in llama-cpp-python's ``json_object`` + schema form, from
    which llama.cpp builds the GBNF grammar that constrains the reply (``_grammar_for_response_format``);
    free strings are bounded so that the value can close within ``max_tokens`` (:func:`bounded`)."""
    if isinstance(value, dict) and value.get("type") == "json_schema":
        schema = (value.get("json_schema") or {}).get("schema")
        return {"type": "json_object", **({"schema": bounded(schema, max_tokens)} if schema else {})}
    return value


def grammar_name(response_format: Any) -> str | None:
    """The grammar a converted response format constrains the reply with, named for provenance:
    ``json-schema:<hash of the schema>``, ``json`` (any JSON object), or None (unconstrained)."""
    if not isinstance(response_format, dict) or response_format.get("type") != "json_object":
        return None
    schema = response_format.get("schema")
    if not schema:
        return "json"
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:12]
    return f"json-schema:{digest}"


class LlamaCppServer:
    """One replica: one ``Llama`` on the spec's GGUF file, held in a child process
    (:mod:`~tauray.actors.serving.llama_worker`) so that a native crash is answered with its cause."""

    def __init__(self, served: str, spec: dict[str, Any]) -> None:
        self.served = served
        self.spec = ServeSpec.model_validate(spec)
        self.worker = LlamaWorker(served, f"llamacpp-{served}", str(resolve_weights(self.spec.gguf or "")),
                                  {"n_ctx": self.spec.n_ctx, "n_threads": self.spec.threads,
                                   "n_gpu_layers": self.spec.n_gpu_layers, "chat_format": self.spec.chat_format})
        self.worker.start()  # a crash while loading fails the deployment, with its cause in Serve's status
        self.load_s = self.worker.load_s
        # Held by the generating thread itself: when Serve cancels a request whose client went
        # away, the awaiting coroutine ends but the thread runs on, and the next request must
        # still wait for it (the worker serves one request at a time).
        self._lock = threading.Lock()

    def _generate(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            return self.worker.generate(kwargs)

    def __del__(self) -> None:  # Serve's graceful shutdown of a replica
        worker = getattr(self, "worker", None)
        if worker is not None:
            worker.shutdown()

    def check_health(self) -> None:
        """Serve calls this periodically; a replica whose model is gone is replaced."""
        if getattr(self, "worker", None) is None:
            raise RuntimeError(f"{self.served}: model not loaded")

    async def __call__(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        path = request.url.path.rstrip("/")
        if request.method == "GET" and path.endswith("/v1/models"):
            return JSONResponse({"object": "list", "data": [{"id": self.served, "object": "model",
                                                             "owned_by": "tauray"}]})
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return _error(404, f"{request.method} {path}: this deployment serves POST .../v1/chat/completions",
                          "invalid_request_error")
        try:
            body = await request.json()
        except Exception:
            return _error(400, "request body is not JSON", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "expected a JSON object with a 'messages' list", "invalid_request_error")
        if body.get("stream"):
            return _error(400, "stream=true is not supported by this deployment", "invalid_request_error")
        unknown = sorted(set(body) - _PASSED - _IGNORED - {"stream", "response_format"})
        if unknown:
            return _error(400, f"unsupported parameters: {unknown}", "invalid_request_error")
        kwargs = {k: v for k, v in body.items() if k in _PASSED}
        if body.get("response_format") is not None:
            kwargs["response_format"] = _response_format(body["response_format"], body.get("max_tokens"))
        tagged = self.spec.tool_calls == "tags"
        if tagged:  # tools written into the prompt, read back from the reply (see toolcalls)
            kwargs["messages"] = render_messages(kwargs["messages"], kwargs.pop("tools", None))
            kwargs.pop("tool_choice", None)
        elif kwargs.get("tools") and kwargs.get("tool_choice") is None:
            kwargs["tool_choice"] = "auto"  # OpenAI's default when tools are given
        try:
            result = await asyncio.to_thread(self._generate, kwargs)
        except WorkerCrashed as exc:  # 500 (litellm retries it, on a fresh worker), saying what happened
            return _error(500, str(exc), "server_error", "replica_crashed")
        except ValueError as exc:  # llama-cpp-python's way of refusing a request (context window, args)
            code = "context_length_exceeded" if "context window" in str(exc) else None
            return _error(400, f"{self.served}: {exc}", "invalid_request_error", code)
        except Exception as exc:
            return _error(500, f"{self.served}: {type(exc).__name__}: {exc}", "server_error")
        if tagged:
            choice = result["choices"][0]
            content, calls = parse_reply(choice["message"].get("content") or "")
            if calls:
                choice["message"] = {"role": "assistant", "content": content, "tool_calls": calls}
                choice["finish_reason"] = "tool_calls"
        result["model"] = self.served
        if (grammar := grammar_name(kwargs.get("response_format"))) is not None:
            # OpenAI's field for what produced the reply: says the reply was constrained, and by which grammar.
            result["system_fingerprint"] = f"llama.cpp grammar={grammar}"
        return JSONResponse(result)


def llamacpp_app(served: str, spec: ServeSpec) -> Any:
    """The Serve application for ``spec`` (not yet running)."""
    from ray import serve

    deployment = serve.deployment(
        LlamaCppServer, name=f"llamacpp-{served}", num_replicas=spec.replicas, ray_actor_options=replica_options(spec),
        max_ongoing_requests=spec.max_ongoing_requests, health_check_period_s=spec.health_check_period_s,
        health_check_timeout_s=spec.health_check_timeout_s, **spec.shutdown_options(),
    )
    return deployment.bind(served, spec.model_dump())


__all__ = ["LlamaCppServer", "llamacpp_app"]
