"""A coordinator's calls to a host: four typed methods, each with one request record, the same
on a Ray actor (one Ray argument a call) and in process."""

from __future__ import annotations

import asyncio

import pytest

from dev.bench.traffic import WeighedAgentHost, WeighedUserHost
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import CloseRequest, OpenRequest, StepRequest, SyncRequest
from tauray.scenarios import domain_spec, get_scenario, select_scenarios
from tests.units import make_units

REQUESTS = {"open": OpenRequest, "step": StepRequest, "apply_sync": SyncRequest, "close": CloseRequest}


class _Recording:
    """A host, remembering the method and request type of every call it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []

    async def open(self, request):
        self.seen.append(("open", type(request).__name__))
        return await super().open(request)

    async def step(self, request):
        self.seen.append(("step", type(request).__name__))
        return await super().step(request)

    async def apply_sync(self, request):
        self.seen.append(("apply_sync", type(request).__name__))
        return await super().apply_sync(request)

    async def close(self, request):
        self.seen.append(("close", type(request).__name__))
        return await super().close(request)

    async def calls(self) -> list[tuple[str, str]]:
        return self.seen


class _Agent(_Recording, WeighedAgentHost):
    pass


class _User(_Recording, WeighedUserHost):
    pass


def test_a_request_of_the_wrong_kind_is_refused_by_its_record():
    with pytest.raises(ValueError, match="max_rounds"):
        StepRequest(conversation_id="c", incoming="hi", max_rounds="many", max_errors=1, turn=1, seq=0)
    with pytest.raises(ValueError, match="extra"):
        CloseRequest(conversation_id="c", check=True, method="close")


@pytest.mark.slow  # starts Ray actors
def test_every_call_to_a_ray_host_is_a_typed_request_and_the_conversation_runs(ray_local):
    import ray

    spec = domain_spec("telecom")  # a task whose agent writes the account: the sync pushes it to the phone
    name = next(e.name for e in select_scenarios(domain="telecom", split="base")
                if any(a.side == "agent" and spec.tool_kinds("agent").get(a.name) == "write"
                       for a in get_scenario(e.name).reference_actions))
    unit = make_units("typed", [name])[0]
    agent, user = ray.remote(num_cpus=0)(_Agent).remote(), ray.remote(num_cpus=0)(_User).remote()
    result = asyncio.run(run_conversation(unit, agent, user))
    c = result.conversation
    assert c.error_kind is None and c.success, c.error_message
    both = ray.get([agent.calls.remote(), user.calls.remote()])
    for seen in both:
        assert seen[0][0] == "open" and seen[-1][0] == "close" and any(m == "step" for m, _ in seen), seen
        assert all(kind == REQUESTS[method].__name__ for method, kind in seen), seen
    assert any(m == "apply_sync" for seen in both for m, _ in seen), both
