"""What crosses between a coordinator and its hosts, weighed from outside the conversation's path:
host classes that count, per method, the pickled size (protocol 5, as Ray serializes them) of
every request they receive and of what they return.

They stand in for tauray's hosts through a run's ``Hooks(classes=...)`` (or in process, where a
test builds the hosts itself), so nothing in the coordinator or the loop exists for the weighing.
"""

from __future__ import annotations

import pickle
from typing import Any

from tauray.actors.hosts import AgentHost, CloseRequest, OpenRequest, SideHost, StepRequest, SyncRequest, UserSimHost


class Weighing:
    """Bytes by host method, and the number of calls."""

    def __init__(self) -> None:
        self.by_method: dict[str, int] = {}
        self.calls = 0

    def count(self, method: str, *values: Any) -> None:
        size = sum(len(pickle.dumps(v, protocol=5)) for v in values)
        self.by_method[method] = self.by_method.get(method, 0) + size
        self.calls += 1

    @property
    def total(self) -> int:
        return sum(self.by_method.values())

    def snapshot(self) -> dict[str, Any]:
        return {"bytes": self.total, "bytes_by_method": dict(self.by_method), "calls": self.calls}


class _Weighed(SideHost):
    def __init__(self) -> None:
        super().__init__()
        self.weighing = Weighing()

    async def open(self, request: OpenRequest) -> None:
        result = await super().open(request)
        self.weighing.count("open", request, result)
        return result

    async def step(self, request: StepRequest) -> Any:
        result = await super().step(request)
        self.weighing.count("step", request, result)
        return result

    async def apply_sync(self, request: SyncRequest) -> Any:
        result = await super().apply_sync(request)
        self.weighing.count("apply_sync", request, result)
        return result

    async def close(self, request: CloseRequest) -> Any:
        result = await super().close(request)
        self.weighing.count("close", request, result)
        return result

    async def weighed(self, reset: bool = False) -> dict[str, Any]:
        """What this host weighed so far (and start again, with ``reset``)."""
        seen = self.weighing.snapshot()
        if reset:
            self.weighing = Weighing()
        return seen


class WeighedAgentHost(_Weighed, AgentHost):
    """The agent host, weighing what crosses."""


class WeighedUserHost(_Weighed, UserSimHost):
    """The user-simulator host, weighing what crosses."""


CLASSES = {"agent": WeighedAgentHost, "user": WeighedUserHost}
"""A run's ``Hooks(classes=CLASSES)``: its hosts weigh what crosses."""


def merged(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """Several hosts' :meth:`_Weighed.weighed` as one."""
    methods: dict[str, int] = {}
    for s in snapshots:
        for method, size in s["bytes_by_method"].items():
            methods[method] = methods.get(method, 0) + size
    return {"bytes": sum(methods.values()), "bytes_by_method": methods, "calls": sum(s["calls"] for s in snapshots)}


__all__ = ["CLASSES", "WeighedAgentHost", "WeighedUserHost", "Weighing", "merged"]
