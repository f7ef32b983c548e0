"""How the agents' ranking moves once simulator-caused failures are set aside."""

from __future__ import annotations

import pandas as pd

from tauray.actors.audit.summary import rank_agents


def _rows(agent: str, ok: int, sim: int, agent_failed: int, infra: int = 0, internal: int = 0) -> list[dict]:
    none = {"agent_model": agent, "error_kind": None}
    return ([{**none, "success": True, "attribution": "none"}] * ok
            + [{**none, "success": False, "attribution": "simulator"}] * sim
            + [{**none, "success": False, "attribution": "agent"}] * agent_failed
            + [{**none, "error_kind": "infra", "success": None, "attribution": "harness"}] * infra
            + [{**none, "error_kind": "internal", "success": None, "attribution": "harness"}] * internal)


def test_an_agent_held_back_by_its_simulator_moves_up():
    merged = pd.DataFrame(_rows("x", 6, 0, 4, infra=5) + _rows("y", 5, 4, 1) + _rows("z", 2, 0, 8))
    r = rank_agents(merged).set_index("agent_model")
    assert r.loc["x", "conversations"] == 10  # infra rows count nowhere
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


def test_internal_errors_count_against_the_rate_as_in_the_run_summary():
    """One success rate (``outcomes.success_rate``): a tauray error is a counted row, only
    infra is left out, the same as the run summary and the report count it."""
    from tauray.results.stats.outcomes import outcomes, success_rate, tally

    merged = pd.DataFrame(_rows("a", 3, 1, 0, infra=2, internal=1))
    r = rank_agents(merged).set_index("agent_model")
    counts = tally(outcomes(merged))
    assert r.loc["a", "conversations"] == counts["counted"] == 5
    assert r.loc["a", "raw_rate"] == success_rate(3, 5) == 0.6
    assert r.loc["a", "adjusted_rate"] == 0.75  # the simulator's failure set aside
