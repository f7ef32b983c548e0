"""Attribution measured on a mixed set: faulty agents alone, faulty customers alone, both in
one conversation, and neither, each against the ground truth of the replayed endpoint
behaviours (:mod:`.truth_agent`, :mod:`.truth`), never against the detectors.

The set is one sweep: agents ``scripted-agent-writes`` and ``faulty-agent:<class>`` times
customers ``scripted-user-writes`` and ``faulty-user:<class>``, so each pairing of a faulty
agent with a faulty customer is a cell of its own. Per conversation the expected
attribution is ``none`` when it passed; when it failed, the side that committed a fault
(``agent`` / ``simulator``); when both did, the conversation is run again with one side
clean (:func:`.truth_agent.fails_alone`): a side whose fault alone fails the task failed
it, both (or neither) make it ``mixed``. The expected decisive turn is that side's injected
turn (for ``mixed``, the earlier one). Rates carry 95% Wilson intervals.

A conversation counts in the cell of the faults that were committed: a faulty customer that
hung up before the faulty agent's drawn step makes a ``simulator`` case, not a ``both`` one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dev.calibration.measure import Rate
from dev.calibration.sweep import FAULTY
from dev.calibration.truth import replay
from dev.calibration.truth_agent import fails_alone, replay_agent
from tauray.actors.audit.runner import DETECTORS, audit_trajectory
from tauray.actors.audit.trajectory import trajectories
from tauray.endpoint import start_endpoint
from tauray.results.tables.readers import actions_df, conversations_df, messages_df
from tests.test_helpers import faulty_agent

CELLS = ("none", "agent", "simulator", "both")
USER_CLASSES = ("premature_stop", "different_action", "unrequested_write", "done_without_call",
                "transfer_without_agent", "result_contradiction")
FAMILIES = ("mms_issue", "mobile_data_issue", "service_issue")


def sweep_config(name: str, endpoint: str, per_family: int = 20, trials: int = 1, split: str = "heldout",
                 telecom_split: str = "base", user_classes: tuple[str, ...] = USER_CLASSES,
                 max_in_flight: int = 6) -> dict[str, Any]:
    """The mixed-set sweep (the sweep file's fields): every faulty agent and the clean one,
    times the clean customer and the faulty customers of ``user_classes``, on the first
    ``per_family`` scenarios of each telecom family."""

    agent_classes = faulty_agent.AGENT_FAULT_CLASSES
    agents = {"a-clean": "scripted-agent-writes", **{f"a-{c}": f"faulty-agent:{c}:{split}" for c in agent_classes}}
    users = {"u-clean": "scripted-user-writes", **{f"u-{c}": f"faulty-user:{c}:{split}" for c in user_classes}}
    scenarios = [{"domain": "telecom", "split": telecom_split, "patterns": [f"tau2_telecom*__{family}__*"],
                  "limit": per_family} for family in FAMILIES]
    models = {**{k: {"model": f"openai/{b}", "api_base": endpoint, "reference_steps": True} for k, b in agents.items()},
              **{k: {"model": f"openai/{b}", "api_base": endpoint} for k, b in users.items()}}
    return {"name": name, "trials": trials, "seed": 0, "max_in_flight": max_in_flight, "agents": list(agents),
            "users": list(users), "scenarios": scenarios, "models": models}


class Case(BaseModel):
    """One conversation of the mixed set: its truth and what the audit said."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cell: str = Field(description="none / agent / simulator / both: which sides committed a fault.")
    scenario: str
    agent_fault: str | None
    user_fault: str | None
    agent_turn: int | None = Field(description="Injected agent fault's turn (None: not committed).")
    user_turn: int | None = Field(description="Injected customer fault's turn (None: not committed).")
    success: bool | None
    expected: str
    expected_turn: int | None
    attribution: str
    decisive_turn: int | None
    decisive: str | None


class CellFigures(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    conversations: int = Field(description="Conversations measured (fault committed where the cell has one).")
    failed: int
    side: Rate = Field(description="Attribution equal to the expected one.")
    turn: Rate = Field(description="Failures put on a side whose decisive turn is the expected one.")
    confusion: dict[str, dict[str, int]] = Field(description="Expected -> predicted.")


class MixedFigures(BaseModel):
    """What ``python -m dev.calibration --mixed`` prints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    conversations: int
    replay_mismatches: int
    not_committed: dict[str, int] = Field(description="Per sweep cell kind: conversations of faulty sides where no "
                                          "fault came at all (left out; a conversation where one of two came counts "
                                          "in the cell of the one that came).")
    run_again: int = Field(description="Conversations run again to say which fault failed them.")
    cells: dict[str, CellFigures]
    side: Rate
    turn: Rate
    failures_side: Rate = Field(description="The side, on failed conversations only.")
    scenarios: int
    families: dict[str, int]
    detectors: list[str]


def _model(row: dict[str, Any], role: str) -> str:
    return str(row.get(f"{role}_model") or "").removeprefix("openai/")


def expected_of(success: bool | None, agent_turn: int | None, user_turn: int | None,
                alone: tuple[bool | None, bool | None] | None) -> tuple[str, int | None]:
    """The expected attribution and decisive turn (see the module doc)."""
    if success is None:
        return "undetermined", None
    if success:
        return "none", None
    if agent_turn is not None and user_turn is not None:
        a_fails, u_fails = alone or (None, None)
        if a_fails and not u_fails:
            return "agent", agent_turn
        if u_fails and not a_fails:
            return "simulator", user_turn
        return "mixed", min(agent_turn, user_turn)
    if agent_turn is not None:
        return "agent", agent_turn
    if user_turn is not None:
        return "simulator", user_turn
    return "agent", None


def cases(path: Path | str, endpoint: str | None = None) -> tuple[list[Case], int, dict[str, int], int]:
    """(cases, replay mismatches, not committed per cell, conversations run again) of a stored mixed set."""

    out: list[Case] = []
    mismatches, again = 0, 0
    skipped: Counter = Counter()
    pending: list[tuple[Any, Any, Any, Any, str]] = []
    for t in trajectories(conversations_df(path), messages_df(path), actions_df(path)):
        a, u = replay_agent(t), replay(t)
        if a.mismatch or u.mismatch:
            mismatches += 1
            continue
        if u.negative:
            continue
        cells = {(False, False): "none", (True, False): "agent", (False, True): "simulator", (True, True): "both"}
        cell = cells[(a.committed, u.committed)]  # the faults that happened, not the ones that were played
        if cell == "none" and (a.fault is not None or u.fault is not None):
            skipped[cells[(a.fault is not None, u.fault is not None)]] += 1  # a faulty side whose fault never came
            continue
        pending.append((t, a, u, audit_trajectory(t), cell))
    ep = None
    try:
        for t, a, u, audit, cell in pending:
            alone = None
            if audit.success is False and a.committed and u.committed:
                if endpoint is None and ep is None:
                    ep = start_endpoint(latency=0.0, behaviours=FAULTY)
                alone = fails_alone(t, endpoint or ep.base_url)
                again += 1
            expected, turn = expected_of(audit.success, a.turn if a.committed else None,
                                         u.turn if u.committed else None, alone)
            d = audit.decisive
            out.append(Case(cell=cell, scenario=str(t.row["scenario"]), agent_fault=a.fault, user_fault=u.fault,
                            agent_turn=a.turn, user_turn=u.turn, success=audit.success, expected=expected,
                            expected_turn=turn, attribution=audit.attribution, decisive_turn=d.turn if d else None,
                            decisive=f"{d.detector}@{d.detector_version}" if d else None))
    finally:
        if ep is not None:
            ep.stop()
    return out, mismatches, dict(skipped), again


def _turn_ok(c: Case) -> bool | None:
    if c.expected not in ("agent", "simulator", "mixed"):
        return None
    return c.attribution == c.expected and c.decisive_turn == c.expected_turn


def figures(items: list[Case], path: str = "", mismatches: int = 0, not_committed: dict[str, int] | None = None,
            again: int = 0) -> MixedFigures:
    cells = {}
    for cell in CELLS:
        mine = [c for c in items if c.cell == cell]
        confusion: dict[str, Counter] = defaultdict(Counter)
        for c in mine:
            confusion[c.expected][c.attribution] += 1
        turns = [x for x in (_turn_ok(c) for c in mine) if x is not None]
        cells[cell] = CellFigures(conversations=len(mine), failed=sum(c.success is False for c in mine),
                                  side=Rate.of(sum(c.attribution == c.expected for c in mine), len(mine)),
                                  turn=Rate.of(sum(turns), len(turns)),
                                  confusion={k: dict(v) for k, v in confusion.items()})
    turns = [x for x in (_turn_ok(c) for c in items) if x is not None]
    failed = [c for c in items if c.success is False]
    families = Counter(next((f for f in FAMILIES if f"__{f}__" in c.scenario), "other") for c in items)
    return MixedFigures(path=path, conversations=len(items), replay_mismatches=mismatches,
                        not_committed=not_committed or {}, run_again=again, cells=cells,
                        side=Rate.of(sum(c.attribution == c.expected for c in items), len(items)),
                        turn=Rate.of(sum(turns), len(turns)),
                        failures_side=Rate.of(sum(c.attribution == c.expected for c in failed), len(failed)),
                        scenarios=len({c.scenario for c in items}), families=dict(families),
                        detectors=[d.key for d in DETECTORS])


def measure_path(path: Path | str, endpoint: str | None = None) -> tuple[MixedFigures, list[Case]]:
    items, mismatches, skipped, again = cases(path, endpoint)
    return figures(items, str(path), mismatches, skipped, again), items


def text_lines(m: MixedFigures) -> list[str]:
    lines = [(f"mixed-set attribution of {m.path}: {m.conversations} conversations over {m.scenarios} scenarios "
              f"{m.families} ({m.replay_mismatches} replay mismatches; not committed, left out: {m.not_committed}; "
              f"{m.run_again} run again to say which fault failed them)"),
             f"{'cell':10} {'n':>5} {'failed':>6}  {'right side':34} {'decisive turn (failures)':34}"]
    for name, c in m.cells.items():
        lines.append(f"{name:10} {c.conversations:5} {c.failed:6}  {c.side!s:34} {c.turn!s:34}")
        lines.append(f"{'':10} expected -> predicted: {c.confusion}")
    lines.append(f"{'all':10} {m.conversations:5} {'':6}  {m.side!s:34} {m.turn!s:34}")
    lines.append(f"right side on failures only: {m.failures_side}")
    return lines


__all__ = ["CELLS", "USER_CLASSES", "Case", "CellFigures", "MixedFigures", "cases", "expected_of", "figures",
           "measure_path", "sweep_config", "text_lines"]
