"""A tauray run or sweep as τ² results files (``tauray export-tau2``).

One file per agent model × user model × τ² domain (telecom's workflow variant is
τ²'s ``telecom-workflow``), validated by τ²'s own ``Results`` model before it is
written, so ``tau2 view``, ``tau2 evaluate-trajs`` and ``tau2 submit`` read it.
Each conversation (the newest attempt of each unit) is one simulation: both
sides' messages with tool calls and results in order, the termination reason,
and reward info built from tauray's signals (the reward by the task's own
reward basis, as τ²'s evaluator gates it: ACTION included where the task declares
it; tauray's own verdict stays in the conversation row). What τ² has no field for travels in two places τ² leaves
free: the conversation row in ``reward_info.info["tauray"]``, and tauray's
``end_conversation`` harness call (no τ² tool) in the ``raw_data`` of the
message that made it, which carries τ²'s stop token instead. Sync events and
judge verdicts are not exported (docs/tau2.md).
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from tauray import __version__
from tauray.results.tables.layout import run_dirs
from tauray.results.tables.readers import actions_df, conversations_df, messages_df, plain_records, predicates_df
from tauray.results.tau2.format import (
    AGENT_STOP_TEXT,
    EXPORT_HARNESS,
    HARNESS_KEY,
    RETRIES_KEY,
    SIDE_TO_REQUESTOR,
    SIGNAL_TO_REWARD,
    STOP_KEYS,
    TAURAY_KEY,
    TERMINATION_TO_TAU2,
    ExportFile,
    ExportSummary,
    call_arguments,
    tau2_domain,
    tau2_environment_info,
    tau2_tasks,
)


def _by_conversation(frame: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in plain_records(frame.sort_values(["conversation_id", "seq"]) if "seq" in frame else frame):
        grouped[row["conversation_id"]].append(row)
    return grouped


def _held(side: str, call: dict[str, Any], cut: bool = False) -> bool:
    """Calls τ² must not replay: tauray's harness calls, calls whose arguments did not parse, and
    every call of a reply cut at the length limit (tauray answered them and ran nothing; τ² would
    run them)."""
    return cut or (side == "agent" and call["name"] in EXPORT_HARNESS) or call_arguments(call["arguments"]) is None


def _cut(m: dict[str, Any]) -> bool:
    """The message is a reply cut at the length limit (``stop``; ``finish_reason`` in runs older than it)."""
    return (m.get("stop") or m.get("finish_reason")) == "length"


def _iso(ts: Any) -> str:
    return pd.Timestamp(ts).isoformat()


def tau2_messages(messages: list[dict[str, Any]], tool_errors: list[bool]) -> list[dict[str, Any]]:
    """One conversation's message rows (seq order) as τ² messages; ``tool_errors``: the
    error flag of each tool call, in call order (the actions table's)."""
    out: list[dict[str, Any]] = []
    harness_home: dict[str, dict[str, Any]] = {}  # harness call id -> the record it is kept in
    tool_index = 0
    for m in messages:
        base = {"turn_idx": m["turn"], "timestamp": _iso(m["created_at"])}
        requestor = SIDE_TO_REQUESTOR[m["side"]]
        if m["role"] == "tool":
            error = tool_errors[tool_index] if tool_index < len(tool_errors) else str(m["content"]).startswith("Error")
            tool_index += 1
            home = harness_home.get(m["tool_call_id"])
            if home is not None:
                home["results"].append({"id": m["tool_call_id"], "content": m["content"], "error": error, **base})
                continue
            out.append({"role": "tool", "id": m["tool_call_id"], "content": m["content"], "requestor": requestor,
                        "error": error, **base})
            continue
        calls = json.loads(m["tool_calls"]) if m["tool_calls"] else None
        kept = [c for c in calls or () if not _held(m["side"], c, _cut(m))]
        message = {"role": m["role"], "content": m["content"], **base,
                   "tool_calls": [{"id": c["id"], "name": c["name"], "arguments": call_arguments(c["arguments"]),
                                   "requestor": requestor} for c in kept] or None}
        kept_raw = {RETRIES_KEY: int(m["retries"])} if m.get("retries") is not None else {}
        kept_raw |= {key: m[field] for field, key in STOP_KEYS.items() if m.get(field) is not None}
        if kept_raw:
            message["raw_data"] = kept_raw
        if calls is not None and len(kept) < len(calls):
            home = {"content": m["content"], "calls": calls, "results": []}
            message["raw_data"] = {**(message.get("raw_data") or {}), HARNESS_KEY: home}
            if any(c["name"] in EXPORT_HARNESS for c in calls) and m["side"] == "agent":
                message["content"] = f"{m['content']}\n{AGENT_STOP_TEXT}" if m["content"] else AGENT_STOP_TEXT
            for c in calls:
                if c not in kept:
                    harness_home[c["id"]] = home
        elif calls == []:
            message["tool_calls"] = []
        out.append(message)
    return out


def _basis_reward(conv: dict[str, Any], basis: list[str] | None, signals: dict[str, Any]) -> float:
    """The reward by the task's own reward basis, as τ²'s evaluator computes it (the product of
    each basis component), so a task that declares ACTION is gated on it even where tauray's
    verdict is not; a conversation without a verdict (infra) or a basis component tauray did not
    compute falls back to tauray's verdict."""
    if conv["success"] is None or pd.isna(conv["success"]) or not basis:
        return 1.0 if conv["success"] is True else 0.0
    values = [signals.get(b) for b in basis]
    if any(v is None or (isinstance(v, float) and pd.isna(v)) for v in values):
        return 1.0 if bool(conv["success"]) else 0.0
    return 1.0 if all(bool(v) for v in values) else 0.0


def _reward_info(conv: dict[str, Any], task: Any, predicates: list[dict[str, Any]],
                 matched: set[str]) -> dict[str, Any]:
    """τ²'s reward info from tauray's signals, the reward by the task's reward basis."""
    criteria = task.evaluation_criteria
    basis = [b.value for b in criteria.reward_basis] if criteria is not None else None
    signals = {reward: conv[f"signal_{signal.lower()}"] for signal, reward in SIGNAL_TO_REWARD.items()}
    assertions = list(criteria.env_assertions or ()) if criteria is not None else []
    info: dict[str, Any] = {
        "reward": _basis_reward(conv, basis, signals),
        "reward_basis": basis,
        "reward_breakdown": {b: float(signals[b]) for b in basis or () if signals.get(b) is not None} or None,
        "info": {TAURAY_KEY: {"conversation": {k: (_iso(v) if k == "started_at" else v) for k, v in conv.items()}}},
        "env_assertions": [
            {"env_assertion": assertions[p["index"]].model_dump(mode="json") if p["index"] < len(assertions) else {
                "env_type": SIDE_TO_REQUESTOR[p["side"]], "func_name": p["function"],
                "arguments": json.loads(p["arguments"]), "assert_value": p["expected"]},
             "met": p["met"], "reward": 1.0 if p["met"] else 0.0}
            for p in predicates],
    }
    if conv["db_state_match"] is not None:
        info["db_check"] = {"db_match": conv["db_state_match"], "db_reward": float(conv["db_state_match"])}
    if criteria is not None and criteria.actions:
        info["action_checks"] = [
            {"action": a.model_dump(mode="json"), "action_match": a.action_id in matched,
             "action_reward": float(a.action_id in matched)} for a in criteria.actions]
    if criteria is not None and criteria.communicate_info and conv["signal_communicate"] is not None:
        info["communicate_checks"] = [
            {"info": item, "met": conv["signal_communicate"], "justification": "tauray's COMMUNICATE signal"}
            for item in criteria.communicate_info]
    return info


def _simulation(conv: dict[str, Any], task: Any, messages: list[dict[str, Any]], actions: list[dict[str, Any]],
                predicates: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [a for a in actions if a["kind"] == "tool_call"]
    start = pd.Timestamp(conv["started_at"])
    return {
        "id": conv["unit_id"], "task_id": conv["upstream_id"], "timestamp": _iso(start),
        "start_time": _iso(start), "end_time": _iso(start + timedelta(seconds=conv["duration_s"])),
        "duration": conv["duration_s"], "termination_reason": TERMINATION_TO_TAU2[conv["termination_reason"]],
        "agent_cost": _cost(conv, "agent"), "user_cost": _cost(conv, "user"),
        "reward_info": _reward_info(conv, task, predicates, {a["matched_action_id"] for a in calls} - {None}),
        "messages": tau2_messages(messages, [bool(a["error"]) for a in calls]),
        "trial": conv["trial"], "seed": conv["seed"], "skipped": conv["error_kind"] == "infra",
    }


def _cost(conv: dict[str, Any], side: str) -> float | None:
    """A side's cost: a reference policy calls no model, so its cost is 0 (τ²'s leaderboard
    averages the agent's cost and refuses a run where it is unknown); a model's unknown cost
    stays unknown."""
    return 0.0 if conv[f"{side}_kind"] == "reference" else conv[f"{side}_cost_usd"]


def _run_settings(source: Path) -> dict[str, Any]:
    """max_steps, max_errors and seed of the sweep that made the run (its sweep.json), when there is one."""
    for d in run_dirs(source):
        f = d / "sweep.json"
        if f.is_file():
            sweep = json.loads(f.read_text()).get("sweep", {})
            return {k: sweep[k] for k in ("max_steps", "max_errors", "seed") if k in sweep}
    return {}


def _info(first: dict[str, Any], domain: str, trials: int, settings: dict[str, Any]) -> dict[str, Any]:
    def side(kind: str, model: str, what: str) -> dict[str, Any]:
        return {"implementation": f"tauray_{'reference' if kind == 'reference' else 'llm'}_{what}", "llm": model}

    return {
        "git_commit": f"tauray {__version__}", "num_trials": trials,
        "max_steps": settings.get("max_steps", 100), "max_errors": settings.get("max_errors", 10),
        "seed": settings.get("seed"),
        "agent_info": side(first["agent_kind"], first["agent_model"], "agent"),
        "user_info": side(first["user_kind"], first["user_model"], "user"),
        "environment_info": tau2_environment_info(domain).model_dump(mode="json"),
    }


def file_name(domain: str, agent_model: str, user_model: str) -> str:
    """τ²'s naming (domain, agent, user), without its timestamp, made safe for a file name."""
    def clean(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-") or "model"
    return f"{clean(domain)}_{clean(agent_model)}_{clean(user_model)}.json"


def export_tau2(source: Path | str, out: Path | str, cells: list[str] | None = None) -> ExportSummary:
    """Write ``source`` (a run or sweep folder; ``cells``: only those cell ids) as τ² results files under ``out``."""
    from tau2.data_model.simulation import Results

    started = time.monotonic()
    source, out = Path(source), Path(out)
    run_dirs(source)  # a clear error when source is neither a run nor a sweep folder
    conv = conversations_df(source, cell=cells)
    if conv.empty:
        raise ValueError(f"{source}: no conversations to export" + (f" in cells {', '.join(cells)}" if cells else ""))
    ids = list(conv["conversation_id"].astype(str))
    msgs = _by_conversation(messages_df(source, cell=cells))
    acts = _by_conversation(actions_df(source, cell=cells))
    preds = _by_conversation(predicates_df(source, cell=cells))
    settings = _run_settings(source)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in plain_records(conv.sort_values(["agent_model", "user_model", "scenario", "trial"])):
        groups[(row["agent_model"], row["user_model"], tau2_domain(row["domain"], row["policy_variant"]))].append(row)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for (agent, user, domain), rows in groups.items():
        tasks = tau2_tasks(domain)
        missing = sorted({r["upstream_id"] for r in rows} - tasks.keys())
        if missing:
            raise ValueError(f"{source}: τ² domain {domain} has no task {missing[0]!r} (installed τ² differs)")
        sims = [_simulation(r, tasks[r["upstream_id"]], msgs.get(r["conversation_id"], []),
                            acts.get(r["conversation_id"], []), preds.get(r["conversation_id"], [])) for r in rows]
        task_ids = list(dict.fromkeys(r["upstream_id"] for r in rows))
        results = Results.model_validate({
            "timestamp": _iso(min(r["started_at"] for r in rows)),
            "info": _info(rows[0], domain, max(r["trial"] for r in rows) + 1, settings),
            "tasks": [tasks[t].model_dump(mode="json") for t in task_ids], "simulations": sims})
        path = out / file_name(domain, agent, user)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(results.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(path)
        files.append(ExportFile(path=str(path), domain=domain, agent_model=agent, user_model=user,
                                simulations=len(sims), tasks=len(task_ids),
                                successes=sum(r["success"] is True for r in rows)))
    return ExportSummary(source=str(source), out=str(out), conversations=len(ids), files=files,
                         seconds=round(time.monotonic() - started, 3))
