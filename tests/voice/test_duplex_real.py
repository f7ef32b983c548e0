"""A full duplex conversation with the real engines, end to end and offline: espeak-ng speaks
both sides, faster-whisper tiny.en (the packaged model) hears both, Silero VAD (the weights
faster-whisper ships) finds the caller's speech for the agent pipeline. Slow: it loads Whisper
and an ONNX model."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tauray.actors.voice.duplex.session import run_duplex_sync
from tauray.actors.voice.duplex.talk import Message

pytestmark = pytest.mark.slow

LINES = ["Hi, I need help with my phone bill.", "My account number is four two seven.",
         "Thank you, that is all. Goodbye. ###STOP###"]


def caller(history: Sequence[Message]) -> str:
    return LINES[min(sum(1 for m in history if m.role == "user"), len(LINES) - 1)]


def agent(history: Sequence[Message]) -> str:
    heard = [m.content.lower() for m in history if m.role == "user"]
    if not heard:
        return "Hello, thank you for calling. How can I help you today?"
    if "bill" in heard[-1]:
        return "I can help with your bill. What is your account number?"
    return "Thank you. I found your account, and your bill is paid."


def test_a_duplex_call_with_espeak_whisper_and_silero_end_to_end():
    from tauray.actors.voice.engines import make_asr, make_tts

    tts, asr = make_tts("local/espeak-ng"), make_asr("local/whisper-tiny.en")
    kwargs = dict(caller_policy=caller, agent=agent, tts=tts, asr=asr, seed=3, unit_id="real-1",
                  rules={"interrupt_probability": 0.0, "backchannel_probability": 0.0, "vocal_tic_per_min": 0.0,
                         "out_of_turn_per_min": 0.0, "tic_before_turn_probability": 0.0},
                  pipeline={"vad": "silero", "end_of_turn_ms": 600})
    result = run_duplex_sync(**kwargs)
    assert result.ended == "caller_hung_up"
    answered = [t for t in result.agent_turns if t.action == "answered"]
    assert len(answered) == 2
    assert "bill" in answered[0].heard.lower() and "account" in result.agent_history[-1].content.lower()
    # Every reply was answered, after the declared end of turn at least (0.6 s) and within 3 s.
    m = result.metrics
    assert m.response_rate.value == 1.0 and m.response_rate.n == 2
    assert 0.6 <= m.response_latency_s.value <= 3.0
    # What each side heard is recorded beside what was said.
    assert all(s.heard_text for s in result.segments if s.kind == "speech")
    # The same call again: the same timeline and the same recording, bit for bit.
    again = run_duplex_sync(**kwargs)
    assert (again.segments_sha256, again.recording_sha256) == (result.segments_sha256, result.recording_sha256)
