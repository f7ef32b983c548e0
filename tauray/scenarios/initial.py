"""A scenario's initial dual state, built in each process that uses it and cached.

Each host builds its own side's DB from the scenario (:func:`initial_db`: a fresh
copy per conversation), so no DB crosses between actors when a conversation
opens; the coordinator of a domain with sync builds the same state for the syncs
the initialization took (rows of the actions table) and both sides' sync views.
Initialization is deterministic, so every process gets the same state.

The cache is keyed by what the state is built from (domain, initialization data
and actions, the tool calls of the opening messages), not by task: tasks that
start alike share one entry (every airline and retail task without
initialization data shares the domain's base DB). At most
``INITIAL_CACHE_TASKS`` entries are kept, least recently used first out.
"""

from __future__ import annotations

import functools
import json
import pickle
from typing import Any

from tauray.scenarios.domains import domain_spec
from tauray.scenarios.gold import fresh_state
from tauray.scenarios.model import Scenario, Side
from tauray.scenarios.state import SyncEvent

# About 11 KB per telecom task (both sides pickled); the units in flight at once use about as
# many tasks as there are units, so a process that meets every one of telecom's 2285 tasks
# keeps only the recent ones.
INITIAL_CACHE_TASKS = 256


class InitialState:
    """Both sides' DBs after initialization (pickled, copied per conversation), the syncs it
    took, and both sides' sync views (domains with sync)."""

    __slots__ = ("dbs", "events", "views")

    def __init__(self, dbs: dict[str, bytes | None], events: tuple[SyncEvent, ...],
                 views: dict[str, dict[str, Any]] | None):
        self.dbs, self.events, self.views = dbs, events, views


class _Start:
    """Cache key: what a scenario's initial state is built from."""

    __slots__ = ("scenario", "key")

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        calls = [(m.side, c.name, c.arguments) for m in scenario.message_history or () for c in m.tool_calls]
        actions = [a.model_dump(mode="json") for a in scenario.initialization_actions or ()]
        self.key = (scenario.domain, json.dumps([scenario.initialization_data, actions, calls], sort_keys=True,
                                                default=str))

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Start) and other.key == self.key


@functools.lru_cache(maxsize=INITIAL_CACHE_TASKS)
def _initial(start: _Start) -> InitialState:
    state = fresh_state(start.scenario)
    dom = domain_spec(start.scenario.domain)
    dbs = {"agent": pickle.dumps(state.agent.db, protocol=5),
           "user": pickle.dumps(state.user.db, protocol=5) if state.user is not None else None}
    views = None
    if dom.sync_views is not None and state.user is not None:
        views = {"agent": dom.sync_view["agent"](state.agent.db), "user": dom.sync_view["user"](state.user.db)}
    return InitialState(dbs, tuple(state.sync_events), views)


def initial_state(scenario: Scenario) -> InitialState:
    """The scenario's initial state (cached; see the module)."""
    return _initial(_Start(scenario))


def initial_db(scenario: Scenario, side: Side) -> Any | None:
    """A fresh copy of ``side``'s initialised DB (an upstream DB object), None when the
    domain keeps no state for that side."""
    data = initial_state(scenario).dbs[side]
    return pickle.loads(data) if data is not None else None


def initial_cache_size() -> int:
    return _initial.cache_info().currsize


def clear_initial_cache() -> None:
    _initial.cache_clear()
