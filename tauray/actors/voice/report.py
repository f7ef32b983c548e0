"""The report's voice section: the per-profile table on the index page (from
:func:`tauray.actors.voice.analysis.voice_table`) and, on each voice conversation's page, every
utterance with audio players for both sides (the spoken audio and what the line delivered,
the run folder's own files by relative path, never copied), spoken next to heard text and
the identifiers the channel lost marked. A ``ReportSection`` (``tauray.results.report.sections``),
named by whoever composes the report.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from tauray.actors.voice.analysis import voice_table
from tauray.results.tables import readers
from tauray.results.tables.layout import audio_path, child_run_dirs
from tauray.results.tables.readers import plain_records

INDEX = """{% if rows %}<section id="voice"><h2>Voice: per speech profile</h2>
<table><thead><tr><th>agent</th><th>user</th><th>profile</th><th>speech engines</th><th>conversations</th><th>success [95% interval]</th><th>retention vs text [interval]</th><th>paired tasks</th><th>mean WER</th><th>identifiers lost / spoken</th><th>failures</th><th>with lost identifiers</th><th>with misheard requests</th></tr></thead><tbody>
{% for r in rows %}<tr data-cell="{{ r.cell }}" data-profile="{{ r.profile }}" data-engines="{{ r.engines }}" data-metric="voice_success" data-value="{{ r.success }}"><td>{{ r.agent_model }}</td><td>{{ r.user_model }}</td><td>{{ r.profile }}</td><td>{{ r.engines }}</td><td>{{ r.conversations }}</td><td>{{ r.success_fmt }}</td><td>{{ r.retention_fmt }}</td><td>{{ r.paired_tasks }}</td><td>{{ r.wer_fmt }}</td><td>{{ r.identifiers_lost }} / {{ r.identifiers_spoken }}</td><td>{{ r.failures }}</td><td>{{ r.failures_with_lost_ids }}</td><td>{{ r.failures_with_misheard_request }}</td></tr>
{% endfor %}</tbody></table>
<p class="note">Success with a task-clustered interval; one row per cell and profile; retention is voice ÷ text success against the same cell's text twin on the paired tasks (same scenario, trial and seed) with a paired bootstrap over tasks (tauray/actors/voice/analysis.py).</p></section>{% endif %}"""

CONVERSATION = """{% if utterances %}<section id="utterances"><h2>Spoken and heard</h2>
<p class="note">Every utterance over the speech channel: the spoken side (synthesis and effects) and what the telephone line delivered to the recogniser, with the text meant and the text heard; identifiers the channel lost are marked. No player: the sweep's keep policy kept no audio of this conversation.</p>
<table class="utterances"><thead><tr><th>turn</th><th>side</th><th>spoken</th><th>heard</th><th>WER</th><th>lost identifiers</th></tr></thead><tbody>
{% for u in utterances %}<tr class="{{ u.side }}{{ ' fail' if u.lost else '' }}" data-utterance="{{ u.turn }}-{{ u.side }}" data-lost="{{ u.lost | length }}">
<td>{{ u.turn }}</td><td>{{ u.side }}<br><small>{{ u.voice }} · {{ u.seconds }} s</small></td>
<td><p>{{ u.spoken }}</p>{% if u.spoken_audio %}<audio controls preload="none" src="{{ u.spoken_audio }}" data-audio="spoken"></audio>{% endif %}</td>
<td><p>{{ u.heard }}</p>{% if u.line_audio %}<audio controls preload="none" src="{{ u.line_audio }}" data-audio="line"></audio>{% endif %}</td>
<td>{{ u.wer }}</td><td>{% for i in u.lost %}<mark class="lost">{{ i }}</mark> {% endfor %}</td></tr>
{% endfor %}</tbody></table></section>
{% endif %}"""


def _num(v: Any, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def profile_rows(src: Path, conv: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per speech profile of a voice run ([] for a text run, which has no profile)."""
    if "speech_profile" not in conv or not (conv["speech_profile"].fillna("text").astype(str) != "text").any():
        return []
    rows = []
    for r in plain_records(voice_table(src)):
        rows.append({**r, "success_fmt": f'{_num(r["success"])} [{_num(r["success_lo"])}, {_num(r["success_hi"])}]',
                     "retention_fmt": f'{_num(r["retention"])} [{_num(r["retention_lo"])}, {_num(r["retention_hi"])}]',
                     "wer_fmt": _num(r["mean_wer"])})
    return rows


def utterances_by_conversation(src: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The utterance rows of the folder, per (run, unit), in the order spoken."""
    utt = readers.utterances_df(src)
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if len(utt):
        for r in plain_records(utt.sort_values(["turn", "start_s"])):
            grouped.setdefault((str(r["run_id"]), str(r["unit_id"])), []).append(r)
    return grouped


def _audio_href(runs: list[Path], ref: Any, page_dir: Path) -> str | None:
    """The page-relative path of a stored audio file (None: not kept, or not in this folder)."""
    if ref is None:
        return None
    for run in runs:
        path = audio_path(run, str(ref))
        if path.is_file():
            return Path(os.path.relpath(path, page_dir)).as_posix()
    return None


def utterance_context(runs: list[Path], utterances: list[dict[str, Any]], page_dir: Path) -> list[dict[str, Any]]:
    """What a conversation page shows of each utterance."""
    out = []
    for u in utterances:
        lost = json.loads(u["lost_identifiers"]) if isinstance(u.get("lost_identifiers"), str) else []
        out.append({"turn": u["turn"], "side": u["side"], "spoken": u["spoken_text"], "heard": u["heard_text"],
                    "wer": _num(u["wer"], 2), "lost": [f'{i["kind"]} {i["spoken"]}' for i in lost],
                    "voice": u["voice"], "seconds": _num(u["audio_seconds"], 1),
                    "spoken_audio": _audio_href(runs, u.get("spoken_audio_ref"), page_dir),
                    "line_audio": _audio_href(runs, u.get("audio_ref"), page_dir)})
    return out


class VoiceSection:
    """Voice in the report: nothing for a text run."""

    name = "voice"

    def index(self, src: Path, conv: pd.DataFrame, kit: Any) -> str:
        rows = profile_rows(src, conv)
        return kit.render(INDEX, rows=rows) if rows else ""

    def conversations(self, src: Path, kit: Any) -> Any:
        spoken, runs = utterances_by_conversation(src), child_run_dirs(src)

        def page(row: dict[str, Any], page_dir: Path) -> str:
            said = spoken.get((str(row["run_id"]), str(row["unit_id"])))
            return kit.render(CONVERSATION, utterances=utterance_context(runs, said, page_dir)) if said else ""

        return page

    def pages(self, src: Path, kit: Any) -> list[str]:
        return []


__all__ = ["VoiceSection", "profile_rows", "utterance_context", "utterances_by_conversation"]
