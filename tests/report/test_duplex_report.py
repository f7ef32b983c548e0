"""The report's duplex view, piece by piece and without a run (issue 49, item 6): a conversation's
timeline carries every segment with its table values, the overlaps, barge-ins, yields and
backchannels marked, and the recording the row names; the interaction panel per cell shows the
stored metrics pooled as ``tauray/actors/voice/duplex/metrics.py`` pools them, each with its
count, an interval for a rate and a mark under 10 events; half against duplex shows the voice
facility's paired retention. The report of a real duplex sweep, in a browser, is
tests/report/test_duplex_browser.py."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tauray.actors.voice.analysis import paired_retention
from tauray.actors.voice.duplex.metrics import MIN_EVENTS, PANEL, InteractionMetrics, Measure, pool
from tauray.actors.voice.duplex.segments import Segment, timeline
from tauray.pipeline.report import SECTIONS, pooled_panel
from tauray.results.report.build import environment
from tauray.results.report.duplex import MIN_EVENTS as REPORT_MIN_EVENTS
from tauray.results.report.duplex import PANEL as REPORT_PANEL
from tauray.results.report.duplex import DuplexSection, duplex_fragment
from tauray.results.report.sections import Kit
from tauray.results.stats.intervals import rate_interval

from .figures import elements


def _kit(tmp_path: Path) -> Kit:
    return Kit(env=environment(), out_dir=tmp_path)


def _segments() -> list[dict]:
    """A busy call, by hand: the agent is cut by a barge-in (told to stop at 6.9 s, its audio stops
    at 8.0 s) after a backchannel it talked through; then a tic, an answer and an aside."""
    said = [Segment(unit_id="u1", side="user", kind="speech", start_s=0.0, end_s=3.0, words_spoken=6,
                    text="I need help with my phone", heard_text="I need help with my phone"),
            Segment(unit_id="u1", side="agent", kind="speech", start_s=3.6, end_s=8.0, cut_at_s=6.9,
                    words_spoken=9, words_cut=4, text="Sure, let me look at <your> account & check",
                    heard_text="sure let me look"),
            Segment(unit_id="u1", side="user", kind="backchannel", start_s=4.5, end_s=4.9, text="mm-hmm"),
            Segment(unit_id="u1", side="user", kind="speech", start_s=6.5, end_s=9.0, words_spoken=5,
                    text="Actually, it is the data"),
            Segment(unit_id="u1", side="user", kind="vocal_tic", start_s=10.0, end_s=10.3, text="<cough>"),
            Segment(unit_id="u1", side="agent", kind="speech", start_s=11.0, end_s=14.0, words_spoken=7,
                    text="Your data is turned off."),
            Segment(unit_id="u1", side="user", kind="out_of_turn", start_s=15.0, end_s=16.0, text="hold on, honey")]
    return [{**s.model_dump(), "run_id": "r1"} for s in timeline(said)]


def _row(**extra) -> dict:
    return {"run_id": "r1", "unit_id": "u1", "conversation_id": "u1", "attempt": 0, "turn_taking": "duplex",
            "duplex_duration_s": 17.0, "segments": 7, "recording_sha256": "ab" * 32, "labels_sha256": "cd" * 32,
            **InteractionMetrics(
                response_latency_s=Measure(value=0.6, n=2), yield_latency_s=Measure(value=1.5, n=1),
                response_rate=Measure(value=1.0, n=2), yield_rate=Measure(value=1.0, n=1),
                agent_interruption_rate=Measure(value=0.0, n=2), agent_interruptions=0,
                selectivity_backchannel=Measure(value=1.0, n=1), selectivity_vocal_tic=Measure(value=1.0, n=1),
                selectivity_non_directed=Measure(value=None, n=0)).columns("duplex_"), **extra}


def test_the_report_names_the_panel_and_the_small_count_as_the_metrics_do():
    assert [(name, symbol) for name, symbol, *_ in REPORT_PANEL] == [(name, symbol) for name, symbol, *_ in PANEL]
    assert REPORT_MIN_EVENTS == MIN_EVENTS
    assert [s.name for s in SECTIONS].count("duplex") == 1  # `tauray report` draws it


def test_the_timeline_marks_every_segment_with_its_table_values(tmp_path):
    rows = _segments()
    html = duplex_fragment(_kit(tmp_path), _row(), rows, audio_href="../../r1/audio/ab/x.flac",
                           labels_href="../../r1/audio/cd/y.txt")
    els = elements(html)
    bars = {int(a["data-segment"]): (tag, a) for tag, a in els if "data-segment" in a and tag == "rect"}
    assert sorted(bars) == [r["index"] for r in rows]
    for r in rows:
        tag, a = bars[r["index"]]
        assert (a["data-side"], a["data-kind"]) == (r["side"], r["kind"])
        assert float(a["data-start-s"]) == r["start_s"] and float(a["data-end-s"]) == r["end_s"]
        assert float(a["data-seek"]) == r["start_s"]  # a click plays the recording from its start
        assert float(a["data-overlap-s"]) == r["overlap_s"]
        assert a["data-cut-at-s"] == ("" if r["cut_at_s"] is None else f"{r['cut_at_s']:g}")
        assert a["data-started-over-other"] == str(r["started_over_other"]).lower()
        assert a["data-interrupted"] == str(r["interrupted"]).lower()
        assert (int(a["data-words-spoken"]), int(a["data-words-cut"])) == (r["words_spoken"], r["words_cut"])
    marks = [(a["data-mark"], a.get("data-side"), float(a["data-at-s"])) for _, a in els if "data-mark" in a
             and a["data-mark"] != "overlap"]
    assert ("barge-in", "user", 6.5) in marks and ("yield", "agent", 6.9) in marks
    assert ("backchannel", "user", 4.5) in marks and ("vocal_tic", "user", 10.0) in marks
    assert ("out_of_turn", "user", 15.0) in marks
    assert len([m for m in marks if m[0] == "barge-in"]) == 1  # the backchannel over the agent is not one
    overlaps = [(float(a["data-start-s"]), float(a["data-end-s"])) for _, a in els if a.get("data-mark") == "overlap"]
    assert overlaps == [(4.5, 4.9), (6.5, 8.0)]
    audio = [a for tag, a in els if tag == "audio"]
    assert len(audio) == 1 and audio[0]["src"] == "../../r1/audio/ab/x.flac"
    assert audio[0]["data-recording"] == "ab" * 32
    svg = next(a for tag, a in els if tag == "svg" and "timeline" in a.get("class", ""))
    assert svg["data-audio"] == audio[0]["id"] and float(svg["data-duration-s"]) == 17.0
    assert "../../r1/audio/cd/y.txt" in [a.get("href") for tag, a in els if tag == "a"]
    # the table text is escaped, never markup
    assert "<your>" not in html and "&lt;your&gt; account &amp; check" in html
    # the row's own panel, as stored, each with its count
    stored = {a["data-metric"]: a for _, a in els if a.get("data-scope") == "conversation"}
    assert float(stored["duplex_response_latency_s"]["data-value"]) == 0.6
    assert stored["duplex_response_latency_s"]["data-n"] == "2"
    assert stored["duplex_selectivity_non_directed"]["data-value"] == "NaN"


def test_without_a_kept_recording_the_timeline_has_no_player(tmp_path):
    html = duplex_fragment(_kit(tmp_path), _row(recording_sha256=None), _segments(), audio_href=None,
                           labels_href=None)
    els = elements(html)
    assert [tag for tag, _ in els if tag == "audio"] == []
    assert "not kept" in html
    assert len([a for tag, a in els if tag == "rect" and "data-segment" in a]) == 7


def _conv() -> pd.DataFrame:
    """Two duplex cells and the half cell both pair with; rates in cell 'd1' stand on 12 events
    (response rate) and on 3 (yield rate), so one is marked and one is not."""
    rows = []
    panels = {("d1", "s1"): (Measure(value=0.75, n=4), Measure(value=2 / 3, n=3), 1),
              ("d1", "s2"): (Measure(value=0.5, n=8), Measure(value=None, n=0), 3),
              ("d2", "s1"): (Measure(value=1.0, n=2), Measure(value=1.0, n=1), 0)}
    for (cell, scenario), (rr, ry, interruptions) in panels.items():
        m = InteractionMetrics(
            response_latency_s=Measure(value=0.84 if rr.n else None, n=round(rr.value * rr.n)),
            yield_latency_s=Measure(value=0.62 if ry.value else None, n=round((ry.value or 0) * ry.n)),
            response_rate=rr, yield_rate=ry, agent_interruption_rate=Measure(value=interruptions / rr.n, n=rr.n),
            agent_interruptions=interruptions, selectivity_backchannel=Measure(value=0.5, n=2),
            selectivity_vocal_tic=Measure(value=None, n=0), selectivity_non_directed=Measure(value=1.0, n=1))
        rows.append({"run_id": "r", "unit_id": f"{cell}-{scenario}", "conversation_id": f"{cell}-{scenario}",
                     "attempt": 0, "cell_id": cell, "arm": f"oracle | scripted [{cell}]", "scenario": scenario,
                     "trial": 0, "seed": 7 if scenario == "s1" else 8, "success": cell == "d1" or scenario == "s2",
                     "error_kind": None, "speech_profile": "control", "text_cell_id": "t",
                     "turn_taking": "duplex", **m.columns("duplex_")})
    for scenario, ok in (("s1", True), ("s2", True), ("s3", False)):
        rows.append({"run_id": "r", "unit_id": f"h-{scenario}", "conversation_id": f"h-{scenario}", "attempt": 0,
                     "cell_id": "h", "arm": "oracle | scripted [h]", "scenario": scenario, "trial": 0,
                     "seed": {"s1": 7, "s2": 8, "s3": 9}[scenario], "success": ok, "error_kind": None,
                     "speech_profile": "control", "text_cell_id": "t", "turn_taking": "half"})
    return pd.DataFrame(rows)


def test_the_panel_per_cell_is_the_stored_metrics_pooled(tmp_path):
    conv = _conv()
    html = DuplexSection(pooled_panel, paired_retention).index(tmp_path, conv, _kit(tmp_path))
    els = elements(html)
    figs = {(a["data-cell"], a["data-metric"]): a for _, a in els if a.get("data-scope") == "cell"}
    assert {c for c, _ in figs} == {"d1", "d2"}  # the half cell has no panel
    for cell, g in conv[conv["turn_taking"] == "duplex"].groupby("cell_id"):
        pooled = pool(InteractionMetrics.from_columns(r, "duplex_") for r in g.to_dict("records"))
        for name, *_ in PANEL:
            measure: Measure = getattr(pooled, name)
            a = figs[(cell, f"duplex_{name}")]
            assert a["data-value"] == ("NaN" if measure.value is None else f"{measure.value:.12g}"), (cell, name)
            assert int(a["data-n"]) == measure.n
            assert a["data-few"] == str(measure.n < MIN_EVENTS).lower()
    d1 = figs[("d1", "duplex_response_rate")]
    assert d1["data-n"] == "12" and d1["data-few"] == "false"
    lo, hi = rate_interval([4, 8], [3, 4])  # per scenario: eligible turns, turns answered
    assert math.isclose(float(d1["data-lo"]), lo) and math.isclose(float(d1["data-hi"]), hi)
    interruptions = figs[("d1", "duplex_agent_interruption_rate")]
    lo, hi = rate_interval([4, 8], [1, 3])  # the stored numerator, agent_interruptions
    assert math.isclose(float(interruptions["data-lo"]), lo) and math.isclose(float(interruptions["data-hi"]), hi)
    assert "data-lo" not in figs[("d1", "duplex_response_latency_s")]  # a latency has no interval
    few = figs[("d1", "duplex_yield_rate")]
    assert few["data-n"] == "3" and few["data-few"] == "true"
    few_cell = next(tag_attrs for tag_attrs in els if tag_attrs[1] is few)
    assert "few" in few_cell[1].get("class", "")
    assert "n&lt;10" in html or "n<10" in html


def test_half_against_duplex_is_the_voice_paired_retention(tmp_path):
    conv = _conv()
    els = elements(DuplexSection(pooled_panel, paired_retention).index(tmp_path, conv, _kit(tmp_path)))
    got = {a["data-cell"]: a for _, a in els if a.get("data-metric") == "duplex_retention"}
    assert set(got) == {"d1", "d2"}
    # d1 ran s1 and s2, as the half cell did, on the same seeds; both succeeded in both modes
    point, lo, hi = paired_retention(np.array([1.0, 1.0]), np.array([1.0, 1.0]))
    assert float(got["d1"]["data-value"]) == point and got["d1"]["data-tasks"] == "2"
    assert (got["d1"]["data-lo"], got["d1"]["data-hi"]) == (f"{lo:.12g}", f"{hi:.12g}")
    # d2 ran s1 only, and failed it
    point, lo, hi = paired_retention(np.array([0.0]), np.array([1.0]))
    assert float(got["d2"]["data-value"]) == point == 0.0 and got["d2"]["data-tasks"] == "1"
    assert got["d2"]["data-duplex-successes"] == "0" and got["d2"]["data-half-successes"] == "1"


def test_a_pair_on_another_seed_is_not_a_pair(tmp_path):
    conv = _conv()
    conv.loc[(conv["cell_id"] == "d2"), "seed"] = 99
    els = elements(DuplexSection(pooled_panel, paired_retention).index(tmp_path, conv, _kit(tmp_path)))
    got = {a["data-cell"]: a for _, a in els if a.get("data-metric") == "duplex_retention"}
    assert got["d2"]["data-tasks"] == "0" and got["d2"]["data-value"] == "NaN"


def test_a_run_without_duplex_gets_no_duplex_view(tmp_path):
    conv = _conv()
    half = conv[conv["turn_taking"] == "half"]
    section = DuplexSection(pooled_panel, paired_retention)
    assert section.index(tmp_path, half, _kit(tmp_path)) == ""
    assert section.index(tmp_path, half.drop(columns=["turn_taking"]), _kit(tmp_path)) == ""


@pytest.mark.parametrize("n, few", [(9, True), (10, False)])
def test_ten_events_is_where_the_mark_goes(tmp_path, n, few):
    conv = _conv()
    conv = conv[conv["cell_id"] == "d2"].copy()
    conv["duplex_response_rate_n"] = n
    els = elements(DuplexSection(pooled_panel, paired_retention).index(tmp_path, conv, _kit(tmp_path)))
    a = next(a for _, a in els if a.get("data-metric") == "duplex_response_rate" and a.get("data-scope") == "cell")
    assert a["data-few"] == str(few).lower()
