"""The report's voice parts: the per-profile table on the index page (from
:func:`tauray.results.voice.voice_table`) and, on each voice conversation's page, every
utterance with audio players for both sides (the spoken audio and what the line delivered,
the run folder's own files by relative path, never copied), spoken next to heard text and
the identifiers the channel lost marked.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
from tauray.results import readers
from tauray.results.layout import audio_path, child_run_dirs
from tauray.results.report_values import missing, records
from tauray.results.voice import voice_table


def _num(v: Any, digits: int = 3) -> str:
    return "–" if missing(v) or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def profile_rows(src: Path, conv: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per speech profile of a voice run ([] for a text run, which has no profile)."""
    if "speech_profile" not in conv or not (conv["speech_profile"].fillna("text").astype(str) != "text").any():
        return []
    rows = []
    for r in records(voice_table(src)):
        rows.append({**r, "success_fmt": f'{_num(r["success"])} [{_num(r["success_lo"])}, {_num(r["success_hi"])}]',
                     "retention_fmt": f'{_num(r["retention"])} [{_num(r["retention_lo"])}, {_num(r["retention_hi"])}]',
                     "wer_fmt": _num(r["mean_wer"])})
    return rows


def utterances_by_conversation(src: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The utterance rows of the folder, per (run, unit), in the order spoken."""
    utt = readers.utterances_df(src)
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if len(utt):
        for r in records(utt.sort_values(["turn", "start_s"])):
            grouped.setdefault((str(r["run_id"]), str(r["unit_id"])), []).append(r)
    return grouped


def _audio_href(runs: list[Path], ref: Any, page_dir: Path) -> str | None:
    """The page-relative path of a stored audio file (None: not kept, or not in this folder)."""
    if missing(ref):
        return None
    for run in runs:
        path = audio_path(run, str(ref))
        if path.is_file():
            return Path(os.path.relpath(path, page_dir)).as_posix()
    return None


def utterance_context(src: Path, utterances: list[dict[str, Any]], page_dir: Path) -> list[dict[str, Any]]:
    """What a conversation page shows of each utterance."""
    runs = child_run_dirs(src)
    out = []
    for u in utterances:
        lost = json.loads(u["lost_identifiers"]) if isinstance(u.get("lost_identifiers"), str) else []
        out.append({"turn": u["turn"], "side": u["side"], "spoken": u["spoken_text"], "heard": u["heard_text"],
                    "wer": _num(u["wer"], 2), "lost": [f'{i["kind"]} {i["spoken"]}' for i in lost],
                    "voice": u["voice"], "seconds": _num(u["audio_seconds"], 1),
                    "spoken_audio": _audio_href(runs, u.get("spoken_audio_ref"), page_dir),
                    "line_audio": _audio_href(runs, u.get("audio_ref"), page_dir)})
    return out


__all__ = ["profile_rows", "utterance_context", "utterances_by_conversation"]
