"""Small messages between the coordinator and the hosts: no DB crosses. Weighed by hosts that
count what they receive and return (the pickled request and result of every host call;
dev/bench/traffic.py), on conversations of the reference policies, in-process."""

from __future__ import annotations

import asyncio
import pickle

import pytest

from dev.bench.traffic import WeighedAgentHost, WeighedUserHost, merged
from tauray.actors.conversation import Conversation, SideClient, _Stop, run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.scenarios import domain_spec, get_scenario, select_scenarios
from tauray.scenarios.gold import fresh_state
from tests.units import make_units


def _written(domain: str, n: int, side: str = "agent") -> list[str]:
    """Scenarios of ``domain`` whose reference actions write on ``side`` (the oracle agent and
    the scripted user perform them)."""
    spec = domain_spec(domain)
    names = []
    for entry in select_scenarios(domain=domain, split="base"):
        s = get_scenario(entry.name)
        if any(a.side == side and spec.tool_kinds(side).get(a.name) == "write" for a in s.reference_actions):
            names.append(entry.name)
        if len(names) == n:
            break
    return names


def _weigh(names: list[str]) -> tuple[dict, list]:
    units = make_units("sm", names, 1)
    agent, user = WeighedAgentHost(), WeighedUserHost()

    async def main():
        return [await run_conversation(u, agent, user) for u in units]

    results = asyncio.run(main())
    return merged([agent.weighing.snapshot(), user.weighing.snapshot()]), results


@pytest.mark.slow  # about 5 s on 2 cores: too long for the fast loop
def test_no_db_crosses_in_a_domain_without_sync():
    traffic, results = _weigh(_written("airline", 3))
    assert all(r.conversation.error_kind is None for r in results)
    assert sum(a.kind == "tool_call" and a.is_write for r in results for a in r.actions) >= 3
    # airline's DB pickles to about 2.7 MB; what crossed per conversation is its words and calls
    assert traffic["bytes"] / len(results) < 30_000, traffic
    assert set(traffic["bytes_by_method"]) == {"open", "step", "close"}, traffic


def test_only_sync_views_cross_in_telecom_and_they_stay_current():
    names = _written("telecom", 2, "agent") + _written("telecom", 2, "user")
    traffic, results = _weigh(names)
    assert all(r.conversation.error_kind is None for r in results)
    assert sum(r.conversation.sync_events for r in results) > len(results)  # init syncs and syncs after writes
    telecom_db = len(pickle.dumps(fresh_state(get_scenario(names[0])).agent.db, protocol=5))
    assert traffic["bytes"] / len(results) < 2.5 * telecom_db, traffic  # was ~6x before
    assert 0 < traffic["bytes_by_method"].get("apply_sync", 0) < 1_000 * len(results), traffic


@pytest.mark.parametrize("side", ["agent", "user"])
def test_the_coordinators_sync_views_equal_the_hosts_dbs_after_every_write(side):
    name = _written("telecom", 1, side)[0]
    unit = make_units("sm", [name], 1)[0]
    hosts = {"agent": AgentHost(), "user": UserSimHost()}
    conv = Conversation(unit, get_scenario(name), SideClient(hosts["agent"]), SideClient(hosts["user"]))
    dom = domain_spec("telecom")
    seen = []
    sync = conv.sync

    async def checked_sync(trigger):
        await sync(trigger)
        for s, host in hosts.items():  # what the coordinator holds is what the host's DB says
            assert conv.views[s] == dom.sync_view[s](host.sessions[conv.id].state.db)
        seen.append(trigger)

    conv.sync = checked_sync

    async def main():
        with pytest.raises(_Stop):
            await conv.run()

    asyncio.run(main())
    assert any(t.startswith(f"{side}:") for t in seen)
