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

The sync reads only a little of each DB, its **sync view**: on the operator's
side the lines, plans, bills and customers as far as the rules above look at
them (:func:`agent_view`, a few hundred bytes), on the phone's side the
surroundings fields they compare (:func:`user_view`). :func:`sync_views` is the
sync over the two views, so the DBs' owners (the hosts) hand the coordinator
their views, never their DBs; ``compute_sync`` is the same function over two DBs
(gold replay, parity). It returns the updates for each side without touching
either; ``apply_agent_sync`` / ``apply_user_sync`` let the owner of each DB
apply its half. Semantics equal upstream's ``TelecomEnvironment.sync_tools``
(checked by the parity tests).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tauray.scenarios.model import Frozen
from tauray.scenarios.upstream import upstream_attr


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


def _find(items: list[dict[str, Any]], key: str, value: Any, what: str) -> dict[str, Any]:
    for item in items:
        if item[key] == value:
            return item
    raise SyncError(f"sync: {what} {value!r} not found in the operator's records")


def agent_view(agent_db: Any) -> dict[str, Any]:
    """The part of the operator's DB the sync reads (plain values, in the DB's order)."""
    return {
        "lines": [{"line_id": ln.line_id, "phone_number": ln.phone_number, "status": _status_value(ln.status),
                   "roaming_enabled": ln.roaming_enabled, "data_used_gb": ln.data_used_gb,
                   "data_refueling_gb": ln.data_refueling_gb, "plan_id": ln.plan_id} for ln in agent_db.lines],
        "plans": [{"plan_id": p.plan_id, "data_limit_gb": p.data_limit_gb} for p in agent_db.plans],
        "bills": [{"bill_id": b.bill_id, "status": _status_value(b.status), "total_due": b.total_due}
                  for b in agent_db.bills],
        "customers": [{"phone_number": c.phone_number, "line_ids": list(c.line_ids), "bill_ids": list(c.bill_ids)}
                      for c in agent_db.customers],
    }


def user_view(user_db: Any) -> dict[str, Any]:
    """The part of the phone's DB the sync reads: the surroundings it compares and sets."""
    s = user_db.surroundings
    return {"phone_number": s.phone_number, "line_active": s.line_active, "roaming_allowed": s.roaming_allowed,
            "mobile_data_usage_exceeded": s.mobile_data_usage_exceeded,
            "payment_request": s.payment_request.model_dump() if s.payment_request is not None else None}


def _customer_for_phone(agent: dict[str, Any], phone_number: str) -> dict[str, Any]:
    # Same order as the operator's own lookup: per customer, the contact number
    # first, then the customer's lines.
    for customer in agent["customers"]:
        if customer["phone_number"] == phone_number:
            return customer
        for line_id in customer["line_ids"]:
            if _find(agent["lines"], "line_id", line_id, "line")["phone_number"] == phone_number:
                return customer
    raise SyncError(f"sync: no customer owns phone number {phone_number!r}")


def sync_views(agent: dict[str, Any], user: dict[str, Any]) -> TelecomSync:
    """The sync over the two sides' sync views (:func:`agent_view`, :func:`user_view`)."""
    phone_number = user["phone_number"]
    if phone_number is None:
        return TelecomSync()
    line = _find(agent["lines"], "phone_number", phone_number, "line with phone number")
    plan = _find(agent["plans"], "plan_id", line["plan_id"], "plan")
    wanted: dict[str, Any] = {
        "line_active": line["status"] == "Active",
        "roaming_allowed": bool(line["roaming_enabled"]),
        "mobile_data_usage_exceeded": line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"],
    }
    bills_paid: list[str] = []
    request = user["payment_request"]
    if request is not None and request["paid"]:
        _find(agent["bills"], "bill_id", request["bill_id"], "bill")
        bills_paid.append(request["bill_id"])
        request = None
    if request is None:
        customer = _customer_for_phone(agent, phone_number)
        new_request = None
        for bill_id in customer["bill_ids"]:
            bill = _find(agent["bills"], "bill_id", bill_id, "bill")
            if bill_id not in bills_paid and bill["status"] == "Awaiting Payment":
                new_request = {"bill_id": bill["bill_id"], "amount_due": bill["total_due"], "paid": False}
                break
        wanted["payment_request"] = new_request
    changes = {key: value for key, value in wanted.items() if user[key] != value}
    return TelecomSync(bills_paid=tuple(bills_paid), surroundings=changes)


def compute_sync(agent_db: Any, user_db: Any) -> TelecomSync:
    """The sync over two DBs: :func:`sync_views` of their views."""
    return sync_views(agent_view(agent_db), user_view(user_db))


def _status_value(status: Any) -> str:
    return getattr(status, "value", status)


def apply_agent_sync(agent_db, updates: dict[str, Any]) -> None:
    paid = upstream_attr("domains.telecom.data_model", "BillStatus").PAID
    for bill_id in updates.get("bills_paid", ()):
        bill = next((b for b in agent_db.bills if b.bill_id == bill_id), None)
        if bill is None:
            raise SyncError(f"sync: bill {bill_id!r} not found in the operator's records")
        bill.status = paid


def apply_user_sync(user_db, updates: dict[str, Any]) -> None:
    payment_request_cls = upstream_attr("domains.telecom.user_data_model", "PaymentRequest")
    surroundings = user_db.surroundings
    for key, value in updates.get("surroundings", {}).items():
        if key == "payment_request" and value is not None:
            value = payment_request_cls(**value)
        setattr(surroundings, key, value)
