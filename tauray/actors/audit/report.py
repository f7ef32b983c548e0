"""The report's audit section: its page (``audit.html``): success raw and with simulator-caused
failures set aside per arm, the simulators' faults per 100 conversations by class, the flagged
turns with links to their transcripts, and how far the findings can be trusted (the accuracy
measured on faulty customers, as shipped). Written only for a run with audit rows; it reads the
audit's analysis outputs (:mod:`.summary`), never the detectors. A ``ReportSection``
(``tauray.results.report.sections``), named by whoever composes the report.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from tauray.actors.audit.summary import adjusted_success, faults_per_100, ranking
from tauray.results.tables.readers import plain_records, sim_attributions_df, sim_findings_df

_PAGE = """{% extends "base.html.j2" %}
{% block body %}
<section id="adjusted"><h2>Success, raw and with simulator-caused failures set aside</h2>
<p>A failure is set aside when the audit attributes it to the user simulator (rule detectors; the fault's
correction replayed where it can be). 95% Wilson intervals.</p>
<table><thead><tr><th>agent</th><th>user</th><th>conversations</th><th>raw success</th>
<th>simulator-caused failures</th><th>adjusted success</th><th>mixed</th><th>undetermined</th></tr></thead><tbody>
{% for r in adjusted %}<tr><td>{{ r.agent_model }}</td><td>{{ r.user_model }}</td><td>{{ r.conversations }}</td>
{{ fig(r.raw) }}<td>{{ r.simulator_failures }}</td>{{ fig(r.adjusted) }}<td>{{ r.mixed }}</td>
<td>{{ r.undetermined }}</td></tr>
{% endfor %}</tbody></table></section>
<section id="ranking"><h2>How the agents' ranking moves</h2>
<p>Agents ranked by success over all their user models (1 = best), raw and with simulator-caused failures set
aside.</p>
<table><thead><tr><th>agent</th><th>conversations</th><th>raw success</th><th>raw rank</th><th>adjusted success</th>
<th>adjusted rank</th><th>move</th></tr></thead><tbody>
{% for r in ranking %}<tr data-agent="{{ r.agent_model }}" data-raw-rank="{{ r.raw_rank }}" data-adjusted-rank="{{ r.adjusted_rank }}">
<td>{{ r.agent_model }}</td><td>{{ r.conversations }}</td><td>{{ r.raw_text }}</td><td>{{ r.raw_rank }}</td>
<td>{{ r.adjusted_text }}</td><td>{{ r.adjusted_rank }}</td><td>{{ r.move }}</td></tr>
{% endfor %}</tbody></table></section>
<section id="faults"><h2>Simulator faults per 100 conversations</h2>
<table><thead><tr><th>user model</th><th>conversations</th>{% for c in classes %}<th>{{ c }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in faults %}<tr><td>{{ r.user_model }}</td><td>{{ r.conversations }}</td>
{% for f in r.cells %}{{ fig(f) }}{% endfor %}</tr>{% endfor %}</tbody></table></section>
<section id="flagged"><h2>Flagged turns</h2>
<table><thead><tr><th>scenario</th><th>turn</th><th>class</th><th>detector</th><th>flips verdict</th><th>evidence</th>
</tr></thead><tbody>{% for r in flagged %}<tr><td><a href="{{ r.href }}">{{ r.scenario }}</a></td><td>{{ r.turn }}</td>
<td>{{ r.fault_class }}</td><td>{{ r.detector }}@{{ r.detector_version }}</td><td>{{ yes_no(r.flips_verdict) }}</td>
<td>{{ r.evidence }}</td></tr>{% endfor %}</tbody></table>
{% if more %}<p>{{ more }} more findings are in the <code>sim_findings</code> table.</p>{% endif %}</section>
{% if accuracy %}<section id="accuracy"><h2>How far these findings can be trusted</h2>
<p>The audit's rules measured on simulated customers written apart from them (split
<code>{{ accuracy.split }}</code>, {{ accuracy.date }}, {{ accuracy.conversations }} conversations): recall of each
injected fault at its turn, 95% Wilson intervals. Faults the rules miss are not in the tables above, and a failure
with no finding is put on the agent.</p>
<table><thead><tr><th>injected fault</th><th>audit classes that find it</th><th>recall</th><th>injected</th></tr></thead>
<tbody>{% for r in accuracy.rows %}<tr data-fault="{{ r.fault }}"><td>{{ r.fault }}</td><td>{{ r.accepted }}</td>
{{ fig(r.recall) }}<td>{{ r.n }}</td></tr>{% endfor %}</tbody></table>
<p>False positives on a faithful customer: {% for a in accuracy.fp %}{{ a.agent }} agent {{ a.text }}{% if not loop.last %};
{% endif %}{% endfor %}. Failures put on the simulator when its fault was the only difference from a passing twin:
{{ accuracy.attribution }}. Measured with <code>{{ accuracy.command }}</code> (docs/audit.md).</p></section>{% endif %}
{% endblock %}
"""

ACCURACY_FILE = "audit_accuracy.json"


def audit_accuracy() -> dict[str, Any] | None:
    """The audit's measured accuracy as shipped (``tauray/data/audit_accuracy.json``, written by
    ``tests/audit_eval/measure.py --accuracy`` from a holdout run), for the page; None without it."""
    path = resources.files("tauray.data") / ACCURACY_FILE
    if not path.is_file():
        return None
    rec = json.loads(path.read_text(encoding="utf-8"))

    def text(r: dict[str, Any]) -> str:
        return f"{r['k']}/{r['n']} = {r['k'] / r['n']:.3f} [{r['low']:.3f}, {r['high']:.3f}]" if r["n"] else "–"

    rows = [{"fault": fault, "accepted": ", ".join(r["accepted"]), "n": r["n"],
             "recall": r["k"] / r["n"] if r["n"] else math.nan, "low": r["low"], "high": r["high"]}
            for fault, r in rec["recall"].items()]
    return {"split": rec["split"], "date": rec["date"], "conversations": rec["conversations"], "rows": rows,
            "command": rec["command"], "attribution": text(rec["attribution_simulator"]),
            "fp": [{"agent": agent, "text": text(r)} for agent, r in rec["false_positives"].items()]}


def _rate(kit: Any, value: Any, low: Any, high: Any, **attrs: Any) -> Any:
    if value is None or math.isnan(float(value)):
        return kit.fig(None, "–", **attrs)
    return kit.fig(round(float(value), 4), f"{value:.3f} [{low:.3f}, {high:.3f}]", **attrs)


def audit_context(src: Path | str, kit: Any, max_flagged: int = 500) -> dict[str, Any] | None:
    """The audit page's figures (shown with ``kit``'s figures and links); None when the run has no audit."""
    if sim_attributions_df(src, columns=["audit_id"]).empty:
        return None
    adjusted = []
    for r in plain_records(adjusted_success(src)):
        arm = f"{r['agent_model']} | {r['user_model']}"
        adjusted.append({**r, "raw": _rate(kit, r["raw_rate"], r["raw_low"], r["raw_high"], metric="raw_success",
                                           arm=arm),
                         "adjusted": _rate(kit, r["adjusted_rate"], r["adjusted_low"], r["adjusted_high"],
                                           metric="adjusted_success", arm=arm)})
    per100 = faults_per_100(src)
    classes = [c for c in per100.columns if c not in ("user_model", "conversations")]
    faults = [{"user_model": r["user_model"], "conversations": r["conversations"],
               "cells": [kit.fig(r[c], f"{r[c]:.1f}", metric="faults_per_100", user=r["user_model"], fault_class=c)
                         for c in classes]} for r in plain_records(per100)]
    findings = sim_findings_df(src).sort_values(["scenario", "conversation_id", "message_seq"])
    flagged = plain_records(findings.head(max_flagged))
    for r in flagged:
        seq = r.get("message_seq")  # straight to the flagged message on the transcript page
        r["href"] = kit.transcript_href(r["run_id"], r["conversation_id"]) + ("" if seq is None or seq != seq
                                                                         else f"#seq-{int(seq)}")
    ranks = []
    for r in plain_records(ranking(src)):
        change = r["rank_change"]
        move = "n/a" if change is None or change != change else "=" if change == 0 else f"{int(change):+d}"
        ranks.append({**r, "move": move, "raw_text": kit.fmt_rate(r["raw_rate"]),
                      "adjusted_text": kit.fmt_rate(r["adjusted_rate"])})
    return {"adjusted": adjusted, "ranking": ranks, "classes": classes, "faults": faults, "flagged": flagged,
            "more": max(0, len(findings) - max_flagged), "accuracy": _shown(audit_accuracy(), kit)}


def _shown(accuracy: dict[str, Any] | None, kit: Any) -> dict[str, Any] | None:
    """The accuracy record with each recall as a figure of the page."""
    if accuracy is None:
        return None
    rows = [{**r, "recall": _rate(kit, r["recall"], r["low"], r["high"], metric="recall", fault=r["fault"])}
            for r in accuracy["rows"]]
    return {**accuracy, "rows": rows}


class AuditSection:
    """The audit in the report: its own page, for a run with audit rows."""

    name = "audit"

    def index(self, src: Path, conv: pd.DataFrame, kit: Any) -> str:
        return ""

    def conversations(self, src: Path, kit: Any) -> Any:
        return lambda row, page_dir: ""  # findings show on their messages (the transcript reads sim_findings)

    def pages(self, src: Path, kit: Any) -> list[str]:
        context = audit_context(src, kit)
        if context is None:
            return []
        kit.write_page("audit.html", _PAGE, "User-simulator audit", **context)
        return ["audit.html"]


__all__ = ["AuditSection", "audit_accuracy", "audit_context"]
