"""A duplex sweep end to end, offline, through the real CLI (Ray, espeak-ng, the packaged Whisper,
Silero's VAD): the reference policies over the mock domain in control, its segments table and the
conversation rows' interaction panel land, and a second run gives the same timelines and
recordings, hash for hash."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tauray.results import conversations_df, segments_df
from tauray.results.tables.layout import LABELS_SUFFIX, audio_path

pytestmark = pytest.mark.slow  # Ray, child processes, speech models

SWEEP = """
    name = "duplex-e2e"
    agents = ["oracle"]
    users = ["scripted"]
    [[scenarios]]
    domain = "mock"
    limit = 2
    [cluster]
    actor_cpus = 0.0
    [voice]
    profiles = ["control"]
    turn_taking = ["duplex"]
    tts = "local/espeak-ng"
    asr = "local/whisper-tiny.en"
    keep_audio = "all"
"""


def _sweep(tmp_path: Path, out: str) -> Path:
    path = tmp_path / "duplex.toml"
    path.write_text(textwrap.dedent(SWEEP))
    done = subprocess.run([sys.executable, "-m", "tauray", "sweep", str(path), "--out", str(tmp_path / out),
                           "--json", "--no-progress"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return tmp_path / out


def test_a_duplex_sweep_lands_and_repeats_bit_for_bit(tmp_path: Path) -> None:
    first = _sweep(tmp_path, "one")
    conv = conversations_df(first).sort_values("scenario").reset_index(drop=True)
    assert len(conv) == 2 and (conv["turn_taking"] == "duplex").all() and conv["error_kind"].isna().all()
    assert (conv["duplex_timing"] == "declared").all() and (conv["duplex_response_rate_n"] >= 1).all()
    seg = segments_df(first)
    assert len(seg) == conv["segments"].sum() > 0 and set(seg["side"]) == {"agent", "user"}
    for _, row in conv.iterrows():
        assert audio_path(first, row["recording_sha256"]).read_bytes()[:4] == b"fLaC"
        assert audio_path(first, f"{row['labels_sha256']}{LABELS_SUFFIX}").exists()
    again = conversations_df(_sweep(tmp_path, "two")).sort_values("scenario").reset_index(drop=True)
    for column in ("segments_sha256", "recording_sha256", "labels_sha256"):
        assert list(again[column]) == list(conv[column]), column
