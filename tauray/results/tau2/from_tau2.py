"""τ² results files as a tauray run (``tauray import-tau2``).

Each simulation becomes one conversation with its messages, its tool calls
replayed on tauray's dual state (initialization, each call, sync after every
write, as a live conversation does) and re-scored by tauray's own scoring
(:func:`tauray.scenarios.scoring.score`): the verdict is tauray's, never copied
from the file. τ²'s recorded reward is kept beside it in the run folder's
``tau2_import.json`` (read it with :func:`tau2_rewards_df`). Files from a τ²
version whose model differs from the installed one, for domains or tasks tauray
does not have, or whose tasks differ from the installed ones are refused with
one line naming the file and what is missing (:class:`Tau2FileError`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from tauray.results.tables.records import ConversationResult, MessageRecord
from tauray.results.tables.writer import TableWriter
from tauray.results.tau2.format import (
    HARNESS_KEY,
    RETRIES_KEY,
    STOP_KEYS,
    TAURAY_KEY,
    ImportSummary,
    Tau2FileError,
    load_tau2_results,
    tau2_tasks,
    tauray_domain,
)
from tauray.results.tau2.records import simulation_result
from tauray.scenarios import DOMAINS, get_scenario, select_scenarios

MANIFEST = "tau2_import.json"


def _when(stamp: str | None) -> datetime:
    """τ² writes local times without a zone (``datetime.now().isoformat()``); they are read as UTC."""
    if not stamp:
        return datetime.fromtimestamp(0, UTC)
    value = datetime.fromisoformat(stamp)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def tauray_messages(run_id: str, unit_id: str, scenario: str, messages: list[Any]) -> list[MessageRecord]:
    """τ² messages as tauray message rows; tauray's harness calls kept in ``raw_data`` come back in place."""
    rows: list[dict[str, Any]] = []
    for m in messages:
        base = {"turn": m.turn_idx or 0, "created_at": _when(m.timestamp)}
        if m.role == "tool":
            if hasattr(m, "tool_messages"):  # MultiToolMessage: its parts in order
                rows += [{"side": _side(t.requestor), "role": "tool", "content": t.content, "tool_calls": None,
                          "tool_call_id": t.id, **base} for t in m.tool_messages]
            else:
                rows.append({"side": _side(m.requestor), "role": "tool", "content": m.content, "tool_calls": None,
                             "tool_call_id": m.id, **base})
            continue
        if m.role == "system":
            continue  # τ² keeps no system message in a simulation's trajectory; tauray has no row for one
        side = "agent" if m.role == "assistant" else "user"
        calls = [{"id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)} for c in m.tool_calls or ()]
        harness = (m.raw_data or {}).get(HARNESS_KEY)
        base["retries"] = (m.raw_data or {}).get(RETRIES_KEY)
        base |= {field: (m.raw_data or {}).get(key) for field, key in STOP_KEYS.items()}
        if harness:
            rows.append({"side": side, "role": m.role, "content": harness["content"], "tool_calls": harness["calls"],
                         "tool_call_id": None, **base})
            rows += [{"side": side, "role": "tool", "content": r["content"], "tool_calls": None,
                      "tool_call_id": r["id"], "turn": r["turn_idx"], "created_at": _when(r["timestamp"]), "retries": None}
                     for r in harness["results"]]
            continue
        rows.append({"side": side, "role": m.role, "content": m.content,
                     "tool_calls": calls if m.tool_calls is not None else None, "tool_call_id": None, **base})
    _restore_harness_order(rows)
    return [MessageRecord(run_id=run_id, conversation_id=unit_id, scenario=scenario, seq=i, **r) for i, r in enumerate(rows)]


def _side(requestor: str) -> str:
    return "agent" if requestor == "assistant" else "user"


def _restore_harness_order(rows: list[dict[str, Any]]) -> None:
    """Put the tool results that follow a message in the order of its calls: an exported
    harness result was held back with its call and comes back before the others."""
    i = 0
    while i < len(rows):
        order = {c["id"]: k for k, c in enumerate(rows[i]["tool_calls"] or ())} if rows[i]["role"] != "tool" else {}
        j = i + 1
        while j < len(rows) and rows[j]["role"] == "tool":
            j += 1
        if order:
            rows[i + 1:j] = sorted(rows[i + 1:j], key=lambda r: order.get(r["tool_call_id"], len(order)))
        i = j


def _tauray_block(sim: Any) -> dict[str, Any]:
    info = (sim.reward_info.info or {}) if sim.reward_info is not None else {}
    block = info.get(TAURAY_KEY) if isinstance(info, dict) else None
    return block.get("conversation", {}) if isinstance(block, dict) else {}


def _scenarios_for(path: Path, results: Any) -> dict[str, Any]:
    """The tauray scenario entry of every task of ``results``, by task id; refuses what tauray lacks."""

    name = results.info.environment_info.domain_name
    domain, variant = tauray_domain(name)
    if domain not in DOMAINS:
        raise Tau2FileError(f"{path}: τ² domain {name!r} is not one tauray has (tauray has: {', '.join(sorted(DOMAINS))})")
    entries = select_scenarios(domain=domain)
    variants = sorted({e.policy_variant for e in entries})
    wanted = variant or ("manual" if "manual" in variants else variants[0])
    if wanted not in variants:
        raise Tau2FileError(f"{path}: τ² domain {name!r}: tauray's {domain} has no {wanted} variant")
    by_id = {e.upstream_id: e for e in entries if e.policy_variant == wanted}
    missing = [t.id for t in results.tasks if t.id not in by_id]
    missing += [s.task_id for s in results.simulations if s.task_id not in by_id and s.task_id not in missing]
    if missing:
        raise Tau2FileError(f"{path}: task {missing[0]!r} is not a {name} task of the installed τ² "
                            f"({len(missing)} such task(s))")
    _check_tasks(path, results, name)
    return by_id


def _check_tasks(path: Path, results: Any, domain: str) -> None:
    """Tasks that differ from the installed ones would be re-scored against the wrong criteria."""

    installed = tau2_tasks(domain)
    for task in results.tasks:
        if _timeless(task.model_dump(mode="json")) != _timeless(installed[task.id].model_dump(mode="json")):
            raise Tau2FileError(f"{path}: task {task.id!r} differs from the installed τ² task (another τ² data version)")


def _timeless(value: Any) -> Any:
    """A task without its timestamps (τ² stamps a task's history messages with the time it loads them)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def default_run_id(files: list[Path]) -> str:
    """A run id named after the files' contents, so importing the same files twice names the same run."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.read_bytes())
    return f"tau2-{digest.hexdigest()[:12]}"


Finish = Callable[[ConversationResult], ConversationResult]
"""What is done to each imported conversation's records before they are written (the CLI's:
the in-loop audit, so an imported run says who failed as a run's rows do; docs/audit.md)."""


def import_tau2(files: list[Path | str], out: Path | str, run_id: str | None = None,
                finish: Finish | None = None) -> ImportSummary:
    """Import τ² results ``files`` into the run folder ``out``; every file is checked before anything is
    written. ``finish`` (e.g. :func:`tauray.actors.audit.audit_result`) goes over each conversation's
    records before they are written."""

    started = time.monotonic()
    paths = [Path(f) for f in files]
    if not paths:
        raise ValueError("no τ² results files given")
    loaded = []
    for p in paths:
        results = load_tau2_results(p)
        loaded.append((p, results, _scenarios_for(p, results)))
    run_id = run_id or default_run_id(paths)
    manifest: list[dict[str, Any]] = []
    counts = {"success": 0, "failed": 0, "unscored": 0, "errors": 0, "mismatches": 0}
    with _writer(out, run_id) as writer:
        for path, results, by_id in loaded:
            for sim in results.simulations:
                scenario = get_scenario(by_id[sim.task_id].name)
                messages = tauray_messages(run_id, sim.id, scenario.name, sim.messages)
                result, mismatches = simulation_result(run_id, sim, results.info, scenario, messages,
                                                       _tauray_block(sim), _when)
                if finish is not None:
                    result = finish(result)
                writer.add(result)
                manifest.append(_manifest_row(path, sim, result))
                counts["mismatches"] += mismatches
                c = result.conversation
                key = ("errors" if c.error_kind else "unscored" if c.success is None
                       else "success" if c.success else "failed")
                counts[key] += 1
    scored = [m for m in manifest if m["tau2_reward"] is not None and m["tauray_success"] is not None]
    agree = sum(m["agree"] for m in scored)
    Path(out, MANIFEST).write_text(json.dumps({"run_id": run_id, "files": [str(p) for p in paths],
                                               "simulations": manifest}, indent=1), encoding="utf-8")
    return ImportSummary(files=[str(p) for p in paths], out=str(out), run_id=run_id, simulations=len(manifest),
                         success=counts["success"], failed=counts["failed"], unscored=counts["unscored"], errors=counts["errors"],
                         tau2_agree=agree, tau2_disagree=len(scored) - agree,
                         tau2_unrewarded=sum(m["tau2_reward"] is None for m in manifest),
                         replay_mismatches=counts["mismatches"], seconds=round(time.monotonic() - started, 3))


class _writer:
    """A TableWriter that flushes on success and is closed either way."""

    def __init__(self, out: Path | str, run_id: str) -> None:
        Path(out).mkdir(parents=True, exist_ok=True)
        self.writer = TableWriter(out, run_id, flush_rows=20000, flush_seconds=3600)

    def __enter__(self) -> TableWriter:
        return self.writer

    def __exit__(self, *exc: Any) -> None:
        self.writer.close()


def _manifest_row(path: Path, sim: Any, result: ConversationResult) -> dict[str, Any]:
    reward = sim.reward_info.reward if sim.reward_info is not None else None
    success = result.conversation.success
    return {"file": str(path), "unit_id": result.conversation.unit_id, "task_id": sim.task_id, "trial": sim.trial,
            "tau2_reward": reward, "tauray_success": success,
            "agree": None if reward is None or success is None else (reward == 1.0) == success}


def tau2_rewards_df(run_dir: Path | str) -> pd.DataFrame:
    """τ²'s recorded reward beside tauray's verdict, one row per imported simulation."""
    data = json.loads(Path(run_dir, MANIFEST).read_text(encoding="utf-8"))
    frame = pd.DataFrame(data["simulations"])
    frame.insert(0, "run_id", data["run_id"])
    return frame
