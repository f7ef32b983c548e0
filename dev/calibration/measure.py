"""How good the detectors are, measured on a calibration sweep (:mod:`.sweep`):
recall per fault class on injected faults, false positives on clean conversations and
hard negatives, and whether the attribution names the right side and turn.

Ground truth comes from replaying each customer (:mod:`.truth`), never from the
detectors. A fault counts as found when a finding of its class is at the turn the fault
was injected; every finding on a clean conversation or a hard negative is a false
positive. Rates carry 95% Wilson intervals (``results.metrics``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dev.calibration.truth import Truth, replay
from tauray.actors.audit.runner import ConversationAudit, audit_trajectory
from tauray.actors.audit.trajectory import Trajectory, trajectories
from tauray.actors.audit.user_faults import USER_DETECTORS
from tauray.results.stats.metrics import wilson_interval
from tauray.results.tables.readers import actions_df, conversations_df, messages_df


class Rate(BaseModel):
    """k of n, with its 95% Wilson interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        if n == 0:
            return cls(k=k, n=n, rate=None, low=None, high=None)
        lo, hi = wilson_interval(k, n)
        return cls(k=k, n=n, rate=round(k / n, 4), low=round(lo, 4), high=round(hi, 4))

    def __str__(self) -> str:
        if self.rate is None:
            return f"{self.k}/{self.n}"
        return f"{self.k}/{self.n} = {self.rate:.3f} [{self.low:.3f}, {self.high:.3f}]"


class ClassFigures(BaseModel):
    """Recall of one fault class on the conversations where it was injected."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recall: Rate = Field(description="Injected faults found at their turn.")
    found_anywhere: Rate = Field(description="Injected faults whose class was found at any turn.")
    scenarios: int = Field(description="Distinct scenarios with an injected fault.")
    families: dict[str, int] = Field(description="Injected faults per telecom problem family.")
    other_class_findings: int = Field(description="Findings of other classes on these conversations.")


class Calibration(BaseModel):
    """The figures ``python -m dev.calibration`` prints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    conversations: int
    replay_mismatches: int = Field(description="Conversations whose customer the replay did not reproduce (left out).")
    not_committed: int = Field(description="Faulty conversations where the drawn point never came (left out).")
    classes: dict[str, ClassFigures]
    false_positive_rate: Rate = Field(description="Clean + hard-negative conversations with any finding.")
    false_positives_by_detector: dict[str, Rate]
    cross_class_by_detector: dict[str, Rate] = Field(description="Conversations injected with another class on "
                                                     "which the detector fired (confusion between classes).")
    clean_conversations: int
    hard_negatives: dict[str, int]
    attribution_side: Rate = Field(description="Attribution equal to the expected one (none/agent/simulator).")
    decisive_turn: Rate = Field(description="Simulator-caused failures whose decisive turn is the injected one.")
    attributions: dict[str, dict[str, int]] = Field(description="Expected -> predicted attribution counts.")
    detectors: list[str]


def _family(scenario: str) -> str:
    for family in ("mms_issue", "mobile_data_issue", "service_issue"):
        if f"__{family}__" in scenario:
            return family
    return "other"


def _expected(truth: Truth, success: bool | None) -> str:
    if success is None:
        return "undetermined"
    if success:
        return "none"
    return "simulator" if truth.committed and not truth.negative else "agent"


def measure(items: list[tuple[Trajectory, Truth, ConversationAudit]], path: str = "") -> Calibration:
    """The figures of a set of (trajectory, truth, audit)."""
    found: dict[str, list[bool]] = defaultdict(list)
    anywhere: dict[str, list[bool]] = defaultdict(list)
    scenarios: dict[str, set[str]] = defaultdict(set)
    families: dict[str, Counter] = defaultdict(Counter)
    others: Counter = Counter()
    negatives: list[ConversationAudit] = []
    hard: Counter = Counter()
    mismatches = not_committed = clean = 0
    side_ok: list[bool] = []
    turn_ok: list[bool] = []
    confusion: dict[str, Counter] = defaultdict(Counter)
    faulty: list[tuple[str, ConversationAudit]] = []
    for t, truth, audit in items:
        if truth.mismatch is not None:
            mismatches += 1
            continue
        if truth.fault is not None and not truth.negative and not truth.committed:
            not_committed += 1
            continue
        if truth.fault is None or truth.negative:
            negatives.append(audit)
            if truth.negative:
                hard[truth.fault or ""] += 1
            else:
                clean += 1
        else:
            cls = truth.fault
            hits = [f for f in audit.findings if f.fault_class == cls]
            found[cls].append(any(f.turn == truth.turn for f in hits))
            anywhere[cls].append(bool(hits))
            scenarios[cls].add(str(t.row["scenario"]))
            families[cls][_family(str(t.row["scenario"]))] += 1
            others[cls] += sum(f.fault_class != cls for f in audit.findings)
            faulty.append((cls, audit))
        if truth.negative:  # whether a refusal's failure is the customer's needs judgement: not scored
            continue
        expected = _expected(truth, audit.success)
        confusion[expected][audit.attribution] += 1
        side_ok.append(audit.attribution == expected)
        if expected == "simulator" and audit.attribution == "simulator":
            turn_ok.append(audit.decisive is not None and audit.decisive.turn == truth.turn)
        elif expected == "simulator":
            turn_ok.append(False)
    by_detector = {d.name: Rate.of(sum(any(f.detector == d.name for f in a.findings) for a in negatives),
                                   len(negatives)) for d in USER_DETECTORS}
    classes_of = {d.name: {d.fault_class} | ({"different_action"} if d.fault_class == "unrequested_write" else set())
                  for d in USER_DETECTORS}
    cross = {d.name: Rate.of(sum(any(f.detector == d.name for f in a.findings) for c, a in faulty
                                 if c not in classes_of[d.name]),
                             sum(c not in classes_of[d.name] for c, _ in faulty)) for d in USER_DETECTORS}
    return Calibration(
        path=path, conversations=len(items), replay_mismatches=mismatches, not_committed=not_committed,
        classes={c: ClassFigures(recall=Rate.of(sum(v), len(v)), found_anywhere=Rate.of(sum(anywhere[c]), len(v)),
                                 scenarios=len(scenarios[c]), families=dict(families[c]),
                                 other_class_findings=others[c]) for c, v in sorted(found.items())},
        false_positive_rate=Rate.of(sum(bool(a.findings) for a in negatives), len(negatives)),
        false_positives_by_detector=by_detector, cross_class_by_detector=cross, clean_conversations=clean, hard_negatives=dict(hard),
        attribution_side=Rate.of(sum(side_ok), len(side_ok)), decisive_turn=Rate.of(sum(turn_ok), len(turn_ok)),
        attributions={k: dict(v) for k, v in confusion.items()}, detectors=[d.key for d in USER_DETECTORS])


def calibrate_path(path: Path | str) -> Calibration:
    """Measure the detectors on a stored calibration sweep (or any run with faulty customers)."""

    conv = conversations_df(path)
    items = []
    for t in trajectories(conv, messages_df(path), actions_df(path)):
        items.append((t, replay(t), audit_trajectory(t)))
    return measure(items, str(path))


def text_lines(c: Calibration) -> list[str]:
    """The figures as aligned lines."""
    lines = [(f"calibration of {c.path}: {c.conversations} conversations ({c.replay_mismatches} replay mismatches, "
              f"{c.not_committed} faulty ones where the fault never came, left out)"),
             f"{'class':26} {'recall at the injected turn':38} {'found anywhere':34} scen  families"]
    for name, f in c.classes.items():
        fam = ", ".join(f"{k.split('_')[0]} {v}" for k, v in sorted(f.families.items()))
        lines.append(f"{name:26} {f.recall!s:38} {f.found_anywhere!s:34} {f.scenarios:4}  {fam}")
    lines.append(f"false positives (any finding) on {c.clean_conversations} clean + "
                 f"{sum(c.hard_negatives.values())} hard negatives {dict(c.hard_negatives)}: {c.false_positive_rate}")
    lines.append(f"  {'detector':26} {'on clean + hard negatives':38} on faults of other classes")
    for name, r in c.false_positives_by_detector.items():
        lines.append(f"  {name:26} {r!s:38} {c.cross_class_by_detector[name]}")
    lines.append(f"attribution: right side {c.attribution_side}; decisive turn {c.decisive_turn}")
    lines.append(f"  expected -> predicted: {c.attributions}")
    return lines


def as_dict(c: Calibration) -> dict[str, Any]:
    return c.model_dump(mode="json")


__all__ = ["Calibration", "ClassFigures", "Rate", "as_dict", "calibrate_path", "measure", "text_lines"]
