"""A caller slows down to spell (docs/voice.md, "Spelling pace"): an utterance that spells an
identifier is said at the persona's spelling pace, any other at the drawn rate; the agent's
voice keeps its rate; and the drawn person is the same whatever the pace."""

from __future__ import annotations

import numpy as np
import pytest

from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.profiles import PROFILES, SPELLING_PACE, DrawnVoice, Persona, draw_voice
from tauray.actors.voice.rules import SPELLED_RUN, spell_identifiers


@pytest.mark.parametrize(("text", "spells"), [
    ("My line id is L, 1, 0, 0, 1.", True),
    ("Yes, customer C, 1, 0, 0, 1, and that's all.", True),
    ("5, 5, 5, dash, 1, 2", True),
    ("j, o, at, x, dot, c, o", True),
    ("Hello, I need help with my phone.", False),
    ("I, a, me and you", False),  # two single letters are not a spelled run
    ("My line is L1001.", False),  # an identifier written whole is not spelled
    ("Yes, 2, thanks", False),
])
def test_a_spelled_run_is_three_characters_or_symbol_words_in_a_row(text, spells):
    assert bool(SPELLED_RUN.search(text)) is spells


def test_every_identifier_the_caller_spells_is_a_run():
    said = spell_identifiers("My line is L1002 and my number is 555-123-2002, customer C1001.")
    assert [m.group(0) for m in SPELLED_RUN.finditer(said)] == [
        "L, 1, 0, 0, 2", "5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2", "C, 1, 0, 0, 1"]


def test_the_drawn_voice_spells_at_its_pace_and_a_pace_of_one_changes_nothing():
    voices = ("a", "b", "c")
    plain = PROFILES["control"].model_copy(update={"persona": Persona(spelling_pace=1.0)})
    slow = PROFILES["control"].model_copy(update={"persona": Persona(spelling_pace=0.8)})
    p, s = draw_voice(plain, "task-1", voices=voices), draw_voice(slow, "task-1", voices=voices)
    assert (p.voice, p.rate_wpm, p.pitch, p.seed) == (s.voice, s.rate_wpm, s.pitch, s.seed)  # the same person
    assert p.spelling_rate_wpm is None and s.spelling_rate_wpm == round(s.rate_wpm * 0.8)
    spelled, plain_words = "My line id is L, 1, 0, 0, 1.", "Thank you, goodbye."
    assert p.rate_for(spelled) == p.rate_for(plain_words) == p.rate_wpm
    assert (s.rate_for(spelled), s.rate_for(plain_words)) == (s.spelling_rate_wpm, s.rate_wpm)
    with pytest.raises(ValueError, match="spelling_pace"):
        Persona(spelling_pace=0.2)


def test_built_in_callers_slow_down_to_spell_and_the_agent_does_not():
    for name, profile in PROFILES.items():
        if profile.speech:
            assert profile.persona.spelling_pace == SPELLING_PACE < 1.0, name
            assert profile.agent_persona.spelling_pace == 1.0, name
            assert profile.version == 2, name  # redefined: their cells are new (tests/voice/test_voice_config.py)


class _Recorder:
    """A synthesiser that records the rate it is asked for (the pacing, not a voice, is under test)."""

    name, price, deterministic, sample_rate = "recorder", None, False, 16000

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def voices(self, kind: str) -> tuple[str, ...]:
        return ("only",)

    def check_voice(self, voice: str) -> None:
        return None

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        self.asked.append((text, rate_wpm))
        return np.full(1600, 0.1, dtype=np.float32)


def test_the_channel_says_a_spelling_utterance_at_the_spelling_rate():
    engine = _Recorder()
    channel = SpeechChannel("control", tts=engine, asr="local/whisper-tiny.en")
    voice = DrawnVoice(voice="only", rate_wpm=170, pitch=50, noise_kind=None, seed=1, spelling_rate_wpm=145)
    channel._synth("My line id is L, 1, 0, 0, 1, thanks.", voice)
    channel._synth("Thanks, **that** worked.", voice)
    assert engine.asked == [("My line id is L, 1, 0, 0, 1, thanks.", 145), ("Thanks, that worked.", 170)]
