"""Telecom dual-DB sync as a pure function.

The operator's records (agent side) and the phone's surroundings (user side)
describe one world, so after every write on either side the two must agree:

* the phone sees the line as active iff the operator's line is Active;
* the phone may roam iff roaming is enabled on the line;
* the phone's "data usage exceeded" flag follows the line's usage against its
  plan limit plus any refuelled data;
* a payment request the customer has paid marks its bill paid on the operator
  side and disappears from the phone;
* with no request pending, the customer's first bill awaiting payment becomes
  a new payment request on the phone.

``compute_sync`` reads both DBs and returns the updates for each side without
touching either; ``apply_agent_sync`` / ``apply_user_sync`` let the owner of
each DB apply its half. Semantics equal upstream's
``TelecomEnvironment.sync_tools`` (checked by the parity tests).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from tauray.scenarios.model import Frozen


class SyncError(ValueError):
    """The two DBs cannot be reconciled (the scenario itself is broken)."""


class TelecomSync(Frozen):
    """What each side must change so both DBs describe the same world."""

    bills_paid: tuple[str, ...] = Field(default=(), description="Agent side: bills to mark PAID.")
    surroundings: dict[str, Any] = Field(
        default_factory=dict,
        description="User side: surroundings fields to set (payment_request as a dict or None).",
    )

    @property
    def empty(self) -> bool:
        return not self.bills_paid and not self.surroundings

    def for_side(self, side: str) -> dict[str, Any]:
        if side == "agent":
            return {"bills_paid": list(self.bills_paid)} if self.bills_paid else {}
        return {"surroundings": dict(self.surroundings)} if self.surroundings else {}


def _find(items, attr: str, value: Any, what: str):
    for item in items:
        if getattr(item, attr) == value:
            return item
    raise SyncError(f"sync: {what} {value!r} not found in the operator's records")


def _customer_for_phone(agent_db, phone_number: str):
    # Same order as the operator's own lookup: per customer, the contact number
    # first, then the customer's lines.
    for customer in agent_db.customers:
        if customer.phone_number == phone_number:
            return customer
        for line_id in customer.line_ids:
            if _find(agent_db.lines, "line_id", line_id, "line").phone_number == phone_number:
                return customer
    raise SyncError(f"sync: no customer owns phone number {phone_number!r}")


def compute_sync(agent_db, user_db) -> TelecomSync:
    surroundings = user_db.surroundings
    phone_number = surroundings.phone_number
    if phone_number is None:
        return TelecomSync()
    line = _find(agent_db.lines, "phone_number", phone_number, "line with phone number")
    plan = _find(agent_db.plans, "plan_id", line.plan_id, "plan")
    wanted: dict[str, Any] = {
        "line_active": _status_value(line.status) == "Active",
        "roaming_allowed": bool(line.roaming_enabled),
        "mobile_data_usage_exceeded": line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb,
    }
    bills_paid: list[str] = []
    request = surroundings.payment_request
    if request is not None and request.paid:
        _find(agent_db.bills, "bill_id", request.bill_id, "bill")
        bills_paid.append(request.bill_id)
        request = None
    if request is None:
        customer = _customer_for_phone(agent_db, phone_number)
        new_request = None
        for bill_id in customer.bill_ids:
            bill = _find(agent_db.bills, "bill_id", bill_id, "bill")
            if bill_id not in bills_paid and _status_value(bill.status) == "Awaiting Payment":
                new_request = {"bill_id": bill.bill_id, "amount_due": bill.total_due, "paid": False}
                break
        wanted["payment_request"] = new_request
    changes = {}
    for key, value in wanted.items():
        current = getattr(surroundings, key)
        if key == "payment_request":
            current = current.model_dump() if current is not None else None
        if current != value:
            changes[key] = value
    return TelecomSync(bills_paid=tuple(bills_paid), surroundings=changes)


def _status_value(status: Any) -> str:
    return getattr(status, "value", status)


def apply_agent_sync(agent_db, updates: dict[str, Any]) -> None:
    from tauray.scenarios.upstream import upstream_attr

    paid = upstream_attr("domains.telecom.data_model", "BillStatus").PAID
    for bill_id in updates.get("bills_paid", ()):
        _find(agent_db.bills, "bill_id", bill_id, "bill").status = paid


def apply_user_sync(user_db, updates: dict[str, Any]) -> None:
    from tauray.scenarios.upstream import upstream_attr

    payment_request_cls = upstream_attr("domains.telecom.user_data_model", "PaymentRequest")
    surroundings = user_db.surroundings
    for key, value in updates.get("surroundings", {}).items():
        if key == "payment_request" and value is not None:
            value = payment_request_cls(**value)
        setattr(surroundings, key, value)
