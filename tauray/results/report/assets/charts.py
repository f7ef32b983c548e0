"""Inline SVG charts drawn from metric tables (bars with intervals, lines,
forest plots, a heatmap). Every mark carries its figure in data-* attributes."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

PALETTE = ["#1f5fa8", "#d1731b", "#2a9d5b", "#b33a3a", "#7b4fb3", "#2b9aa8", "#a8862b", "#c05794", "#56626e",
           "#6aa84f"]
e = html.escape


def _ok(x: Any) -> bool:
    try:
        return x is not None and x is not pd.NA and not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _v(x: Any) -> str:
    return f"{float(x):.12g}" if _ok(x) else "NaN"


def _svg(width: int, height: int, title: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{e(title)}"><title>{e(title)}</title>'
            f'<text x="4" y="14" font-weight="600">{e(title)}</text>{body}</svg>')


def _legend(arms: Sequence[str], x: int, y: int) -> str:
    out = []
    for i, arm in enumerate(arms):
        yy = y + i * 16
        out.append(f'<rect x="{x}" y="{yy - 9}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
                   f'<text x="{x + 14}" y="{yy}">{e(arm)}</text>')
    return "".join(out)


def _axis(x0: float, width: float, top: float, bottom: float, ticks: Sequence[float], lo: float, hi: float) -> str:
    out = []
    for t in ticks:
        x = x0 + (t - lo) / (hi - lo) * width
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#e3e7eb"/>'
                   f'<text x="{x:.1f}" y="{bottom + 13}" text-anchor="middle">{t:g}</text>')
    return "".join(out)


def svg_bars(items: Sequence[tuple[str, Any, Any, Any]], *, groups: Sequence[tuple[str, Sequence[tuple]]] | None = None,
             arms: Sequence[str] | None = None, title: str = "") -> str:
    """Horizontal bars of rates in [0, 1] with interval whiskers; either one bar
    per item, or groups (a category) of one bar per arm."""
    if groups is None:
        groups = [(label, [(label, v, lo, hi)]) for label, v, lo, hi in items]
        arms = [label for label, *_ in items]
        legend = False
    else:
        legend = True
    arms = list(arms or [])
    label_w, bar_w, row_h = 300, 420, 16
    n_rows = sum(len(bars) for _, bars in groups) + (len(groups) if legend else 0)
    height = 40 + n_rows * row_h + 24 + (16 * len(arms) if legend else 0)
    width = label_w + bar_w + 70
    top, y = 26, 26.0
    body = [_axis(label_w, bar_w, top, top + n_rows * row_h + 4, [0, 0.25, 0.5, 0.75, 1], 0, 1)]
    for category, bars in groups:
        if legend:
            body.append(f'<text x="4" y="{y + 12:.1f}" font-weight="600">{e(category)}</text>')
            y += row_h
        for arm, v, lo, hi in bars:
            color = PALETTE[arms.index(arm) % len(PALETTE)] if arm in arms else PALETTE[0]
            text = arm if not legend else ""
            if text:
                body.append(f'<text x="{label_w - 6}" y="{y + 12:.1f}" text-anchor="end">{e(text[:46])}</text>')
            if _ok(v):
                w = float(v) * bar_w
                body.append(f'<rect x="{label_w}" y="{y + 2:.1f}" width="{w:.1f}" height="{row_h - 4}" fill="{color}" '
                            f'data-arm="{e(arm)}" data-category="{e(category)}" data-value="{_v(v)}"/>')
                if _ok(lo) and _ok(hi):
                    x1, x2 = label_w + float(lo) * bar_w, label_w + float(hi) * bar_w
                    ym = y + row_h / 2
                    body.append(f'<line x1="{x1:.1f}" y1="{ym:.1f}" x2="{x2:.1f}" y2="{ym:.1f}" stroke="#222"/>'
                                f'<line x1="{x1:.1f}" y1="{ym - 4:.1f}" x2="{x1:.1f}" y2="{ym + 4:.1f}" stroke="#222"/>'
                                f'<line x1="{x2:.1f}" y1="{ym - 4:.1f}" x2="{x2:.1f}" y2="{ym + 4:.1f}" stroke="#222"/>')
                body.append(f'<text x="{label_w + bar_w + 6}" y="{y + 12:.1f}">{float(v):.3f}</text>')
            else:
                body.append(f'<text x="{label_w + 4}" y="{y + 12:.1f}" fill="#8a949e">no rows</text>')
            y += row_h
    if legend:
        body.append(_legend(arms, label_w, int(y + 34)))
    return _svg(width, height, title, "".join(body))


def svg_lines(series: dict[str, list[tuple[int, Any]]], *, title: str = "") -> str:
    """Lines of a rate in [0, 1] against an integer x (k), one per arm."""
    ks = sorted({k for pts in series.values() for k, _ in pts}) or [1]
    left, plot_w, plot_h, top = 48, 420, 240, 30
    width = left + plot_w + 44 + 7 * max([len(a) for a in series] + [10])
    kmin, kmax = min(ks), max(ks)
    span = (kmax - kmin) or 1

    def xy(k: int, v: float) -> tuple[float, float]:
        return left + (k - kmin) / span * plot_w, top + (1 - v) * plot_h

    body = []
    for t in (0, 0.25, 0.5, 0.75, 1):
        yy = top + (1 - t) * plot_h
        body.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + plot_w}" y2="{yy:.1f}" stroke="#e3e7eb"/>'
                    f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{t:g}</text>')
    for k in ks:
        x, _ = xy(k, 0)
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">k={k}</text>')
    for i, (arm, pts) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        good = [(k, float(v)) for k, v in pts if _ok(v)]
        if len(good) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(k, v) for k, v in good))
            body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for k, v in good:
            x, y = xy(k, v)
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}" data-arm="{e(arm)}" data-k="{k}" '
                        f'data-value="{_v(v)}"><title>{e(arm)} pass^{k} = {v:.3f}</title></circle>')
    body.append(_legend(list(series), left + plot_w + 24, top + 10))
    height = max(top + plot_h + 30, top + 20 + 16 * len(series))
    return _svg(width, height, title, "".join(body))


def svg_forest(items: Sequence[tuple[str, Any, Any, Any]], *, title: str = "") -> str:
    """Differences in [-1, 1] with their intervals, one row each, zero marked."""
    label_w, plot_w, row_h, top = 360, 360, 20, 26
    height = top + row_h * len(items) + 28
    body = [_axis(label_w, plot_w, top, top + row_h * len(items), [-1, -0.5, 0, 0.5, 1], -1, 1)]
    zero = label_w + plot_w / 2
    body.append(f'<line x1="{zero}" y1="{top}" x2="{zero}" y2="{top + row_h * len(items)}" stroke="#56626e"/>')
    for i, (label, d, lo, hi) in enumerate(items):
        y = top + i * row_h + row_h / 2
        body.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end">{e(label[:56])}</text>')
        if _ok(lo) and _ok(hi):
            x1, x2 = zero + float(lo) * plot_w / 2, zero + float(hi) * plot_w / 2
            body.append(f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" stroke="#222" stroke-width="1.5"/>')
        if _ok(d):
            x = zero + float(d) * plot_w / 2
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{PALETTE[0]}" data-label="{e(label)}" '
                        f'data-value="{_v(d)}"/><text x="{label_w + plot_w + 8}" y="{y + 4:.1f}">{float(d):+.3f}</text>')
    return _svg(label_w + plot_w + 70, height, title, "".join(body))


def _heat_color(v: float) -> str:
    lo, hi = (247, 251, 255), (8, 81, 156)
    t = min(1.0, max(0.0, v))
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(lo, hi))


def svg_heatmap(pairs: pd.DataFrame, *, title: str = "") -> str:
    """Rater × rater agreement (colour) with κ in brackets."""
    raters = list(dict.fromkeys(pairs["rater_a"]))
    cell, label_w, top = 96, 300, 26
    n = len(raters)
    body = []
    for j, r in enumerate(raters):
        x = label_w + j * cell + cell / 2
        body.append(f'<text x="{x:.1f}" y="{top + n * cell + 14}" text-anchor="middle">R{j + 1}</text>')
    for i, ra in enumerate(raters):
        y = top + i * cell
        body.append(f'<text x="{label_w - 8}" y="{y + cell / 2 + 4:.1f}" text-anchor="end">R{i + 1}: '
                    f"{e(ra[:40])}</text>")
        for j, rb in enumerate(raters):
            hit = pairs[(pairs["rater_a"] == ra) & (pairs["rater_b"] == rb)]
            agree, kappa = (hit["agreement"].iloc[0], hit["kappa"].iloc[0]) if len(hit) else (math.nan, math.nan)
            x = label_w + j * cell
            fill = _heat_color(float(agree)) if _ok(agree) else "#eeeeee"
            ink = "#fff" if _ok(agree) and float(agree) > 0.6 else "#1d232a"
            body.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}" '
                        f'data-rater-a="{e(ra)}" data-rater-b="{e(rb)}" data-agreement="{_v(agree)}" '
                        f'data-kappa="{_v(kappa)}"/>')
            text = (f"{float(agree):.2f}" if _ok(agree) else "–") + (f" ({float(kappa):.2f})" if _ok(kappa) else "")
            body.append(f'<text x="{x + cell / 2 - 1:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                        f'style="fill:{ink}">{e(text)}</text>')
    return _svg(label_w + n * cell + 20, top + n * cell + 26, title, "".join(body))
