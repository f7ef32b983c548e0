"""A real duplex sweep end to end and the duplex view of its report (issue 49, items 1 and 6): a
small half-against-duplex sweep (the reference policies over two mock tasks, espeak-ng, the
packaged Whisper, Silero's VAD, a busy caller, every recording kept) through the real CLI. Its
segments table, recordings and label tracks land, and its duplex cell run again into a fresh
folder gives the same timelines and recordings, hash for hash. Its report's
duplex pages carry the segments table's values and link the recording the row names, the index's
panel is the engine's pool of the stored rows and its retention the voice report's paired
retention; and in headless chromium, driven over the DevTools protocol, a click on a segment or
on the clock seeks the page's player to that time in that very recording.

Set TAURAY_DOC_SCREENSHOTS=1 to also copy the screenshots into docs/.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from tauray.actors.voice.analysis import paired_retention
from tauray.actors.voice.duplex.metrics import MIN_EVENTS, PANEL, InteractionMetrics, Measure, pool
from tauray.results import conversations_df, segments_df
from tauray.results.report.values import transcript_href
from tauray.results.tables.layout import LABELS_SUFFIX, audio_path
from tauray.results.tables.readers import plain_records

from .figures import elements

pytestmark = pytest.mark.slow  # Ray, child processes, speech models, a browser

DOCS = Path(__file__).resolve().parents[2] / "docs"
SWEEP = """
    name = "duplex-report"
    agents = ["oracle"]
    users = ["scripted"]
    [[scenarios]]
    domain = "mock"
    limit = 2
    [cluster]
    actor_cpus = 0.0
    [voice]
    profiles = ["control"]
    turn_taking = ["half", "duplex"]
    tts = "local/espeak-ng"
    asr = "local/whisper-tiny.en"
    keep_audio = "all"
    duplex_rules = { backchannel_probability = 0.6, interrupt_probability = 0.3, vocal_tic_per_min = 4.0, out_of_turn_per_min = 3.0 }
"""


def _sweep(root: Path, text: str) -> Path:
    (root / "sweep.toml").write_text(textwrap.dedent(text))
    done = subprocess.run([sys.executable, "-m", "tauray", "sweep", str(root / "sweep.toml"), "--out",
                           str(root / "run"), "--json", "--no-progress"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return root / "run"


@pytest.fixture(scope="module")
def duplex_sweep(tmp_path_factory) -> Path:
    return _sweep(tmp_path_factory.mktemp("duplex-sweep"), SWEEP)


def test_a_duplex_sweep_lands_and_its_duplex_cell_repeats_bit_for_bit(duplex_sweep, tmp_path):
    conv = conversations_df(duplex_sweep)
    assert len(conv) == 4 and conv["error_kind"].isna().all()
    duplex = conv[conv["turn_taking"] == "duplex"].sort_values("unit_id").reset_index(drop=True)
    assert len(duplex) == 2 and (duplex["duplex_timing"] == "declared").all()
    assert (duplex["duplex_response_rate_n"] >= 1).all()
    seg = segments_df(duplex_sweep)
    assert len(seg) == duplex["segments"].sum() > 0 and set(seg["side"]) == {"agent", "user"}
    for _, row in duplex.iterrows():
        assert audio_path(duplex_sweep, row["recording_sha256"]).read_bytes()[:4] == b"fLaC"
        assert audio_path(duplex_sweep, f"{row['labels_sha256']}{LABELS_SUFFIX}").exists()
    # the duplex cell alone on its first task, run again: the same cell and unit ids and seeds,
    # the same timelines
    alone = SWEEP.replace('turn_taking = ["half", "duplex"]', 'turn_taking = ["duplex"]').replace(
        "limit = 2", "limit = 1")
    assert alone.count('["duplex"]') == 1 and "limit = 1" in alone
    again = conversations_df(_sweep(tmp_path, alone)).set_index("unit_id").sort_index()
    first = duplex.set_index("unit_id").loc[again.index]  # KeyError: a unit id that moved
    assert len(again) == 1
    for column in ("segments_sha256", "recording_sha256", "labels_sha256"):
        assert list(again[column]) == list(first[column]), column


@pytest.fixture(scope="module")
def duplex_report(duplex_sweep, tmp_path_factory) -> Path:
    from tauray.pipeline.report import write_report

    out = tmp_path_factory.mktemp("duplex-report")
    write_report(duplex_sweep, out, n_boot=200)
    return out


def _duplex(run: Path) -> list[dict[str, Any]]:
    conv = conversations_df(run)
    rows = plain_records(conv[conv["turn_taking"] == "duplex"])
    assert len(rows) == 2 and all(r["segments"] > 0 for r in rows)
    return rows


def _busiest(run: Path) -> dict[str, Any]:
    return max(_duplex(run), key=lambda r: (r["segments"], r["scenario"]))


def test_each_duplex_page_carries_its_segments_and_its_recording(duplex_sweep, duplex_report):
    seg = segments_df(duplex_sweep)
    for row in _duplex(duplex_sweep):
        page = duplex_report / transcript_href(row["run_id"], row["conversation_id"])
        els = elements(page.read_text(encoding="utf-8"))
        rows = plain_records(seg[(seg["unit_id"] == row["unit_id"]) & (seg["attempt"] == row["attempt"])]
                             .sort_values("index"))
        assert len(rows) == row["segments"]
        bars = {int(a["data-segment"]): a for tag, a in els if tag == "rect" and "data-segment" in a}
        assert sorted(bars) == [r["index"] for r in rows]
        for r in rows:
            a = bars[r["index"]]
            assert (a["data-side"], a["data-kind"]) == (r["side"], r["kind"])
            assert [float(a[k]) for k in ("data-start-s", "data-end-s", "data-overlap-s")] == [
                r["start_s"], r["end_s"], r["overlap_s"]]
            assert a["data-cut-at-s"] == ("" if r["cut_at_s"] is None else f"{r['cut_at_s']:g}")
            assert a["data-started-over-other"] == str(r["started_over_other"]).lower()
            assert a["data-interrupted"] == str(r["interrupted"]).lower()
            assert (int(a["data-words-spoken"]), int(a["data-words-cut"])) == (r["words_spoken"], r["words_cut"])
        marks = [(a["data-mark"], float(a["data-at-s"])) for _, a in els if "data-mark" in a]
        assert sorted(m for m in marks if m[0] == "barge-in") == sorted(
            ("barge-in", r["start_s"]) for r in rows if r["kind"] == "speech" and r["started_over_other"])
        for kind in ("backchannel", "vocal_tic", "out_of_turn"):
            assert sorted(m for m in marks if m[0] == kind) == sorted((kind, r["start_s"]) for r in rows
                                                                      if r["kind"] == kind)
        # the player plays the file the row names, by a path relative to the page
        audio = [a for tag, a in els if tag == "audio"]
        assert len(audio) == 1 and audio[0]["data-recording"] == row["recording_sha256"]
        assert (page.parent / audio[0]["src"]).resolve() == audio_path(duplex_sweep, row["recording_sha256"]).resolve()
        labels = audio_path(duplex_sweep, f"{row['labels_sha256']}{LABELS_SUFFIX}").resolve()
        assert labels in [(page.parent / a["href"]).resolve() for tag, a in els if tag == "a" and a.get("download") == ""]
        stored = {a["data-metric"]: a for _, a in els if a.get("data-scope") == "conversation"}
        for name, *_ in PANEL:
            value = row[f"duplex_{name}"]
            a = stored[f"duplex_{name}"]
            assert a["data-value"] == ("NaN" if value is None else f"{value:.12g}")
            assert int(a["data-n"]) == row[f"duplex_{name.removesuffix('_s')}_n"]


def test_the_index_shows_the_engines_pooled_panel_and_the_paired_retention(duplex_sweep, duplex_report):
    els = elements((duplex_report / "index.html").read_text(encoding="utf-8"))
    conv = conversations_df(duplex_sweep)
    duplex = conv[conv["turn_taking"] == "duplex"]
    (cell,) = set(duplex["cell_id"])
    pooled = pool(InteractionMetrics.from_columns(r, "duplex_") for r in plain_records(duplex))
    figs = {a["data-metric"]: a for _, a in els if a.get("data-scope") == "cell" and a.get("data-cell") == cell}
    for name, *_ in PANEL:
        measure: Measure = getattr(pooled, name)
        a = figs[f"duplex_{name}"]
        assert a["data-value"] == ("NaN" if measure.value is None else f"{measure.value:.12g}")
        assert int(a["data-n"]) == measure.n and a["data-few"] == str(measure.n < MIN_EVENTS).lower()
    # half against duplex on the tasks both ran on one seed: the voice report's retention
    half = conv[conv["turn_taking"] == "half"]
    pairs = duplex.merge(half, on=["scenario", "trial", "seed"], suffixes=("_d", "_h")).sort_values(["scenario", "trial"])
    assert len(pairs) == 2  # a duplex unit takes its half-duplex twin's seed
    d = (pairs["success_d"] == True).to_numpy(dtype=float)  # noqa: E712
    h = (pairs["success_h"] == True).to_numpy(dtype=float)  # noqa: E712
    point, lo, hi = paired_retention(d, h)
    a = figs["duplex_retention"]
    assert a["data-tasks"] == "2" and int(a["data-half-successes"]) == h.sum()
    for key, value in (("data-value", point), ("data-lo", lo), ("data-hi", hi)):
        assert a[key] == ("NaN" if math.isnan(value) else f"{value:.12g}"), key


class DevTools:
    """Headless chromium driven over the DevTools protocol (a real click, a real player)."""

    def __init__(self, chromium: list[str], profile: Path) -> None:
        from websockets.sync.client import connect  # lazy: the live extra; the test skips without it

        self.log, self.stack = profile / "chromium.log", ExitStack()
        args = [a for a in chromium if not a.startswith("--user-data-dir=")]
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([*args, f"--user-data-dir={profile / 'data'}", "--remote-debugging-port=0",
                                          "--remote-allow-origins=*", "about:blank"], stdout=log, stderr=log)
        deadline, url = time.monotonic() + 60, None
        while url is None and time.monotonic() < deadline:
            found = re.search(r"DevTools listening on (ws://\S+)", self.log.read_text(errors="replace"))
            url = found.group(1) if found else time.sleep(0.1)
        assert url, self.log.read_text(errors="replace")[-2000:]
        self.ws = self.stack.enter_context(connect(url, max_size=None, open_timeout=30))
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == self.next_id:
                assert "error" not in reply, (method, reply["error"])
                return reply["result"]

    def open(self, page: Path) -> str:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", {"width": 1300, "height": 1000, "deviceScaleFactor": 1,
                                                         "mobile": False}, session)
        self.send("Page.navigate", {"url": page.as_uri()}, session)
        self.wait(session, "document.readyState === 'complete' && document.body.dataset.renderCheck === 'done'")
        return session

    def eval(self, session: str, expression: str) -> Any:
        got = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                        session)
        assert "exceptionDetails" not in got, got["exceptionDetails"]
        return got["result"].get("value")

    def wait(self, session: str, condition: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not self.eval(session, f"!!({condition})"):
            assert time.monotonic() < deadline, f"timed out waiting for {condition}"
            time.sleep(0.1)

    def rect(self, session: str, selector: str) -> dict[str, float]:
        return self.eval(session, f"(function(){{var el=document.querySelector({json.dumps(selector)});"
                                  "el.scrollIntoView({block:'center',inline:'center'});"
                                  "var r=el.getBoundingClientRect();return {x:r.left,y:r.top,w:r.width,h:r.height};})()")

    def click(self, session: str, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                      session)

    def screenshot(self, session: str, selector: str, target: Path) -> Path:
        self.eval(session, "window.scrollTo(0,0)")
        box = self.eval(session, f"(function(){{var r=document.querySelector({json.dumps(selector)})"
                                 ".getBoundingClientRect();return {x:r.left+window.scrollX,y:r.top+window.scrollY,"
                                 "w:r.width,h:r.height};})()")
        clip = {"x": max(box["x"] - 12, 0), "y": max(box["y"] - 8, 0), "width": min(box["w"] + 24, 1300),
                "height": box["h"] + 16, "scale": 1}
        data = self.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True},
                         session)["data"]
        target.write_bytes(base64.b64decode(data))
        png = target.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, f"{target} is not a real screenshot"
        return target

    def close(self) -> None:
        self.stack.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def test_a_click_on_the_timeline_plays_the_recording_from_there(chromium, duplex_sweep, duplex_report, tmp_path):
    pytest.importorskip("websockets")
    row = _busiest(duplex_sweep)
    page = duplex_report / transcript_href(row["run_id"], row["conversation_id"])
    browser = DevTools(chromium, tmp_path)
    try:
        session = browser.open(page)
        assert browser.eval(session, "document.body.dataset.svgRendered === document.body.dataset.svgTotal")
        assert browser.eval(session, "document.querySelectorAll('svg.timeline rect[data-segment]').length") == \
            row["segments"]
        # the player holds the recording the row names, the whole call long
        src = browser.eval(session, "document.getElementById('duplex-audio').src")
        assert Path(unquote(urlparse(src).path)).resolve() == audio_path(duplex_sweep, row["recording_sha256"]).resolve()
        browser.wait(session, "document.getElementById('duplex-audio').readyState >= 1")
        assert math.isclose(browser.eval(session, "document.getElementById('duplex-audio').duration"),
                            row["duplex_duration_s"], abs_tol=0.05)
        # a click on the agent's longest segment plays from its start
        seg = segments_df(duplex_sweep)
        agent = seg[(seg["unit_id"] == row["unit_id"]) & (seg["side"] == "agent")]
        target = agent.assign(length=agent["end_s"] - agent["start_s"]).sort_values("length").iloc[-1]
        box = browser.rect(session, f'rect[data-segment="{int(target["index"])}"]')
        browser.click(session, box["x"] + box["w"] / 2, box["y"] + box["h"] / 2)
        browser.wait(session, "document.getElementById('duplex-audio').hasAttribute('data-seeked-s')")
        audio = "document.getElementById('duplex-audio')"
        assert float(browser.eval(session, f"{audio}.getAttribute('data-seek-s')")) == target["start_s"]
        assert math.isclose(float(browser.eval(session, f"{audio}.getAttribute('data-seeked-s')")),
                            target["start_s"], abs_tol=0.05)
        # a click on a silent point of the clock plays from that point
        mine = seg[seg["unit_id"] == row["unit_id"]]
        ends = sorted(mine["end_s"])
        gap = next(t + 0.5 for t in ends if not ((mine["start_s"] <= t + 0.5) & (mine["end_s"] > t + 0.5)).any()
                   and t + 0.5 < row["duplex_duration_s"])
        lane = browser.rect(session, 'rect[data-segment="0"]')
        svg = browser.eval(session, "(function(){var s=document.querySelector('svg.timeline'),"
                                    "r=s.getBoundingClientRect();return {x:r.left,k:r.width/s.viewBox.baseVal.width,"
                                    "x0:+s.dataset.x0,pps:+s.dataset.pxPerS};})()")
        browser.click(session, svg["x"] + (svg["x0"] + gap * svg["pps"]) * svg["k"], lane["y"] + lane["h"] / 2)
        browser.wait(session, f"Math.abs(parseFloat({audio}.getAttribute('data-seek-s')) - {gap}) < 0.2")
        assert math.isclose(float(browser.eval(session, "document.querySelector('svg.timeline')"
                                                        ".getAttribute('data-seeked-s')")), gap, abs_tol=0.1)
        browser.eval(session, f"{audio}.pause()")
        shots = [browser.screenshot(session, "#duplex", tmp_path / "report-duplex-timeline.png")]
        index = browser.open(duplex_report / "index.html")
        assert browser.eval(index, "document.querySelectorAll('#duplex td[data-scope=cell]').length") == \
            len(PANEL) + 1  # the eight metrics and the retention
        shots.append(browser.screenshot(index, "#duplex", tmp_path / "report-duplex-panel.png"))
    finally:
        browser.close()
    if os.environ.get("TAURAY_DOC_SCREENSHOTS") == "1":
        for shot in shots:
            shutil.copyfile(shot, DOCS / shot.name)

