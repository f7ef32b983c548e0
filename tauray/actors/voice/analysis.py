"""Voice against text on the same tasks and seeds: success per speech profile, retention
(voice ÷ text) with paired, task-clustered intervals, and which failures trace to what the
channel lost (misheard identifiers, misheard requests).

Pure pandas over the ``conversations`` and ``utterances`` tables (docs/voice.md). A task
is the pair (scenario, trial): a voice cell and its text twin (the same cell without the
profile, ``text_cell_id``) run it on the same seed, so retention compares each task with
itself, within one cell; its interval resamples tasks whole (:mod:`tauray.results.stats.intervals`),
as one task's voice and text outcomes are not independent.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tauray.actors.voice.rules import MISHEARD_MARK
from tauray.results.stats.intervals import rate_interval
from tauray.results.tables.readers import conversations_df, messages_df, utterances_df

TEXT = "text"
# what the voice scripted user says when it cannot make out the phone action it was asked for
NOT_CAUGHT_MARK = "did not catch what you want me to do"


def paired_retention(voice: np.ndarray, text: np.ndarray, n_boot: int = 2000, confidence: float = 0.95,
                     seed: int = 0) -> tuple[float, float, float]:
    """Retention sum(voice) / sum(text) over paired tasks, and its percentile interval with
    tasks resampled whole (the same draw for both arms); nan when text solved none."""
    v, t = np.asarray(voice, dtype=float), np.asarray(text, dtype=float)
    if t.sum() == 0:
        return (math.nan, math.nan, math.nan)
    point = float(v.sum() / t.sum())
    if v.size < 2:
        return (point, math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(n_boot, v.size))
    tb = t[idx].sum(axis=1)
    ratios = np.where(tb > 0, v[idx].sum(axis=1) / np.where(tb > 0, tb, 1), np.nan)
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(ratios, [alpha, 1 - alpha])
    return (point, float(lo), float(hi))


def failure_causes(conv: Any, utt: Any, messages: Any | None = None) -> Any:
    """Per voice conversation: whether it failed, whether an identifier was lost on the way
    (either side: an utterance lost one, or the voice reference agent ended the call having
    acted on one it heard wrong, :data:`MISHEARD_MARK`), and whether a request was misheard
    (the scripted user said it could not make out the phone action, or the caller heard an
    agent's request in other words: ``heard_differs``, WER > 0 in rows from before it)."""
    voice = conv[conv["speech_profile"].astype(str) != TEXT][["run_id", "unit_id", "attempt", "speech_profile",
                                                              "scenario", "trial", "success"]].copy()
    key = ["run_id", "unit_id", "attempt"]
    if len(utt):
        u = utt.copy()
        for col in key:
            u[col] = u[col].astype(str) if col != "attempt" else u[col]
        lost = u.groupby(key, observed=True)["identifiers_lost"].sum().rename("ids_lost").reset_index()
        differs = u["heard_differs"].fillna(False).astype(bool) if "heard_differs" in u else u["wer"] > 0
        req = u[(u["side"].astype(str) == "agent") & differs
                & u["spoken_text"].str.contains("on your phone", regex=False)]
        misheard = req.groupby(key, observed=True).size().rename("requests_misheard").reset_index()
        for col in key[:2]:
            voice[col] = voice[col].astype(str)
        voice = voice.merge(lost, on=key, how="left").merge(misheard, on=key, how="left")
    else:
        voice["ids_lost"], voice["requests_misheard"] = 0, 0
    voice[["ids_lost", "requests_misheard"]] = voice[["ids_lost", "requests_misheard"]].fillna(0).astype(int)
    if messages is not None and len(messages):
        said = messages[(messages["side"].astype(str) == "user") & messages["content"].fillna("").str.contains(
            NOT_CAUGHT_MARK, regex=False)]
        caught = set(said["conversation_id"].astype(str))
        voice["not_caught"] = voice["unit_id"].isin(caught)
        calls = messages["tool_calls"].fillna("") if "tool_calls" in messages else pd.Series("", index=messages.index)
        acted = messages[(messages["side"].astype(str) == "agent") & calls.str.contains(MISHEARD_MARK, regex=False)]
        voice["acted_on_misheard_id"] = voice["unit_id"].isin(set(acted["conversation_id"].astype(str)))
    else:
        voice["not_caught"] = False
        voice["acted_on_misheard_id"] = False
    voice["failed"] = voice["success"] != True  # noqa: E712 - null (not scored) counts as failed
    return voice


# What names a cell without its profile where a row has no twin id (rows from before it existed).
_CELL_COLUMNS = ("agent_model", "user_model", "judge_model")


def _twin(c: Any) -> Any:
    """Per row, the cell without its speech profile: a voice row's ``text_cell_id`` (its text twin),
    a text row's own ``cell_id``; where any row lacks it, the models the cell binds (agent, user,
    judge) for every row, so older runs still group by cell."""
    text = c["speech_profile"] == TEXT
    if "cell_id" in c and "text_cell_id" in c:
        key = c["text_cell_id"].where(~text, c["cell_id"])
        if key.notna().all():
            return key.astype(str)
    cols = [col for col in _CELL_COLUMNS if col in c]
    return c[cols].astype(str).agg("|".join, axis=1) if cols else pd.Series("all", index=c.index)


def profile_table(conv: Any, utt: Any, messages: Any | None = None) -> Any:
    """One row per cell without its profile (agent, user, judge, options), speech profile and
    speech engines (runs with other engines, read together, stay apart):
    conversations, success with its task-clustered interval, retention against the same
    cell's text twin on the paired tasks with its interval, mean WER, identifiers lost, and
    failures traced to a lost identifier or a misheard request. Cells never mix: each voice
    cell is paired only with its own twin's text conversations."""
    c = conv.copy()
    c["speech_profile"] = c["speech_profile"].astype(str)
    c["task"] = c["scenario"].astype(str) + "#" + c["trial"].astype(str)
    c["ok"] = c["success"].eq(True).fillna(False).astype(int)  # an infra row (success null) is no success
    c["twin"] = _twin(c)
    causes = failure_causes(conv, utt, messages) if (c["speech_profile"] != TEXT).any() else None
    if causes is not None:
        causes = causes.merge(c[["run_id", "unit_id", "attempt", "twin"]].astype({"run_id": str, "unit_id": str}),
                              on=["run_id", "unit_id", "attempt"], how="left")
    engines = c["speech_engines"] if "speech_engines" in c else pd.Series(None, index=c.index, dtype=object)
    c["engines"] = engines.astype(object).where(engines.notna() & (c["speech_profile"] != TEXT), "").astype(str)
    rows = []
    for twin, cell in c.groupby("twin", sort=False):
        text = cell[cell["speech_profile"] == TEXT].drop_duplicates("task").set_index("task")["ok"]
        for (profile, engine), g in cell.groupby(["speech_profile", "engines"], sort=False):
            rows.append(_profile_row(twin, profile, g, text, causes, engine))
    return pd.DataFrame(rows)


def _profile_row(twin: str, profile: str, g: Any, text: Any, causes: Any, engines: str = "") -> dict[str, Any]:
    """One (cell, profile) row of :func:`profile_table`; ``text``: the twin's text outcome per task."""
    per_task = g.groupby("task")["ok"].agg(["size", "sum"])
    lo, hi = rate_interval(per_task["size"].to_numpy(), per_task["sum"].to_numpy())
    row: dict[str, Any] = {col: g[col].iloc[0] for col in _CELL_COLUMNS if col in g}
    row.update(cell=twin, profile=profile, engines=engines, conversations=len(g), success=g["ok"].mean(),
               success_lo=lo, success_hi=hi)
    paired = g.drop_duplicates("task").set_index("task")["ok"].reindex(text.index).dropna()
    r, rlo, rhi = paired_retention(paired.to_numpy(), text.reindex(paired.index).to_numpy()) \
        if profile != TEXT and len(paired) else (1.0 if profile == TEXT else math.nan, math.nan, math.nan)
    row.update(paired_tasks=len(paired) if profile != TEXT else len(text), retention=r, retention_lo=rlo,
               retention_hi=rhi, mean_wer=g["mean_wer"].mean() if "mean_wer" in g else math.nan,
               identifiers_lost=int(g.get("identifiers_lost", pd.Series(dtype=int)).sum()),
               identifiers_spoken=int(g.get("identifiers_spoken", pd.Series(dtype=int)).sum()))
    if causes is not None and profile != TEXT:
        f = causes[(causes["speech_profile"].astype(str) == profile) & (causes["twin"] == twin) & causes["failed"]
                   & causes["unit_id"].isin(set(g["unit_id"].astype(str))) & causes["run_id"].isin(set(g["run_id"].astype(str)))]
        row.update(failures=len(f), failures_with_lost_ids=int(((f["ids_lost"] > 0) | f["acted_on_misheard_id"]).sum()),
                   failures_with_misheard_request=int(((f["requests_misheard"] > 0) | f["not_caught"]).sum()))
    else:
        row.update(failures=int((g["ok"] == 0).sum()), failures_with_lost_ids=0, failures_with_misheard_request=0)
    return row


def voice_table(path: Any) -> Any:
    """:func:`profile_table` of a run folder (or a folder of runs)."""
    return profile_table(conversations_df(path), utterances_df(path), messages_df(path))


__all__ = ["failure_causes", "paired_retention", "profile_table", "voice_table"]
