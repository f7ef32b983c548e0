"""Which toolkit functions a scenario's initialization and assertions may call (issue 27,
second mutation run: the guard of ``SideState.call_function`` was unpinned). A scenario
file names functions by string, so the guard is the only thing between a data file and
the toolkit's private methods and attributes."""

from __future__ import annotations

import pytest

from tauray.scenarios import default_registry, fresh_state

TELECOM = default_registry().get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")


# a dunder and a private helper of the phone toolkit (both exist and are callable), a name that
# does not exist, a public attribute that is not a function
@pytest.mark.parametrize("name", ["__repr__", "_check_sim_status", "no_such_function", "db"])
def test_only_public_callables_of_the_toolkit_can_be_called_by_name(name):
    state = fresh_state(TELECOM)
    with pytest.raises(AttributeError, match=f"^the user side has no function '{name}'$"):
        state.user.call_function(name, {})


def test_a_public_function_is_called_with_its_arguments():
    state = fresh_state(TELECOM)
    assert isinstance(state.user.call_function("check_status_bar", {}), str)


# --- added after the second full run (its survivors) ----------------------------------------


def test_user_side_initialization_data_is_applied_copied_and_synced_as_init():
    """No registered scenario carries user-side initialization data, so this path was never
    run: the phone is put on the number of an active line but shown as inactive; the first
    sync (before any action) corrects it and is recorded as "init"."""
    import copy

    from tauray.scenarios.domains import domain_spec

    state = domain_spec("telecom").fresh_state()
    data = {"user_data": {"surroundings": {"phone_number": "555-123-2002", "line_active": False}}}
    given = copy.deepcopy(data)
    state.initialize(data, None)
    assert state.user.db.surroundings.phone_number == "555-123-2002"
    assert [(e.after, e.agent, e.user) for e in state.sync_events] == [
        ("init", {}, {"surroundings": {"line_active": True, "roaming_allowed": True}})]
    assert state.user.db.surroundings.line_active is True
    assert data == given  # the scenario's data is not the state: a later change leaves it alone
    state.user.db.surroundings.line_active = False
    assert data == given


def test_user_side_data_without_a_user_side_is_ignored():
    from tauray.scenarios.domains import domain_spec

    state = domain_spec("mock").fresh_state()
    before = state.hashes()
    state.initialize({"user_data": {"anything": 1}}, None)
    assert state.user is None and state.hashes() == before and state.sync_events == []


def test_a_read_never_syncs_even_when_the_sides_disagree():
    """Sync runs after writes only (each sync is recorded as an event); a read that finds
    the sides out of step, here by a change made behind the tools' back, syncs nothing."""
    state = fresh_state(TELECOM)
    events = list(state.sync_events)
    state.user.db.surroundings.line_active = not state.user.db.surroundings.line_active
    out, event = state.execute("agent", "get_customer_by_id", {"customer_id": "C1001"})
    assert not out.error and not out.is_write and event is None and state.sync_events == events


def test_sides_without_a_sync_function_sync_nothing():
    from tauray.scenarios.state import DualState

    state = fresh_state(TELECOM)
    bare = DualState(state.agent, state.user, sync=None)
    assert bare.sync("x") is None and bare.sync_events == []
