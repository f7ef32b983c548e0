"""A coordinator's calls to a host: on a Ray actor each travels packed, ``(method, *args)`` as
the one argument of ``SideHost.call``; in process the host's method is called as it is."""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import HOST_CALLS, AgentHost, UserSimHost
from tauray.scenarios import select_scenarios
from tests.units import make_units


def test_a_host_call_names_a_host_method_or_is_refused_in_one_line():
    host = AgentHost()
    with pytest.raises(ValueError, match=r"request\[0\]: 'sessions' is not a host call \(expected one of open, step"):
        asyncio.run(host.call(("sessions",)))
    assert asyncio.run(host.call(["close", "no-such-conversation"])) is None  # a list, as msgpack may give it


class _Recording(AgentHost):
    """The agent host, remembering the method of every packed call it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    async def call(self, request):
        self.seen.append(request[0])
        return await super().call(request)

    async def calls(self) -> list[str]:
        return self.seen


@pytest.mark.slow  # starts Ray actors
def test_every_call_to_a_ray_host_travels_packed_and_the_conversation_runs(ray_local):
    import ray

    name = next(iter(select_scenarios(domain="mock", split="base"))).name
    unit = make_units("packed", [name])[0]
    agent = ray.remote(num_cpus=0)(_Recording).remote()
    user = ray.remote(num_cpus=0)(UserSimHost).remote()
    result = asyncio.run(run_conversation(unit, agent, user))
    c = result.conversation
    assert c.error_kind is None and c.success, c.error_message
    seen = ray.get(agent.calls.remote())
    # every host call the loop made went through `call`: open first, close last, steps between
    assert seen[0] == "open" and seen[-1] == "close" and "step" in seen, seen
    assert set(seen[1:-1]) <= set(HOST_CALLS) - {"open", "close"}, seen
