"""How the agents' ranking moves once simulator-caused failures are set aside."""

from __future__ import annotations

import pandas as pd
from tauray.results.audit.summary import rank_agents


def _rows(agent: str, ok: int, sim: int, agent_failed: int, harness: int = 0) -> list[dict]:
    return ([{"agent_model": agent, "success": True, "attribution": "none"}] * ok
            + [{"agent_model": agent, "success": False, "attribution": "simulator"}] * sim
            + [{"agent_model": agent, "success": False, "attribution": "agent"}] * agent_failed
            + [{"agent_model": agent, "success": None, "attribution": "harness"}] * harness)


def test_an_agent_held_back_by_its_simulator_moves_up():
    merged = pd.DataFrame(_rows("x", 6, 0, 4, harness=5) + _rows("y", 5, 4, 1) + _rows("z", 2, 0, 8))
    r = rank_agents(merged).set_index("agent_model")
    assert r.loc["x", "conversations"] == 10  # harness rows count nowhere
    assert (r.loc["x", "raw_rate"], r.loc["y", "raw_rate"]) == (0.6, 0.5)
    assert r.loc["y", "adjusted_rate"] == 5 / 6 and r.loc["x", "adjusted_rate"] == 0.6
    assert r["raw_rank"].to_dict() == {"y": 2, "x": 1, "z": 3}
    assert r["adjusted_rank"].to_dict() == {"y": 1, "x": 2, "z": 3}
    assert r["rank_change"].to_dict() == {"y": 1, "x": -1, "z": 0}
    assert list(r.index) == ["y", "x", "z"]  # best adjusted first


def test_ties_share_the_better_rank_and_no_rate_has_no_rank():
    merged = pd.DataFrame(_rows("a", 1, 0, 1) + _rows("b", 1, 0, 1) + _rows("c", 0, 2, 0))
    r = rank_agents(merged).set_index("agent_model")
    assert r.loc["a", "raw_rank"] == r.loc["b", "raw_rank"] == 1 and r.loc["c", "raw_rank"] == 3
    assert pd.isna(r.loc["c", "adjusted_rank"]) and pd.isna(r.loc["c", "rank_change"])
