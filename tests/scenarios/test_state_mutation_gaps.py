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
