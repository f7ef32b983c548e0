"""The report in a real browser: headless Debian chromium renders the fixture
sweep's report offline; the rendered figures equal the metric functions and
screenshots of the leaderboard and of a failed transcript are taken.

Set TAURAY_DOC_SCREENSHOTS=1 to also copy the screenshots into docs/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tauray.results.report.values import transcript_href

from .figures import (
    check_index_figures,
    elements,
    failed_telecom_conversation,
    rendered_counts,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _run(cmd: list[str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def dump_dom(chromium: list[str], page: Path) -> str:
    return _run([*chromium, "--dump-dom", page.as_uri()])


def screenshot(chromium: list[str], page: Path, target: Path, size: str) -> Path:
    _run([*chromium, f"--screenshot={target}", f"--window-size={size}", "--hide-scrollbars", page.as_uri()])
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, f"{target} is not a real screenshot"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert f"{width},{height}" == size
    return target


def test_report_renders_in_chromium_with_the_metrics_figures(chromium, report_dir, fixture_sweep, tmp_path):
    index = report_dir / "index.html"
    dom = dump_dom(chromium, index)
    rendered, total = rendered_counts(dom)
    assert total >= 8 and rendered == total
    checked = check_index_figures(dom, fixture_sweep)
    assert checked["leaderboard"] >= 44 and checked["judge"] > 0 and checked["paired"] > 0

    row = failed_telecom_conversation(fixture_sweep)
    transcript = report_dir / transcript_href(row["run_id"], row["conversation_id"])
    tdom = dump_dom(chromium, transcript)
    els = elements(tdom)
    assert [(a["data-side"], a["data-function"]) for _, a in els if a.get("data-met") == "false"] == [
        ("user", "assert_service_status")]
    assert "device.airplane_mode" in [a["data-field"] for _, a in els if a.get("data-db-side") == "user"]

    shots = [screenshot(chromium, index, tmp_path / "report-leaderboard.png", "1400,1000"),
             screenshot(chromium, transcript, tmp_path / "report-transcript.png", "1300,1500")]
    if os.environ.get("TAURAY_DOC_SCREENSHOTS") == "1":
        DOCS.mkdir(exist_ok=True)
        for shot in shots:
            shutil.copyfile(shot, DOCS / shot.name)
