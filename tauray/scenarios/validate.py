"""``tauray scenarios validate``: gold-replay every selected scenario, check its
verdict, and optionally compare with upstream on gold and perturbed sequences.

Timing compares like with like: tauray's gold replay of each selected task
(initialization, reference actions, sync, predicates, both hashes; caches
cold) against upstream doing the same the way its evaluator does, a fresh
``get_environment()`` per task, with upstream's logging disabled in both.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pydantic import Field

from tauray.scenarios import gold as gold_mod
from tauray.scenarios import parity
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.model import Frozen
from tauray.scenarios.registry import Registry, ScenarioEntry, default_registry
from tauray.scenarios.scoring import ExecutedCall, score


class ValidationReport(Frozen):
    scenarios: int = Field(description="Scenarios selected.")
    tasks: int = Field(description="Distinct upstream tasks among them (variants share one gold replay).")
    gold_pass: int = Field(description="Scenarios whose gold replay passes.")
    gold_failures: list[dict[str, Any]] = Field(description="Up to 20 failing scenarios with the reason.")
    parity_checked: int = Field(description="Scenarios whose task was compared with upstream.")
    parity_sequences: int = Field(description="Action sequences compared (gold and perturbed).")
    parity_mismatches: int = Field(description="Sequences where tauray and upstream disagree.")
    parity_examples: list[dict[str, Any]] = Field(description="Up to 20 mismatches.")
    reference_call_errors: list[dict[str, Any]] = Field(
        description="Reference calls that return an error on gold replay (upstream's own data returns the same;"
        " they fail the gold check only in dual-state domains).")
    perturbed_verdict_changes: int = Field(description="Perturbed sequences whose predicate verdicts differ from gold's.")
    seconds: float = Field(description="tauray: gold replay + predicates + hashes of every selected task.")
    upstream_seconds: float | None = Field(description="Upstream doing the same per task; None without --compare-upstream.")
    speedup: float | None = Field(description="upstream_seconds / seconds.")
    total_seconds: float = Field(description="Wall time of the whole validation.")


def _gold_check(entry_scenario, gold, state, outcomes) -> tuple[bool, str]:
    calls = [ExecutedCall(side=o.side, name=o.name, arguments=o.arguments) for o in outcomes]
    if entry_scenario.has_user_state:
        if gold.failed_actions:
            return False, "reference actions failed: " + ", ".join(gold.failed_actions)
        result = score(entry_scenario, state, calls, gold=gold)
        return bool(result.verdict.success), result.verdict.reason
    return True, "replayed without error"


def validate(entries: list[ScenarioEntry], compare_upstream: bool = False, registry: Registry | None = None,
             progress: Callable[[int], None] | None = None) -> ValidationReport:
    registry = registry or default_registry()
    started = time.perf_counter()
    scenarios = [registry.get(e.name) for e in entries]
    by_task: dict[tuple[str, str], list] = {}
    for s in scenarios:
        by_task.setdefault((s.domain, s.upstream_id), []).append(s)

    # 1. tauray gold replay of each task, timed, caches cold.
    task_results: dict[tuple[str, str], tuple[bool, str]] = {}
    tick = time.perf_counter()
    for key, group in by_task.items():
        gold, state, outcomes = gold_mod.run_gold(group[0])
        task_results[key] = _gold_check(group[0], gold, state, outcomes)
    seconds = time.perf_counter() - tick

    # 2. reproducibility: a second replay must land on the same hashes.
    for key, group in by_task.items():
        first = gold_mod.gold_replay(group[0])
        state, _ = gold_mod.replay(group[0])
        if state.hashes() != {"agent": first.agent_hash, "user": first.user_hash}:
            task_results[key] = (False, "gold replay is not reproducible: DB hash changed between runs")

    call_errors = [
        {"scenario": group[0].name, "actions": list(gold_mod.gold_replay(group[0]).failed_actions)}
        for group in by_task.values() if gold_mod.gold_replay(group[0]).failed_actions
    ]
    gold_pass, failures = 0, []
    for s in scenarios:
        ok, reason = task_results[(s.domain, s.upstream_id)]
        gold_pass += ok
        if not ok and len(failures) < 20:
            failures.append({"scenario": s.name, "reason": reason})
        if progress:
            progress(1)

    # 3. upstream: timed gold replay, then parity on gold and perturbed sequences.
    upstream_seconds = None
    parity_checked = parity_sequences = mismatches = changes = 0
    examples: list[dict[str, Any]] = []
    if compare_upstream:
        tasks = {key: parity.upstream_task(group[0]) for key, group in by_task.items()}
        tick = time.perf_counter()
        upstream_gold = {
            key: parity.run_upstream(group[0], tasks[key], parity.sequences(group[0])["gold"])
            for key, group in by_task.items()
        }
        upstream_seconds = time.perf_counter() - tick
        for key, group in by_task.items():
            scenario = group[0]
            seqs = parity.sequences(scenario)
            if not domain_spec(scenario.domain).perturbed_parity:  # large DBs (airline, retail): gold only
                seqs = {"gold": seqs["gold"]}
            gold_ours = parity.run_tauray(scenario, seqs["gold"])
            for label, calls in seqs.items():
                ours = gold_ours if label == "gold" else parity.run_tauray(scenario, calls)
                theirs = upstream_gold[key] if label == "gold" else parity.run_upstream(scenario, tasks[key], calls)
                result = parity.compare(scenario, label, ours, theirs)
                parity_sequences += 1
                changes += label != "gold" and ours.predicates != gold_ours.predicates
                if not result.match:
                    mismatches += 1
                    if len(examples) < 20:
                        examples.append(result.model_dump())
            parity_checked += len(group)

    return ValidationReport(
        scenarios=len(scenarios), tasks=len(by_task), gold_pass=gold_pass, gold_failures=failures,
        parity_checked=parity_checked, parity_sequences=parity_sequences, parity_mismatches=mismatches,
        parity_examples=examples, reference_call_errors=call_errors, perturbed_verdict_changes=changes,
        seconds=round(seconds, 3),
        upstream_seconds=round(upstream_seconds, 3) if upstream_seconds is not None else None,
        speedup=round(upstream_seconds / seconds, 2) if upstream_seconds and seconds else None,
        total_seconds=round(time.perf_counter() - started, 3),
    )
