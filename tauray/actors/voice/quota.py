"""A hosted speech engine's calls metered like any model's: admitted by the cluster's quota book
(:mod:`tauray.actors.quota`) before each call, one request each, against the spec's ``rpm``.

Speech calls are made from threads that block (a speech worker actor's method, the in-process
client's worker thread), never from an event loop, so admission blocks that thread: on Ray it
waits on the cluster's book actor; without Ray, on this process's own book, whose asyncio
primitives live on one private loop thread (a book's lock belongs to one loop). A 429 from the
provider pauses the model for every caller (its ``retry-after``, else the chat client's backoff), as the
chat client does, and the call is tried again up to the spec's ``num_retries``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from tauray.actors.llm.ratelimit import backoff_s
from tauray.actors.quota import Limits, Settlement, gate, quota_key
from tauray.actors.voice.spec import SpeechModelSpec

T = TypeVar("T")

_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _private_loop() -> asyncio.AbstractEventLoop:
    """This process's loop for its own quota book (started once, a daemon thread)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="speech-quota", daemon=True).start()
            _LOOP = loop
        return _LOOP


def _on_loop(coro: Any) -> Any:
    """Run ``coro`` on the private loop and wait for it (this thread is not a loop's)."""
    return asyncio.run_coroutine_threadsafe(coro, _private_loop()).result()


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


class SpeechQuota:
    """Admission for one hosted engine's calls (a no-op when its spec sets no ``rpm``)."""

    def __init__(self, spec: SpeechModelSpec) -> None:
        self.key = quota_key(spec.model, spec.api_base)
        self.limits = Limits(rpm=spec.rpm)
        self.retries = spec.num_retries
        self.admitted = 0
        self.waited_s = 0.0

    def call(self, send: Callable[[], T], *, is_rate_limit: Callable[[BaseException], float | None]) -> T:
        """``send()`` once admitted; after a 429 (``is_rate_limit`` returns its retry-after, or
        0 for none, and None for any other error) the model is paused and the call tried again.
        Admission, settlement and pauses go through the process's :class:`Gate` (the cluster's
        book actor on Ray, else this process's book), run on the private loop this thread waits on."""
        for attempt in range(self.retries + 1):
            g = gate() if self.limits.any else None
            ticket = None
            if g is not None:
                ticket = _on_loop(g.acquire(self.key, self.limits, 0, 0))
                if ticket.stopped:
                    raise RuntimeError(f"{self.key}: {ticket.stopped}")
                self.admitted += 1
                self.waited_s += ticket.waited_s
            try:
                result = send()
            except Exception as exc:
                retry_after = is_rate_limit(exc)
                if ticket is not None:
                    _on_loop(_call(g.settle, ticket, Settlement(sent=retry_after is None)))
                if retry_after is None or attempt == self.retries:
                    raise
                wait = retry_after or backoff_s(attempt)
                if g is not None:
                    _on_loop(_call(g.pause, self.key, wait))
                else:
                    time.sleep(wait)
                continue
            if ticket is not None:
                _on_loop(_call(g.settle, ticket, Settlement(sent=True, replied=True)))
            return result
        raise AssertionError("unreachable")  # the loop returns or raises


__all__ = ["SpeechQuota"]
