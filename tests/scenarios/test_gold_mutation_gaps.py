"""The gold cache, from an empty cache (issue 27, second mutation run).

tests/scenarios/test_gold_gaps.py checks the cache with whatever earlier tests left in
it: when a task was already cached, ``gold_replay`` never reached ``run_gold``, so the
per-function coverage mutmut selects tests by left these checks out of the replay's
mutants (a cache that stored nothing, a wrong element returned, no user hash) and they
survived. Here every test starts from an empty cache."""

from __future__ import annotations

import pytest

from tauray.scenarios import default_registry, gold, gold_replay, replay

REG = default_registry()
MANUAL = REG.get("tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
WORKFLOW = REG.get("tau2_telecom_workflow__mobile_data_issue__user_abroad_roaming_enabled_off")


@pytest.fixture()
def empty_cache(monkeypatch):
    monkeypatch.setattr(gold, "_cache", {})
    return gold._cache


def test_the_first_use_replays_and_caches_the_result(empty_cache):
    first = gold_replay(MANUAL)
    assert isinstance(first, gold.GoldReplay) and (first.domain, first.upstream_id) == ("telecom", MANUAL.upstream_id)
    assert empty_cache == {("telecom", MANUAL.upstream_id): first}
    assert gold_replay(MANUAL) is first and gold_replay(WORKFLOW) is first


def test_the_gold_result_holds_both_sides_hashes(empty_cache):
    result, state, outcomes = gold.run_gold(MANUAL)
    hashes = replay(MANUAL)[0].hashes()
    assert (result.agent_hash, result.user_hash) == (hashes["agent"], hashes["user"]) == (
        state.hashes()["agent"], state.hashes()["user"])
    assert result.user_hash is not None and result.failed_actions == ()
    assert [o.error for o in outcomes] == [False] * len(MANUAL.reference_actions)
