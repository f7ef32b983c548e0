"""Gold replay: fresh dual state → initialization → the reference actions of
both sides in order, each write followed by sync. Gives the expected DB hashes
per side and proves a scenario is solvable. Both policy variants of a task
share one replay (they differ only in prose), cached per process."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field

from tauray.scenarios.domains import domain_spec
from tauray.scenarios.model import Frozen, Scenario
from tauray.scenarios.state import DualState, ToolOutcome


class GoldReplay(Frozen):
    domain: str = Field(description="Upstream domain.")
    upstream_id: str = Field(description="Upstream task id.")
    agent_hash: str = Field(description="Agent-side DB hash after the reference actions.")
    user_hash: str | None = Field(description="User-side DB hash after the reference actions (None without user state).")
    failed_actions: tuple[str, ...] = Field(description="Reference action ids whose tool call returned an error.")


def fresh_state(scenario: Scenario) -> DualState:
    """A new dual state with the scenario's initialization applied: the initialization data
    and actions, then the tool calls of the opening message history (as upstream's
    ``set_state`` replays them), each write followed by sync."""
    state = domain_spec(scenario.domain).fresh_state()
    state.initialize(scenario.initialization_data, scenario.initialization_actions)
    for message in scenario.message_history or ():
        for call in message.tool_calls:
            state.execute(message.side, call.name, dict(call.arguments))
    return state


def replay(scenario: Scenario, actions: list[tuple[str, str, dict[str, Any]]] | None = None
           ) -> tuple[DualState, list[ToolOutcome]]:
    """Run a sequence of (side, tool, arguments) on fresh state; the reference
    actions when ``actions`` is None."""
    state = fresh_state(scenario)
    if actions is None:
        actions = [(a.side, a.name, dict(a.arguments)) for a in scenario.reference_actions]
    outcomes = [state.execute(side, name, dict(args))[0] for side, name, args in actions]
    return state, outcomes


_cache: dict[tuple[str, str], GoldReplay] = {}
_lock = threading.Lock()


def gold_replay(scenario: Scenario) -> GoldReplay:
    """The cached gold result of a scenario's task (replayed on first use)."""
    key = (scenario.domain, scenario.upstream_id)
    with _lock:
        cached = _cache.get(key)
    return cached if cached is not None else run_gold(scenario)[0]


def run_gold(scenario: Scenario) -> tuple[GoldReplay, DualState, list[ToolOutcome]]:
    """Replay the reference actions now (uncached) and remember the result."""
    state, outcomes = replay(scenario)
    hashes = state.hashes()
    result = GoldReplay(
        domain=scenario.domain, upstream_id=scenario.upstream_id,
        agent_hash=hashes["agent"], user_hash=hashes["user"],
        failed_actions=tuple(a.action_id for a, o in zip(scenario.reference_actions, outcomes) if o.error),
    )
    with _lock:
        _cache[(scenario.domain, scenario.upstream_id)] = result
    return result, state, outcomes
