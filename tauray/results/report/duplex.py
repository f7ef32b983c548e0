"""The report's duplex view (docs/duplex.md, issue 49): on each duplex conversation's page its
timeline (:mod:`.timeline`) over the kept stereo recording, and its interaction panel as stored;
on the index page the panel of each duplex cell and half against duplex on the same tasks and
seeds.

Read from the tables alone: the ``segments`` rows, the conversation rows' ``duplex_*`` columns and
the recording they name (``recording_sha256``: ``audio/<hash[:2]>/<hash>.flac`` in the run folder,
linked by a path relative to the page, never copied). The duplex engine owns the metrics, so a
cell's panel is what its ``pool`` (the engine's, handed in by whoever composes the report:
``tauray.pipeline.report``) makes of the stored rows, and half-vs-duplex retention is the voice
feature's paired retention, handed in the same way: the report computes neither itself. What it
adds is presentation: each value's count, a mark on a value over fewer than :data:`MIN_EVENTS`
events, and a task-clustered interval for each rate (:func:`tauray.results.stats.intervals.rate_interval`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from tauray.results.report.sections import Kit, PerConversation
from tauray.results.report.timeline import timeline_svg
from tauray.results.report.values import dv, missing
from tauray.results.stats.intervals import rate_interval
from tauray.results.stats.outcomes import EXCLUDED, outcomes
from tauray.results.tables import readers
from tauray.results.tables.layout import LABELS_SUFFIX, audio_path, child_run_dirs
from tauray.results.tables.readers import plain_records

PREFIX = "duplex_"
"""The conversation columns' prefix of the interaction panel (``InteractionMetrics.columns``)."""
MIN_EVENTS = 10
"""Below this many events a value is shown marked (τ-Voice hides it; the engine's ``MIN_EVENTS``)."""
PANEL: tuple[tuple[str, str, str, bool], ...] = (
    ("response_latency_s", "L_R", "response latency", False),
    ("yield_latency_s", "L_Y", "yield latency", False),
    ("response_rate", "R_R", "response rate", True),
    ("yield_rate", "R_Y", "yield rate", True),
    ("agent_interruption_rate", "I_A", "agent interruption rate", True),
    ("selectivity_backchannel", "S_BC", "selectivity: backchannels", True),
    ("selectivity_vocal_tic", "S_VT", "selectivity: vocal tics", True),
    ("selectivity_non_directed", "S_ND", "selectivity: non-directed speech", True),
)
"""The panel in τ-Voice's order: column name (after the prefix), symbol, what it is, whether a rate
(which gets an interval; a latency is a mean of seconds)."""
DUPLEX = "duplex"

PoolColumns = Callable[[Sequence[Mapping[str, Any]]], Mapping[str, Any]]
"""Conversation rows -> the pooled panel as the same flat columns (value and ``_n`` count)."""
Retention = Callable[[np.ndarray, np.ndarray], tuple[float, float, float]]
"""(duplex outcomes, half outcomes) per paired task, 1.0/0.0 -> (retention, lo, hi)."""


def count_column(name: str) -> str:
    """The column holding a metric's count (``response_latency_s`` -> ``response_latency_n``)."""
    return f"{PREFIX}{name.removesuffix('_s')}_n"


def _duplex_rows(conv: pd.DataFrame) -> pd.DataFrame:
    if "turn_taking" not in conv:
        return conv.iloc[0:0]
    return conv[conv["turn_taking"].astype(str) == DUPLEX]


def _cell(frame: pd.DataFrame) -> pd.Series:
    cells = frame["cell_id"].astype(object) if "cell_id" in frame else pd.Series(None, index=frame.index)
    return cells.where(cells.notna(), frame["arm"].astype(object)).astype(str)


def _fmt(value: Any, unit: str = "", digits: int = 3) -> str:
    return "–" if missing(value) else f"{float(value):.{digits}f}{unit}"


def _figure(scope: str, name: str, value: Any, n: Any, is_rate: bool, lo: Any = None, hi: Any = None,
            **attrs: Any) -> dict[str, Any]:
    """One panel value as the templates show it: value, count, interval and the small-count mark."""
    n = 0 if missing(n) else int(n)
    few = n < MIN_EVENTS
    unit = "" if is_rate else " s"
    data = [("scope", scope), *[(k.replace("_", "-"), str(v)) for k, v in attrs.items()],
            ("metric", PREFIX + name), ("value", dv(value)), ("n", str(n)), ("few", str(few).lower())]
    if is_rate and scope == "cell":
        data += [("lo", dv(lo)), ("hi", dv(hi))]
    interval = f"[{_fmt(lo)}, {_fmt(hi)}]" if is_rate and scope == "cell" else ""
    return {"attrs": data, "text": _fmt(value, unit, 3 if is_rate else 2), "interval": interval, "n": n, "few": few}


def _rate_interval(g: pd.DataFrame, name: str) -> tuple[float, float]:
    """Task-clustered interval of a pooled rate: per scenario, the events and the hits the stored
    rows hold (a rate's hits are value × count, as the engine's pool reads them; I_A's numerator is
    stored as ``agent_interruptions``)."""
    n = g[count_column(name)].astype(float)
    if name == "agent_interruption_rate":
        hits = g[f"{PREFIX}agent_interruptions"].astype(float)
    else:
        hits = (g[PREFIX + name].astype(float).fillna(0.0) * n).round()
    per = pd.DataFrame({"task": g["scenario"].astype(str), "n": n, "c": hits}).groupby("task")[["n", "c"]].sum()
    return rate_interval(per["n"].to_numpy(), per["c"].to_numpy())


def panel_rows(conv: pd.DataFrame, pool: PoolColumns) -> list[dict[str, Any]]:
    """One row per duplex cell: its conversations with a panel (an errored call may have none), and
    each metric of the pooled panel with its count and, for a rate, its interval."""
    duplex = _duplex_rows(conv)
    if duplex.empty:
        return []
    duplex = duplex.assign(_cell=_cell(duplex))
    rows = []
    for cell, g in duplex.groupby("_cell", sort=False):
        scored = g[g[count_column("response_rate")].notna()] if count_column("response_rate") in g else g.iloc[0:0]
        pooled = pool(plain_records(scored)) if len(scored) else {}
        figs = []
        for name, _, _, is_rate in PANEL:
            lo, hi = _rate_interval(scored, name) if is_rate and len(scored) else (math.nan, math.nan)
            figs.append(_figure("cell", name, pooled.get(PREFIX + name), pooled.get(count_column(name)), is_rate,
                                lo, hi, cell=cell))
        first = g.iloc[0]
        rows.append({"cell": cell, "arm": str(first["arm"]), "profile": str(first.get("speech_profile", "")),
                     "conversations": len(g), "scored": len(scored), "figs": figs})
    return rows


def _ok(frame: pd.DataFrame) -> pd.Series:
    return (frame["success"] == True).astype(float)  # noqa: E712 - null (not scored) is not a success


def retention_rows(conv: pd.DataFrame, retention: Retention) -> list[dict[str, Any]]:
    """Per duplex cell with a half-duplex twin (the same text twin, speech profile and engines): the
    tasks both ran on the same seed, neither an infra error, and the retention duplex ÷ half over
    them with its interval (``retention``: the voice feature's paired retention, tasks in
    (scenario, trial) order)."""
    duplex = _duplex_rows(conv)
    if duplex.empty or "text_cell_id" not in conv:
        return []
    counted = conv[~outcomes(conv).isin(EXCLUDED)]
    counted = counted.assign(_cell=_cell(counted), _ok=_ok(counted),
                             _engines=counted["speech_engines"].astype(object).fillna("").astype(str)
                             if "speech_engines" in counted else "")
    half = counted[counted["turn_taking"].astype(str) == "half"]
    task = ["scenario", "trial", "seed"]
    rows = []
    for cell, g in counted[counted["turn_taking"].astype(str) == DUPLEX].groupby("_cell", sort=False):
        first = g.iloc[0]
        twin = half[(half["text_cell_id"].astype(str) == str(first["text_cell_id"]))
                    & (half["speech_profile"].astype(str) == str(first["speech_profile"]))
                    & (half["_engines"] == first["_engines"])]
        if twin.empty:
            continue
        pairs = (g.drop_duplicates(task)[[*task, "_ok"]]
                 .merge(twin.drop_duplicates(task)[[*task, "_ok"]], on=task, suffixes=("_d", "_h"))
                 .assign(scenario=lambda d: d["scenario"].astype(str)).sort_values(["scenario", "trial"]))
        d, h = pairs["_ok_d"].to_numpy(dtype=float), pairs["_ok_h"].to_numpy(dtype=float)
        point, lo, hi = retention(d, h) if len(pairs) else (math.nan, math.nan, math.nan)
        attrs = [("scope", "cell"), ("cell", cell), ("metric", f"{PREFIX}retention"), ("value", dv(point)),
                 ("lo", dv(lo)), ("hi", dv(hi)), ("tasks", str(len(pairs))),
                 ("half-successes", str(int(h.sum()))), ("duplex-successes", str(int(d.sum())))]
        rows.append({"cell": cell, "arm": str(first["arm"]), "half_cell": ", ".join(sorted(map(str, set(_cell(twin))))),
                     "profile": str(first["speech_profile"]), "tasks": len(pairs), "half": int(h.sum()),
                     "duplex": int(d.sum()), "both": int((d * h).sum()), "half_only": int(((1 - d) * h).sum()),
                     "duplex_only": int((d * (1 - h)).sum()), "neither": int(((1 - d) * (1 - h)).sum()),
                     "attrs": attrs, "text": f"{_fmt(point)} [{_fmt(lo)}, {_fmt(hi)}]"})
    return rows


INDEX = """{% macro cell(f) %}<td class="dx{{ ' few' if f.few else '' }}"{% for k, v in f.attrs %} data-{{ k }}="{{ v }}"{% endfor %}>{{ f.text }}{% if f.interval %}<br><small>{{ f.interval }}</small>{% endif %}<br><small>n={{ f.n }}</small>{% if f.few %} <span class="few-mark" title="fewer than {{ min_events }} events">n&lt;{{ min_events }}</span>{% endif %}</td>{% endmacro -%}
<section id="duplex"><h2>Duplex: interaction panel per cell</h2>
<table class="figures duplex-panel"><thead><tr><th>cell (agent | user)</th><th>profile</th><th>calls with a panel</th>{% for _, symbol, label, _ in panel %}<th title="{{ label }}">{{ symbol }}<br><small>{{ label }}</small></th>{% endfor %}</tr></thead><tbody>
{% for r in rows %}<tr data-cell="{{ r.cell }}"><td>{{ r.arm }}<br><code>{{ r.cell }}</code></td><td>{{ r.profile }}</td><td>{{ r.scored }} / {{ r.conversations }}</td>{% for f in r.figs %}{{ cell(f) }}{% endfor %}</tr>
{% endfor %}</tbody></table>
<p class="note">τ-Voice's interaction metrics (docs/duplex-metrics.md) as the duplex engine stored them per call, pooled per cell as its <code>pool</code> does (counts add; each value is its numerator over its count), so a figure here equals the engine's. Under each value: for a rate, a {{ pct }} interval that resamples scenarios whole (events of one call are not independent; – when all its events come from one scenario); the count of events behind it. A value over fewer than {{ min_events }} events is greyed and marked n&lt;{{ min_events }} (τ-Voice's leaderboard hides it). I_A counts agent onsets over a caller turn per response-eligible turn and may exceed 1.</p>
{% if retention %}<h3 id="duplex-retention">Half vs duplex on the same tasks and seeds</h3>
<table class="figures"><thead><tr><th>duplex cell</th><th>half cell</th><th>profile</th><th>paired tasks</th><th>half successes</th><th>duplex successes</th><th>both</th><th>half only</th><th>duplex only</th><th>neither</th><th>retention (duplex ÷ half) [interval]</th></tr></thead><tbody>
{% for r in retention %}<tr><td>{{ r.arm }}<br><code>{{ r.cell }}</code></td><td><code>{{ r.half_cell }}</code></td><td>{{ r.profile }}</td><td>{{ r.tasks }}</td><td>{{ r.half }}</td><td>{{ r.duplex }}</td><td>{{ r.both }}</td><td>{{ r.half_only }}</td><td>{{ r.duplex_only }}</td><td>{{ r.neither }}</td><td{% for k, v in r.attrs %} data-{{ k }}="{{ v }}"{% endfor %}>{{ r.text }}</td></tr>
{% endfor %}</tbody></table>
<p class="note">Tasks (scenario and trial) that the duplex cell and its half-duplex twin both ran on the same seed, infra errors left out; retention is duplex successes ÷ half successes on them, with the voice report's paired bootstrap over tasks (as voice against text, docs/voice.md).</p>{% endif %}
</section>"""

CONVERSATION = """<section id="duplex"><h2>Duplex timeline</h2>
{% if audio %}<p class="tl-audio"><audio id="{{ audio_id }}" controls preload="metadata" src="{{ audio }}" data-recording="{{ recording }}"></audio>
<span class="note">The call's stereo recording (caller left, agent right, as each side's line delivered it). Click a bar, a mark or any point of the timeline to play from there.{% if labels %} <a href="{{ labels }}" download>Audacity label track</a> (File → Import → Labels over the recording).{% endif %}</span></p>
{% else %}<p class="note">No player: the recording {% if recording %}<code>{{ recording }}</code> {% endif %}was not kept (the sweep's keep_audio kept no audio of this call).</p>{% endif %}
<div class="tl-scroll">{{ svg }}</div>
<p class="note">Two lanes on the simulated clock, one bar per row of the segments table (a thin bar: a backchannel, vocal tic or out-of-turn speech, each also marked above its lane). ▼ a turn begun over the other side (barge-in); ■ where a speaker was cut short (the agent told to stop, the caller yielding), its audio running on, paler, to where it stopped; red bands: both sides speaking. {{ rows | length }} segments, {{ "%.1f" | format(duration) }} s.</p>
<h3>This call's interaction metrics (as stored; greyed: fewer than {{ min_events }} events)</h3>
<table class="figures"><thead><tr>{% for _, symbol, label, _ in panel %}<th title="{{ label }}">{{ symbol }}</th>{% endfor %}</tr></thead><tbody><tr>
{% for f in figs %}<td class="dx{{ ' few' if f.few else '' }}"{% for k, v in f.attrs %} data-{{ k }}="{{ v }}"{% endfor %}>{{ f.text }} <small>n={{ f.n }}</small></td>{% endfor %}</tr></tbody></table>
<details><summary>segments</summary><table class="segments"><thead><tr><th></th><th>#</th><th>side</th><th>kind</th><th>start</th><th>end</th><th>cut at</th><th>overlap</th><th>over / interrupted</th><th>words said / cut</th><th>said</th><th>heard</th></tr></thead><tbody>
{% for s in rows %}<tr class="{{ s.side }}" data-segment-row="{{ s.index }}"><td><button type="button" data-seek="{{ s.start_s }}" data-timeline="{{ svg_id }}">▶</button></td><td>{{ s.index }}</td><td>{{ 'caller' if s.side == 'user' else 'agent' }}</td><td>{{ s.kind }}</td><td>{{ "%.2f" | format(s.start_s) }}</td><td>{{ "%.2f" | format(s.end_s) }}</td><td>{{ "%.2f" | format(s.cut_at_s) if s.cut_at_s is not none else "" }}</td><td>{{ "%.2f" | format(s.overlap_s) }}</td><td>{{ "over" if s.started_over_other else "" }}{{ " / " if s.started_over_other and s.interrupted else "" }}{{ "interrupted" if s.interrupted else "" }}</td><td>{{ s.words_spoken }} / {{ s.words_cut }}</td><td>{{ s.text }}</td><td>{{ s.heard_text }}</td></tr>
{% endfor %}</tbody></table></details></section>"""


def duplex_fragment(kit: Kit, row: Mapping[str, Any], segments: Sequence[Mapping[str, Any]], *,
                    audio_href: str | None, labels_href: str | None) -> str:
    """A duplex conversation's part of its page: the recording, the timeline of its ``segments``
    rows, its stored panel and the rows themselves."""
    svg_id, audio_id = "duplex-timeline", "duplex-audio"
    rows = sorted(segments, key=lambda s: int(s["index"]))
    duration = row.get("duplex_duration_s")
    svg = timeline_svg(rows, None if missing(duration) else float(duration), svg_id=svg_id,
                       audio_id=audio_id if audio_href else None)
    figs = [_figure("conversation", name, row.get(PREFIX + name), row.get(count_column(name)), is_rate)
            for name, _, _, is_rate in PANEL]
    recording = None if missing(row.get("recording_sha256")) else str(row["recording_sha256"])
    return kit.render(CONVERSATION, svg=Markup(svg), svg_id=svg_id, audio_id=audio_id, audio=audio_href,
                      labels=labels_href, recording=recording, rows=rows, panel=PANEL, figs=figs, min_events=MIN_EVENTS,
                      duration=max([float(duration or 0.0), *[float(s["end_s"]) for s in rows]]))


def _href(runs: list[Path], run_id: str, ref: str, page_dir: Path) -> str | None:
    """The page-relative path of a run's stored file (None: not kept, or not in this folder)."""
    for run in sorted(runs, key=lambda r: r.name != run_id):  # the row's own run first
        path = audio_path(run, ref)
        if path.is_file():
            return Path(os.path.relpath(path, page_dir)).as_posix()
    return None


class DuplexSection:
    """Duplex in the report: nothing for a run without duplex cells. ``pool``: the engine's pooling
    of stored panels, as flat columns; ``retention``: the voice feature's paired retention."""

    name = DUPLEX

    def __init__(self, pool: PoolColumns, retention: Retention) -> None:
        self.pool, self.retention = pool, retention

    def index(self, src: Path, conv: pd.DataFrame, kit: Kit) -> str:
        rows = panel_rows(conv, self.pool)
        if not rows:
            return ""
        return kit.render(INDEX, rows=rows, retention=retention_rows(conv, self.retention), panel=PANEL,
                          min_events=MIN_EVENTS, pct="95%")

    def conversations(self, src: Path, kit: Kit) -> PerConversation:
        seg = readers.segments_df(src)
        grouped: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        for r in plain_records(seg):
            grouped.setdefault((str(r["run_id"]), str(r["unit_id"]), int(r["attempt"])), []).append(r)
        runs = child_run_dirs(src)

        def page(row: dict[str, Any], page_dir: Path) -> str:
            if str(row.get("turn_taking")) != DUPLEX:
                return ""
            said = grouped.get((str(row["run_id"]), str(row["unit_id"]), int(row["attempt"])), [])
            if not said:
                return ""
            run_id = str(row["run_id"])
            recording, labels = row.get("recording_sha256"), row.get("labels_sha256")
            return duplex_fragment(
                kit, row, said,
                audio_href=None if missing(recording) else _href(runs, run_id, str(recording), page_dir),
                labels_href=None if missing(labels) else _href(runs, run_id, f"{labels}{LABELS_SUFFIX}", page_dir))

        return page

    def pages(self, src: Path, kit: Kit) -> list[str]:
        return []


__all__ = ["MIN_EVENTS", "PANEL", "PREFIX", "DuplexSection", "count_column", "duplex_fragment", "panel_rows",
           "retention_rows"]
