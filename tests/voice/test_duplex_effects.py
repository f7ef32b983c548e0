"""A duplex caller's speech takes its speech profile's source effects (noise, muffling, bursts,
drops) as a half-duplex caller's utterances do (issue 49: until now a duplex `regular` caller
was a clean one)."""

from __future__ import annotations

import numpy as np

from tauray.actors.duplex_call import source_effects
from tauray.actors.voice.profiles import DrawnVoice, get_profile
from tests.voice.test_duplex_session import QUIET, scripted_agent, scripted_caller, words

VOICE = DrawnVoice(voice="en-us", rate_wpm=170, pitch=50, noise_kind="white", seed=3)


def test_a_profile_with_effects_gives_the_caller_its_effects_and_control_none() -> None:
    assert source_effects(get_profile("control"), "local/espeak-ng", "local/whisper-tiny.en", VOICE) is None
    effects = source_effects(get_profile("audio"), "local/espeak-ng", "local/whisper-tiny.en", VOICE)
    tone = (0.3 * np.sin(np.arange(16000 * 3) * 2 * np.pi * 440 / 16000)).astype(np.float32)
    once, again, other = effects(tone, 16000, 7), effects(tone, 16000, 7), effects(tone, 16000, 8)
    assert once.shape == tone.shape and not np.allclose(once, tone)  # changed, same length
    assert np.array_equal(once, again) and not np.array_equal(once, other)  # drawn from the seed


def test_the_duplex_caller_speaks_through_its_effects() -> None:
    from tauray.actors.voice.duplex.session import run_duplex_sync
    from tauray.actors.voice.duplex.tones import ToneCodec
    from tauray.actors.voice.duplex.vad import EnergyVAD

    def run(effects):
        codec = ToneCodec()
        return run_duplex_sync(caller_policy=scripted_caller([words(5), "bye ###STOP###"]),
                               agent=scripted_agent("hello how can i help you today"), tts=codec.tts(),
                               asr=codec.asr(), vad=EnergyVAD(), rules=QUIET, pipeline={"vad": "energy"},
                               unit_id="unit-1", caller_effects=effects)

    clean = run(None)
    # a line that loses everything the caller says: the agent hears no turn and never answers
    muted = run(lambda audio, rate, seed: np.zeros_like(audio))
    answered = [t.action for t in clean.agent_turns]
    assert "answered" in answered and "answered" not in [t.action for t in muted.agent_turns]
    assert clean.recording_sha256 != muted.recording_sha256
    assert muted.compute_calls.get("effects", 0) >= 1
