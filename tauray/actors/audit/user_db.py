"""What the user-side DB says at a point of a conversation, as the customer's own phone tools
would show it: the recorded tool calls of both sides replayed on fresh state up to a turn, then
every read-only phone tool run on that state and read like any phone result (``claims.shown``).

Why: a customer's claim is compared with what its tools last showed, and with what the phone
really was at that moment; a claim about a setting no result showed ("Done. Wi-Fi is on", said
after toggling airplane mode) can only be checked against the phone itself. The line's status,
which no phone tool shows, is read from the user DB's surroundings. Nothing is re-run: the calls
are the recorded ones, on the scenario's own fresh state (``scenarios.gold.fresh_state``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from tauray.actors.audit import claims
from tauray.actors.audit.trajectory import Trajectory
from tauray.scenarios.conventions import HARNESS_TOOLS
from tauray.scenarios.gold import fresh_state
from tauray.scenarios.registry import UnknownScenarioError, default_registry

READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("check_network_status", {}), ("check_sim_status", {}), ("check_network_mode_preference", {}),
    ("check_wifi_status", {}), ("check_wifi_calling_status", {}), ("check_vpn_status", {}),
    ("check_data_restriction_status", {}), ("check_apn_settings", {}), ("check_app_permissions", {"app_name": "messaging"}),
    ("can_send_mms", {}), ("check_payment_request", {}), ("run_speed_test", {}), ("check_status_bar", {}))
"""The phone's read-only tools asked, most specific first (a later one fills only what is missing)."""


def _calls(t: Trajectory, turn: int) -> tuple[tuple[str, str, str], ...]:
    out = []
    for a in t.actions:
        tool = a.get("tool")
        if a.get("kind") != "tool_call" or not isinstance(tool, str) or tool in HARNESS_TOOLS or int(a["turn"]) > turn:
            continue
        args = a.get("arguments")
        out.append((str(a["side"]), tool, args if isinstance(args, str) else json.dumps(args or {}, sort_keys=True)))
    return tuple(out)


@lru_cache(maxsize=4096)
def _db(scenario_name: str, calls: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str], ...] | None:
    try:
        scenario = default_registry().get(scenario_name)
        state = fresh_state(scenario)
    except (UnknownScenarioError, KeyError, ValueError):
        return None
    if state.user is None:
        return None
    for side, tool, raw in calls:
        try:
            args = json.loads(raw or "{}")
            state.execute(side, tool, args if isinstance(args, dict) else {})
        except Exception:  # noqa: BLE001 - a call the replay cannot make leaves the state as it was
            continue
    out: dict[str, str] = {}
    tools = {t.name for t in scenario.user_tools}
    for tool, args in READS:
        if tool in tools:
            for key, value in claims.shown(state.user.call_tool(tool, dict(args)).result).items():
                out.setdefault(key, value)
    surroundings = state.user.dump().get("surroundings") or {}
    if isinstance(surroundings.get("line_active"), bool):
        out["line"] = "active" if surroundings["line_active"] else "suspended"
    return tuple(sorted(out.items()))


def db_shown(t: Trajectory, turn: int) -> dict[str, str]:
    """setting -> value of the user-side DB after every recorded call up to ``turn`` (empty when
    the scenario keeps no user state or is unknown)."""
    found = _db(str(t.row.get("scenario")), _calls(t, turn))
    return dict(found or ())


__all__ = ["READS", "db_shown"]
