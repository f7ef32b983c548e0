"""The replay of ``python -m dev.bench coordinator --paced``: speech workers that hand back the utterances an
earlier run of the same conversations produced, at once, instead of computing them again.

Why a replay. A voice conversation waits for speech between its turns, and a coordinator's
loop spends more CPU on the same host call when the calls arrive spread out in time than in
step (docs/voice.md: pace alone moved text 1.14–1.32×). So voice against text at the same wall
time still mixes two things: what voice makes a coordinator do, and what waiting for speech does
to the timing of its calls. Replayed speech takes the second away: the conversations are the
voice run's (voice settings, the speaking hosts' pool calls, the same heard text, utterance
records and rows), but each utterance comes back as soon as it is asked for, so the voice run has
the timing of a text run at the same endpoint latency, and the two can be set side by side.

Replayed is the record of the same (unit, attempt, turn, side) when it said the same words in the
same profile; any other utterance is carried for real (counted by :func:`replayed_count`). Only
the bench uses this worker: a run that replayed speech would say nothing about what was heard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tauray.actors.voice.pool import SpeechWorker
from tauray.results.tables.readers import plain_records, utterances_df
from tauray.results.tables.records.utterance import UtteranceRecord

Key = tuple[str, int, int, str]
"""(unit id, attempt, turn, side): one utterance of one conversation."""


def _key(row: Any) -> Key:
    return (str(row["unit_id"]), int(row["attempt"]), int(row["turn"]), str(row["side"]))


def recorded_utterances(out: Path) -> dict[Key, dict[str, Any]]:
    """The utterances a voice run in folder ``out`` wrote, by :data:`Key` (each a record's fields:
    the table's columns are :class:`UtteranceRecord`'s)."""
    return {_key(row): row for row in plain_records(utterances_df(out))}


def replayed_count(recorded: dict[Key, dict[str, Any]], out: Path) -> tuple[int, int]:
    """(replayed, carried for real) of the utterances a replayed run in ``out`` wrote: a replayed
    row has its recording's compute times to the bit, which a second computation never has."""
    replayed = carried = 0
    for row in utterances_df(out).to_dict("records"):
        then = recorded.get(_key(row))
        same = then is not None and all(row[f] == then[f] for f in ("tts_seconds", "asr_seconds", "heard_text"))
        replayed, carried = replayed + same, carried + (not same)
    return replayed, carried


class ReplayedSpeech(SpeechWorker):
    """A speech worker that hands back its class's ``RECORDED`` utterances (:func:`recorded_utterances`)
    at once, moved to the conversation's clock, and carries any other for real (:func:`replaying`
    makes the class for one recording)."""

    MAX_RESTARTS = 0  # its recordings travel with the class: a bench that lost a worker is run again
    RECORDED: dict[Key, dict[str, Any]] = {}

    def __init__(self, **engines: Any) -> None:
        super().__init__(**engines)
        self._recorded = self.RECORDED

    def carry(self, profile: Any, text: str, *, keep: bool = False, audio: bool = True, unit_id: str,
              attempt: int = 0, turn: int, side: Any, clock_s: float = 0.0,
              task_id: str | None = None) -> tuple[Any, Any, Any]:
        then = self._recorded.get((unit_id, attempt, turn, side))
        said = then is not None and then["spoken_text"] == text and then["profile"] == getattr(profile, "name", profile)
        if not said or audio or keep:  # not these words in this profile, or audio wanted
            return super().carry(profile, text, keep=keep, audio=audio, unit_id=unit_id, attempt=attempt, turn=turn,
                                 side=side, clock_s=clock_s, task_id=task_id)
        moved = {"start_s": clock_s, "end_s": clock_s + then["audio_seconds"]}
        return UtteranceRecord.model_validate({**then, **moved}), None, None


def replaying(recorded: dict[Key, dict[str, Any]]) -> type[ReplayedSpeech]:
    """The speech worker class that replays ``recorded`` (a run's ``Hooks(classes={"speech": ...})``)."""
    return type("ReplayedSpeech", (ReplayedSpeech,), {"RECORDED": recorded})


__all__ = ["Key", "ReplayedSpeech", "recorded_utterances", "replayed_count", "replaying"]
