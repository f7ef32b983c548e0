"""A loop's default executor that runs litellm's request building in place, and only that.

``litellm.acompletion`` hands its synchronous half to the loop's default executor. For the
providers tauray calls that half only builds the request (CPU under the GIL), so a thread
buys nothing and costs two hand-offs per call. A provider whose synchronous half does I/O
(fetching a cloud token, reading a credentials file) must not run on the loop thread, or
every conversation of the host would wait for it: only the providers known to build
requests without I/O (:data:`INLINE_PROVIDERS`) run inline; every other job, and every
other provider, goes to a small thread pool.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

INLINE_PROVIDERS: frozenset[str] = frozenset({
    "openai", "text-completion-openai", "hosted_vllm", "ollama", "ollama_chat", "lm_studio", "llamafile",
    "anthropic", "gemini", "mistral", "groq", "deepinfra", "together_ai", "openrouter", "fireworks_ai",
    "deepseek", "xai", "cerebras", "nvidia_nim", "perplexity",
})
"""Providers whose request building is CPU only (an API key from the call or the environment, a
JSON body). Cloud providers that may fetch or refresh credentials while building a request
(vertex_ai, bedrock, sagemaker, azure with AD tokens, ...) are deliberately absent."""


def _provider_of(inner: functools.partial) -> str:
    keywords = inner.keywords or {}
    provider = keywords.get("custom_llm_provider")
    if provider:
        return str(provider)
    model = str(keywords.get("model") or "")
    return model.split("/", 1)[0] if "/" in model else ""


def _is_litellm_request_build(fn: Any) -> bool:
    """``partial(Context.run, partial(<litellm function>, ..., model=...))``: how litellm's
    async entry points hand their synchronous half to the loop's executor, for a provider
    known to build requests without I/O."""
    if not isinstance(fn, functools.partial) or not fn.args:
        return False
    run, inner = fn.func, fn.args[0]
    return (isinstance(getattr(run, "__self__", None), contextvars.Context)
            and isinstance(inner, functools.partial)
            and str(getattr(inner.func, "__module__", "")).startswith("litellm")
            and _provider_of(inner) in INLINE_PROVIDERS)


class LitellmInlineExecutor(ThreadPoolExecutor):
    """A loop's default executor that runs litellm's request-building step in place.

    ``litellm.acompletion`` passes its synchronous half (``completion``, which only
    builds the request and returns the coroutine that sends it) to the default
    executor. That is CPU work under the GIL, so a thread buys nothing and costs two
    thread hand-offs and a GIL switch per call, which at hundreds of calls in flight
    shows up as latency in every conversation. Only that step, and only for
    :data:`INLINE_PROVIDERS`, runs in place; any other job (DNS lookups, file reads, a
    cloud provider's credential refresh) still goes to a small thread pool.
    """

    def __init__(self, max_workers: int = 2, thread_name_prefix: str = "tauray-io") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        if not _is_litellm_request_build(fn):
            return super().submit(fn, *args, **kwargs)
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the awaiting coroutine, as a pool would
            future.set_exception(error)
        return future


_INLINE_LOOPS: set[int] = set()  # ids of loops given the executor (uvloop's loops take no attributes)


def use_inline_executor(loop: asyncio.AbstractEventLoop) -> None:
    if id(loop) not in _INLINE_LOOPS:
        loop.set_default_executor(LitellmInlineExecutor())
        _INLINE_LOOPS.add(id(loop))


__all__ = ["INLINE_PROVIDERS", "LitellmInlineExecutor"]
