"""The local OpenAI-compatible test endpoint: configuration, the aiohttp server, serving.

Tests, benchmarks and offline demos need the model boundary to behave like a real
provider (HTTP, JSON, latency, rate limits, broken tool calls) without a key or a network.
This server is that provider on the loopback interface: litellm talks to it as
``openai/<behaviour>`` with ``api_base=http://127.0.0.1:PORT/v1`` and any API key, and
the behaviours (:mod:`tauray.endpoint.behaviours`) decide the replies. Built on
aiohttp so that hundreds of requests can wait out their simulated latency concurrently at
almost no CPU cost; no per-request logging unless asked for.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import random
import re
import signal
import socket
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.endpoint.audio_routes import add_audio_routes
from tauray.endpoint.behaviours import (
    BEHAVIOURS,
    BehaviourError,
    Reply,
    UnknownBehaviour,
    completion_words,
    load_behaviours,
    resolve,
    text_reply,
    tool_call_reply,
)
from tauray.endpoint.phone_bot import add_phone_bot_routes
from tauray.endpoint.quota import Accounting, EndpointQuota, prompt_tokens_of
from tauray.endpoint.realtime_bot import add_realtime_routes
from tauray.endpoint.wire import add_wire_routes

FaultKind = Literal["429", "500", "timeout", "malformed_tool_json", "empty"]
ALL_FAULT_KINDS: tuple[FaultKind, ...] = ("429", "500", "timeout", "malformed_tool_json", "empty")

LISTENING_PREFIX = "tauray endpoint listening on "
_LISTENING_RE = re.compile(re.escape(LISTENING_PREFIX) + r"http://(?P<host>.+):(?P<port>\d+)/v1\s*$")

# Deliberately not valid JSON: an unquoted word and an unterminated object.
MALFORMED_ARGUMENTS = '{"query": unknown, "limit": '


class EndpointConfig(BaseModel):
    """How the local endpoint behaves; the same for every request it serves."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(
        "127.0.0.1",
        description="Interface to listen on. Only loopback addresses are allowed, so the "
        "endpoint is never reachable from another machine.",
    )
    port: int = Field(0, ge=0, le=65535, description="TCP port; 0 picks a free one.")
    latency: float = Field(0.0, ge=0.0, le=3600.0, description="Seconds every request waits before it is answered.")
    latency_jitter: float = Field(
        0.0, ge=0.0, le=1.0, description="Spread of the latency as a fraction: each wait is latency × (1 ± jitter)."
    )
    fault_rate: float = Field(0.0, ge=0.0, le=1.0, description="Probability that a request gets a fault instead of a normal reply.")
    fault_kinds: tuple[FaultKind, ...] = Field(
        ALL_FAULT_KINDS, min_length=1, description="Faults to draw from, uniformly, when a fault is injected."
    )
    fault_seed: int = Field(0, description="Seed of the server's fault generator, for reproducible fault sequences.")
    timeout_hang_s: float = Field(
        30.0, gt=0.0, le=600.0, description="How long a 'timeout' fault holds the request before answering 504."
    )
    user_turns: int = Field(
        3, ge=0, description="Replies a scripted user gives before its next reply ends with the stop token."
    )
    quota_rpm: int | None = Field(
        None, gt=0, description="Requests per minute each model may take, as a provider's quota; over it: 429."
    )
    quota_tpm: int | None = Field(
        None, gt=0, description="Tokens (prompt + completion, as reported) per minute each model may take; over it: 429."
    )
    quota_retry_after: bool = Field(
        True, description="Whether a quota 429 carries a retry-after header (some providers send none)."
    )
    quota_period_s: float = Field(60.0, gt=0.0, le=3600.0, description="The quota's rolling window in seconds.")
    quota_accounting: Accounting = Field(
        "settled", description="How a request's max_tokens counts: 'settled' refunds what the reply did not use, "
        "'upfront' keeps prompt + max_tokens charged (as OpenAI counts).")
    quota_headers: bool = Field(
        True, description="Whether answers carry OpenAI's x-ratelimit-* headers (limit, remaining, reset).")
    behaviours: str | None = Field(
        None, description="Python module whose BEHAVIOURS dict the endpoint also serves, loaded at start "
        "(e.g. tests.test_helpers.faulty from a source checkout: faulty customers, agents and judges)."
    )

    @field_validator("host")
    @classmethod
    def _loopback_only(cls, value: str) -> str:
        host = value.strip()
        if host.lower() == "localhost":
            return "127.0.0.1"
        try:
            address = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            raise ValueError(
                f"host must be a loopback IP address such as 127.0.0.1 or ::1, got {value!r}"
            ) from None
        if not address.is_loopback:
            raise ValueError(
                f"host {value!r} is not a loopback address; the test endpoint only listens on "
                "127.0.0.1/::1 so that it is never exposed to the network"
            )
        return str(address)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def base_url_for(host: str, port: int) -> str:
    """The ``api_base`` litellm needs for an endpoint on ``host:port``."""
    return f"http://{_url_host(host)}:{port}/v1"


# --------------------------------------------------------------------------- server


def _error(status: int, message: str, err_type: str, code: str | None = None) -> web.Response:
    """An error in the shape the OpenAI API uses, so clients map it the usual way."""
    body = {"error": {"message": message, "type": err_type, "param": None, "code": code}}
    return web.json_response(body, status=status)


class _EndpointState:
    """Counters and random generators for one server; lives on the event loop thread."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.fault_rng = random.Random(config.fault_seed)
        # A separate generator so that jitter never shifts the fault sequence.
        self.jitter_rng = random.Random(config.fault_seed + 1)
        self.quota = EndpointQuota(config.quota_rpm, config.quota_tpm, config.quota_retry_after,
                                   config.quota_period_s, config.quota_accounting, config.quota_headers)
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.rejected = 0
        self.by_behaviour: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.in_flight = 0  # a gauge, not a counter; the caller restores it
        self.peak_in_flight = 0  # the most requests in flight at once since the reset

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "rejected": self.rejected,
            "by_behaviour": dict(self.by_behaviour),
            "faults": dict(self.faults),
        }

    def draw_fault(self) -> FaultKind | None:
        cfg = self.config
        if cfg.fault_rate <= 0.0 or self.fault_rng.random() >= cfg.fault_rate:
            return None
        return self.fault_rng.choice(cfg.fault_kinds)

    def delay(self) -> float:
        cfg = self.config
        if cfg.latency_jitter <= 0.0:
            return cfg.latency
        return max(0.0, cfg.latency * (1.0 + self.jitter_rng.uniform(-cfg.latency_jitter, cfg.latency_jitter)))


_STATE = web.AppKey("tauray_endpoint_state", _EndpointState)


def _malformed(body: dict[str, Any], reply: Reply) -> Reply:
    """Keep the tool the behaviour chose (or the first offered) but break its arguments."""
    calls = reply.message.get("tool_calls") or []
    if calls:
        return tool_call_reply(calls[0]["function"]["name"], MALFORMED_ARGUMENTS, calls[0]["id"])
    for tool in body.get("tools") or []:
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if name:
            return tool_call_reply(str(name), MALFORMED_ARGUMENTS, "call_malformed")
    return text_reply("")


def _completion(model: str, reply: Reply, prompt_tokens: int) -> dict[str, Any]:
    completion_tokens = completion_words(reply.message)
    return {
        "id": f"chatcmpl-{random.getrandbits(64):016x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [] if reply.empty_choices else [
            {"index": 0, "message": reply.message, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


async def _stream(request: web.Request, completion: dict[str, Any], include_usage: bool,
                  headers: dict[str, str]) -> web.StreamResponse:
    """Send a finished completion as server-sent events, for clients that ask to stream."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers})
    await response.prepare(request)
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        payload = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(payload)}\n\n".encode()

    if completion["choices"]:
        choice = completion["choices"][0]
        message = choice["message"]
        await response.write(chunk({"role": "assistant", "content": message.get("content") or ""}))
        if message.get("tool_calls"):
            calls = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
            await response.write(chunk({"tool_calls": calls}))
        await response.write(chunk({}, choice["finish_reason"]))
    if include_usage:
        usage = head | {"choices": [], "usage": completion["usage"]}
        await response.write(f"data: {json.dumps(usage)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    state.requests += 1
    state.in_flight += 1
    state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
    try:
        try:
            body = await request.json()
        except ValueError:
            state.rejected += 1
            return _error(400, "Request body is not valid JSON.", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            state.rejected += 1
            return _error(400, "Request must be a JSON object with a 'messages' list.", "invalid_request_error")
        model = str(body.get("model", ""))
        try:
            name, behaviour = resolve(model)
        except UnknownBehaviour:
            state.rejected += 1
            available = ", ".join(sorted(BEHAVIOURS))
            return _error(
                404,
                f"The model '{model}' does not exist on this test endpoint. Available behaviours: {available}.",
                "invalid_request_error",
                "model_not_found",
            )
        state.by_behaviour[name] += 1
        admitted = None
        if state.quota.active:
            admitted, wait = state.quota.admit(model, prompt_tokens_of(body), body.get("max_tokens")
                                               or body.get("max_completion_tokens"))
            if admitted is None:
                refused, headers = state.quota.refusal(model, wait)
                return web.json_response(refused, status=429, headers=headers)

        # Drawn on arrival so that the sequence follows request order, not latency.
        fault = state.draw_fault()
        delay = state.delay()
        if delay > 0:
            await asyncio.sleep(delay)

        if fault == "timeout":
            state.faults[fault] += 1
            await asyncio.sleep(state.config.timeout_hang_s)
            return _error(504, "Injected fault: the request timed out.", "timeout", "timeout")
        if fault == "429":
            state.faults[fault] += 1
            return _error(429, "Injected fault: rate limit reached, slow down.", "rate_limit_error", "rate_limit_exceeded")
        if fault == "500":
            state.faults[fault] += 1
            return _error(500, "Injected fault: the server had an error.", "server_error", "internal_error")

        try:
            reply = behaviour(body, state.config)
        except BehaviourError as exc:  # the behaviour refuses the request, as a provider would
            state.rejected += 1
            if exc.error is not None:
                return web.json_response({"error": exc.error}, status=exc.status)
            return _error(exc.status, exc.message, exc.err_type, exc.code)
        except Exception as exc:  # a behaviour bug should look like a provider error, not a hang
            return _error(500, f"Behaviour {name!r} failed: {exc!r}", "server_error", "behaviour_error")

        if fault == "malformed_tool_json" and not body.get("tools"):
            fault = "empty"  # nothing to call, so the closest breakage is an empty reply
        if fault == "malformed_tool_json":
            reply = _malformed(body, reply)
        elif fault == "empty":
            reply = text_reply("")
        if fault is not None:
            state.faults[fault] += 1

        completion = _completion(model, reply, prompt_tokens_of(body))
        if admitted is not None:
            state.quota.settle(admitted, completion["usage"]["completion_tokens"])
        headers = state.quota.headers(model)
        if body.get("stream"):
            options = body.get("stream_options") or {}
            return await _stream(request, completion, bool(options.get("include_usage")), headers)
        return web.json_response(completion, headers=headers)
    finally:
        state.in_flight -= 1


async def _list_models(request: web.Request) -> web.Response:
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "tauray"} for name in BEHAVIOURS]
    return web.json_response({"object": "list", "data": data})


async def _get_stats(request: web.Request) -> web.Response:
    return web.json_response(request.app[_STATE].snapshot())


async def _get_quota(request: web.Request) -> web.Response:
    return web.json_response(request.app[_STATE].quota.snapshot())


async def _reset_stats(request: web.Request) -> web.Response:
    state = request.app[_STATE]
    in_flight = state.in_flight
    state.reset()
    state.in_flight = in_flight  # requests still running will decrement it
    return web.json_response(state.snapshot())


def create_app(config: EndpointConfig) -> web.Application:
    """The aiohttp application, for embedding in another server or an aiohttp test client."""
    if config.behaviours is not None:
        load_behaviours(config.behaviours)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[_STATE] = _EndpointState(config)
    for prefix in ("/v1", ""):
        app.router.add_post(f"{prefix}/chat/completions", _chat_completions)
        app.router.add_get(f"{prefix}/models", _list_models)
        app.router.add_get(f"{prefix}/stats", _get_stats)
        app.router.add_post(f"{prefix}/stats/reset", _reset_stats)
        app.router.add_get(f"{prefix}/quota", _get_quota)
        add_audio_routes(app.router, prefix, lambda request: request.app[_STATE])  # /audio/speech, /transcriptions
    add_wire_routes(app, _chat_completions)  # Anthropic's, Gemini's and Azure's own routes
    add_phone_bot_routes(app)  # /phone-bot: the scripted phone bot on the media-stream protocol
    add_realtime_routes(app)  # /v1/realtime, Gemini Live's path: the scripted realtime model
    return app


def _bind(config: EndpointConfig) -> socket.socket:
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if sys.platform != "win32":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((config.host, config.port))
    return sock


async def run_server(
    config: EndpointConfig,
    *,
    on_ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
    access_log: bool = False,
) -> None:
    """Serve until ``stop`` is set (or forever); ``on_ready`` gets the base URL once listening."""
    app = create_app(config)
    runner_kwargs: dict[str, Any] = {"shutdown_timeout": 1.0}
    if not access_log:
        runner_kwargs["access_log"] = None
    runner = web.AppRunner(app, **runner_kwargs)
    await runner.setup()
    sock = _bind(config)
    try:
        # A deep accept queue: a benchmark may open hundreds of connections at once.
        site = web.SockSite(runner, sock, backlog=1024)
        await site.start()
        if on_ready is not None:
            on_ready(base_url_for(config.host, sock.getsockname()[1]))
        await (stop or asyncio.Event()).wait()
    finally:
        await runner.cleanup()
        sock.close()


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Stop when stdin closes, i.e. when the parent that holds the pipe is gone."""

    def wait_for_eof() -> None:
        # os.read on the raw descriptor, not sys.stdin: a thread blocked inside the
        # buffered reader holds its lock and delays interpreter shutdown.
        try:
            fd = sys.stdin.fileno()
            while os.read(fd, 4096):
                pass
        except (OSError, ValueError, AttributeError):
            pass
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=wait_for_eof, name="endpoint-stdin-watch", daemon=True).start()


def serve(config: EndpointConfig | None = None, *, exit_with_parent: bool = False, access_log: bool = False) -> None:
    """Run the endpoint in this process until interrupted or terminated.

    Prints ``tauray endpoint listening on http://HOST:PORT/v1`` once ready;
    :func:`start_endpoint` reads the port from that line.
    """
    config = config or EndpointConfig()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        if sys.platform != "win32":
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
        if exit_with_parent:
            _watch_stdin(loop, stop)

        def announce(base_url: str) -> None:
            print(f"{LISTENING_PREFIX}{base_url}", flush=True)

        await run_server(config, on_ready=announce, stop=stop, access_log=access_log)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


__all__ = ["ALL_FAULT_KINDS", "LISTENING_PREFIX", "MALFORMED_ARGUMENTS", "EndpointConfig", "FaultKind", "base_url_for",
           "create_app", "run_server", "serve"]
