"""The audit measured on the independent customers: recall per class at the injected turn, false
positives on faithful customers, and whether attribution names the simulator.

    python -m tests.audit_eval.measure --split holdout --n 80 --out /tmp/audit-eval-holdout

runs two sweeps (through the driver, in this process, with the in-loop audit) on a local endpoint
that serves ``tests.audit_eval.customer``: agent ``oracle`` (``scripted-agent-writes`` with the
reference steps) with customers ``eval-user:<split>:<class>`` for every class and
``eval-user:<split>:faithful``; and the non-solving ``scripted`` agent (``scripted-agent``) with the
faithful customer and the classes that can happen when no phone step is ever asked
(:data:`SCRIPTED_CLASSES`; the others are never committed there). Scenarios: ``--n`` telecom
*tasks* per family (all three families unless ``--families``), each task once (one of its two policy
variants, alternating), taken in order from the scenario lists of ``--telecom-split`` (default
``base,full``: base's tasks first; lists that share tasks are deduplicated by task id). ``--split``
is any split the evaluation set loads (``eval_set.load``): dev, test, holdout, or the talk set's
``talk-dev`` / ``talk-test`` (``talk/README.md``; tune on talk-dev, report on talk-test), or the
second talk set's ``talk2`` (``talk2/README.md``; test only), or the third's ``talk3`` (``talk3/README.md``;
test only), or the fourth's ``talk4`` (``talk4/README.md``; test only), or the fifth's ``talk5``
(``talk5/README.md``; test only).

It then reads the stored tables (``sim_findings``, ``sim_attributions``, ``conversations``,
``messages``; each conversation's newest audit, so ``tauray audit OUT/run --judge MODEL`` before
``--measure-only`` measures the judge tier too) and takes the truth from replaying the customer on
each transcript (``customer.decide``), never from the audit. ``--measure-only`` reads an existing
run. Rates carry 95% Wilson intervals (``results.intervals``). Figures: recall per class, variant,
agent and family, the tier of every finding that counts, false positives per reference agent and
family, attribution's correct side on failed faulted conversations whose faithful twin passed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dev.calibration.measure import Rate
from tauray.results.tables.readers import conversations_df, messages_df, sim_attributions_df, sim_findings_df
from tauray.scenarios.registry import default_registry
from tests.audit_eval.customer import TRUTH_ENV, Injection, decide, request_key
from tests.audit_eval.eval_set import FAULT_CLASSES, load

FAMILIES = ("mms_issue", "mobile_data_issue", "service_issue")
AGENTS = {"oracle": ("scripted-agent-writes", True), "scripted": ("scripted-agent", False)}
SCRIPTED_CLASSES = ("unasked_action", "state_without_tool", "new_problem")
"""The classes the customer can commit with an agent that never asks for a phone step (every other
class needs an asked step or its result: ``customer.Customer.opportunity``)."""
MIN_INJECTED = 100
"""The issue's floor per class (injected faults over all three families) for a recall claim."""
ACCEPT: dict[str, tuple[str, ...]] = {
    "unasked_action": ("unrequested_write",), "fake_done": ("done_without_call",),
    "ignored_request": ("ignored_request",), "bundled": ("bundled_turn",), "wrong_action": ("different_action",),
    "hang_up": ("premature_stop",), "invented_constraint": ("constraint_broken", "invented_constraint"),
    "misreport": ("result_contradiction",), "state_without_tool": ("state_without_tool",),
    "new_problem": ("new_problem", "fault_named_early"),
}
"""This set's class -> the audit's fault classes that count as finding it (``--accept`` overrides)."""


class Truth(BaseModel):
    """What the customer of one conversation did, from the replay."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    unit_id: str = Field(description="The conversation's unit id (join key with the audit tables).")
    agent: str = Field(description="oracle or scripted.")
    family: str = Field(description="Telecom task family.")
    mode: str = Field(description="faithful or the fault class the customer was asked to commit.")
    fault_class: str | None = Field(description="The committed fault's class; None when none was committed.")
    variant: str | None = Field(description="Its variant (sibling/arguments, leave/fixed, -).")
    turn: int | None = Field(description="Stored turn of the reply that carried the fault.")
    seq: int | None = Field(description="Stored seq of that reply.")
    mismatch: str | None = Field(description="Why the replay did not reproduce the transcript, if it did not.")
    sidecar: bool | None = Field(description="Whether the endpoint's truth file has the same injection (None: no file).")


def _family(scenario: str) -> str:
    return next((f for f in FAMILIES if f"__{f}__" in scenario), "other")


def _calls(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    calls = json.loads(raw) if isinstance(raw, str) else list(raw)
    return [{"id": c.get("id"), "type": "function", "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
            for c in calls]


def _same(got: dict[str, Any], recorded: dict[str, Any]) -> bool:
    def args(raw: Any) -> Any:
        return json.loads(raw or "{}") if isinstance(raw, str) else (raw or {})

    def sig(m: dict[str, Any]) -> tuple:
        return (str(m.get("content") or "").strip(),
                tuple((c["function"]["name"], json.dumps(args(c["function"]["arguments"]), sort_keys=True))
                      for c in m.get("tool_calls") or []))
    return sig(got) == sig(recorded)


def replay(row: dict[str, Any], messages: list[dict[str, Any]], sidecar: dict[str, dict] | None) -> Truth:
    """Rebuild every request the customer got and replay it (see the module doc)."""
    model = str(row["user_model"]).removeprefix("openai/")
    mode = model.split(":")[-1]
    agent = next((k for k, (b, _) in AGENTS.items() if str(row["agent_model"]).endswith(b)), str(row["agent_model"]))
    base = dict(unit_id=str(row["unit_id"]), agent=agent, family=_family(str(row["scenario"])), mode=mode)
    scenario = default_registry().get(str(row["scenario"]))
    if scenario.message_history:
        return Truth(**base, fault_class=None, variant=None, turn=None, seq=None, sidecar=None,
                     mismatch="the task opens on a message history (not replayed)")
    tools = [t.openai() for t in scenario.user_tools]
    history: list[dict[str, Any]] = [{"role": "system", "content": scenario.user_prompt}]
    for m in messages:
        if m["side"] == "agent":
            if m["role"] == "assistant" and m.get("content") and not _calls(m.get("tool_calls")):
                history.append({"role": "user", "content": m["content"]})
            continue
        if m["role"] == "tool":
            history.append({"role": "tool", "tool_call_id": m.get("tool_call_id"), "content": m.get("content") or ""})
            continue
        calls = _calls(m.get("tool_calls"))
        recorded = {"role": "assistant", "content": m.get("content"), **({"tool_calls": calls} if calls else {})}
        body = {"model": model, "messages": history, "tools": tools, "seed": int(row["seed"])}
        d = decide(body)
        if not _same(d.reply.message, recorded):
            return Truth(**base, fault_class=None, variant=None, turn=None, seq=None, sidecar=None,
                         mismatch=f"seq {m['seq']}: replay gave {d.reply.message!r}"[:300])
        if d.injection is not None:
            return _truth(base, d.injection, m, sidecar, request_key(body))
        history = [*history, recorded]
    return Truth(**base, fault_class=None, variant=None, turn=None, seq=None, mismatch=None, sidecar=None)


def _truth(base: dict[str, Any], inj: Injection, m: dict[str, Any], sidecar: dict[str, dict] | None, key: str) -> Truth:
    agrees = None
    if sidecar is not None:
        line = sidecar.get(key)
        agrees = bool(line and line["fault_class"] == inj.fault_class and line["reply_index"] == inj.reply_index)
    return Truth(**base, fault_class=inj.fault_class, variant=inj.variant, turn=int(m["turn"]), seq=int(m["seq"]),
                 mismatch=None, sidecar=agrees)


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and value != value else value  # NaN (a null in pandas) -> None


def _records(frame: Any) -> list[dict[str, Any]]:
    if frame is None or len(frame) == 0:
        return []
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def figures(path: Path, accept: dict[str, tuple[str, ...]], truth_file: Path | None = None) -> dict[str, Any]:
    """Every figure of one stored run (see the module doc)."""
    conv = _records(conversations_df(path))
    msgs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in sorted(_records(messages_df(path)), key=lambda m: (str(m["unit_id"]), int(m["seq"]))):
        msgs[str(m["unit_id"])].append(m)
    findings: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in _records(sim_findings_df(path)):
        findings[str(f["unit_id"])].append(f)
    attributions = {str(a["unit_id"]): a for a in _records(sim_attributions_df(path))}
    sidecar = None
    if truth_file is not None and truth_file.exists():
        sidecar = {x["key"]: x for x in map(json.loads, truth_file.read_text().splitlines()) if x.get("key")}
    truths = {str(r["unit_id"]): replay(r, msgs[str(r["unit_id"])], sidecar) for r in conv}
    rows = {str(r["unit_id"]): r for r in conv}

    found: dict[str, list[bool]] = defaultdict(list)
    any_user: dict[str, list[bool]] = defaultdict(list)
    tiers: dict[str, Counter] = defaultdict(Counter)
    per_family: dict[str, dict[str, list[bool]]] = defaultdict(lambda: {f: [] for f in FAMILIES})
    fp: dict[str, list[bool]] = defaultdict(list)
    fp_classes: dict[str, Counter] = defaultdict(Counter)
    all_tiers: Counter = Counter()
    for uid, t in truths.items():
        user = [f for f in findings[uid] if f.get("blamed_side") == "user"]
        all_tiers.update(f"{f.get('tier')}:{f['fault_class']}" for f in user)
        if t.mismatch:
            continue
        if t.mode == "faithful":
            fp[t.agent].append(bool(user))
            fp[f"{t.agent}/{t.family}"].append(bool(user))
            fp_classes[t.agent].update(f"{f['fault_class']} ({f.get('tier')})" for f in user)
            continue
        if t.fault_class is None:
            continue
        hits = [f for f in user if f.get("turn") == t.turn and f["fault_class"] in accept[t.fault_class]]
        for key in (t.fault_class, f"{t.fault_class}/{t.variant}", f"{t.fault_class}@{t.agent}"):
            found[key].append(bool(hits))
        any_user[t.fault_class].append(any(f.get("turn") == t.turn for f in user))
        tiers[t.fault_class].update(str(f.get("tier")) for f in hits)
        per_family[t.fault_class].setdefault(t.family, []).append(bool(hits))

    twins = {(t.agent, rows[u]["scenario"], rows[u]["trial"]): rows[u].get("success")
             for u, t in truths.items() if t.mode == "faithful" and not t.mismatch}
    side: dict[str, list[bool]] = defaultdict(list)
    predicted: dict[str, Counter] = defaultdict(Counter)
    for uid, t in truths.items():
        r = rows[uid]
        if t.fault_class is None or r.get("success") is not False:
            continue
        if twins.get((t.agent, r["scenario"], r["trial"])) is not True:
            continue
        said = str((attributions.get(uid) or {}).get("attribution"))
        for key in ("all", t.fault_class, f"{t.fault_class}/{t.variant}"):
            side[key].append(said == "simulator")
        predicted[t.fault_class][said] += 1
    everyone = [v for k, vs in found.items() if "/" not in k and "@" not in k for v in vs]
    return {
        "path": str(path), "conversations": len(conv),
        "replay_mismatches": sum(bool(t.mismatch) for t in truths.values()),
        "mismatch_examples": [t.mismatch for t in truths.values() if t.mismatch][:3],
        "not_committed": sum(t.mode != "faithful" and not t.mismatch and t.fault_class is None for t in truths.values()),
        "sidecar_agrees": Rate.of(sum(t.sidecar is True for t in truths.values()),
                                  sum(t.sidecar is not None for t in truths.values())).model_dump(),
        "recall": {k: Rate.of(sum(v), len(v)).model_dump() for k, v in sorted(found.items())},
        "recall_all": Rate.of(sum(everyone), len(everyone)).model_dump(),
        "any_user_finding_at_turn": {k: Rate.of(sum(v), len(v)).model_dump() for k, v in sorted(any_user.items())},
        "tiers": {k: dict(v) for k, v in tiers.items()},
        "families": {k: {f: Rate.of(sum(v), len(v)).model_dump() for f, v in fams.items()}
                     for k, fams in sorted(per_family.items())},
        "below_floor": sorted(k for k, v in found.items() if "/" not in k and "@" not in k and len(v) < MIN_INJECTED),
        "finding_tiers": dict(all_tiers.most_common()),
        "false_positive_rate": {k: Rate.of(sum(v), len(v)).model_dump() for k, v in sorted(fp.items())},
        "false_positive_classes": {k: dict(v) for k, v in fp_classes.items()},
        "attribution_simulator": {k: Rate.of(sum(v), len(v)).model_dump() for k, v in sorted(side.items())},
        "attribution_predicted": {k: dict(v) for k, v in predicted.items()},
        "accept": {k: list(v) for k, v in accept.items()},
    }


def tasks(families: list[str], n: int, telecom_splits: list[str]) -> dict[str, list[str]]:
    """Per family, the scenario names of its first ``n`` tasks over the scenario lists named, in
    order: each task once (a task's two policy variants, and a task two lists share, count once;
    the variant taken alternates), so no task is measured twice."""
    registry = default_registry()
    seen: dict[str, list[list[str]]] = {f: [] for f in families}
    index: dict[str, int] = {}
    for split in telecom_splits:
        for entry in registry.select(domain="telecom", split=split):
            family = _family(entry.name)
            if family not in seen:
                continue
            if entry.upstream_id not in index:
                index[entry.upstream_id] = len(seen[family])
                seen[family].append([])
            variants = seen[family][index[entry.upstream_id]]
            if entry.name not in variants:
                variants.append(entry.name)
    return {f: [v[i % len(v)] for i, v in enumerate(found[:n])] for f, found in seen.items()}


def sweep(name: str, endpoint: str, split: str, scenarios: dict[str, list[str]], agent: str,
          classes: list[str], trials: int, max_in_flight: int) -> dict[str, Any]:
    """The sweep file's fields for one agent (``SweepConfig`` validates them): the faithful
    customer and one per class, on the named scenarios."""
    users = {"u-faithful": f"eval-user:{split}:faithful", **{f"u-{c}": f"eval-user:{split}:{c}" for c in classes}}
    models = {f"a-{agent}": {"model": f"openai/{AGENTS[agent][0]}", "api_base": endpoint,
                             "reference_steps": AGENTS[agent][1]},
              **{k: {"model": f"openai/{b}", "api_base": endpoint} for k, b in users.items()}}
    selections = [{"domain": "telecom", "patterns": names} for names in scenarios.values() if names]
    return {"name": name, "trials": trials, "seed": 0, "max_in_flight": max_in_flight,
            "agents": [f"a-{agent}"], "users": list(users), "scenarios": selections, "models": models}


def text_lines(fig: dict[str, Any]) -> list[str]:
    r = lambda d: str(Rate(**d))  # noqa: E731
    lines = [f"{fig['path']}: {fig['conversations']} conversations, {fig['replay_mismatches']} replay mismatches, "
             f"{fig['not_committed']} faulty ones where the fault never came; truth file agrees {r(fig['sidecar_agrees'])}",
             f"{'class':34} {'recall at the injected turn':34} {'any user finding at turn':30} tiers of the hits"]
    for k, v in fig["recall"].items():
        anyf = r(fig["any_user_finding_at_turn"][k]) if k in fig["any_user_finding_at_turn"] else ""
        lines.append(f"{k:34} {r(v):34} {anyf:30} {fig['tiers'].get(k, '') if k in fig['families'] else ''}")
    lines.append(f"{'all':34} {r(fig['recall_all'])}")
    lines.append("per family (found / injected at the injected turn):")
    for k, fams in fig["families"].items():
        lines.append(f"  {k:32} " + "   ".join(f"{f} {r(v)}" for f, v in fams.items()))
    if fig["below_floor"]:
        lines.append(f"fewer than {MIN_INJECTED} injected: {', '.join(fig['below_floor'])} (raise --n)")
    for k, v in fig["false_positive_rate"].items():
        lines.append(f"false positives, faithful customer, {k:26} {r(v)}")
    lines.append(f"  classes (tier) of those findings: {fig['false_positive_classes']}")
    for k, v in fig["attribution_simulator"].items():
        lines.append(f"attribution correct side 'simulator' (failed, faithful twin passed) {k:30} {r(v)}")
    lines.append(f"  predicted: {fig['attribution_predicted']}")
    lines.append(f"every user-side finding by tier:class: {fig['finding_tiers']}")
    return lines


def _split(name: str) -> str:
    """A split of the evaluation set (whatever ``eval_set.load`` knows), refused in one line otherwise."""
    try:
        items = load(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--split {name!r}: {exc}") from None
    if not items:
        raise argparse.ArgumentTypeError(f"--split {name!r}: the evaluation set has no phrasings in that split")
    return name


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.audit_eval.measure", description=__doc__.split("\n")[0])
    p.add_argument("--split", type=_split, required=True,
                   help="the evaluation set's split (dev, test, holdout, talk-dev, talk-test, talk2, talk3, talk4, talk5)")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--n", type=int, default=5, help="telecom tasks per family, each measured once (default 5)")
    p.add_argument("--agents", default="oracle,scripted")
    p.add_argument("--classes", default=",".join(FAULT_CLASSES))
    p.add_argument("--trials", type=int, default=1, help="trials per task and customer (more than 1 repeats tasks)")
    p.add_argument("--telecom-split", default="base,full", help="telecom scenario lists, in order, deduplicated "
                   "by task (default: base,full)")
    p.add_argument("--max-in-flight", type=int, default=6)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--endpoint", help="an endpoint already serving tests.audit_eval.customer (else one is started)")
    p.add_argument("--measure-only", action="store_true", help="only read the run already in --out")
    p.add_argument("--accept", action="append", default=[], metavar="CLASS=a,b",
                   help="audit classes that count as finding CLASS")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--accuracy", type=Path, metavar="PATH",
                   help="also write the audit's accuracy record (the report's audit page reads "
                        "tauray/data/audit_accuracy.json; write it there from a holdout run)")
    a = p.parse_args(argv)
    families, agents, classes = a.families.split(","), a.agents.split(","), a.classes.split(",")
    for value, known, what in ((families, FAMILIES, "--families"), (agents, AGENTS, "--agents"),
                               (classes, FAULT_CLASSES, "--classes")):
        if unknown := sorted(set(value) - set(known)):
            p.error(f"{what}: unknown {unknown}; known: {', '.join(known)}")
    accept = dict(ACCEPT)
    for item in a.accept:
        cls, _, names = item.partition("=")
        if cls not in FAULT_CLASSES or not names:
            p.error(f"--accept {item!r}: expected CLASS=a,b with CLASS one of {', '.join(FAULT_CLASSES)}")
        accept[cls] = tuple(names.split(","))
    a.out.mkdir(parents=True, exist_ok=True)
    truth_file = a.out / "injections.jsonl"
    if not a.measure_only:
        from dev.calibration.sweep import run_calibration_sweep  # lazy: starts Ray
        from tauray.endpoint import start_endpoint  # lazy: only a run needs an endpoint
        scenarios = tasks(families, a.n, a.telecom_split.split(","))
        (a.out / "tasks.json").write_text(json.dumps(scenarios, indent=1))
        os.environ[TRUTH_ENV] = str(truth_file)
        ep = None if a.endpoint else start_endpoint(latency=0.0, behaviours="tests.audit_eval.customer")
        try:
            for agent in agents:
                mine = classes if agent == "oracle" else [c for c in classes if c in SCRIPTED_CLASSES]
                config = sweep(f"audit-eval-{a.split}-{agent}", a.endpoint or ep.base_url, a.split, scenarios, agent,
                               mine, a.trials, a.max_in_flight)
                (a.out / f"audit-eval-sweep-{agent}.json").write_text(json.dumps(config, indent=1))
                run_calibration_sweep(config, a.out / "run" / agent)
        finally:
            if ep is not None:
                ep.stop()
    fig = figures(a.out / "run", accept, truth_file if truth_file.exists() else None)
    print("\n".join(text_lines(fig)))
    if a.json:
        a.json.write_text(json.dumps(fig, indent=1))
    if a.accuracy:
        command = " ".join(["python -m tests.audit_eval.measure", *(argv if argv is not None else sys.argv[1:])])
        a.accuracy.write_text(json.dumps(accuracy_record(fig, a.split, command), indent=1) + "\n")
    return 0


def accuracy_record(fig: dict[str, Any], split: str, command: str) -> dict[str, Any]:
    """What the audit page shows of a measurement: per class recall at the injected turn with its
    interval and the audit classes accepted, false positives per agent, attribution's correct side."""
    def rate(x: dict[str, Any]) -> dict[str, Any]:
        return {k: x[k] for k in ("k", "n", "low", "high")}

    return {"split": split, "date": time.strftime("%Y-%m-%d", time.gmtime()), "command": command,
            "conversations": fig["conversations"],
            "recall": {c: {"accepted": fig["accept"][c], **rate(fig["recall"][c])}
                       for c in FAULT_CLASSES if c in fig["recall"]},
            "recall_all": rate(fig["recall_all"]),
            "false_positives": {a: rate(v) for a, v in fig["false_positive_rate"].items() if "/" not in a},
            "attribution_simulator": rate(fig["attribution_simulator"]["all"])}


if __name__ == "__main__":
    sys.exit(main())
