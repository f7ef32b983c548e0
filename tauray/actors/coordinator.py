"""The coordinator actor: runs many conversations concurrently on one asyncio loop
(:mod:`tauray.actors.conversation`) and judges each one when its unit names judge
configs, on the given judge actors or else on an in-process judge.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from tauray.actors import heap
from tauray.actors.audit import audit_result
from tauray.actors.conversation import run_conversation
from tauray.actors.failures import classify
from tauray.actors.judge import (
    JudgeHost,
    conversation_signals,
    judge_result,
    with_judge_verdict,
)
from tauray.actors.unit import WorkUnit
from tauray.actors.voice.pool import PoolRef
from tauray.results.tables.records import INFRA, INTERNAL, MODEL, ConversationResult
from tauray.scenarios.registry import default_registry
from tauray.scenarios.upstream import silence_upstream_logging


class CoordinatorHost:
    """Runs many conversations concurrently on one asyncio loop; judges them when the
    unit names judge configs (on the given judge actors, else on an in-process judge)."""

    def __init__(self, agent_hosts: list[Any], user_hosts: list[Any], judge_hosts: list[Any] | None = None):
        silence_upstream_logging()
        self.agent_hosts, self.user_hosts = agent_hosts, user_hosts
        self.judge_hosts = list(judge_hosts or [])
        self.in_flight = 0
        self.done = 0

    def _pick(self, hosts: list[Any], unit_id: str) -> Any:
        return hosts[hash(unit_id) % len(hosts)]

    def _judge(self, unit_id: str) -> Any:
        if not self.judge_hosts:
            self.judge_hosts = [JudgeHost()]
        return self._pick(self.judge_hosts, unit_id)

    async def run(self, unit: WorkUnit) -> ConversationResult:
        self.in_flight += 1
        try:
            uid = unit.unit_id
            result = await run_conversation(unit, self._pick(self.agent_hosts, uid), self._pick(self.user_hosts, uid),
                                            self._speech(unit))
            if unit.judge_configs:
                result = await self._judged(unit, result)
            if unit.audit:  # after judging: the attribution reads the final verdict
                result = audit_result(result)
            return result
        finally:
            self.in_flight -= 1
            self.done += 1

    def _speech(self, unit: WorkUnit) -> Any:
        """What a voice unit's speaking hosts carry its utterances on (None for a text unit):
        the run's name, by which each host finds the run's Ray speech pool itself (else its own
        thread client), so this loop makes no lookup and no speech call."""
        return PoolRef(unit.run_id) if unit.voice is not None else None

    async def _judged(self, unit: WorkUnit, result: ConversationResult) -> ConversationResult:
        scenario = default_registry().get(unit.scenario)
        gates = bool(unit.judge_gates)
        try:
            return await judge_result(result, scenario, unit.judge_configs, self._judge(unit.unit_id),
                                      judge_gates=gates)
        except Exception as exc:  # the conversation stands; `tauray judge` retries its judging
            c = result.conversation
            if c.error_kind is not None:
                return result
            failure = classify(exc)
            kind = failure.kind if failure.kind in (INFRA, MODEL) else INTERNAL
            updated = with_judge_verdict(c, scenario, conversation_signals(c), gates, failure.message,
                                         failure_kind=kind)
            return result.model_copy(update={"conversation": updated})

    async def stats(self) -> dict[str, Any]:
        return {"in_flight": self.in_flight, "done": self.done}

    async def ping(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"


def coordinator_class(cls: type[CoordinatorHost] = CoordinatorHost) -> Any:
    """The coordinator's Ray actor class; a subclass may stand in (a tool that measures from inside)."""
    import ray

    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=4096)(heap.long_lived(cls))
