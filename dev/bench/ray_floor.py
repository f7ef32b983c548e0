"""The Ray floor of ``python -m dev.bench engine-floor``: what the engine's model calls cost when bare
litellm makes them behind Ray actors, with nothing of tauray's in between.

The engine makes each model call in a host actor, on a coordinator actor's request: one actor
call per model call. The floor keeps exactly that shape and takes everything else away. A
coordinator actor walks the run's recorded conversations (each one's calls in order, C
conversations in flight) and asks an agent-side or a user-side actor for each call by its
index; that actor sends the recorded request with ``litellm.acompletion`` and returns the
number of choices. No step, no tools, no sync, no records, no audit; the actors keep the same
collector settings as the engine's (:mod:`tauray.actors.heap`).

So the engine's CPU splits in three, each measured on the same requests in the same run:
bare litellm in plain processes (the baseline), what running the calls behind Ray actors adds
(the floor over the baseline), and what tauray adds (the engine over the floor).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tauray.actors import heap
from tauray.actors.llm.providers import litellm_module

Request = tuple[str, list[dict], list[dict]]
"""(model, messages, tools) of one recorded call."""


class FloorSide:
    """One side's model calls: the recorded request the coordinator names, sent as it was."""

    def __init__(self, base_url: str, conversations: list[list[Request]]) -> None:
        self._acompletion = litellm_module().acompletion  # as a host's model client imports it
        self.base_url, self.conversations = base_url, conversations

    async def call(self, conversation: int, index: int) -> int:
        model, messages, tools = self.conversations[conversation][index]
        reply = await self._acompletion(model=model, api_base=self.base_url, api_key="bench", messages=messages,
                                        tools=tools or None)
        return len(reply.choices)


class FloorCoordinator:
    """Walks the conversations as a coordinator does: each one's calls in turn, C at once."""

    def __init__(self, sides: list[Any], shape: list[list[int]]) -> None:
        self.sides, self.shape = sides, shape  # shape: per conversation, the side of each call (0 agent, 1 user)

    async def run(self, concurrency: int) -> int:
        gate = asyncio.Semaphore(concurrency)

        async def conversation(number: int, sides: list[int]) -> int:
            async with gate:
                for index, side in enumerate(sides):
                    await self.sides[side].call.remote(number, index)
            return len(sides)

        return sum(await asyncio.gather(*(conversation(n, s) for n, s in enumerate(self.shape))))


def ray_floor(base_url: str, conversations: list[list[Request]], agent_model: str, concurrency: int,
              snapshot: Any) -> tuple[float, Any, Any, int, int]:
    """Run the floor on the connected Ray over ``conversations`` (as
    :func:`tauray.pipeline.bench.engine.baseline_conversations` gives them; a call whose model is
    ``agent_model`` goes to the agent-side actor, any other to the user side). ``snapshot()``
    reads every process's CPU: it is taken after the actors are up and warm (one call each) and
    again at the end. Returns (wall seconds, CPU snapshot before, after, calls made, warm-up calls)."""

    import ray  # lazy: Ray: about 0.7 s to import; `bench engine`'s other readers never start it

    shape = [[0 if model == agent_model else 1 for model, _, _ in c] for c in conversations]
    held = ray.put(conversations)
    side_class = ray.remote(num_cpus=0, max_restarts=0)(heap.long_lived(FloorSide))
    sides = [side_class.remote(base_url, held) for _ in range(2)]
    coordinator = ray.remote(num_cpus=0, max_restarts=0, max_concurrency=4096)(
        heap.long_lived(FloorCoordinator)).remote(sides, shape)
    try:
        # warm each side (imports done, HTTP client made) on the first call it owns
        warm = [next(((n, i) for n, s in enumerate(shape) for i, x in enumerate(s) if x == side), None)
                for side in (0, 1)]
        ray.get([sides[side].call.remote(*at) for side, at in enumerate(warm) if at is not None])
        before, started = snapshot(), time.perf_counter()
        calls = ray.get(coordinator.run.remote(concurrency))
        wall = time.perf_counter() - started
        return wall, before, snapshot(), calls, sum(at is not None for at in warm)
    finally:
        for actor in (coordinator, *sides):
            ray.kill(actor)
