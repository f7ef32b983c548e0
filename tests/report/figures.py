"""Reading the report's figures back from HTML (static file or a browser's
dumped DOM) and checking them against the metric functions."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from tauray.results.report.index import pairs_to_compare
from tauray.results.stats import metrics
from tauray.results.stats.analysis import with_arms
from tauray.results.stats.judges import judge_agreement, repair_calls_by_model
from tauray.results.tables.readers import conversations_df, judge_verdicts_df, nl_verdicts_df

OPTS = {"n_boot": 1000, "seed": 0, "confidence": 0.95}  # build_report's defaults
K_MAX = 4


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))


def elements(text: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Collector()
    parser.feed(text)
    return parser.elements


def _same(shown: str, expected: float) -> bool:
    value = float(shown)  # 'NaN' parses to nan
    if math.isnan(value) or (isinstance(expected, float) and math.isnan(expected)):
        return math.isnan(value) and math.isnan(float(expected))
    return math.isclose(value, float(expected), rel_tol=1e-9, abs_tol=1e-9)


def check_index_figures(text: str, source: Path) -> dict[str, int]:
    """Every figure element of index.html equals the metric functions' output;
    returns how many figures of each kind were checked."""
    conv = with_arms(conversations_df(source))
    jv = judge_verdicts_df(source)
    lb = metrics.leaderboard(conv, by="arm", k_max=K_MAX, **OPTS).set_index("arm")
    curve = metrics.pass_k_curve(conv, range(1, K_MAX + 1), by="arm").set_index(["arm", "k"])
    arms = lb.index.tolist()
    pairs = {f"{a} vs {b}": metrics.paired_comparison(conv, a, b, by="arm", **OPTS).model_dump()
             for a, b in pairs_to_compare(arms)}
    ab = metrics.manual_vs_workflow(conv, by="arm", **OPTS).set_index("arm")
    ab = ab.rename(columns={"rate_a": "workflow", "rate_b": "manual"})
    judges = judge_agreement(conv, jv).set_index("label")
    repairs = repair_calls_by_model(jv, nl_verdicts_df(source))
    for m in repairs.values():
        m["repair_share"] = m["repair_calls"] / m["judge_calls"] if m["judge_calls"] else math.nan
    cost = metrics.cost_and_tokens(conv, by="arm").set_index("arm").rename(columns={"successes": "cost_successes"})
    stops = metrics.stop_reasons(conv, by="arm").set_index("arm")
    totals = metrics.counts(conv).iloc[0]
    checked: dict[str, int] = {}
    bad: list[str] = []

    def check(kind: str, shown: str, expected: float, what: str) -> None:
        checked[kind] = checked.get(kind, 0) + 1
        if not _same(shown, expected):
            bad.append(f"{kind} {what}: page {shown}, metrics {expected}")

    breakdowns: dict[str, pd.DataFrame] = {}
    for tag, a in elements(text):
        if "data-value" not in a or "data-metric" not in a:
            continue
        m, v = a["data-metric"], a["data-value"]
        if "data-dimension" in a:
            dim = a["data-dimension"]
            if dim not in breakdowns:
                breakdowns[dim] = metrics.breakdown(conv, dim, by="arm")
            bd = breakdowns[dim]
            row = bd[(bd["arm"] == a["data-arm"]) & (bd[a["data-dimension"]].astype(str) == a["data-level"])].iloc[0]
            check("breakdown", v, row[m], f"{a['data-arm']}/{a['data-level']}/{m}")
        elif "data-k" in a:
            check("pass_k", v, curve.loc[(a["data-arm"], int(a["data-k"])), m], f"{a['data-arm']} k={a['data-k']}")
        elif "data-pair" in a:
            check("paired", v, pairs[a["data-pair"]][m], f"{a['data-pair']} {m}")
        elif "data-ab-arm" in a:
            check("ab", v, ab.loc[a["data-ab-arm"], m], f"{a['data-ab-arm']} {m}")
        elif "data-judge-model" in a:
            check("repairs", v, repairs[a["data-judge-model"]][m], f"{a['data-judge-model']} {m}")
        elif "data-judge" in a:
            check("judge", v, judges.loc[a["data-judge"], m], f"{a['data-judge']} {m}")
        elif m.startswith("stops_"):
            check("stops", v, stops.loc[a["data-arm"], m.removeprefix("stops_")], f"{a['data-arm']} {m}")
        elif "data-arm" in a and m in cost.columns and m not in lb.columns:
            check("cost", v, cost.loc[a["data-arm"], m], f"{a['data-arm']} {m}")
        elif "data-arm" in a:
            check("leaderboard", v, lb.loc[a["data-arm"], m], f"{a['data-arm']} {m}")
        elif m.startswith("total_"):
            check("totals", v, totals[m[len("total_"):]], m)
    assert not bad, "\n".join(bad)
    return checked


def rendered_counts(dom: str) -> tuple[int, int]:
    """(charts laid out with a size, charts) as the page's own script recorded them."""
    body = next(a for tag, a in elements(dom) if tag == "body")
    assert body.get("data-render-check") == "done", "the page's render check did not run"
    return int(body["data-svg-rendered"]), int(body["data-svg-total"])


def failed_telecom_conversation(source: Path) -> pd.Series:
    """A failed telecom conversation whose user-side DB differs from gold:
    the oracle agent with an LLM user that never toggles airplane mode."""
    conv = conversations_df(source, run="oracle-llmuser", scenario="tau2_telecom__service_issue__airplane_mode_on")
    failed = conv[conv["success"] == False]
    assert len(failed), "the fixture should have a failed airplane-mode conversation"
    return failed.sort_values("trial").iloc[0]
