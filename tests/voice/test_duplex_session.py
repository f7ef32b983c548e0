"""Duplex conversations on the simulated clock, with the tone voice (tauray/actors/voice/duplex/tones.py):
every word is 0.24 s of two tones and a 0.06 s gap (0.3 s a word; an n-word utterance lasts
0.3n - 0.06 s), heard back exactly, through the real telephone line; the energy VAD reads it
frame-exactly. So every timing below is worked out by hand from the declared knobs. Fast: no
subprocess, no Ray, no Whisper or ONNX model.

Pipeline defaults used in the hand calculations (PipelineSettings): min speech 100 ms, end of
turn 600 ms, barge-in 400 ms, recognition 150 ms (8 frames: 0.16 s), time to first token 500 ms,
50 tokens/s (20 ms a token after the first), synthesis 100 ms; ticks of 200 ms.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tauray.actors.voice.duplex.errors import DuplexConfigError
from tauray.actors.voice.duplex.segments import parse_label_track
from tauray.actors.voice.duplex.session import DuplexResult, run_duplex_sync
from tauray.actors.voice.duplex.talk import AgentReply, Message, ToolCall
from tauray.actors.voice.duplex.tones import ToneCodec
from tauray.actors.voice.duplex.vad import EnergyVAD

QUIET = {"interrupt_probability": 0.0, "backchannel_probability": 0.0, "vocal_tic_per_min": 0.0,
         "tic_before_turn_probability": 0.0, "out_of_turn_per_min": 0.0}
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa " \
        "quebec romeo sierra tango uniform victor whiskey xray yankee zulu one two three four".split()


def words(n: int, start: int = 0) -> str:
    return " ".join(WORDS[start:start + n])


def scripted_caller(lines: Sequence[str]):
    def policy(history: Sequence[Message]) -> str:
        said = sum(1 for m in history if m.role == "user")
        return lines[min(said, len(lines) - 1)]
    return policy


def scripted_agent(greeting: str, answer: str = "okay i can help with that"):
    def agent(history: Sequence[Message]) -> str:
        return greeting if not any(m.role == "user" for m in history) else answer
    return agent


def run(caller, agent, *, rules=None, pipeline=None, clock=None, seed=0, every_tick=False, tools=None,
        codec: ToneCodec | None = None) -> DuplexResult:
    codec = codec or ToneCodec()
    return run_duplex_sync(caller_policy=caller, agent=agent, tts=codec.tts(), asr=codec.asr(), vad=EnergyVAD(),
                           rules={**QUIET, **(rules or {})}, pipeline={"vad": "energy", **(pipeline or {})},
                           clock=clock, seed=seed, every_tick=every_tick, tools=tools, unit_id="unit-1")


def spans(result: DuplexResult) -> list[tuple]:
    return [(s.side, s.kind, s.start_s, s.end_s, s.cut_at_s, s.words_spoken, s.words_cut) for s in result.segments]


# --- a plain exchange ----------------------------------------------------------------------------

def test_a_plain_exchange_is_timed_to_the_frame_by_hand():
    # Greeting "hello how can i help you today" (7 tokens, no punctuation): first token at 0.5 s,
    # the sentence complete 6 tokens later (0.12 s), audio 0.1 s after: starts 0.72, 7 words ->
    # 2.04 s, ends 2.76. The caller answers once the agent has been silent 1 s: 3.76, on the next
    # tick 3.80; 7 words -> ends 5.84. End of turn 0.6 s later (6.44) is heard at tick 6.60;
    # recognition 0.16 -> 6.76, first token 7.26, "okay i can help with that" complete 5 tokens
    # later (7.36), audio 7.46; 6 words -> 1.74 s -> 9.20. Caller: 10.20 -> tick 10.20, "bye"
    # (1 word, 0.24 s) and hangs up at 10.44.
    result = run(scripted_caller(["i need help with my bill please", "bye ###STOP###"]),
                 scripted_agent("hello how can i help you today"))
    assert spans(result) == [
        ("agent", "speech", 0.72, 2.76, None, 7, 0),
        ("user", "speech", 3.8, 5.84, None, 7, 0),
        ("agent", "speech", 7.46, 9.2, None, 6, 0),
        ("user", "speech", 10.2, 10.44, None, 1, 0),
    ]
    assert (result.ended, result.duration_s) == ("caller_hung_up", 10.44)
    # L_R = 7.46 - 5.84 = 1.62 s over the one answered turn; the goodbye has nothing after it.
    m = result.metrics
    assert (m.response_latency_s.value, m.response_latency_s.n, m.response_rate.value) == (1.62, 1, 1.0)
    assert [s.heard_text for s in result.segments] == ["hello how can i help you today",
                                                      "i need help with my bill please",
                                                      "okay i can help with that", "bye"]
    # The call ends with the goodbye, before its end of turn: the agent never acts on it.
    assert [(t.action, t.heard, t.at_s) for t in result.agent_turns] == [
        ("greeted", "", 0.0), ("answered", "i need help with my bill please", 6.6)]
    # 53 ticks of 200 ms, 9 of them visited.
    assert (result.ticks, result.steps) == (53, 9)
    assert result.timing == "declared"


# --- the caller interrupts; the agent's barge-in stops it ----------------------------------------

def test_caller_interrupts_and_the_agent_barges_in_after_0_4_s():
    # Greeting of 12 words (12 tokens: first token 0.5, complete +0.22, audio +0.1): 0.82-4.36.
    # The caller decides every 2 s of the agent's speech: first at 2.82, acted on at tick 3.00:
    # interrupt (probability 1) with 6 words, 3.00-4.74. The VAD confirms it at 3.10; its speech
    # over the agent reaches 0.4 s at 3.40 (the barge-in trigger, known at tick 3.40). The
    # pipeline hears [3.00, 3.40): one whole word, not a backchannel: stop at 3.40 + 0.16 = 3.56.
    # Words said by 3.56: the 9th ends at 0.82 + 8*0.3 + 0.24 = 3.46, the 10th at 3.76: 9 said, 3 cut.
    result = run(scripted_caller(["no wait i have a question", "bye ###STOP###"]),
                 scripted_agent(words(12)), rules={"interrupt_probability": 1.0})
    agent_greeting, caller_turn = result.segments[0], result.segments[1]
    assert (agent_greeting.start_s, agent_greeting.end_s, agent_greeting.cut_at_s) == (0.82, 3.56, 3.4)
    assert (agent_greeting.words_spoken, agent_greeting.words_cut) == (9, 3)
    assert agent_greeting.text == words(9) and agent_greeting.interrupted
    assert (caller_turn.start_s, caller_turn.end_s, caller_turn.started_over_other) == (3.0, 4.74, True)
    # Yield: caller onset 3.00, agent audio out 3.56 -> L_Y 0.56 s, R_Y 1/1.
    assert (result.metrics.yield_latency_s.value, result.metrics.yield_rate.value) == (0.56, 1.0)
    assert result.caller_counts["interruptions"] == 1
    # The agent's history keeps only what it said, as realtime APIs truncate.
    said = next(m for m in result.agent_history if m.role == "assistant")
    assert said.content == words(9) and said.truncated
    # Barge-in, then the turn answered: end of turn 4.74 + 0.6 = 5.34 -> tick 5.40.
    actions = [(t.action, t.at_s) for t in result.agent_turns]
    assert actions[:3] == [("greeted", 0.0), ("barge_in", 3.4), ("answered", 5.4)]


def test_caller_who_started_the_overlap_yields_after_5_s():
    # Greeting of 30 words: 30 tokens (+0.58 s), audio from 1.18 s (frame 59) to 1.18 + 8.94 = 10.12.
    # The pipeline never barges in (10 s). First decision at 3.18, acted on at tick 3.20: the
    # caller interrupts with 25 words (3.20-10.64). It started the overlap, so it yields after
    # 5 s of it: 8.20, a tick: cut at 8.20, audio out at 8.20. Words by 8.20: the 17th ends at
    # 3.20 + 16*0.3 + 0.24 = 8.24 (not yet), the 16th at 7.94: 16 said, 9 cut.
    result = run(scripted_caller([words(25, 5), "bye ###STOP###"]), scripted_agent(words(30)),
                 rules={"interrupt_probability": 1.0}, pipeline={"barge_in_ms": 10000})
    caller_turn = next(s for s in result.segments if s.side == "user")
    assert (caller_turn.start_s, caller_turn.end_s, caller_turn.cut_at_s) == (3.2, 8.2, 8.2)
    assert (caller_turn.words_spoken, caller_turn.words_cut) == (16, 9)
    assert result.caller_counts["yields"] == 1
    # The agent talked on: a caller onset over it with no stop within 2 s is a no_yield. Decisions
    # due while the caller spoke (5.18, 7.18) are skipped; the next, 9.18 (tick 9.20), interrupts
    # again: "bye" (9.20-9.44) and the caller hangs up, which ends the agent's audio at 9.44.
    # Read from the audio, as the metrics read every agent, that hang-up is a yield of 0.24 s:
    # R_Y = 1/2 (docs/duplex.md names this artefact of a call ending over the agent).
    assert result.metrics.yield_rate.value == 0.5 and result.metrics.yield_latency_s.value == 0.24
    assert spans(result)[-1] == ("user", "speech", 9.2, 9.44, None, 1, 0)
    assert (result.segments[0].end_s, result.duration_s) == (9.44, 9.44)


def test_caller_talked_over_by_the_agent_yields_after_1_s():
    # The agent's greeting makes a tool call, so a caller's speech does not cancel it. Its first
    # token comes at 3.0 s (ttft 3000 ms), 20 words complete 0.38 s later, audio at 3.48.
    # Silence on the line, the caller checks in at 1.00 (check-in after 1 s), 15 words: 1.00-5.44.
    # The agent started the overlap at 3.48; the caller yields after 1 s of it: 4.48, known at tick
    # 4.60. Words by 4.60: the 12th ends at 1.00 + 11*0.3 + 0.24 = 4.54: 12 said, 3 cut.
    calls = []

    def agent(history: Sequence[Message]) -> AgentReply:
        if not history:
            return AgentReply(text=words(20), tool_calls=(ToolCall(id="c1", name="lookup", arguments={}),))
        return AgentReply(text="done")

    def tools(batch: Sequence[ToolCall]) -> list[str]:
        calls.append([c.id for c in batch])
        return ["ok"]

    result = run(scripted_caller(["bye ###STOP###"]), agent, tools=tools,
                 rules={"checkin_after_s": 1.0, "checkin_text": words(15, 10), "max_checkins": 1},
                 pipeline={"ttft_ms": 3000, "barge_in_ms": 10000})
    checkin = next(s for s in result.segments if s.side == "user")
    assert (checkin.start_s, checkin.end_s, checkin.cut_at_s) == (1.0, 4.6, 4.48)
    assert (checkin.words_spoken, checkin.words_cut) == (12, 3)
    assert result.caller_counts == {**result.caller_counts, "checkins": 1, "yields": 1}
    # The tool call ran once; its result is in the agent's history before the follow-up reply.
    assert calls == [["c1"]]
    roles = [m.role for m in result.agent_history]
    assert roles[:3] == ["assistant", "tool", "assistant"]
    assert any(t.action == "after_tools" for t in result.agent_turns)


# --- backchannels ----------------------------------------------------------------------------------

def test_a_backchannel_over_the_agent_keeps_it_talking():
    # Backchannel at every decision (probability 1): the first at tick 3.00 over the 12-word
    # greeting (0.82-4.36), one word (0.24 s). Barge-in at 240 ms: its whole word is heard at
    # 3.24, a backchannel: the agent talks through it and finishes its greeting at 4.36.
    result = run(scripted_caller(["bye ###STOP###"]), scripted_agent(words(12)),
                 rules={"backchannel_probability": 1.0}, pipeline={"barge_in_ms": 240})
    greeting = result.segments[0]
    backchannel = next(s for s in result.segments if s.kind == "backchannel")
    assert (greeting.end_s, greeting.cut_at_s, greeting.words_cut) == (4.36, None, 0)
    assert (backchannel.start_s, backchannel.end_s) == (3.0, 3.24)
    assert backchannel.text in ("mm-hmm", "uh-huh", "okay", "yeah")
    assert any(t.action == "talked_through" for t in result.agent_turns)
    # S_BC: the agent kept talking for 1.36 s after the backchannel (>= 1 s): correct.
    assert result.metrics.selectivity_backchannel.value == 1.0


def test_without_the_backchannel_filter_the_agent_stops_for_mm_hmm():
    # Same call, filter off (backchannels=()): the barge-in at 3.24 stops the agent at the tick
    # it learns of it, 3.40 (no recognition to wait for): a selectivity error.
    result = run(scripted_caller(["bye ###STOP###"]), scripted_agent(words(12)),
                 rules={"backchannel_probability": 1.0}, pipeline={"barge_in_ms": 240, "backchannels": []})
    greeting = result.segments[0]
    assert (greeting.end_s, greeting.cut_at_s) == (3.4, 3.24)
    assert result.metrics.selectivity_backchannel.value == 0.0


# --- end of turn moves latency -------------------------------------------------------------------

def test_end_of_turn_900_ms_answers_later_than_300_ms():
    lines = [words(5, i) for i in range(0, 30, 6)] + ["bye ###STOP###"]
    fast = run(scripted_caller(lines), scripted_agent("hello", "right"), pipeline={"end_of_turn_ms": 300})
    slow = run(scripted_caller(lines), scripted_agent("hello", "right"), pipeline={"end_of_turn_ms": 900})
    f, s = fast.metrics.response_latency_s, slow.metrics.response_latency_s
    assert f.n == s.n == 5
    # 600 ms more silence before the turn ends, heard on a 200 ms tick: 0.4-0.8 s later on average.
    assert 0.4 <= s.value - f.value <= 0.8
    assert fast.metrics.response_rate.value == slow.metrics.response_rate.value == 1.0


# --- determinism and event stepping ---------------------------------------------------------------

BUSY = {"interrupt_probability": 0.2, "backchannel_probability": 0.4, "vocal_tic_per_min": 6.0,
        "tic_before_turn_probability": 0.5, "out_of_turn_per_min": 4.0}


def busy_call(seed: int, every_tick: bool = False) -> DuplexResult:
    lines = [words(6, i) for i in range(0, 24, 4)] + ["bye ###STOP###"]
    return run(scripted_caller(lines), scripted_agent(words(10), words(8, 10) + ". " + words(6, 20)), rules=BUSY,
               seed=seed, every_tick=every_tick)


def test_same_seed_same_timeline_and_recording_and_event_stepping_changes_nothing():
    first, again, ticked = busy_call(7), busy_call(7), busy_call(7, every_tick=True)
    assert first.segments_sha256 == again.segments_sha256 == ticked.segments_sha256
    assert first.recording_sha256 == again.recording_sha256 == ticked.recording_sha256
    assert first.segments == again.segments
    # Every kind of caller segment happened in this call, and stepping visited far fewer ticks.
    assert {s.kind for s in first.segments} == {"speech", "backchannel", "vocal_tic", "out_of_turn"}
    assert ticked.steps == ticked.ticks and first.steps < ticked.steps / 2
    other = busy_call(8)
    assert other.segments_sha256 != first.segments_sha256


def test_recording_is_stereo_line_audio_and_the_label_track_matches_the_segments():
    import io

    import soundfile

    result = busy_call(7)
    audio, rate = soundfile.read(io.BytesIO(result.recording), dtype="int16")
    assert rate == 8000 and audio.shape == (round(result.duration_s * 8000), 2)
    # Caller left, agent right: each channel holds sound exactly where its side has a segment.
    for channel, side in ((0, "user"), (1, "agent")):
        for seg in (s for s in result.segments if s.side == side):
            part = audio[round(seg.start_s * 8000):round(seg.end_s * 8000), channel]
            assert abs(part).max() > 1000
    labels = [x for x in parse_label_track(result.labels) if x.side]
    assert [(x.side, x.kind, x.start_s, x.end_s) for x in labels] == \
        [(s.side, s.kind, s.start_s, s.end_s) for s in result.segments]


def test_tick_length_changes_when_sides_act_but_not_the_frame_resolution():
    lines = [words(5), "bye ###STOP###"]
    coarse = run(scripted_caller(lines), scripted_agent("hello"), clock={"tick_ms": 1000})
    fine = run(scripted_caller(lines), scripted_agent("hello"), clock={"tick_ms": 20})
    # "hello": 1 token, audio at 0.5 + 0.1 = 0.60 either way (not on the 1 s tick grid), 0.24 s.
    assert coarse.segments[0].start_s == fine.segments[0].start_s == 0.6
    # The caller answers 1 s after 0.84: at 1.84 on 20 ms ticks, at 2.00 on 1 s ticks.
    assert (fine.segments[1].start_s, coarse.segments[1].start_s) == (1.84, 2.0)


# --- bad input --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"clock": {"tick_ms": 10}}, "clock.tick_ms: tick must be 20-1000 ms (got 10)"),
    ({"clock": {"tick_ms": 1500}}, "clock.tick_ms: tick must be 20-1000 ms (got 1500)"),
    ({"clock": {"tick_ms": 210}}, "clock.tick_ms: tick must be a whole number of 20 ms audio frames (got 210)"),
    ({"rules": {"yield_after_s": 2}}, "turn_taking: unknown parameter 'yield_after_s'; known: "),
    ({"pipeline": {"end_of_turn_ms": 5}}, "pipeline.end_of_turn_ms: Input should be greater than or equal to 20"),
    ({"pipeline": {"vad": "nope"}}, "pipeline.vad: Input should be 'silero', 'energy' or 'webrtc' (got 'nope')"),
])
def test_bad_settings_are_one_line_naming_the_field(kwargs, message):
    codec = ToneCodec()
    with pytest.raises(DuplexConfigError) as info:
        run_duplex_sync(caller_policy=scripted_caller(["bye"]), agent=scripted_agent("hi"), tts=codec.tts(),
                        asr=codec.asr(), vad=EnergyVAD(), **{"rules": QUIET, **kwargs})
    text = str(info.value)
    assert "\n" not in text and text.startswith(message)


def test_a_vad_whose_package_is_missing_names_the_install():
    import importlib.util

    from tauray.actors.voice.duplex.vad import make_vad

    if importlib.util.find_spec("webrtcvad") is not None:
        pytest.skip("webrtcvad is installed here")
    with pytest.raises(DuplexConfigError, match=r"^vad 'webrtc' needs the webrtcvad package: pip install webrtcvad$"):
        make_vad("webrtc")
    with pytest.raises(DuplexConfigError, match="vad 'nope' is unknown; known: silero, energy, webrtc"):
        make_vad("nope")


def test_the_caller_counts_silence_from_its_own_turn_before_checking_in():
    # 20 ms ticks, so a tick falls on the frame a turn ends. The agent greets (ends 2.76) and then
    # says nothing. The caller answers 1 s later (3.76) and its 30 words run to 12.70: more than
    # the 8 s check-in wait after the agent's last word, but the caller has just spoken, so it
    # waits 8 s from its own end: the check-in runs 20.70 -> 20.94. (It checked in at 12.70, the
    # frame its own turn ended: a side that stopped on that very frame read as still speaking, so
    # its end did not count; seen in a sweep as "Hello? Are you still there?" straight after the
    # caller's own report.)
    result = run(scripted_caller([words(30), "bye ###STOP###"]), scripted_agent("hello how can i help you today", ""),
                 rules={"checkin_text": "hello", "max_checkins": 1}, clock={"tick_ms": 20})
    user = [(s.start_s, s.end_s) for s in result.segments if s.side == "user"]
    assert user[0] == (3.76, 12.7)
    assert user[1] == (20.7, 20.94)
    assert result.caller_counts["checkins"] == 1


def test_a_goodbye_running_past_the_longest_call_ends_the_call_at_its_limit():
    # The caller opens with 20 words (5.94 s) and the stop token in a call of at most 3 s: the call ends
    # at 3 s, its goodbye cut there (the loop once ran for ever: the hang-up frame lay past the cap).
    result = run(scripted_caller([f"{words(20)} ###STOP###"]), scripted_agent("hello"),
                 rules={"opening": "caller"}, clock={"max_duration_s": 3.0})
    assert result.ended == "max_duration" and result.duration_s == 3.0
    (caller,) = [s for s in result.segments if s.side == "user"]
    assert caller.end_s == 3.0
