"""Static HTML report of a run or sweep directory.

One folder, opened offline: ``index.html`` (leaderboard, pass^k, paired
comparisons, manual-vs-workflow A/B, breakdowns, judge agreement, cost),
``conversations.html`` (every conversation by arm, linked) and one page per
conversation under ``transcripts/``. Charts are inline SVG drawn here from
the metric functions' output; a Content-Security-Policy forbids any fetch.
Every figure sits in an element with ``data-metric``/``data-value`` (and the
arm, pair or judge it belongs to), so a test can read the rendered page and
compare it with the metric functions (design rule 8: the report reads only
analysis outputs).
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from tauray.results import analysis, metrics
from tauray.results.report_assets import (
    CSS,
    RENDER_CHECK_JS,
    svg_bars,
    svg_forest,
    svg_heatmap,
    svg_lines,
)

DIMENSIONS = ["domain", "issue_type", "persona", "policy_variant", "termination_reason"]
MAX_PAIRS = 15


class ReportSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    out: str = Field(description="Report folder.")
    index: str = Field(description="Path of index.html.")
    conversations: int = Field(description="Conversations in the report.")
    transcripts: int = Field(description="Transcript pages written.")
    arms: list[str] = Field(description="Arms (agent model | user model) on the leaderboard.")
    judge_configs: int = Field(description="Judge configs with verdicts.")


# --- small HTML helpers ---------------------------------------------------------------------

e = html.escape


def dv(x: Any) -> str:
    """A figure as the data-value text: full precision, 'NaN' when missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return "NaN"
    return f"{float(x):.12g}"


def fmt_rate(x: Any) -> str:
    return "–" if dv(x) == "NaN" else f"{float(x):.3f}"


def fmt_num(x: Any, digits: int = 0) -> str:
    if dv(x) == "NaN":
        return "–"
    return f"{float(x):,.{digits}f}"


def fig(value: Any, text: str | None = None, tag: str = "td", **attrs: Any) -> str:
    """An element holding one figure: data-* attributes plus the formatted text."""
    attr = "".join(f' data-{k.replace("_", "-")}="{e(str(v))}"' for k, v in attrs.items())
    return f'<{tag}{attr} data-value="{dv(value)}">{e(text if text is not None else fmt_rate(value))}</{tag}>'


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def table(headers: list[str], rows: list[str], cls: str = "") -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def page(title: str, body: str, root: str = "") -> str:
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    nav = (f'<nav><a href="{root}index.html">Report</a> · <a href="{root}conversations.html">Conversations</a>'
           "</nav>")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f"<title>{e(title)}</title><style>{CSS}</style></head><body>{nav}<h1>{e(title)}</h1>{body}"
            f"<script>{RENDER_CHECK_JS}</script></body></html>")


def missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def txt(x: Any) -> str:
    """Text of a cell; empty for a missing value (pandas gives NaN for null strings)."""
    return "" if missing(x) else str(x)


def yes_no(v: Any) -> str:
    if missing(v):
        return '<span class="na">–</span>'
    return '<span class="ok">✓</span>' if bool(v) else '<span class="bad">✗</span>'


def transcript_href(run_id: str, conversation_id: str) -> str:
    return f"transcripts/{slug(run_id)}/{conversation_id}.html"


# --- index sections ---------------------------------------------------------------------------


def _leaderboard(lb: pd.DataFrame, k_max: int, conf: float) -> str:
    rows = []
    for _, r in lb.iterrows():
        a = r["arm"]
        cells = [f'<td><a href="conversations.html#arm-{slug(a)}">{e(a)}</a></td>',
                 fig(r["conversations"], fmt_num(r["conversations"]), arm=a, metric="conversations"),
                 fig(r["scored"], fmt_num(r["scored"]), arm=a, metric="scored"),
                 fig(r["successes"], fmt_num(r["successes"]), arm=a, metric="successes"),
                 fig(r["success_rate"], arm=a, metric="success_rate"),
                 fig(r["wilson_lo"], arm=a, metric="wilson_lo"), fig(r["wilson_hi"], arm=a, metric="wilson_hi"),
                 fig(r["boot_lo"], arm=a, metric="boot_lo"), fig(r["boot_hi"], arm=a, metric="boot_hi"),
                 *[fig(r[f"pass_hat_{k}"], arm=a, metric=f"pass_hat_{k}") for k in range(1, k_max + 1)],
                 fig(r["infra_errors"], fmt_num(r["infra_errors"]), arm=a, metric="infra_errors"),
                 fig(r["unscored"], fmt_num(r["unscored"]), arm=a, metric="unscored")]
        rows.append(f'<tr data-arm="{e(a)}">{"".join(cells)}</tr>')
    pct = f"{conf:.0%}"
    headers = ["arm (agent | user)", "conversations", "scored", "successes", "success rate",
               f"Wilson {pct} lo", "hi", f"task bootstrap {pct} lo", "hi",
               *[f"pass^{k}" for k in range(1, k_max + 1)], "infra errors", "unscored"]
    chart = svg_bars([(r["arm"], r["success_rate"], r["wilson_lo"], r["wilson_hi"]) for _, r in lb.iterrows()],
                     title=f"success rate with Wilson {pct} interval")
    return (f'<section id="leaderboard"><h2>Leaderboard</h2>{table(headers, rows, "figures")}'
            f'<p class="note">Rates count scored conversations only; infra errors and unscored conversations are '
            f"counted apart. pass^k: τ-bench's estimator C(c,k)/C(n,k) per task, averaged over tasks with ≥ k "
            f"scored trials.</p>{chart}</section>")


def _pass_k(curve: pd.DataFrame) -> str:
    series = {arm: [(int(r["k"]), r["pass_hat_k"]) for _, r in g.iterrows() if r["tasks"] > 0]
              for arm, g in curve.groupby("arm", sort=False)}
    rows = [f'<tr><td>{e(r["arm"])}</td><td>{int(r["k"])}</td><td>{int(r["tasks"])}</td>'
            + fig(r["pass_hat_k"], arm=r["arm"], k=int(r["k"]), metric="pass_hat_k")
            + fig(r["pass_at_k"], arm=r["arm"], k=int(r["k"]), metric="pass_at_k") + "</tr>"
            for _, r in curve.iterrows()]
    return (f'<section id="pass-k"><h2>pass^k</h2>{svg_lines(series, title="pass^k by k")}'
            f'<details><summary>figures</summary>{table(["arm", "k", "tasks", "pass^k", "pass@k"], rows)}'
            "</details></section>")


def _pair_rows(pcs: list[metrics.PairedComparison], key: str = "pair") -> list[str]:
    rows = []
    for pc in pcs:
        p = f"{pc.a} vs {pc.b}"
        rows.append(f'<tr data-{key}="{e(p)}"><td>{e(pc.a)}</td><td>{e(pc.b)}</td>'
                    + fig(pc.tasks, str(pc.tasks), **{key: p}, metric="tasks")
                    + fig(pc.rate_a, **{key: p}, metric="rate_a") + fig(pc.rate_b, **{key: p}, metric="rate_b")
                    + fig(pc.difference, f"{pc.difference:+.3f}" if dv(pc.difference) != "NaN" else "–",
                          **{key: p}, metric="difference")
                    + fig(pc.lo, **{key: p}, metric="lo") + fig(pc.hi, **{key: p}, metric="hi")
                    + fig(pc.won, str(pc.won), **{key: p}, metric="won")
                    + fig(pc.lost, str(pc.lost), **{key: p}, metric="lost")
                    + fig(pc.tied, str(pc.tied), **{key: p}, metric="tied") + "</tr>")
    return rows


PAIR_HEADERS = ["a", "b", "tasks", "rate a", "rate b", "difference", "lo", "hi", "won", "lost", "tied"]


def pairs_to_compare(arms: list[str]) -> list[tuple[str, str]]:
    """Every pair when few arms, else each arm against the leader (arms best first)."""
    pairs = list(itertools.combinations(arms, 2))
    return pairs if len(pairs) <= MAX_PAIRS else [(arms[0], b) for b in arms[1:]]


def _paired(conv: pd.DataFrame, arms: list[str], opts: dict[str, Any]) -> str:
    pcs = [metrics.paired_comparison(conv, a, b, by="arm", **opts) for a, b in pairs_to_compare(arms)]
    if not pcs:
        return ""
    forest = svg_forest([(f"{p.a} − {p.b}", p.difference, p.lo, p.hi) for p in pcs], title="paired difference")
    return (f'<section id="paired"><h2>Paired comparison on the same scenarios</h2>'
            f'{table(PAIR_HEADERS, _pair_rows(pcs), "figures")}<p class="note">Per-task success rates, '
            f"difference a − b averaged over the tasks both arms ran, task-bootstrap interval; a task is won "
            f"when a's rate is higher.</p>{forest}</section>")


def _ab(conv: pd.DataFrame, opts: dict[str, Any]) -> str:
    ab = metrics.manual_vs_workflow(conv, by="arm", **opts)
    ab = ab[ab["tasks"] > 0]
    if ab.empty:
        return ""
    rows = []
    for _, r in ab.iterrows():
        a = r["arm"]
        rows.append(f'<tr data-ab-arm="{e(a)}"><td>{e(a)}</td>' + fig(r["tasks"], str(int(r["tasks"])), ab_arm=a,
                                                                     metric="tasks")
                    + fig(r["rate_a"], ab_arm=a, metric="workflow") + fig(r["rate_b"], ab_arm=a, metric="manual")
                    + fig(r["difference"], f"{r['difference']:+.3f}", ab_arm=a, metric="difference")
                    + fig(r["lo"], ab_arm=a, metric="lo") + fig(r["hi"], ab_arm=a, metric="hi")
                    + "".join(fig(r[c], str(int(r[c])), ab_arm=a, metric=c) for c in ("won", "lost", "tied"))
                    + "</tr>")
    headers = ["arm", "tasks", "workflow", "manual", "workflow − manual", "lo", "hi", "won", "lost", "tied"]
    forest = svg_forest([(r["arm"], r["difference"], r["lo"], r["hi"]) for _, r in ab.iterrows()],
                        title="workflow − manual")
    return (f'<section id="ab"><h2>Manual vs workflow policy (same upstream tasks)</h2>'
            f'{table(headers, rows, "figures")}{forest}</section>')


def _breakdowns(conv: pd.DataFrame, arms: list[str], conf: float) -> str:
    parts = []
    for dim in DIMENSIONS:
        if dim not in conv.columns or conv[dim].isna().all():
            continue
        bd = metrics.breakdown(conv, dim, by="arm", confidence=conf)
        groups = [(str(v), [(a, *_bd_value(bd, a, dim, v)) for a in arms]) for v in sorted(bd[dim].unique())]
        rows = [f'<tr><td>{e(r["arm"])}</td><td>{e(str(r[dim]))}</td>'
                + fig(r["conversations"], str(int(r["conversations"])), arm=r["arm"], dimension=dim,
                      level=r[dim], metric="conversations")
                + fig(r["successes"], str(int(r["successes"])), arm=r["arm"], dimension=dim, level=r[dim],
                      metric="successes")
                + fig(r["success_rate"], arm=r["arm"], dimension=dim, level=r[dim], metric="success_rate")
                + f'<td>{fmt_num(r["infra_errors"])}</td><td>{fmt_num(r["unscored"])}</td></tr>'
                for _, r in bd.iterrows()]
        chart = svg_bars([], groups=groups, arms=arms, title=f"success rate by {dim}")
        parts.append(f'<h3 id="by-{dim}">by {e(dim)}</h3>{chart}<details><summary>figures</summary>'
                     f'{table(["arm", dim, "conversations", "successes", "success rate", "infra", "unscored"], rows)}'
                     "</details>")
    return f'<section id="breakdowns"><h2>Breakdowns</h2>{"".join(parts)}</section>'


def _bd_value(bd: pd.DataFrame, arm: str, dim: str, value: Any) -> tuple[float, float, float]:
    hit = bd[(bd["arm"] == arm) & (bd[dim] == value)]
    if hit.empty:
        return (math.nan, math.nan, math.nan)
    r = hit.iloc[0]
    return (r["success_rate"], r["wilson_lo"], r["wilson_hi"])


def _judges(conv: pd.DataFrame, jv: pd.DataFrame) -> str:
    if jv.empty:
        return ('<section id="judges"><h2>Judge agreement</h2><p class="note">No judge verdicts in these '
                "tables.</p></section>")
    ag = metrics.judge_agreement(conv, jv)
    pw = metrics.judge_pairwise(conv, jv)
    rows, confusions = [], []
    for _, r in ag.iterrows():
        j = r["label"]
        rows.append(f'<tr data-judge="{e(j)}"><td>{e(j)}</td><td><code>{e(str(r["judge_config_id"]))}</code></td>'
                    + "".join(fig(r[c], fmt_num(r[c]), judge=j, metric=c)
                              for c in ("judged", "judge_unscored", "n"))
                    + fig(r["accuracy"], judge=j, metric="accuracy") + fig(r["kappa"], judge=j, metric="kappa")
                    + fig(r["judge_pass_rate"], judge=j, metric="judge_pass_rate") + "</tr>")
        confusions.append(
            f'<table class="confusion"><caption>{e(j)}</caption><tr><th></th><th>predicates pass</th>'
            f"<th>predicates fail</th></tr><tr><th>judge pass</th>{fig(r['tp'], str(r['tp']), judge=j, metric='tp')}"
            f"{fig(r['fp'], str(r['fp']), judge=j, metric='fp')}</tr><tr><th>judge fail</th>"
            f"{fig(r['fn'], str(r['fn']), judge=j, metric='fn')}{fig(r['tn'], str(r['tn']), judge=j, metric='tn')}"
            "</tr></table>")
    headers = ["judge config", "id", "judged", "unscored", "compared", "accuracy", "κ", "judge pass rate"]
    heat = svg_heatmap(pw, title="agreement between raters (κ in brackets)")
    return (f'<section id="judges"><h2>Judge agreement</h2>{table(headers, rows, "figures")}'
            f'<p class="note">Each judge config\'s verdict is the majority of its scored samples; compared with '
            f"the predicates' verdict on conversations both scored.</p>{heat}"
            f'<div class="confusions">{"".join(confusions)}</div></section>')


def _cost(conv: pd.DataFrame) -> str:
    ct = metrics.cost_and_tokens(conv, by="arm")
    rows = [f'<tr><td>{e(r["arm"])}</td>'
            + fig(r["successes"], fmt_num(r["successes"]), arm=r["arm"], metric="cost_successes")
            + fig(r["tokens"], fmt_num(r["tokens"]), arm=r["arm"], metric="tokens")
            + fig(r["tokens_per_success"], fmt_num(r["tokens_per_success"]), arm=r["arm"],
                  metric="tokens_per_success")
            + fig(r["cost_usd"], fmt_num(r["cost_usd"], 4), arm=r["arm"], metric="cost_usd")
            + fig(r["cost_per_success"], fmt_num(r["cost_per_success"], 4), arm=r["arm"],
                  metric="cost_per_success") + "</tr>" for _, r in ct.iterrows()]
    return (f'<section id="cost"><h2>Cost and tokens</h2>'
            f'{table(["arm", "successes", "tokens", "tokens / success", "cost USD", "cost / success"], rows)}'
            '<p class="note">All rows count (infra errors spent tokens too); unknown prices show as –.</p>'
            "</section>")


# --- conversations and transcripts ------------------------------------------------------------


def _conversation_list(conv: pd.DataFrame, arms: list[str]) -> str:
    parts = []
    for arm in arms:
        g = conv[conv["arm"] == arm].sort_values(["scenario", "trial"])
        rows = [f'<tr data-conversation="{e(r.conversation_id)}"><td><a href="'
                f'{transcript_href(r.run_id, r.conversation_id)}">{e(r.scenario)}</a></td><td>{r.trial}</td>'
                f"<td>{yes_no(r.success)}</td><td>{e(str(r.termination_reason))}</td>"
                f"<td>{r.predicates_met}/{r.predicates_total}</td><td>{r.turns}</td>"
                f"<td>{e(txt(r.error_kind))}</td></tr>" for r in g.itertuples()]
        parts.append(f'<section id="arm-{slug(arm)}"><h2>{e(arm)}</h2>'
                     f'{table(["scenario", "trial", "success", "termination", "predicates", "turns", "error"], rows)}'
                     "</section>")
    return "".join(parts)


def _json_pre(text: Any) -> str:
    if missing(text):
        return ""
    try:
        text = json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except (TypeError, ValueError):
        pass
    return f"<pre>{e(str(text))}</pre>"


def transcript_page(t: analysis.Transcript, arm: str) -> str:
    c = t.conversation
    info = [("scenario", c["scenario"]), ("arm", arm), ("run", c["run_id"]), ("conversation", c["conversation_id"]),
            ("trial / seed", f'{c["trial"]} / {c["seed"]}'), ("policy variant", c["policy_variant"]),
            ("termination", c["termination_reason"]), ("verdict", c["success_reason"]),
            ("turns", c["turns"]), ("error", f'{c["error_kind"]}: {txt(c["error_message"])}' if not missing(c["error_kind"]) else "")]
    summary = "".join(f"<dt>{e(k)}</dt><dd>{e(str(v))}</dd>" for k, v in info)
    verdict = (f'<p class="verdict" data-success="{e(str(c["success"]))}">success: {yes_no(c["success"])}</p>')
    failed = t.predicates[~t.predicates["met"].astype(bool)] if len(t.predicates) else t.predicates
    failed_line = ("" if failed.empty else '<p class="bad">Failed predicates: ' + ", ".join(
        f'{e(r.side)}:{e(r.function)}' for r in failed.itertuples()) + "</p>")
    pred_rows = [f'<tr class="{"" if r.met else "fail"}" data-predicate="{r.index}" data-side="{e(r.side)}" '
                 f'data-function="{e(r.function)}" data-met="{str(bool(r.met)).lower()}"><td>{r.index}</td>'
                 f"<td>{e(r.side)}</td><td>{e(r.function)}</td><td><code>{e(r.arguments)}</code></td>"
                 f"<td>{e(str(r.expected))}</td><td>{e(str(r.actual))}</td><td>{yes_no(r.met)}</td>"
                 f"<td>{e(txt(r.error))}</td></tr>" for r in t.predicates.itertuples()]
    preds = table(["#", "side", "function", "arguments", "expected", "actual", "met", "error"], pred_rows)
    dd = t.db_diff
    diff_parts = []
    for side in ("agent", "user"):
        rows = dd.rows[dd.rows["side"] == side]
        body = ("<p>identical to gold</p>" if rows.empty else table(["field", "gold", "this conversation"], [
            f'<tr data-db-side="{side}" data-field="{e(r.field)}"><td><code>{e(r.field)}</code></td>'
            f"<td><code>{e(r.gold)}</code></td><td><code>{e(r.actual)}</code></td></tr>" for r in rows.itertuples()]))
        diff_parts.append(f'<h3 data-db-side-count="{len(rows)}" id="db-{side}">{side} side DB</h3>{body}')
    replay_note = (f'<p class="note">{e(dd.note)}</p>' if dd.note else
                   '<p class="note">Rebuilt by replaying the recorded tool calls (each write followed by sync) and '
                   "the reference actions on fresh state; "
                   + ("the rebuilt DBs reproduce the recorded hashes.</p>" if dd.reproduced else
                      '<span class="bad">the rebuilt DBs do not reproduce the recorded hashes.</span></p>'))
    act_rows = []
    for r in t.actions.itertuples():
        if r.kind == "sync":
            act_rows.append(f'<tr class="sync" data-kind="sync"><td>{r.seq}</td><td>{r.turn}</td><td colspan="2">'
                            f"{e(txt(r.result) or 'sync')}</td><td>agent: {_json_pre(r.sync_agent)}</td>"
                            f"<td>user: {_json_pre(r.sync_user)}</td><td></td></tr>")
        else:
            act_rows.append(f'<tr class="{r.side}{" fail" if r.error else ""}" data-kind="tool_call" '
                            f'data-side="{e(r.side)}"><td>{r.seq}</td><td>{r.turn}</td><td>{e(r.side)}</td>'
                            f"<td><b>{e(str(r.tool))}</b>{' ✎' if r.is_write else ''}</td>"
                            f"<td>{_json_pre(r.arguments)}</td><td>{_json_pre(r.result)}</td>"
                            f"<td>{e(txt(r.matched_action_id))}</td></tr>")
    actions = table(["seq", "turn", "side", "tool (✎ write)", "arguments", "result", "matched reference"], act_rows)
    msgs = []
    for m in t.messages.itertuples():
        calls = ""
        if isinstance(m.tool_calls, str):
            calls = "".join(f'<div class="call">→ {e(tc["name"])}({e(str(tc["arguments"]))})</div>'
                            for tc in json.loads(m.tool_calls))
        who = {"assistant": "agent", "user": "customer", "tool": f"tool result ({m.side})"}[m.role]
        msgs.append(f'<div class="msg {m.side} {m.role}"><span class="who">{e(who)} · turn {m.turn}</span>'
                    f'{_json_pre(m.content) if m.role == "tool" else "<p>" + e(txt(m.content)) + "</p>"}'
                    f"{calls}</div>")
    judge_rows = [f'<tr data-judge-sample="{r.sample_index}"><td>{e(r.judge_model)} · {e(r.prompt_id)}@'
                  f"{e(r.prompt_version)}</td><td>{r.sample_index}</td><td>{yes_no(r.passed)}</td>"
                  f"<td>{yes_no(r.majority)}</td><td>{fmt_rate(r.agreement)}</td>"
                  f"<td>{e(txt(r.unscored_reason))}</td><td>{e(txt(r.reasoning))}</td></tr>"
                  for r in t.judge_verdicts.itertuples()]
    judges = (table(["judge", "sample", "passed", "majority", "agreement", "unscored", "reasoning"], judge_rows)
              if judge_rows else "<p>No judge verdicts.</p>")
    nl_rows = [f"<tr><td>{e(r.judge_model)}</td><td>{r.sample_index}</td><td>{e(r.assertion)}</td>"
               f"<td>{yes_no(r.met)}</td><td>{e(txt(r.reasoning) or txt(r.unscored_reason))}</td></tr>"
               for r in t.nl_assertions.itertuples()]
    nl = table(["judge", "sample", "assertion", "met", "reasoning"], nl_rows) if nl_rows else ""
    body = (f'<p><a href="../../conversations.html#arm-{slug(arm)}">← {e(arm)}</a></p>{verdict}'
            f'<dl class="summary">{summary}</dl>'
            f'<section id="predicates"><h2>Predicates</h2>{failed_line}{preds}</section>'
            f'<section id="db-diff"><h2>DB difference from gold</h2>{replay_note}{"".join(diff_parts)}</section>'
            f'<section id="actions"><h2>Tool calls and sync events</h2>{actions}</section>'
            f'<section id="messages"><h2>Messages</h2><div class="chat">{"".join(msgs)}</div></section>'
            f'<section id="judge"><h2>Judge verdicts</h2>{judges}{nl}</section>')
    return page(f"Transcript · {c['scenario']} · trial {c['trial']}", body, root="../../")


# --- build --------------------------------------------------------------------------------------


def build_report(path: Path | str, out: Path | str | None = None, *, k_max: int = 4, n_boot: int = 1000,
                 seed: int = 0, confidence: float = 0.95,
                 progress: Callable[[int], None] | None = None) -> ReportSummary:
    """Write the report of a run or sweep directory into ``out`` (default PATH/report)."""
    src = Path(path)
    out_dir = Path(out) if out is not None else src / "report"
    conv = analysis.with_arms(analysis.load_conversations(src))
    if conv.empty:
        raise ValueError(f"no conversations in {src}")
    jv = analysis.load_judge_verdicts(src)
    opts = {"n_boot": n_boot, "confidence": confidence, "seed": seed}
    lb = metrics.leaderboard(conv, by="arm", k_max=k_max, **opts)
    arms = lb["arm"].tolist()
    curve = metrics.pass_k_curve(conv, range(1, k_max + 1), by="arm")
    curve["arm"] = pd.Categorical(curve["arm"], categories=arms, ordered=True)
    curve = curve.sort_values(["arm", "k"]).assign(arm=lambda d: d["arm"].astype(str))
    n_runs = conv["run_id"].nunique()
    c = metrics.counts(conv).iloc[0]
    head = (f'<p class="meta">Source <code>{e(str(src))}</code> · {n_runs} run(s) · '
            f'{fig(c["conversations"], str(c["conversations"]), tag="span", metric="total_conversations")} '
            f'conversations · {fig(c["scored"], str(c["scored"]), tag="span", metric="total_scored")} scored · '
            f'{fig(c["infra_errors"], str(c["infra_errors"]), tag="span", metric="total_infra_errors")} infra '
            f'errors · {fig(c["unscored"], str(c["unscored"]), tag="span", metric="total_unscored")} unscored · '
            f'<a href="conversations.html">all conversations</a></p>')
    body = (head + _leaderboard(lb, k_max, confidence) + _pass_k(curve) + _paired(conv, arms, opts) + _ab(conv, opts)
            + _breakdowns(conv, arms, confidence) + _judges(conv, jv) + _cost(conv))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "index.html").write_text(page("tauray report", body), encoding="utf-8")
    (out_dir / "conversations.html").write_text(page("Conversations", _conversation_list(conv, arms)),
                                                encoding="utf-8")
    n = _write_transcripts(src, out_dir, conv, jv, progress)
    return ReportSummary(out=str(out_dir), index=str(out_dir / "index.html"), conversations=len(conv),
                         transcripts=n, arms=arms, judge_configs=int(jv["judge_config_id"].nunique()))


def _write_transcripts(src: Path, out_dir: Path, conv: pd.DataFrame, jv: pd.DataFrame,
                       progress: Callable[[int], None] | None) -> int:
    keys = ["run_id", "conversation_id"]

    def by_conv(df: pd.DataFrame, order: str | None) -> dict[tuple[str, str], pd.DataFrame]:
        if order:
            df = df.sort_values(order)
        return {k: g.reset_index(drop=True) for k, g in df.groupby(keys, sort=False)}

    frames = {"messages": (analysis.load_messages(src), "seq"), "actions": (analysis.load_actions(src), "seq"),
              "predicates": (analysis.load_predicates(src), "index"), "judge": (jv, "sample_index"),
              "nl": (analysis.load_nl_assertions(src), "assertion_index")}
    grouped = {name: by_conv(df, order) for name, (df, order) in frames.items()}
    empty = {name: df.head(0) for name, (df, _) in frames.items()}

    def get(name: str, key: tuple[str, str]) -> pd.DataFrame:
        return grouped[name].get(key, empty[name])

    n = 0
    for row in conv.to_dict("records"):
        key = (row["run_id"], row["conversation_id"])
        actions = get("actions", key)
        t = analysis.Transcript(
            conversation=row, messages=get("messages", key), actions=actions, predicates=get("predicates", key),
            judge_verdicts=get("judge", key), nl_assertions=get("nl", key),
            db_diff=analysis.db_diff(row["scenario"], actions, analysis.recorded_hashes(row)))
        target = out_dir / transcript_href(*key)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(transcript_page(t, row["arm"]), encoding="utf-8")
        n += 1
        if progress:
            progress(1)
    return n
