"""The report's conversation pages: one page per conversation under
``transcripts/``, with its messages, actions, predicates, judge verdicts and the
state difference rebuilt by replay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment

from tauray.results.report.sections import PerConversation
from tauray.results.report.values import (
    arm_anchor,
    fmt_rate,
    missing,
    transcript_href,
)
from tauray.results.stats import analysis
from tauray.results.tables import readers
from tauray.results.tables.readers import plain_records


def _pretty(text: Any) -> str | None:
    if missing(text):
        return None
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(text)


def _attribution(c: dict[str, Any]) -> str:
    who = c.get("attribution")
    if missing(who):
        return "not audited"
    decisive = c.get("decisive_finding")
    return str(who) + ("" if missing(decisive) else f' ({decisive} at turn {c.get("decisive_turn")})')


def page_context(c: dict[str, Any], arm: str, messages: list[dict[str, Any]], actions: list[dict[str, Any]],
                  predicates: list[dict[str, Any]], judges: list[dict[str, Any]], nl: list[dict[str, Any]],
                  dd: analysis.DbDiff, findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    err = f'{c["error_kind"]}: {c.get("error_message") or ""}' if not missing(c.get("error_kind")) else ""
    info = [("scenario", c["scenario"]), ("arm", arm), ("run", c["run_id"]), ("unit / attempt",
            f'{c["unit_id"]} / {c["attempt"]}'), ("trial / seed", f'{c["trial"]} / {c["seed"]}'),
            ("policy variant", c["policy_variant"]), ("termination", c["termination_reason"]),
            ("verdict", c["success_reason"]), ("turns", c["turns"]), ("error", err),
            ("who failed (audit)", _attribution(c))]
    preds = [{**p, "met": bool(p["met"])} for p in predicates]
    sides = [{"name": side, "rows": plain_records(dd.rows[dd.rows["side"] == side])} if len(dd.rows) else
             {"name": side, "rows": []} for side in ("agent", "user")]
    note = dd.note or ("Rebuilt by replaying the recorded tool calls (each write followed by sync) and the "
                       "reference actions on fresh state; " + ("the rebuilt DBs reproduce the recorded hashes."
                                                             if dd.reproduced else ""))
    acts = [{**a, "arguments": _pretty(a["arguments"]),
             "result": a["result"] if a["kind"] == "sync" else _pretty(a["result"]),
             "sync_agent": _pretty(a["sync_agent"]), "sync_user": _pretty(a["sync_user"])} for a in actions]
    flagged: dict[int, list[dict[str, Any]]] = {}
    for f in findings or []:  # an audit finding is shown on the message that shows it
        if not missing(f.get("message_seq")):
            flagged.setdefault(int(f["message_seq"]), []).append(f)
    msgs = []
    for m in messages:
        calls = json.loads(m["tool_calls"]) if isinstance(m["tool_calls"], str) else []
        msgs.append({**m, "who": {"assistant": "agent", "user": "customer"}.get(m["role"], f"tool result ({m['side']})"),
                     "content": _pretty(m["content"]) if m["role"] == "tool" else m["content"],
                     "calls": [{"name": k["name"], "arguments": str(k["arguments"])} for k in calls],
                     "findings": flagged.get(int(m["seq"]), [])})
    return {"c": c, "arm": arm, "anchor": arm_anchor(arm), "info": info, "predicates": preds,
            "failed_predicates": [f'{p["side"]}:{p["function"]}' for p in preds if not p["met"]],
            "db": {"note": note, "bad": "" if dd.note or dd.reproduced else
                   "the rebuilt DBs do not reproduce the recorded hashes.", "sides": sides},
            "actions": acts, "messages": msgs, "judges": [{**j, "agreement": fmt_rate(j["agreement"])} for j in judges],
            "nl": nl}


def _findings(src: Path) -> pd.DataFrame:
    """The newest audit's findings, keyed like the other detail tables (by unit)."""
    found = readers.sim_findings_df(src)
    return found.assign(unit_id=found["unit_id"].astype(str)) if len(found) else found


def write_transcripts(src: Path, out_dir: Path, conv: pd.DataFrame, jv: pd.DataFrame, env: Environment,
                       progress: Callable[[int], None] | None, sections: Sequence[PerConversation] = ()) -> int:
    """One page per conversation; ``sections``: each feature's part of the page (:mod:`.sections`)."""
    def by_conv(df: pd.DataFrame, order: str | None) -> dict[tuple[str, str], list[dict[str, Any]]]:
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in plain_records(df.sort_values(order) if order else df):  # one conversion per table, not per page
            grouped.setdefault((str(r["run_id"]), str(r["unit_id"])), []).append(r)
        return grouped

    frames = {"messages": (readers.messages_df(src), "seq"), "actions": (readers.actions_df(src), "seq"),
              "predicates": (readers.predicates_df(src), "index"), "judge": (jv, "sample_index"),
              "nl": (readers.nl_verdicts_df(src), "assertion_index"), "findings": (_findings(src), "message_seq")}
    grouped = {name: by_conv(df, order) for name, (df, order) in frames.items()}
    columns = {name: list(df.columns) for name, (df, _) in frames.items()}
    columns_only = {name: df.head(0) for name, (df, _) in frames.items()}
    template = env.get_template("transcript.html.j2")
    n = 0
    for row in plain_records(conv):
        key = (str(row["run_id"]), str(row["unit_id"]))
        rows = {name: g.get(key, []) for name, g in grouped.items()}
        recorded, gold = analysis.recorded_hashes(row), analysis.gold_hashes(row)
        actions = (columns_only["actions"] if analysis.matches_gold(recorded, gold)  # no replay: no frame needed
                   else pd.DataFrame(rows["actions"], columns=columns["actions"]))
        dd = analysis.db_diff(row["scenario"], actions, recorded, gold)
        context = page_context(row, row["arm"], rows["messages"], rows["actions"], rows["predicates"],
                                rows["judge"], rows["nl"], dd, rows["findings"])
        target = out_dir / transcript_href(row["run_id"], row["conversation_id"])
        target.parent.mkdir(parents=True, exist_ok=True)
        context["sections"] = [html for section in sections if (html := section(row, target.parent))]
        target.write_text(template.render(title=f"Transcript · {row['scenario']} · trial {row['trial']}",
                                          root="../../", **context), encoding="utf-8")
        n += 1
        if progress:
            progress(1)
    return n
