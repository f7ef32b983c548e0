"""The report of a voice run: the per-profile table on the index (from voice_table), and on a
voice conversation's page every utterance with players for both sides (the run folder's own
audio files by relative path), spoken next to heard and the lost identifiers marked; rendered
in a real browser (headless chromium, installed by the shared fixture where missing), screenshots into docs/img with
TAURAY_DOC_SCREENSHOTS=1."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.voice.analysis import voice_table
from tauray.actors.voice.speaker import LocalSpeech
from tauray.pipeline.report import write_report
from tauray.results.report.values import transcript_href
from tauray.results.tables.readers import utterances_df
from tauray.results.tables.writer import TableWriter
from tauray.scenarios import select_scenarios
from tests.units import make_units

pytestmark = pytest.mark.slow
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture(scope="module")
def voice_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("voice-run")
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    units = make_units("voice-report", names, voice={"profiles": ["text", "control"], "keep_audio": "all"})
    speech = LocalSpeech()
    with TableWriter(out, units[0].run_id) as writer:
        for unit in units:
            writer.add(asyncio.run(run_conversation(unit, AgentHost(), UserSimHost(), speech=speech)))
    return out


def _voice_page(run: Path, report: Path) -> tuple[Path, list[dict]]:
    utt = utterances_df(run)
    unit = str(utt["unit_id"].iloc[0])
    rows = utt[utt["unit_id"].astype(str) == unit]
    page = report / transcript_href(str(rows["run_id"].iloc[0]), unit)
    return page, rows.to_dict("records")


def test_the_report_shows_profiles_players_and_lost_identifiers(voice_run: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    write_report(voice_run, report, n_boot=200)
    index = (report / "index.html").read_text()
    assert 'id="voice"' in index
    table = voice_table(voice_run)
    for profile in ("text", "control"):
        value = float(table.loc[table["profile"] == profile, "success"].iloc[0])
        engines = str(table.loc[table["profile"] == profile, "engines"].iloc[0])  # each row names its engines
        assert re.search(rf'data-profile="{profile}" data-engines="{re.escape(engines)}" data-metric="voice_success" '
                         rf'data-value="{value}"', index)
    assert "media-src 'self' file:" in index  # the CSP lets the pages play the run's own files
    page, rows = _voice_page(voice_run, report)
    html = page.read_text()
    players = re.findall(r'<audio controls preload="none" src="([^"]+)" data-audio="(spoken|line)">', html)
    assert len(players) == 2 * len(rows)  # both sides of every utterance
    refs = {r for row in rows for r in (row["audio_ref"], row["spoken_audio_ref"])}
    for src, _ in players:
        target = (page.parent / src).resolve()
        assert target.is_file() and target.stem in refs and not src.startswith("/")
    for row in rows:  # the lost identifiers of each utterance are marked on its row
        lost = json.loads(row["lost_identifiers"])
        assert f'data-utterance="{row["turn"]}-{row["side"]}" data-lost="{len(lost)}"' in html
        for item in lost:
            assert f'<mark class="lost">{item["kind"]} {item["spoken"]}</mark>' in html


def test_a_text_run_has_no_voice_section(voice_run: Path, tmp_path: Path) -> None:
    import pandas as pd

    from tauray.actors.voice import report as report_voice
    assert report_voice.profile_rows(voice_run, pd.DataFrame({"speech_profile": ["text"]})) == []


def test_the_voice_pages_render_in_chromium(voice_run: Path, tmp_path: Path, chromium: list[str]) -> None:
    report = tmp_path / "report"
    write_report(voice_run, report, n_boot=200)
    page, rows = _voice_page(voice_run, report)
    cmd = chromium
    dom = subprocess.run([*cmd, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60).stdout
    assert dom.count("<audio") == 2 * len(rows) and 'id="utterances"' in dom
    shots = []  # the voice sections come first: the index's after the leaderboard, a page's after its summary
    for source, name, size in ((report / "index.html", "voice-report-index.png", "1400,1000"),
                               (page, "voice-report-transcript.png", "1400,1400")):
        target = tmp_path / name
        subprocess.run([*cmd, f"--screenshot={target}", f"--window-size={size}", "--hide-scrollbars",
                        source.as_uri()],
                       capture_output=True, timeout=60, check=True)
        data = target.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        shots.append(target)
    if os.environ.get("TAURAY_DOC_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        for shot in shots:
            shutil.copyfile(shot, DOCS_IMG / shot.name)
