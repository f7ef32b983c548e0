"""Static HTML report of a run or sweep folder.

One folder, opened offline: ``index.html`` (leaderboard, pass^k, paired
comparisons, manual-vs-workflow A/B, breakdowns, judge agreement, cost),
``conversations.html`` (every conversation by arm, linked), one page per
conversation under ``transcripts/`` and the shared stylesheet and script under
``assets/`` (written once, not inlined into thousands of pages). Pages are
rendered by jinja2 templates (``report_assets/templates``) with autoescaping,
so no table value can inject markup. Charts are inline SVG drawn from the
metric functions' output; a Content-Security-Policy forbids any fetch. Every
figure sits in an element with ``data-metric``/``data-value`` (and the arm,
pair or judge it belongs to), so a test can read the rendered page and compare
it with the metric functions (design rule 8: the report reads only analysis
outputs).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field
from tauray.results import analysis, metrics, readers
from tauray.results.report_assets import CSS, RENDER_CHECK_JS, svg_bars, svg_forest, svg_heatmap, svg_lines

DIMENSIONS = ["domain", "issue_type", "persona", "policy_variant", "termination_reason"]
MAX_PAIRS = 15
CSP = ("default-src 'none'; style-src 'self' 'unsafe-inline' file:; script-src 'self' file:; img-src data:")
_TEMPLATES = Path(__file__).resolve().parent / "report_assets" / "templates"


class ReportSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    out: str = Field(description="Report folder.")
    index: str = Field(description="Path of index.html.")
    conversations: int = Field(description="Conversations in the report.")
    transcripts: int = Field(description="Transcript pages written.")
    arms: list[str] = Field(description="Arms (agent model | user model) on the leaderboard.")
    judge_configs: int = Field(description="Judge configs with verdicts.")


# --- values and names ---------------------------------------------------------------------


def missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def dv(x: Any) -> str:
    """A figure as the data-value text: full precision, 'NaN' when missing."""
    return "NaN" if missing(x) else f"{float(x):.12g}"


def fmt_rate(x: Any) -> str:
    return "–" if missing(x) else f"{float(x):.3f}"


def fmt_num(x: Any, digits: int = 0) -> str:
    return "–" if missing(x) else f"{float(x):,.{digits}f}"


@dataclass(frozen=True)
class Fig:
    """One figure: its exact value, its shown text and the data-* attributes naming it."""

    value: str
    text: str
    attrs: list[tuple[str, str]] = field(default_factory=list)


def fig(value: Any, text: str | None = None, **attrs: Any) -> Fig:
    return Fig(dv(value), text if text is not None else fmt_rate(value),
               [(k.replace("_", "-"), str(v)) for k, v in attrs.items()])


def count(value: Any, **attrs: Any) -> Fig:
    return fig(value, fmt_num(value), **attrs)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "x"


def _name(text: str) -> str:
    # readable and collision-free: two ids with the same slug differ in the hash
    return f"{slug(text)}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def transcript_href(run_id: str, conversation_id: str) -> str:
    """Path of a conversation's page inside the report (unique per run and conversation)."""
    return f"transcripts/{_name(str(run_id))}/{_name(str(conversation_id))}.html"


def arm_anchor(arm: str) -> str:
    return f"arm-{_name(arm)}"


def pairs_to_compare(arms: list[str]) -> list[tuple[str, str]]:
    """Every pair when few arms, else each arm against the leader (arms best first)."""
    pairs = list(itertools.combinations(arms, 2))
    return pairs if len(pairs) <= MAX_PAIRS else [(arms[0], b) for b in arms[1:]]


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=False, lstrip_blocks=False)
    env.globals["csp"] = Markup(CSP)  # a constant of ours, quotes kept as written
    return env


def _n(tasks: int, conversations: int) -> str:
    return f"n = {tasks:,} tasks, {conversations:,} conversations"


# --- index sections -----------------------------------------------------------------------------


def _leaderboard(lb: pd.DataFrame, k_max: int, conf: float) -> dict[str, Any]:
    pct = f"{conf:.0%}"
    rows = []
    for _, r in lb.iterrows():
        a = r["arm"]
        figs = [count(r["conversations"], arm=a, metric="conversations"),
                count(r["infra_errors"], arm=a, metric="infra_errors"),
                fig(r["infra_share"], arm=a, metric="infra_share"),
                count(r["counted"], arm=a, metric="counted"), count(r["successes"], arm=a, metric="successes"),
                fig(r["success_rate"], arm=a, metric="success_rate"), fig(r["ci_lo"], arm=a, metric="ci_lo"),
                fig(r["ci_hi"], arm=a, metric="ci_hi"), count(r["tasks"], arm=a, metric="tasks"),
                *[fig(r[f"pass_hat_{k}"], arm=a, metric=f"pass_hat_{k}") for k in range(1, k_max + 1)],
                count(r["k_cap"], arm=a, metric="k_cap"),
                count(r["model_errors"], arm=a, metric="model_errors"),
                count(r["internal_errors"], arm=a, metric="internal_errors"),
                count(r["unscored"], arm=a, metric="unscored")]
        rows.append({"arm": a, "anchor": arm_anchor(a), "figs": figs})
    headers = ["arm (agent | user)", "conversations", "infra errors", "infra share", "counted", "successes",
               "success rate", f"{pct} lo", "hi", "tasks", *[f"pass^{k}" for k in range(1, k_max + 1)], "k cap",
               "model errors", "internal errors", "unscored"]
    n = _n(int(lb["tasks"].max()) if len(lb) else 0, int(lb["counted"].sum()))
    chart = svg_bars([(r["arm"], r["success_rate"], r["ci_lo"], r["ci_hi"]) for _, r in lb.iterrows()],
                     title=f"success rate, task-clustered {pct} interval ({n}, infra errors left out)")
    return {"headers": headers, "rows": rows, "chart": Markup(chart)}


def _pass_k(curve: pd.DataFrame) -> dict[str, Any]:
    series = {arm: [(int(r["k"]), r["pass_hat_k"]) for _, r in g.iterrows() if r["tasks"] > 0]
              for arm, g in curve.groupby("arm", sort=False)}
    rows = [{"arm": r["arm"], "k": int(r["k"]), "tasks": int(r["tasks"]), "conversations": int(r["conversations"]),
             "hat": fig(r["pass_hat_k"], arm=r["arm"], k=int(r["k"]), metric="pass_hat_k"),
             "at": fig(r["pass_at_k"], arm=r["arm"], k=int(r["k"]), metric="pass_at_k")} for _, r in curve.iterrows()]
    used = curve[curve["tasks"] > 0]
    n = _n(int(used.groupby("arm")["tasks"].max().sum()) if len(used) else 0,
           int(used.groupby("arm")["conversations"].max().sum()) if len(used) else 0)
    return {"rows": rows, "chart": Markup(svg_lines(series, title=f"pass^k by k (all arms: {n})"))}


def _paired(conv: pd.DataFrame, arms: list[str], opts: dict[str, Any]) -> dict[str, Any] | None:
    pcs = [metrics.paired_comparison(conv, a, b, by="arm", **opts) for a, b in pairs_to_compare(arms)]
    if not pcs:
        return None
    rows = []
    for pc in pcs:
        p = f"{pc.a} vs {pc.b}"
        diff_text = f"{pc.difference:+.3f}" if not missing(pc.difference) else "–"
        rows.append({"key": p, "a": pc.a, "b": pc.b, "figs": [
            fig(pc.tasks, str(pc.tasks), pair=p, metric="tasks"), fig(pc.rate_a, pair=p, metric="rate_a"),
            fig(pc.rate_b, pair=p, metric="rate_b"), fig(pc.difference, diff_text, pair=p, metric="difference"),
            fig(pc.lo, pair=p, metric="lo"), fig(pc.hi, pair=p, metric="hi"),
            fig(pc.won, str(pc.won), pair=p, metric="won"), fig(pc.lost, str(pc.lost), pair=p, metric="lost"),
            fig(pc.tied, str(pc.tied), pair=p, metric="tied")]})
    forest = svg_forest([(f"{p.a} − {p.b} (n = {p.tasks} tasks)", p.difference, p.lo, p.hi) for p in pcs],
                        title="paired difference, task-bootstrap interval")
    return {"headers": ["a", "b", "tasks", "rate a", "rate b", "difference", "lo", "hi", "won", "lost", "tied"],
            "rows": rows, "chart": Markup(forest)}


def _ab(conv: pd.DataFrame, opts: dict[str, Any]) -> dict[str, Any] | None:
    ab = metrics.manual_vs_workflow(conv, by="arm", **opts)
    ab = ab[ab["tasks"] > 0]
    if ab.empty:
        return None
    rows = []
    for _, r in ab.iterrows():
        a = r["arm"]
        rows.append({"arm": a, "figs": [
            fig(r["tasks"], str(int(r["tasks"])), ab_arm=a, metric="tasks"),
            fig(r["rate_a"], ab_arm=a, metric="workflow"), fig(r["rate_b"], ab_arm=a, metric="manual"),
            fig(r["difference"], f"{r['difference']:+.3f}", ab_arm=a, metric="difference"),
            fig(r["lo"], ab_arm=a, metric="lo"), fig(r["hi"], ab_arm=a, metric="hi"),
            *[fig(r[c], str(int(r[c])), ab_arm=a, metric=c) for c in ("won", "lost", "tied")]]})
    forest = svg_forest([(f"{r['arm']} (n = {int(r['tasks'])} tasks)", r["difference"], r["lo"], r["hi"])
                         for _, r in ab.iterrows()], title="workflow − manual, task-bootstrap interval")
    return {"headers": ["arm", "tasks", "workflow", "manual", "workflow − manual", "lo", "hi", "won", "lost",
                        "tied"], "rows": rows, "chart": Markup(forest)}


def _breakdowns(conv: pd.DataFrame, arms: list[str], opts: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for dim in DIMENSIONS:
        if dim not in conv.columns or conv[dim].isna().all():
            continue
        bd = metrics.breakdown(conv, dim, by="arm", n_boot=opts["n_boot"], confidence=opts["confidence"],
                               seed=opts["seed"])
        bd[dim] = bd[dim].astype(str)
        index = {(r["arm"], r[dim]): r for _, r in bd.iterrows()}
        groups = []
        for v in sorted(bd[dim].unique()):
            bars = []
            for a in arms:
                r = index.get((a, v))
                bars.append((a, math.nan, math.nan, math.nan) if r is None
                            else (a, r["success_rate"], r["ci_lo"], r["ci_hi"]))
            groups.append((v, bars))
        rows = []
        for _, r in bd.iterrows():
            at = {"arm": r["arm"], "dimension": dim, "level": r[dim]}
            rows.append({"arm": r["arm"], "level": r[dim], "figs": [
                count(r["conversations"], **at, metric="conversations"), count(r["tasks"], **at, metric="tasks"),
                count(r["successes"], **at, metric="successes"), fig(r["success_rate"], **at, metric="success_rate"),
                fig(r["ci_lo"], **at, metric="ci_lo"), fig(r["ci_hi"], **at, metric="ci_hi"),
                count(r["infra_errors"], **at, metric="infra_errors"), fig(r["infra_share"], **at, metric="infra_share"),
                count(r["model_errors"], **at, metric="model_errors"),
                count(r["internal_errors"], **at, metric="internal_errors"), count(r["unscored"], **at, metric="unscored")]})
        n = _n(int(bd["tasks"].sum()), int(bd["counted"].sum()))
        chart = svg_bars([], groups=groups, arms=arms, title=f"success rate by {dim} ({n}; task-clustered interval)")
        out.append({"dimension": dim, "chart": Markup(chart), "rows": rows, "headers": [
            "arm", dim, "conversations", "tasks", "successes", "success rate", "lo", "hi", "infra", "infra share",
            "model errors", "internal errors", "unscored"]})
    return out


def _judges(conv: pd.DataFrame, jv: pd.DataFrame) -> dict[str, Any] | None:
    if jv.empty:
        return None
    ag = metrics.judge_agreement(conv, jv)
    pw = metrics.judge_pairwise(conv, jv)
    rows = []
    for _, r in ag.iterrows():
        j = r["label"]
        rows.append({"label": j, "config_id": str(r["judge_config_id"]),
                     "figs": [*[count(r[c], judge=j, metric=c) for c in ("judged", "judge_unscored", "n")],
                              fig(r["accuracy"], judge=j, metric="accuracy"), fig(r["kappa"], judge=j, metric="kappa"),
                              fig(r["judge_pass_rate"], judge=j, metric="judge_pass_rate")],
                     **{c: fig(r[c], str(r[c]), judge=j, metric=c) for c in ("tp", "fp", "fn", "tn")}})
    return {"headers": ["judge config", "id", "judged", "unscored", "compared", "accuracy", "κ", "judge pass rate"],
            "rows": rows, "heatmap": Markup(svg_heatmap(pw, title="agreement between raters (κ in brackets)"))}


def _cost(conv: pd.DataFrame) -> list[dict[str, Any]]:
    ct = metrics.cost_and_tokens(conv, by="arm")
    return [{"arm": r["arm"], "figs": [
        count(r["successes"], arm=r["arm"], metric="cost_successes"), count(r["tokens"], arm=r["arm"], metric="tokens"),
        count(r["tokens_per_success"], arm=r["arm"], metric="tokens_per_success"),
        fig(r["cost_usd"], fmt_num(r["cost_usd"], 4), arm=r["arm"], metric="cost_usd"),
        fig(r["cost_per_success"], fmt_num(r["cost_per_success"], 4), arm=r["arm"], metric="cost_per_success")]}
        for _, r in ct.iterrows()]


# --- conversations and transcripts ------------------------------------------------------------


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts with None for missing values (templates test ``is none``); column by
    column, which is far faster than ``to_dict('records')`` on categorical frames."""
    cols = list(df.columns)
    values = [[None if not isinstance(v, (list, dict)) and missing(v) else v for v in df[c].astype(object).tolist()]
              for c in cols]
    return [dict(zip(cols, row)) for row in zip(*values)] if cols else [{} for _ in range(len(df))]


def _pretty(text: Any) -> str | None:
    if missing(text):
        return None
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(text)


def _transcript_context(t: analysis.Transcript, arm: str) -> dict[str, Any]:
    """The transcript template's context for one conversation given as frames."""
    return _page_context(t.conversation, arm, _records(t.messages), _records(t.actions), _records(t.predicates),
                         _records(t.judge_verdicts), _records(t.nl_assertions), t.db_diff)


def _page_context(c: dict[str, Any], arm: str, messages: list[dict[str, Any]], actions: list[dict[str, Any]],
                  predicates: list[dict[str, Any]], judges: list[dict[str, Any]], nl: list[dict[str, Any]],
                  dd: analysis.DbDiff) -> dict[str, Any]:
    err = f'{c["error_kind"]}: {c.get("error_message") or ""}' if not missing(c.get("error_kind")) else ""
    info = [("scenario", c["scenario"]), ("arm", arm), ("run", c["run_id"]), ("unit / attempt",
            f'{c["unit_id"]} / {c["attempt"]}'), ("trial / seed", f'{c["trial"]} / {c["seed"]}'),
            ("policy variant", c["policy_variant"]), ("termination", c["termination_reason"]),
            ("verdict", c["success_reason"]), ("turns", c["turns"]), ("error", err)]
    preds = [{**p, "met": bool(p["met"])} for p in predicates]
    sides = [{"name": side, "rows": _records(dd.rows[dd.rows["side"] == side])} if len(dd.rows) else
             {"name": side, "rows": []} for side in ("agent", "user")]
    note = dd.note or ("Rebuilt by replaying the recorded tool calls (each write followed by sync) and the "
                       "reference actions on fresh state; " + ("the rebuilt DBs reproduce the recorded hashes."
                                                             if dd.reproduced else ""))
    acts = [{**a, "arguments": _pretty(a["arguments"]),
             "result": a["result"] if a["kind"] == "sync" else _pretty(a["result"]),
             "sync_agent": _pretty(a["sync_agent"]), "sync_user": _pretty(a["sync_user"])} for a in actions]
    msgs = []
    for m in messages:
        calls = json.loads(m["tool_calls"]) if isinstance(m["tool_calls"], str) else []
        msgs.append({**m, "who": {"assistant": "agent", "user": "customer"}.get(m["role"], f"tool result ({m['side']})"),
                     "content": _pretty(m["content"]) if m["role"] == "tool" else m["content"],
                     "calls": [{"name": k["name"], "arguments": str(k["arguments"])} for k in calls]})
    return {"c": c, "arm": arm, "anchor": arm_anchor(arm), "info": info, "predicates": preds,
            "failed_predicates": [f'{p["side"]}:{p["function"]}' for p in preds if not p["met"]],
            "db": {"note": note, "bad": "" if dd.note or dd.reproduced else
                   "the rebuilt DBs do not reproduce the recorded hashes.", "sides": sides},
            "actions": acts, "messages": msgs, "judges": [{**j, "agreement": fmt_rate(j["agreement"])} for j in judges],
            "nl": nl}


# --- build --------------------------------------------------------------------------------------


def write_assets(out_dir: Path) -> None:
    """The stylesheet and script every page links to (one copy per report)."""
    assets = out_dir / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / "report.css").write_text(CSS, encoding="utf-8")
    (assets / "report.js").write_text(RENDER_CHECK_JS, encoding="utf-8")


def build_report(path: Path | str, out: Path | str | None = None, *, k_max: int = 4, n_boot: int = 1000,
                 seed: int = 0, confidence: float = 0.95,
                 progress: Callable[[int], None] | None = None) -> ReportSummary:
    """Write the report of a run or sweep folder into ``out`` (default PATH/report)."""
    src = Path(path)
    out_dir = Path(out) if out is not None else src / "report"
    conv = analysis.with_arms(readers.conversations_df(src))
    if conv.empty:
        raise ValueError(f"no conversations in {src}")
    jv = readers.judge_verdicts_df(src)
    opts = {"n_boot": n_boot, "confidence": confidence, "seed": seed}
    lb = metrics.leaderboard(conv, by="arm", k_max=k_max, **opts)
    arms = lb["arm"].tolist()
    curve = metrics.pass_k_curve(conv, range(1, k_max + 1), by="arm")
    curve["arm"] = pd.Categorical(curve["arm"], categories=arms, ordered=True)
    curve = curve.sort_values(["arm", "k"]).assign(arm=lambda d: d["arm"].astype(str))
    c = metrics.counts(conv).iloc[0]
    tasks = int(metrics.task_counts(conv)["n"].gt(0).sum())
    totals = {k: count(c[k], metric=f"total_{k}") for k in
              ("conversations", "counted", "successes", "infra_errors", "model_errors", "internal_errors", "unscored")}
    totals["infra_share"] = fig(c["infra_share"], f"{c['infra_share']:.1%}" if not missing(c["infra_share"]) else "–",
                                metric="total_infra_share")
    totals["tasks"] = Fig(str(tasks), f"{tasks:,}", [("metric", "tasks_total")])
    env = _env()
    out_dir.mkdir(parents=True, exist_ok=True)
    write_assets(out_dir)
    index = env.get_template("index.html.j2").render(
        title="tauray report", root="", source=str(src), runs=conv["run_id"].nunique(), totals=totals,
        pct=f"{confidence:.0%}", leaderboard=_leaderboard(lb, k_max, confidence), pass_k=_pass_k(curve),
        paired=_paired(conv, arms, opts), ab=_ab(conv, opts), breakdowns=_breakdowns(conv, arms, opts),
        judges=_judges(conv, jv), cost=_cost(conv))
    (out_dir / "index.html").write_text(index, encoding="utf-8")
    listing = []
    for arm in arms:
        g = conv[conv["arm"] == arm].sort_values(["scenario", "trial"])
        rows = _records(g[["run_id", "conversation_id", "scenario", "trial", "attempt", "success",
                           "termination_reason", "predicates_met", "predicates_total", "turns", "error_kind"]])
        for r in rows:
            r["href"] = transcript_href(r["run_id"], r["conversation_id"])
        listing.append({"name": arm, "anchor": arm_anchor(arm), "rows": rows})
    (out_dir / "conversations.html").write_text(
        env.get_template("conversations.html.j2").render(title="Conversations", root="", arms=listing),
        encoding="utf-8")
    n = _write_transcripts(src, out_dir, conv, jv, env, progress)
    return ReportSummary(out=str(out_dir), index=str(out_dir / "index.html"), conversations=len(conv),
                         transcripts=n, arms=arms, judge_configs=int(jv["judge_config_id"].nunique()))


def _write_transcripts(src: Path, out_dir: Path, conv: pd.DataFrame, jv: pd.DataFrame, env: Environment,
                       progress: Callable[[int], None] | None) -> int:
    def by_conv(df: pd.DataFrame, order: str | None) -> dict[tuple[str, str], list[dict[str, Any]]]:
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in _records(df.sort_values(order) if order else df):  # one conversion per table, not per page
            grouped.setdefault((str(r["run_id"]), str(r["unit_id"])), []).append(r)
        return grouped

    frames = {"messages": (readers.messages_df(src), "seq"), "actions": (readers.actions_df(src), "seq"),
              "predicates": (readers.predicates_df(src), "index"), "judge": (jv, "sample_index"),
              "nl": (readers.nl_verdicts_df(src), "assertion_index")}
    grouped = {name: by_conv(df, order) for name, (df, order) in frames.items()}
    columns = {name: list(df.columns) for name, (df, _) in frames.items()}
    columns_only = {name: df.head(0) for name, (df, _) in frames.items()}
    template = env.get_template("transcript.html.j2")
    n = 0
    for row in _records(conv):
        key = (str(row["run_id"]), str(row["unit_id"]))
        rows = {name: g.get(key, []) for name, g in grouped.items()}
        recorded, gold = analysis.recorded_hashes(row), analysis.gold_hashes(row)
        actions = (columns_only["actions"] if analysis.matches_gold(recorded, gold)  # no replay: no frame needed
                   else pd.DataFrame(rows["actions"], columns=columns["actions"]))
        dd = analysis.db_diff(row["scenario"], actions, recorded, gold)
        context = _page_context(row, row["arm"], rows["messages"], rows["actions"], rows["predicates"],
                                rows["judge"], rows["nl"], dd)
        target = out_dir / transcript_href(row["run_id"], row["conversation_id"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.render(title=f"Transcript · {row['scenario']} · trial {row['trial']}",
                                          root="../../", **context), encoding="utf-8")
        n += 1
        if progress:
            progress(1)
    return n
