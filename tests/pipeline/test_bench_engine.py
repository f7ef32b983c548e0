"""`tauray bench engine` at toy size: the conversations write and sync, the endpoint
served exactly the engine's model calls, and the litellm baseline replays whole
conversations exactly as the hosts sent them; run as the developer's engine-floor bench,
which also sends the same requests from bare Ray actors and weighs what crosses."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from dev.bench.engine_floor import run_engine_floor_bench
from tauray.actors.conversation import Conversation, SideClient, _Stop
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.pipeline.bench.engine import EngineBench, bench_models, bench_scenarios, replay_requests
from tauray.scenarios import get_scenario
from tests.units import make_units


def test_bench_scenarios_leave_out_handovers():
    names = bench_scenarios()
    from tauray.scenarios import select_scenarios

    assert 0 < len(names) < len(select_scenarios(domain="telecom", split="base"))
    for name in names:
        assert all(a.name != "transfer_to_human_agents" for a in get_scenario(name).reference_actions)


def test_replayed_requests_are_what_the_hosts_sent(endpoint):
    """The baseline's requests, rebuilt from the transcript records, equal the views the
    hosts held: same system prompts (reference steps included), same growing history."""
    name = next(n for n in bench_scenarios() if {a.side for a in get_scenario(n).reference_actions} == {"agent", "user"})
    agent, user = bench_models(endpoint.base_url)
    unit = make_units("r", [name], 1, agent, user)[0]
    agent_host, user_host = AgentHost(), UserSimHost()
    conv = Conversation(unit, get_scenario(name), SideClient(agent_host), SideClient(user_host))

    async def main():
        with pytest.raises(_Stop):
            await conv.run()

    asyncio.run(main())
    records = [{**m.model_dump(), "tool_calls": json.loads(m.tool_calls) if m.tool_calls else None}
               for m in conv.messages]  # as messages_df(decode_json=True) reads them back
    requests, agent_view, user_view = replay_requests(get_scenario(name), records, agent)
    held = agent_host.sessions[conv.id].view
    # the customer's stop ends the conversation before the agent hears it
    assert agent_view[:len(held)] == held and agent_view[len(held):] == [{"role": "user", "content": user_view[-1]["content"]}]
    assert "###STOP###" in user_view[-1]["content"]
    assert user_view == user_host.sessions[conv.id].view
    counters = {s: h.sessions[conv.id].counters["llm_calls"] for s, h in (("agent", agent_host), ("user", user_host))}
    assert [side for side, _, _ in requests].count("agent") == counters["agent"]
    assert [side for side, _, _ in requests].count("user") == counters["user"]
    # histories grow: every request of a side extends the one before it
    agent_requests = [msgs for side, msgs, _ in requests if side == "agent"]
    assert all(b[:len(a)] == a and len(b) > len(a) for a, b in itertools.pairwise(agent_requests))


def test_small_engine_bench_writes_syncs_and_counts_every_call(ray_local):
    # tasks with an agent-side write (refuel, roaming): the phone must be updated by a sync
    names = [n for n in bench_scenarios() if any(a.side == "agent" for a in get_scenario(n).reference_actions)][:2]
    figures = run_engine_floor_bench(latency=0.05, concurrency=2, conversations=2, scenarios=names)
    bench = EngineBench.model_validate({k: v for k, v in figures.items() if k in EngineBench.model_fields})
    assert bench.lost == 0 and bench.duplicated == 0
    assert bench.terminations == {"user_stop": 2}
    assert bench.successes == 2
    assert bench.writes_per_conversation > 1
    assert bench.syncs_per_conversation > 0
    assert bench.requests_match and bench.endpoint_requests == bench.llm_calls
    # the baseline replays every conversation of the run, call for call, over two processes
    assert bench.baseline_conversations == 2 and bench.baseline_calls == bench.llm_calls
    assert bench.baseline_processes == 2
    assert bench.litellm_cpu_ms_per_call > 0 and bench.cpu_ms_per_call > 0
    # each replayed conversation waits on its calls in turn: never faster than the latency bound
    assert bench.litellm_wall_seconds >= bench.ideal_seconds * 0.99
    assert bench.ratio_vs_litellm == pytest.approx(bench.wall_seconds / bench.litellm_wall_seconds, rel=0.01)
    # what crossed between the coordinator and the hosts, weighed: words, calls and sync views, no DB
    assert figures["bytes_conversations"] == 2
    assert set(figures["bytes_by_method"]) == {"open", "step", "apply_sync", "close"}
    assert 0 < figures["bytes_per_conversation"] < 20_000
    # the Ray floor replayed the same requests from Ray actors, its own processes counted
    assert figures["ray_floor_cpu_ms_per_call"] > 0 and figures["ray_floor_wall_seconds"] >= bench.ideal_seconds * 0.99
    assert {"FloorSide", "FloorCoordinator"} <= set(figures["ray_floor_cpu_seconds_by_process"])
    assert figures["cpu_ratio_vs_ray_floor"] == pytest.approx(
        bench.cpu_ms_per_call / figures["ray_floor_cpu_ms_per_call"], rel=0.02)
