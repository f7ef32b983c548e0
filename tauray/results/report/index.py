"""The report's index page: leaderboard, pass^k, paired comparisons, the
manual-vs-workflow A/B, breakdowns, judge agreement and cost, each a table of
figures and an inline-SVG chart drawn from the metric functions' output.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pandas as pd
from markupsafe import Markup

from tauray.results.report.assets import svg_bars, svg_forest, svg_heatmap, svg_lines
from tauray.results.report.values import Fig, arm_anchor, count, fig, fmt_num, missing
from tauray.results.stats import metrics
from tauray.results.stats.judges import judge_agreement, judge_pairwise, repair_calls_by_model

DIMENSIONS = ["domain", "issue_type", "persona", "policy_variant", "termination_reason"]
MAX_PAIRS = 15


def pairs_to_compare(arms: list[str]) -> list[tuple[str, str]]:
    """Every pair when few arms, else each arm against the leader (arms best first)."""
    pairs = list(itertools.combinations(arms, 2))
    return pairs if len(pairs) <= MAX_PAIRS else [(arms[0], b) for b in arms[1:]]


def _n(tasks: int, conversations: int) -> str:
    return f"n = {tasks:,} tasks, {conversations:,} conversations"


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


def _repair_rows(*verdicts: pd.DataFrame) -> list[dict[str, Any]]:
    """Per judge model: judge calls, repair turns (a reply that was not one value of the format got
    one follow-up) and their share."""
    return [{"model": model, "figs": [count(m["judge_calls"], judge_model=model, metric="judge_calls"),
                                      count(m["repair_calls"], judge_model=model, metric="repair_calls"),
                                      fig(m["repair_calls"] / m["judge_calls"] if m["judge_calls"] else None,
                                          judge_model=model, metric="repair_share")]}
            for model, m in sorted(repair_calls_by_model(*verdicts).items())]


def _judges(conv: pd.DataFrame, jv: pd.DataFrame, nl: pd.DataFrame | None = None) -> dict[str, Any] | None:
    if jv.empty:
        return None
    ag = judge_agreement(conv, jv)
    pw = judge_pairwise(conv, jv)
    rows = []
    for _, r in ag.iterrows():
        j = r["label"]
        rows.append({"label": j, "config_id": str(r["judge_config_id"]),
                     "figs": [*[count(r[c], judge=j, metric=c) for c in ("judged", "judge_unscored", "n")],
                              fig(r["accuracy"], judge=j, metric="accuracy"), fig(r["kappa"], judge=j, metric="kappa"),
                              fig(r["judge_pass_rate"], judge=j, metric="judge_pass_rate")],
                     **{c: fig(r[c], str(r[c]), judge=j, metric=c) for c in ("tp", "fp", "fn", "tn")}})
    return {"headers": ["judge config", "id", "judged", "unscored", "compared", "accuracy", "κ", "judge pass rate"],
            "rows": rows, "heatmap": Markup(svg_heatmap(pw, title="agreement between raters (κ in brackets)")),
            "repairs": _repair_rows(jv, *([nl] if nl is not None else []))}


def _cost(conv: pd.DataFrame) -> list[dict[str, Any]]:
    ct = metrics.cost_and_tokens(conv, by="arm")
    return [{"arm": r["arm"], "figs": [
        count(r["successes"], arm=r["arm"], metric="cost_successes"), count(r["tokens"], arm=r["arm"], metric="tokens"),
        count(r["tokens_per_success"], arm=r["arm"], metric="tokens_per_success"),
        fig(r["cost_usd"], fmt_num(r["cost_usd"], 4), arm=r["arm"], metric="cost_usd"),
        fig(r["cost_per_success"], fmt_num(r["cost_per_success"], 4), arm=r["arm"], metric="cost_per_success")]}
        for _, r in ct.iterrows()]


def _stops(conv: pd.DataFrame) -> list[dict[str, Any]]:
    sr = metrics.stop_reasons(conv, by="arm")
    return [{"arm": r["arm"], "figs": [count(r[c], arm=r["arm"], metric=f"stops_{c}")
                                       for c in ("conversations", *metrics.STOP_COLUMNS)]}
            for _, r in sr.iterrows()]


def _totals(conv: pd.DataFrame) -> dict[str, Fig]:
    c = metrics.counts(conv).iloc[0]
    tasks = int(metrics.task_counts(conv)["n"].gt(0).sum())
    totals = {k: count(c[k], metric=f"total_{k}") for k in
              ("conversations", "counted", "successes", "infra_errors", "model_errors", "internal_errors", "unscored")}
    totals["infra_share"] = fig(c["infra_share"], f"{c['infra_share']:.1%}" if not missing(c["infra_share"]) else "–",
                                metric="total_infra_share")
    totals["tasks"] = Fig(str(tasks), f"{tasks:,}", [("metric", "tasks_total")])
    return totals


def index_context(conv: pd.DataFrame, jv: pd.DataFrame, *, k_max: int, n_boot: int, seed: int,
                  confidence: float, nl: pd.DataFrame | None = None) -> tuple[dict[str, Any], list[str]]:
    """The index template's sections for conversations with arms, and the arms best first."""
    opts = {"n_boot": n_boot, "confidence": confidence, "seed": seed}
    lb = metrics.leaderboard(conv, by="arm", k_max=k_max, **opts)
    arms = lb["arm"].tolist()
    curve = metrics.pass_k_curve(conv, range(1, k_max + 1), by="arm")
    curve["arm"] = pd.Categorical(curve["arm"], categories=arms, ordered=True)
    curve = curve.sort_values(["arm", "k"]).assign(arm=lambda d: d["arm"].astype(str))
    context = {"runs": conv["run_id"].nunique(), "totals": _totals(conv), "pct": f"{confidence:.0%}",
               "leaderboard": _leaderboard(lb, k_max, confidence), "pass_k": _pass_k(curve),
               "paired": _paired(conv, arms, opts), "ab": _ab(conv, opts),
               "breakdowns": _breakdowns(conv, arms, opts), "judges": _judges(conv, jv, nl), "cost": _cost(conv),
               "stops": _stops(conv)}
    return context, arms
