"""The telecom sync over hand-written views (issue 27: the mutation run found the
customer lookup, the error messages and the empty halves of a sync unpinned; the
random walks only ever use one customer whose contact number is the line's)."""

from __future__ import annotations

import pytest

from tauray.scenarios import fresh_state
from tauray.scenarios.telecom_sync import (
    SyncError,
    TelecomSync,
    apply_agent_sync,
    apply_user_sync,
    compute_sync,
    sync_views,
)
from tests.scenarios.test_sync_gaps import SCENARIO


def _agent(**over):
    agent = {
        "lines": [
            {"line_id": "L1", "phone_number": "222", "status": "Active", "roaming_enabled": True,
             "data_used_gb": 1.0, "data_refueling_gb": 0.0, "plan_id": "P1"},
            {"line_id": "L2", "phone_number": "444", "status": "Suspended", "roaming_enabled": False,
             "data_used_gb": 9.0, "data_refueling_gb": 0.0, "plan_id": "P1"},
        ],
        "plans": [{"plan_id": "P1", "data_limit_gb": 5.0}],
        "bills": [
            {"bill_id": "BA", "status": "Awaiting Payment", "total_due": 10.0},
            {"bill_id": "BB1", "status": "Awaiting Payment", "total_due": 20.0},
            {"bill_id": "BB2", "status": "Awaiting Payment", "total_due": 30.0},
        ],
        # Customer A's contact number is none of the lines; B owns line L2 (444).
        "customers": [{"phone_number": "111", "line_ids": ["L1"], "bill_ids": ["BA"]},
                      {"phone_number": "333", "line_ids": ["L2"], "bill_ids": ["BB1", "BB2"]}],
    }
    agent.update(over)
    return agent


def _user(phone="444", **over):
    user = {"phone_number": phone, "line_active": True, "roaming_allowed": True,
            "mobile_data_usage_exceeded": False, "payment_request": None}
    user.update(over)
    return user


def test_the_line_owner_is_found_through_the_customers_lines():
    s = sync_views(_agent(), _user("444"))
    assert s.bills_paid == ()
    assert s.surroundings == {"line_active": False, "roaming_allowed": False, "mobile_data_usage_exceeded": True,
                              "payment_request": {"bill_id": "BB1", "amount_due": 20.0, "paid": False}}
    s = sync_views(_agent(), _user("222", mobile_data_usage_exceeded=False))
    assert s.surroundings == {"payment_request": {"bill_id": "BA", "amount_due": 10.0, "paid": False}}


def test_a_contact_number_that_is_also_a_line_finds_its_customer_first():
    agent = _agent(customers=[{"phone_number": "444", "line_ids": ["L1"], "bill_ids": ["BA"]},
                              {"phone_number": "333", "line_ids": ["L2"], "bill_ids": ["BB1"]}])
    assert sync_views(agent, _user("444")).surroundings["payment_request"]["bill_id"] == "BA"


def test_a_paid_request_pays_its_bill_and_the_next_awaiting_bill_is_requested():
    paid = {"bill_id": "BB1", "amount_due": 20.0, "paid": True}
    s = sync_views(_agent(), _user("444", line_active=False, roaming_allowed=False,
                                   mobile_data_usage_exceeded=True, payment_request=paid))
    assert s.bills_paid == ("BB1",)
    assert s.surroundings == {"payment_request": {"bill_id": "BB2", "amount_due": 30.0, "paid": False}}
    assert s.for_side("agent") == {"bills_paid": ["BB1"]}
    # An unpaid request stays as it is: nothing to change on either side.
    waiting = {"bill_id": "BB2", "amount_due": 30.0, "paid": False}
    s = sync_views(_agent(), _user("444", line_active=False, roaming_allowed=False,
                                   mobile_data_usage_exceeded=True, payment_request=waiting))
    assert s.empty and s.for_side("agent") == {} and s.for_side("user") == {}


def test_no_phone_means_nothing_to_sync():
    s = sync_views(_agent(), _user(None))
    assert s == TelecomSync() and s.empty


@pytest.mark.parametrize(("agent", "user", "message"), [
    (_agent(), _user("999"), "sync: line with phone number '999' not found in the operator's records"),
    (_agent(plans=[]), _user("444"), "sync: plan 'P1' not found in the operator's records"),
    (_agent(), _user("444", payment_request={"bill_id": "B9", "amount_due": 1.0, "paid": True}),
     "sync: bill 'B9' not found in the operator's records"),
    (_agent(customers=[{"phone_number": "111", "line_ids": ["L1"], "bill_ids": []}]), _user("444"),
     "sync: no customer owns phone number '444'"),
    (_agent(customers=[{"phone_number": "111", "line_ids": ["L7"], "bill_ids": []}]), _user("444"),
     "sync: line 'L7' not found in the operator's records"),
    (_agent(customers=[{"phone_number": "333", "line_ids": ["L2"], "bill_ids": ["B8"]}]), _user("444"),
     "sync: bill 'B8' not found in the operator's records"),
])
def test_records_that_cannot_be_reconciled_say_what_is_missing(agent, user, message):
    with pytest.raises(SyncError) as err:
        sync_views(agent, user)
    assert str(err.value) == message


def test_applying_an_empty_half_changes_nothing_and_an_unknown_bill_is_refused():
    state = fresh_state(SCENARIO)
    before = state.hashes()
    apply_agent_sync(state.agent.db, {})
    apply_user_sync(state.user.db, {})
    assert state.hashes() == before and compute_sync(state.agent.db, state.user.db).empty
    with pytest.raises(SyncError, match="bill 'B404' not found"):
        apply_agent_sync(state.agent.db, {"bills_paid": ["B404"]})


def test_the_operator_view_finds_the_owner_through_the_lines_of_a_real_db():
    """A customer whose contact number is not the phone's line is found through its lines."""
    from tauray.scenarios.telecom_sync import agent_view

    state = fresh_state(SCENARIO)
    phone = state.user.db.surroundings.phone_number
    owner = next(c for c in state.agent.db.customers if c.phone_number == phone or any(
        ln.phone_number == phone for ln in state.agent.db.lines if ln.line_id in c.line_ids))
    owner.phone_number = "000-000-0000"
    state.user.db.surroundings.payment_request = None
    view = agent_view(state.agent.db)
    assert {"line_id", "phone_number", "status", "plan_id"} <= set(view["lines"][0])
    assert isinstance(view["lines"][0]["status"], str)
    s = compute_sync(state.agent.db, state.user.db)  # no error: the owner is found by line
    awaiting = [b for b in owner.bill_ids
                if next(x for x in state.agent.db.bills if x.bill_id == b).status.value == "Awaiting Payment"]
    assert s.surroundings.get("payment_request", {"bill_id": None})["bill_id"] == (awaiting[0] if awaiting else None)


def test_status_values_read_from_enums_and_plain_text():
    import enum

    from tauray.scenarios.telecom_sync import _status_value

    class Status(enum.Enum):
        ACTIVE = "Active"

    assert _status_value(Status.ACTIVE) == "Active" and _status_value("Suspended") == "Suspended"
