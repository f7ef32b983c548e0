"""Dual state details the mutation run found unpinned (issue 27): tools a side does
not own, failing tools, which calls sync and what the event says, state-less sides,
and the initialization data left untouched."""

from __future__ import annotations

import datetime
import enum
import json

import pytest

from tauray.scenarios import default_registry, fresh_state
from tauray.scenarios.state import SideState, render_result

REG = default_registry()
TELECOM = REG.get("tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy")
MOCK = REG.get("tau2_mock__update_task_with_message_history")
LINE = {"customer_id": "C1001", "line_id": "L1002"}


def test_a_side_runs_only_its_own_tools():
    state = fresh_state(TELECOM)
    before = state.hashes()
    out, event = state.execute("agent", "toggle_airplane_mode", {})  # a user tool
    assert (out.error, out.is_write, event) == (True, False, None)
    assert out.result == "Error: the agent side has no tool named 'toggle_airplane_mode'."
    harness = SideState("agent", state.agent.toolkit, {"end_conversation": "harness"})
    out = harness.call_tool("end_conversation", {})
    assert out.error and out.result == "Error: the agent side has no tool named 'end_conversation'."
    assert state.hashes() == before


def test_a_failing_tool_is_an_error_result_and_a_write_still_syncs():
    state = fresh_state(TELECOM)
    out, event = state.execute("agent", "suspend_line", {"customer_id": "C404", "line_id": "L1002", "reason": "x"})
    assert out.error is True and out.result.startswith("Error: ") and "C404" in out.result
    assert out.is_write is True and event is None  # synced, nothing to change
    out, event = state.execute("agent", "get_customer_by_id", {"customer_id": "C1001"})
    assert (out.error, out.is_write, event) == (False, False, None)
    assert json.loads(out.result)["customer_id"] == "C1001"


def test_a_write_that_changes_the_other_side_records_its_sync_event():
    state = fresh_state(TELECOM)
    assert [e.after for e in state.sync_events] == ["init", "init"]
    out, event = state.execute("agent", "suspend_line", {**LINE, "reason": "lost phone"})
    assert not out.error and out.is_write
    assert event.after == "agent:suspend_line"
    assert event.agent == {} and event.user == {"surroundings": {"line_active": False}}
    assert state.user.db.surroundings.line_active is False
    assert state.sync_events[-1] == event
    out, event = state.execute("user", "toggle_airplane_mode", {})  # a write with nothing to sync
    assert out.is_write and event is None and state.sync_events[-1].after == "agent:suspend_line"


def test_a_domain_without_user_state():
    state = fresh_state(MOCK)
    assert state.user is None and state.hashes()["user"] is None and state.sync("x") is None
    with pytest.raises(ValueError, match="this scenario has no user-side state"):
        state.side("user")
    assert state.side("agent") is state.agent
    assert state.agent.dump()["tasks"]["task_2"]["status"] == "pending"


def test_initialization_data_is_copied_not_shared():
    data = {"agent_data": {"tasks": {"task_9": {"task_id": "task_9", "title": "t", "description": "d",
                                                 "status": "pending"}}}}
    scenario = MOCK.model_copy(update={"initialization_data": data})
    state = fresh_state(scenario)
    assert state.agent.dump()["tasks"]["task_9"]["status"] == "pending"
    state.execute("agent", "update_task_status", {"task_id": "task_9", "status": "completed"})
    assert state.agent.dump()["tasks"]["task_9"]["status"] == "completed"
    assert data["agent_data"]["tasks"]["task_9"]["status"] == "pending"  # the scenario's data is untouched
    assert fresh_state(scenario).agent.dump()["tasks"]["task_9"]["status"] == "pending"


class Colour(enum.Enum):
    RED = "red"


def test_results_render_as_upstream_renders_them():
    assert render_result("plain") == "plain"
    value = {"n": 3, "ok": True, "none": None, "when": datetime.date(2025, 1, 2), "colour": Colour.RED,
             "pair": (1, "a"), "items": [1.5, {"x": False}]}
    assert json.loads(render_result(value)) == {"n": "3", "ok": "True", "none": None, "when": "2025-01-02",
                                                "colour": "red", "pair": ["1", "a"], "items": ["1.5", {"x": "False"}]}
    assert render_result(7) == '"7"' and render_result(None) == "null"


def test_a_dump_is_plain_json():
    """dump() is what crosses to disk and between actors: dates and enums as their JSON text."""
    dumped = fresh_state(TELECOM).agent.dump()
    assert json.loads(json.dumps(dumped)) == dumped  # no default= needed
    bill = dumped["bills"][0]
    assert isinstance(bill["status"], str) and isinstance(bill["issue_date"], str)
