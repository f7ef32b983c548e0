"""The replay of ``python -m dev.bench coordinator --paced``: a speech worker that hands back a recorded utterance at
once, on the conversation's clock, and carries anything it has no recording of for real."""

from __future__ import annotations

import pytest

pytest.importorskip("faster_whisper")
pytestmark = pytest.mark.slow  # the worker loads espeak-ng and a packaged Whisper

_SAID = "My line id is L, 1, 0, 0, 2."


def _worker(recorded):
    from dev.bench.voice_replay import replaying

    return replaying(recorded)(tts="local/espeak-ng", asr="local/whisper-tiny.en")


def _carry(worker, text: str, turn: int, clock_s: float):
    return worker.carry("control", text, audio=False, unit_id="u-1", attempt=0, turn=turn, side="user",
                        clock_s=clock_s, task_id="task-1")


def test_a_recorded_utterance_comes_back_at_once_on_the_new_clock_and_others_are_carried() -> None:
    real, _, _ = _carry(_worker({}), _SAID, turn=2, clock_s=0.0)
    # a recording the engines could never produce: the replay, not a second computation, answers
    then = {**real.model_dump(), "heard_text": "recorded words", "asr_seconds": 123.0}
    worker = _worker({("u-1", 0, 2, "user"): then})

    replayed, wav, files = _carry(worker, _SAID, turn=2, clock_s=40.0)
    assert (replayed.heard_text, replayed.asr_seconds, wav, files) == ("recorded words", 123.0, None, None)
    assert (replayed.start_s, replayed.end_s) == (40.0, 40.0 + real.audio_seconds)

    other_words, _, _ = _carry(worker, "Hold on a second.", turn=2, clock_s=40.0)  # same turn, other words
    other_turn, _, _ = _carry(worker, _SAID, turn=3, clock_s=40.0)  # no recording of that turn
    other_profile, _, _ = worker.carry("regular", _SAID, audio=False, unit_id="u-1", attempt=0, turn=2, side="user",
                                       clock_s=40.0, task_id="task-1")  # recorded in control, asked in regular
    for carried in (other_words, other_turn, other_profile):
        assert carried.heard_text != "recorded words" and carried.asr_seconds < 123.0
