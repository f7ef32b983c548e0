"""Profiles, seeding, identifiers and WER: pure, fast, no engine."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tauray.actors.voice import effects as fx
from tauray.actors.voice.corpus import caller_utterances, spell, telecom_identifiers
from tauray.actors.voice.engines.espeak import VOICES as ESPEAK_VOICES
from tauray.actors.voice.engines.neural import KINDS as NEURAL_KINDS
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.metrics import identifier_errors, identifiers, normalise, wer
from tauray.actors.voice.profiles import PROFILES, DropParams, NoiseParams, draw_voice, get_profile
from tauray.actors.voice.seeding import stable_seed


def test_profiles_cover_tau_voice_levels_and_ablations():
    assert {"text", "control", "regular", "audio", "accents", "behaviour", "audio+accents", "audio+behaviour",
            "accents+behaviour"} <= set(PROFILES)
    regular = get_profile("regular")
    assert regular.effects.noise.snr_db == 15 and regular.effects.noise.drift_db == 3
    assert (regular.effects.bursts.rate_per_min, regular.effects.bursts.snr_db_low,
            regular.effects.bursts.snr_db_high) == (1, -5, 10)
    assert (regular.effects.muffle.probability, regular.effects.muffle.seconds,
            regular.effects.muffle.cutoff_hz) == (0.2, 0.5, 1500)
    assert (regular.effects.drops.loss, regular.effects.drops.mean_burst_ms) == (0.02, 100)
    assert regular.behaviour.out_of_turn_per_min == 0.7
    control = get_profile("control")
    assert control.effects.noise is None and control.behaviour.out_of_turn_per_min == 0
    assert not get_profile("text").speech
    assert get_profile("audio").persona == control.persona


def test_unknown_profile_is_one_line_naming_the_known_ones():
    with pytest.raises(SpeechConfigError) as err:
        get_profile("noisy")
    assert "\n" not in str(err.value) and "regular" in str(err.value) and "'noisy'" in str(err.value)


def test_snr_out_of_range_and_unknown_noise_are_refused():
    with pytest.raises(ValueError, match="snr_db"):
        NoiseParams(snr_db=99)
    with pytest.raises(ValueError, match="unknown noise kind 'traffic'"):
        NoiseParams(kinds=("traffic",))


def test_seeds_are_stable_across_processes():
    # a fixed value: Python's salted hash would differ per process, this must not
    assert stable_seed("voice", "regular", 0, "telecom_001", 0, "user") == stable_seed(
        "voice", "regular", 0, "telecom_001", 0, "user")
    assert stable_seed("a", 1) == 4665976284724862560
    a = draw_voice("accents", "task-1", 0, voices=ESPEAK_VOICES["accented"])
    assert a == draw_voice("accents", "task-1", 0, voices=ESPEAK_VOICES["accented"])
    voices = {draw_voice("accents", f"task-{i}", 0, voices=ESPEAK_VOICES["accented"]).voice for i in range(40)}
    assert len(voices) > 10  # accents spread over variants and languages
    assert {draw_voice("control", f"task-{i}", voices=ESPEAK_VOICES["clear"]).voice.split("+")[0]
            for i in range(40)} == {"en-us"}


def test_a_tasks_caller_is_the_same_person_in_every_profile_of_its_kind():
    """The draw's key is the kind of speaker, not the profile: control, audio and behaviour hear
    one caller per task, accents and regular one accented caller, so profiles compare like for
    like and a voice's synthesis is computed once. Another profile seed is another sample."""
    for kind, profiles in (("clear", ("control", "audio", "behaviour", "audio+behaviour")),
                           ("accented", ("accents", "regular", "audio+accents", "accents+behaviour"))):
        for task in ("telecom_1", "telecom_2", "mock_3"):
            drawn = {p: draw_voice(p, task, voices=NEURAL_KINDS[kind]) for p in profiles}
            assert len({(d.voice, d.rate_wpm, d.seed) for d in drawn.values()}) == 1, drawn
    assert all(draw_voice("accents", f"t{i}", voices=NEURAL_KINDS["accented"]).voice in NEURAL_KINDS["accented"]
               for i in range(20))
    reseeded = get_profile("control").model_copy(update={"seed": 5})
    assert [draw_voice(reseeded, f"t{i}", voices=NEURAL_KINDS["clear"]).seed for i in range(5)] != \
        [draw_voice("control", f"t{i}", voices=NEURAL_KINDS["clear"]).seed for i in range(5)]
    with pytest.raises(SpeechConfigError, match="no clear voice"):
        draw_voice("control", "t", voices=())


@pytest.mark.parametrize("text, expected", [
    ("My phone number is 5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2.", [("phone", "5551232002")]),
    ("line L, 1, 0, 0, 2 and customer C, 1, 0, 0, 1", [("line_id", "L1002"), ("account_id", "C1001")]),
    ("My number is 555-123-2002", [("phone", "5551232002")]),
    ("five five five one two three two zero zero two", [("phone", "5551232002")]),
    ("see one zero zero one", [("account_id", "C1001")]),
    ("I have 2 phones and a one time fee", []),
])
def test_identifiers_are_read_whatever_the_writing(text, expected):
    assert [(i.kind, i.value) for i in identifiers(text)] == expected


def test_identifier_errors_count_the_lost_ones_and_the_digits():
    errs = identifier_errors("It's 5, 5, 5, dash, 1, 2, 3, dash, 2, 0, 0, 2, line L, 1, 0, 0, 2.",
                             "It's 555-123-2003, line L1002.")
    assert [i.value for i in errs.lost] == ["5551232002"]
    assert errs.count("phone", lost=True) == 1 and errs.count("line_id", lost=True) == 0
    assert errs.digits_spoken == 14 and errs.digit_errors == 1


def test_wer_normalises_digits_and_punctuation():
    assert wer("My number is 5, 5, 5.", "my number is 555") == 0.0
    assert wer("hello there", "hello") == 0.5
    assert wer("", "") == 0.0
    assert normalise("L1002") == ["l", "one", "zero", "zero", "two"]


def test_gilbert_elliott_hits_its_loss_and_burst_targets():
    params = DropParams(loss=0.02, mean_burst_ms=100, frame_ms=20)
    lost = fx.gilbert_elliott(200_000, params, np.random.default_rng(1))
    assert abs(lost.mean() - 0.02) < 0.004
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], lost.astype(int), [0]]))))[::2]
    assert abs(runs.mean() - 5.0) < 0.6  # 100 ms / 20 ms frames


def test_noise_is_added_at_the_asked_snr():
    rng = np.random.default_rng(3)
    speech = np.sin(np.linspace(0, 2000, 16000)).astype(np.float32) * 0.3
    noisy, drawn = fx.add_noise(speech, 16000, NoiseParams(snr_db=15, drift_db=0), "pink", rng, None)
    noise = noisy - speech
    snr = 10 * np.log10(np.mean(speech ** 2) / np.mean(noise ** 2))
    assert abs(snr - 15) < 0.3 and drawn["kind"] == "pink"


def test_corpus_is_telecom_data_spelled_and_seeded():
    ids = telecom_identifiers()
    assert ids["phone"] and ids["line"] and ids["customer"]
    assert spell("L1-2") == "L, 1, dash, 2"
    corpus = caller_utterances(50)
    assert corpus == caller_utterances(50) and len(set(corpus)) > 20
    assert all(identifiers(u) for u in corpus)
    assert json.dumps(corpus[:1])


def test_custom_levels_are_checked_in_one_line():
    from tauray.actors.voice.profiles import profile_with

    louder = profile_with("regular", name="loud", effects={"noise": {"snr_db": 5}, "drops": None})
    assert louder.effects.noise.snr_db == 5 and louder.effects.noise.drift_db == 3 and louder.effects.drops is None
    with pytest.raises(SpeechConfigError, match="speech effect 'echo' is unknown; known: noise, bursts"):
        profile_with("regular", effects={"echo": {}})
    with pytest.raises(SpeechConfigError, match=r"speech effect noise.snr_db: Input should be less than or equal to 60"):
        profile_with("regular", effects={"noise": {"snr_db": 99}})
    with pytest.raises(SpeechConfigError) as err:
        profile_with("regular", effects={"noise": {"loudness": 1}})
    assert "\n" not in str(err.value) and "loudness" in str(err.value)
