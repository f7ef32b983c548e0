"""The loop executor runs litellm's request building inline only for providers known to
build requests without I/O; a provider whose synchronous half blocks (a cloud credential
refresh) goes to a thread and must not stall the conversations on the loop."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time

from tauray.actors.llm.inline_executor import LitellmInlineExecutor


def _request_build(model: str, block_s: float):
    def completion(**kwargs):  # stands in for litellm.completion's synchronous half
        time.sleep(block_s)
        return threading.current_thread().name

    completion.__module__ = "litellm.main"
    return functools.partial(contextvars.copy_context().run, functools.partial(completion, model=model))


async def _run(model: str, block_s: float) -> tuple[str, int]:
    loop = asyncio.get_running_loop()
    loop.set_default_executor(LitellmInlineExecutor())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    before = ticks
    thread = await loop.run_in_executor(None, _request_build(model, block_s))
    task.cancel()
    return thread, ticks - before


def test_blocking_provider_runs_off_the_loop_and_the_loop_keeps_going():
    thread, ticks = asyncio.run(_run("vertex_ai/gemini-1.5-pro", 0.5))
    assert thread.startswith("tauray-io") and ticks >= 10  # the loop ticked while the build blocked


def test_known_cpu_only_provider_builds_inline():
    thread, _ = asyncio.run(_run("openai/gpt-4o-mini", 0.0))
    assert thread == threading.current_thread().name
    thread, _ = asyncio.run(_run("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", 0.0))
    assert thread.startswith("tauray-io")
