"""A duplex conversation's timeline as inline SVG: two lanes (caller above, agent below) on the
simulated clock, each ``segments`` row a bar coloured by its kind, and marks for what the rows say
happened: overlaps (both sides speaking), barge-ins (a caller turn begun over the agent), yields
(a speaker cut short at ``cut_at_s``; its audio ran on to ``end_s``) and the short events
(backchannels, vocal tics, out-of-turn speech) that would be too thin to see as bars.

Drawn from the table's columns alone (nothing recomputed but where the two sides' bars
intersect), every bar and mark carrying its values in ``data-*`` attributes and the time a click
plays the recording from (``data-seek``); the shared script (``assets/style.py``) does the
seeking, since the report's Content-Security-Policy allows no inline script.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from tauray.results.tables.records.segment import from_frames, to_frame

e = html.escape

SIDES = (("user", "caller"), ("agent", "agent"))
"""Lane order, top to bottom: the table's side name and what the page calls it."""
COLOURS = {"speech": {"user": "#b35c00", "agent": "#1f5fa8"}, "backchannel": "#2a9d5b", "vocal_tic": "#7b4fb3",
           "out_of_turn": "#a8862b"}
SHORT_KINDS = ("backchannel", "vocal_tic", "out_of_turn")
"""Kinds marked by a point as well as a bar (they last a fraction of a second)."""
LEFT, TOP, LANE_H, MARK_H, GAP = 64, 24, 26, 14, 16
TICK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300)


def _colour(side: str, kind: str) -> str:
    c = COLOURS.get(kind, "#56626e")
    return c[side] if isinstance(c, dict) else c


def _s(x: Any) -> str:
    """A time as its data-* text: the table's value, shortest form ('' when null)."""
    return "" if x is None else f"{float(x):g}"


def overlaps(segments: Sequence[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """Stretches where both sides speak (any kind), in order, touching stretches joined; counted in
    20 ms frames, as the segments are."""
    frames: dict[str, list[tuple[int, int]]] = {"user": [], "agent": []}
    for s in segments:
        frames.setdefault(str(s["side"]), []).append((to_frame(s["start_s"]), to_frame(s["end_s"])))
    both = sorted((max(us, as_), min(ue, ae)) for us, ue in frames["user"] for as_, ae in frames["agent"]
                  if max(us, as_) < min(ue, ae))
    joined: list[tuple[int, int]] = []
    for start, end in both:
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return [(from_frames(a), from_frames(b)) for a, b in joined]


def marks(segments: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, float, str]]:
    """(mark, side, time, description) of each event the rows record: a barge-in where a turn
    began over the other side, a yield where a speaker was cut short, and each short event."""
    out = []
    for s in segments:
        side, kind, who = str(s["side"]), str(s["kind"]), "caller" if s["side"] == "user" else "agent"
        if kind == "speech" and s["started_over_other"]:
            out.append(("barge-in", side, float(s["start_s"]), f"{who} began a turn over the other side"))
        if s["cut_at_s"] is not None:
            why = ("told to stop (barge-in)" if side == "agent" else "chose to yield")
            out.append(("yield", side, float(s["cut_at_s"]), f"{who} {why} at {float(s['cut_at_s']):.2f} s; its "
                        f"audio stopped at {float(s['end_s']):.2f} s; {s['words_cut']} words not said"))
        if kind in SHORT_KINDS:
            out.append((kind, side, float(s["start_s"]), f"{who} {kind.replace('_', ' ')}: {s['text']}"))
    return out


def _step(px_per_s: float) -> int:
    return next((t for t in TICK_STEPS if t * px_per_s >= 48), TICK_STEPS[-1])


def _mark(kind: str, side: str, at: float, x: float, y: float, title: str) -> str:
    """One point mark in the band above a lane (y: the band's bottom)."""
    attrs = f'data-mark="{kind}" data-side="{side}" data-at-s="{_s(at)}" data-seek="{_s(at)}" class="tl-mark"'
    tip = f"<title>{e(title)}</title>"
    if kind == "barge-in":
        return f'<path d="M{x - 5:.1f},{y - 9:.1f} L{x + 5:.1f},{y - 9:.1f} L{x:.1f},{y:.1f} Z" fill="#c0262d" {attrs}>{tip}</path>'
    if kind == "yield":
        return (f'<rect x="{x - 4:.1f}" y="{y - 9:.1f}" width="8" height="8" fill="#1d232a" {attrs}>{tip}</rect>')
    colour = COLOURS[kind]
    if kind == "backchannel":
        return (f'<path d="M{x:.1f},{y - 10:.1f} L{x + 4.5:.1f},{y - 5:.1f} L{x:.1f},{y:.1f} L{x - 4.5:.1f},'
                f'{y - 5:.1f} Z" fill="{colour}" {attrs}>{tip}</path>')
    if kind == "vocal_tic":
        return f'<circle cx="{x:.1f}" cy="{y - 5:.1f}" r="4" fill="{colour}" {attrs}>{tip}</circle>'
    return f'<path d="M{x - 5:.1f},{y:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y - 9:.1f} Z" fill="{colour}" {attrs}>{tip}</path>'


def timeline_svg(segments: Sequence[Mapping[str, Any]], duration_s: float | None, *, svg_id: str,
                 audio_id: str | None) -> str:
    """The timeline of one conversation's ``segments`` rows (``duration_s``: the call's length on
    the clock; the last segment's end when unknown). ``audio_id``: the page's recording player,
    which a click on the timeline seeks (None: no recording kept)."""
    ends = [float(s["end_s"]) for s in segments]
    duration = max([float(duration_s or 0.0), *ends, 1.0])
    pps = min(40.0, max(8.0, 1100.0 / duration))
    plot_w = duration * pps
    width = round(LEFT + plot_w + 24)
    lane_y = {side: TOP + MARK_H + i * (LANE_H + MARK_H + GAP) for i, (side, _) in enumerate(SIDES)}
    bottom = lane_y["agent"] + LANE_H
    axis_y, legend_y = bottom + 16, bottom + 40
    height = legend_y + 12

    def x(t: float) -> float:
        return LEFT + t * pps

    body = [f'<rect class="tl-bg" x="{LEFT}" y="{TOP}" width="{plot_w:.1f}" height="{bottom - TOP}" '
            f'fill="#fafbfc"/>']
    step = _step(pps)
    for t in range(0, int(duration) + 1, step):
        body.append(f'<line x1="{x(t):.1f}" y1="{TOP}" x2="{x(t):.1f}" y2="{bottom}" stroke="#e3e7eb" '
                    f'pointer-events="none"/><text x="{x(t):.1f}" y="{axis_y}" text-anchor="middle">{t} s</text>')
    for side, name in SIDES:
        body.append(f'<text x="{LEFT - 8}" y="{lane_y[side] + 17}" text-anchor="end" font-weight="600">{name}</text>')
    for start, end in overlaps(segments):
        body.append(f'<rect x="{x(start):.1f}" y="{lane_y["user"]:.1f}" width="{max((end - start) * pps, 1):.1f}" '
                    f'height="{bottom - lane_y["user"]}" fill="#c0262d" fill-opacity="0.16" class="tl-overlap" '
                    f'data-mark="overlap" data-start-s="{_s(start)}" data-end-s="{_s(end)}" data-at-s="{_s(start)}" '
                    f'data-seek="{_s(start)}"><title>both speak {start:.2f}–{end:.2f} s</title></rect>')
    for s in segments:
        side, kind = str(s["side"]), str(s["kind"])
        y, x0 = lane_y[side], x(float(s["start_s"]))
        w = max((float(s["end_s"]) - float(s["start_s"])) * pps, 2.0)
        cut = s["cut_at_s"]
        flags = [f for f, on in (("began over the other side", s["started_over_other"]),
                                 ("the other side began over it", s["interrupted"])) if on]
        tip = (f"#{s['index']} {'caller' if side == 'user' else 'agent'} {kind.replace('_', ' ')} "
               f"{float(s['start_s']):.2f}–{float(s['end_s']):.2f} s"
               + (f", cut at {float(cut):.2f} s ({s['words_cut']} words not said)" if cut is not None else "")
               + (f", overlap {float(s['overlap_s']):.2f} s" if s["overlap_s"] else "")
               + (f" ({'; '.join(flags)})" if flags else "") + f"\nsaid: {s['text']}\nheard: {s['heard_text']}")
        h, dy = (LANE_H, 0) if kind == "speech" else (LANE_H - 8, 4)
        body.append(f'<rect x="{x0:.1f}" y="{y + dy}" width="{w:.1f}" height="{h}" rx="2" '
                    f'fill="{_colour(side, kind)}" class="tl-seg" data-segment="{s["index"]}" data-side="{e(side)}" '
                    f'data-kind="{e(kind)}" data-start-s="{_s(s["start_s"])}" data-end-s="{_s(s["end_s"])}" '
                    f'data-cut-at-s="{_s(cut)}" data-overlap-s="{_s(s["overlap_s"])}" '
                    f'data-started-over-other="{str(bool(s["started_over_other"])).lower()}" '
                    f'data-interrupted="{str(bool(s["interrupted"])).lower()}" '
                    f'data-words-spoken="{s["words_spoken"]}" data-words-cut="{s["words_cut"]}" '
                    f'data-seek="{_s(s["start_s"])}"><title>{e(tip)}</title></rect>')
        if cut is not None and float(s["end_s"]) > float(cut):  # the audio that ran on after the cut
            body.append(f'<rect x="{x(float(cut)):.1f}" y="{y + dy}" width="{(float(s["end_s"]) - float(cut)) * pps:.1f}" '
                        f'height="{h}" fill="#ffffff" fill-opacity="0.55" pointer-events="none"/>')
    for kind, side, at, title in marks(segments):
        body.append(_mark(kind, side, at, x(at), lane_y[side] - 2, title))
    body.append(f'<line class="tl-playhead" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#56626e" '
                f'stroke-width="1.5" stroke-dasharray="4 3" visibility="hidden" pointer-events="none"/>')
    legend = [("caller speech", COLOURS["speech"]["user"]), ("agent speech", COLOURS["speech"]["agent"]),
              ("backchannel ◆", COLOURS["backchannel"]), ("vocal tic ●", COLOURS["vocal_tic"]),
              ("out of turn ▲", COLOURS["out_of_turn"]), ("barge-in ▼", "#c0262d"), ("yield / cut ■", "#1d232a"),
              ("overlap", "#f2c6c7")]
    lx = LEFT
    for label, colour in legend:
        body.append(f'<rect x="{lx}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>'
                    f'<text x="{lx + 14}" y="{legend_y}">{e(label)}</text>')
        lx += 26 + 7 * len(label)
    width = max(width, lx + 10)
    title = f"timeline, {duration:.1f} s on the simulated clock"
    audio = f' data-audio="{e(audio_id)}"' if audio_id else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" id="{e(svg_id)}" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{e(title)}" data-x0="{LEFT}" '
            f'data-px-per-s="{pps:g}" data-duration-s="{_s(duration)}"{audio}><title>{e(title)}</title>'
            f'{"".join(body)}</svg>')


__all__ = ["marks", "overlaps", "timeline_svg"]
