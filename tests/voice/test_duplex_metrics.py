"""τ-Voice's interaction metrics on hand-built duplex timelines, and the segments' label track.

Pure and fast: no clock, no Ray, no models. Every expected number is worked out by hand in the
comments from the definitions in docs/duplex-metrics.md (windows: no-yield 2.0 s; yield to a
backchannel, tic or aside 1.0 s; response to a tic or aside in silence 2.0 s; 20 ms frames).
"""

from __future__ import annotations

import math

import pytest

from tauray.actors.voice.duplex.metrics import (
    InteractionMetrics,
    InteractionWindows,
    Measure,
    interaction_events,
    interaction_metrics,
    pool,
    summarize,
)
from tauray.actors.voice.duplex.segments import Segment, label_track, parse_label_track, timeline


def seg(side: str, start: float, end: float, kind: str = "speech", **fields) -> Segment:
    return Segment(unit_id="unit-1", side=side, kind=kind, start_s=start, end_s=end, **fields)


def agent(start: float, end: float, **fields) -> Segment:
    return seg("agent", start, end, **fields)


def user(start: float, end: float, kind: str = "speech", **fields) -> Segment:
    return seg("user", start, end, kind, **fields)


def outcomes(segments: list[Segment], windows: InteractionWindows | None = None) -> list[tuple]:
    events = interaction_events(segments, windows) if windows else interaction_events(segments)
    return [(e.category, e.outcome, e.at_s, e.latency_s) for e in events]


# --- responses ---------------------------------------------------------------------------------

def test_agent_answers_0_8_s_after_the_caller_ends():
    # Caller speaks 0.0–2.0, the agent starts at 2.8: the turn was owed an answer (the agent was
    # silent when it ended) and got one before the caller spoke again.
    # L_R = 2.8 - 2.0 = 0.8 s (n=1); R_R = 1/1; I_A = 0 onsets over a turn / 1 turn = 0.0.
    m = interaction_metrics([user(0.0, 2.0), agent(2.8, 5.0)])
    assert m.response_latency_s == Measure(value=0.8, n=1)
    assert m.response_rate == Measure(value=1.0, n=1)
    assert m.agent_interruption_rate == Measure(value=0.0, n=1)
    assert m.yield_rate == Measure(value=None, n=0)


def test_caller_who_has_to_ask_again_is_a_missed_response():
    # Turn A 0.0–2.0, silence, the caller speaks again 4.0–5.0 ("hello?"), the agent at 5.6.
    # Turn A: next agent onset 5.6 comes after the caller's next turn (4.0) -> no_response.
    # Turn B: ends 5.0, agent at 5.6 -> response, 0.6 s.
    # R_R = 1/2 = 0.5 (n=2); L_R = 0.6 s over the one answered turn (n=1).
    segments = [user(0.0, 2.0), user(4.0, 5.0), agent(5.6, 7.0)]
    assert outcomes(segments) == [("response", "no_response", 2.0, None), ("response", "response", 5.0, 0.6)]
    m = interaction_metrics(segments)
    assert m.response_rate == Measure(value=0.5, n=2)
    assert m.response_latency_s == Measure(value=0.6, n=1)


def test_the_last_turn_with_nothing_after_it_is_not_scored():
    # 0–2 caller, 2.5–4 agent (0.5 s), then the caller's goodbye 4.5–5.5 and the call ends: no
    # agent onset and no further caller turn follows it, so it is neither answered nor missed.
    # R_R = 1/1 (n=1), L_R = 0.5 s.
    m = interaction_metrics([user(0.0, 2.0), agent(2.5, 4.0), user(4.5, 5.5)])
    assert m.response_rate == Measure(value=1.0, n=1)
    assert m.response_latency_s == Measure(value=0.5, n=1)


def test_an_answer_starting_on_the_frame_the_caller_stops_has_zero_latency():
    # Agent starts at exactly 2.0 when the caller ends at 2.0: not "still talking at the end"
    # (it started there, not before), so the turn is eligible and answered after 0.0 s.
    # (τ-Voice's 200 ms ticks would drop this turn; we keep it, see the doc.)
    m = interaction_metrics([user(0.0, 2.0), agent(2.0, 3.0)])
    assert m.response_latency_s == Measure(value=0.0, n=1)
    assert m.response_rate == Measure(value=1.0, n=1)


def test_latencies_are_timed_to_the_20_ms_frame_not_the_tick():
    # Caller ends at 1.02, agent starts at 1.78: 0.76 s, not 0.8 (a 200 ms tick would round it).
    # Times off the frame grid snap to the nearest frame: 0.501 -> 0.50, 1.0299999 -> 1.02.
    m = interaction_metrics([user(0.501, 1.0299999), agent(1.78, 3.0)])
    assert m.response_latency_s.value == pytest.approx(0.76, abs=1e-12)
    assert user(0.501, 1.0299999).start_s == 0.5 and user(0.501, 1.0299999).end_s == 1.02



def test_agent_and_caller_starting_again_on_the_same_frame_counts_as_an_answer():
    # Turn 1: 0–2. The caller starts again at 4.0 on the very frame the agent starts (4.0–4.6,
    # a collision: neither interrupts). Turn 2 (4–5) ends with the agent silent, so it is an
    # eligible turn, but the agent's onset (4.0) is no later than it: turn 1 was answered, 2.0 s.
    # Turn 2 has nothing after it: not scored. R_R = 1/1, L_R = 2.0, no interruptions.
    m = interaction_metrics([user(0.0, 2.0), user(4.0, 5.0), agent(4.0, 4.6)])
    assert m.response_rate == Measure(value=1.0, n=1)
    assert m.response_latency_s == Measure(value=2.0, n=1)
    assert (m.agent_interruptions, m.yield_rate.n) == (0, 0)


def test_only_a_turn_owed_an_answer_counts_as_speaking_again():
    # Turn 1: 0–2. The caller speaks again 2.5–4.0, but the agent starts at 3.0 over it and talks
    # to 6.0, so that turn ends under the agent's speech and is not one the caller "had to say
    # again" (τ-Voice counts only response-eligible turns): turn 1 is answered after 1.0 s.
    # The agent's onset at 3.0 inside the second turn is an agent interruption: I_A = 1/1.
    m = interaction_metrics([user(0.0, 2.0), user(2.5, 4.0), agent(3.0, 6.0)])
    assert m.response_rate == Measure(value=1.0, n=1)
    assert m.response_latency_s == Measure(value=1.0, n=1)
    assert m.agent_interruption_rate == Measure(value=1.0, n=1)

# --- yields -------------------------------------------------------------------------------------

def test_caller_interrupts_and_agent_yields_after_0_6_s():
    # Agent 0.0–3.6 (barge-in triggered at 3.5, audio out at 3.6); the caller cuts in at 3.0
    # and talks to 5.0; the agent answers at 5.8.
    # Yield: caller onset 3.0 inside agent speech, agent audio stops 3.6 -> 0.6 s < 2.0 -> yield.
    # The caller's turn ends at 5.0 with the agent silent -> eligible; answered 0.8 s later.
    # R_Y = 1/1, L_Y = 0.6 (n=1); R_R = 1/1, L_R = 0.8; no agent onset inside a caller turn.
    segments = [agent(0.0, 3.6, cut_at_s=3.5), user(3.0, 5.0), agent(5.8, 7.0)]
    assert outcomes(segments) == [("yield", "yield", 3.0, 0.6), ("response", "response", 5.0, 0.8)]
    m = interaction_metrics(segments)
    assert (m.yield_rate, m.yield_latency_s) == (Measure(value=1.0, n=1), Measure(value=0.6, n=1))
    assert m.response_latency_s == Measure(value=0.8, n=1)
    assert m.agent_interruptions == 0


def test_agent_talking_on_through_an_interruption_is_no_yield_and_the_turn_is_not_owed_an_answer():
    # Agent 0–6; the caller cuts in 1.0–2.5. The agent stops 5.0 s after the caller's onset
    # (>= 2.0) -> no_yield, no latency. The caller's turn ends at 2.5 with the agent still
    # talking (0 < 2.5 < 6) -> excluded from responses (an unresolved interruption).
    # R_Y = 0/1; L_Y none (n=0); R_R none (n=0); I_A none (no eligible turn).
    m = interaction_metrics([agent(0.0, 6.0), user(1.0, 2.5)])
    assert m.yield_rate == Measure(value=0.0, n=1)
    assert m.yield_latency_s == Measure(value=None, n=0)
    assert m.response_rate == Measure(value=None, n=0)
    assert m.agent_interruption_rate == Measure(value=None, n=0)


def test_no_yield_window_is_strict_at_2_s():
    # Caller onset at 1.0 over agent speech; agent stops at 2.98 (1.98 s: yield) in the first
    # call, at 3.0 (exactly 2.0 s: no yield) in the second.
    # With a 0.5 s window (custom), the 1.98 s stop is a no_yield too.
    assert outcomes([agent(0.0, 2.98), user(1.0, 4.0)])[0] == ("yield", "yield", 1.0, 1.98)
    assert outcomes([agent(0.0, 3.0), user(1.0, 4.0)])[0] == ("yield", "no_yield", 1.0, None)
    tight = InteractionWindows(no_yield_s=0.5)
    assert outcomes([agent(0.0, 2.98), user(1.0, 4.0)], tight)[0] == ("yield", "no_yield", 1.0, None)


def test_touching_agent_segments_are_one_stretch_of_speech():
    # The agent's two sentences 0–2 and 2–4 touch: it never fell silent. The caller's onset at
    # 1.0 is answered by silence only at 4.0 (3.0 s) -> no_yield. Were they two stretches, the
    # stop at 2.0 would read as a 1.0 s yield.
    assert outcomes([agent(0.0, 2.0), agent(2.0, 4.0), user(1.0, 1.5)]) == [("yield", "no_yield", 1.0, None)]


def test_simultaneous_starts_are_a_collision_not_an_interruption():
    # Both sides start on the same frame (1.0): neither spoke over the other. No yield event, no
    # agent interruption; the caller's turn ends at 2.0 with the agent talking (to 3.0) -> not
    # owed an answer. Every count is 0. (τ-Voice's ticks count such a start both ways.)
    segments = [agent(1.0, 3.0), user(1.0, 2.0)]
    m = interaction_metrics(segments)
    assert (m.yield_rate.n, m.agent_interruptions, m.response_rate.n) == (0, 0, 0)
    marked = timeline(segments)
    assert [s.started_over_other for s in marked] == [False, False]
    assert [s.overlap_s for s in marked] == [1.0, 1.0]


# --- agent interruptions -------------------------------------------------------------------------

def test_agent_starting_over_the_caller_is_an_agent_interruption_per_eligible_turn():
    # Caller 0–3; the agent blurts 2.0–2.5 (onset inside the turn: 1 interruption) and stops;
    # the turn ends at 3.0 with the agent silent -> eligible; the agent answers at 3.4 (0.4 s).
    # Second turn 5.5–7.0 answered at 7.5 (0.5 s).
    # I_A = 1 interruption / 2 eligible turns = 0.5 (n=2); R_R = 2/2; L_R = (0.4 + 0.5)/2 = 0.45.
    segments = [user(0.0, 3.0), agent(2.0, 2.5), agent(3.4, 5.0), user(5.5, 7.0), agent(7.5, 9.0)]
    m = interaction_metrics(segments)
    assert m.agent_interruptions == 1
    assert m.agent_interruption_rate == Measure(value=0.5, n=2)
    assert m.response_rate == Measure(value=1.0, n=2)
    assert m.response_latency_s.value == pytest.approx(0.45) and m.response_latency_s.n == 2


# --- selectivity ---------------------------------------------------------------------------------

def test_backchannels_one_talked_through_one_wrongly_yielded_to():
    # Backchannel 1 at 2.0–2.4 over agent speech 0–5: the agent talks on 3.0 s (>= 1.0) -> correct.
    # Backchannel 2 at 7.0–7.4 over agent speech 6–7.6 (the agent cut itself at 7.5): stops
    # 0.6 s after the "mm-hmm" (< 1.0), no caller turn in between -> error.
    # S_BC = 1/2 = 0.5 (n=2). Backchannels are not turns: no response or yield events.
    segments = [agent(0.0, 5.0), user(2.0, 2.4, "backchannel", text="mm-hmm"),
                agent(6.0, 7.6, cut_at_s=7.5), user(7.0, 7.4, "backchannel", text="right")]
    assert outcomes(segments) == [("backchannel", "correct", 2.0, None), ("backchannel", "error", 7.0, None)]
    m = interaction_metrics(segments)
    assert m.selectivity_backchannel == Measure(value=0.5, n=2)
    assert (m.response_rate.n, m.yield_rate.n) == (0, 0)


def test_backchannel_yield_window_is_strict_at_1_s():
    # "mm-hmm" at 2.0 over agent speech: a stop at 2.98 (0.98 s) is a yield (error); a stop at
    # exactly 3.0 (1.0 s) is not (correct).
    assert outcomes([agent(0.0, 2.98), user(2.0, 2.3, "backchannel")])[0][1] == "error"
    assert outcomes([agent(0.0, 3.0), user(2.0, 2.3, "backchannel")])[0][1] == "correct"

def test_a_backchannel_into_silence_is_not_scored():
    # "mm-hmm" at 1.0 while nobody speaks: τ-Voice scores backchannels over the agent only.
    assert interaction_metrics([user(1.0, 1.3, "backchannel")]).selectivity_backchannel == Measure(value=None, n=0)


def test_agent_stopping_for_a_real_interruption_after_a_backchannel_does_not_blame_the_backchannel():
    # Agent 0–1.9; "mm-hmm" at 1.0–1.3; the caller cuts in for real at 1.6; the agent stops at 1.9.
    # Backchannel: the agent stopped 0.9 s after it (< 1.0), but a caller turn began in between
    # (1.6), so the stop is the turn's yield -> correct.  Turn: onset 1.6 over agent speech,
    # stop at 1.9 -> yield 0.3 s. Turn ends 3.5 with the agent silent, agent at 4.2 -> 0.7 s.
    # S_BC = 1/1; R_Y = 1/1, L_Y = 0.3; R_R = 1/1, L_R = 0.7.
    segments = [agent(0.0, 1.9), user(1.0, 1.3, "backchannel"), user(1.6, 3.5), agent(4.2, 5.0)]
    m = interaction_metrics(segments)
    assert m.selectivity_backchannel == Measure(value=1.0, n=1)
    assert (m.yield_rate, m.yield_latency_s) == (Measure(value=1.0, n=1), Measure(value=0.3, n=1))
    assert m.response_latency_s == Measure(value=0.7, n=1)


def test_vocal_tics_in_silence_and_over_speech():
    # Tic 10.0–10.3 in silence; the agent starts at 11.0 <= 10.3 + 2.0 -> responded -> error.
    # Tic 20.0–20.3 in silence; the agent's next onset 22.4 > 22.3 -> correct.
    # Tic 31.0–31.2 over agent speech 30–35: the agent talks on 4.0 s -> correct.
    # Tic 41.0–41.2 over agent speech 40–41.5: the agent stops 0.5 s later (< 1.0) -> error
    #   (τ-Voice reads the audio, not the agent's intent: a sentence ending then is a yield).
    # S_VT = 2/4 = 0.5 (n=4). The tics stand apart from any caller speech: none is a turn.
    segments = [user(10.0, 10.3, "vocal_tic", text="<cough>"), agent(11.0, 12.0),
                user(20.0, 20.3, "vocal_tic", text="um"), agent(22.4, 23.0),
                agent(30.0, 35.0), user(31.0, 31.2, "vocal_tic"),
                agent(40.0, 41.5), user(41.0, 41.2, "vocal_tic")]
    assert [o[1] for o in outcomes(segments)] == ["error", "correct", "correct", "error"]
    m = interaction_metrics(segments)
    assert m.selectivity_vocal_tic == Measure(value=0.5, n=4)
    assert m.response_rate.n == 0


def test_response_window_to_a_tic_in_silence_includes_its_end():
    # Tic ends 1.3; an agent onset at exactly 1.3 + 2.0 = 3.3 is still a response (error);
    # at 3.32 (one frame later) it is not (correct).
    assert outcomes([user(1.0, 1.3, "vocal_tic"), agent(3.3, 4.0)])[0][1] == "error"
    assert outcomes([user(1.0, 1.3, "vocal_tic"), agent(3.32, 4.0)])[0][1] == "correct"


def test_a_tic_inside_a_turn_is_part_of_the_turn():
    # Caller 0–2, "um" 2.0–2.3, caller 2.3–4.0, all touching: one turn 0–4.0; the agent answers
    # at 4.8 -> L_R = 0.8 (n=1), R_R = 1/1. The tic is not scored apart (S_VT n=0). Were the
    # parts separate turns, the first would be a missed response (R_R = 1/2).
    segments = [user(0.0, 2.0), user(2.0, 2.3, "vocal_tic"), user(2.3, 4.0), agent(4.8, 6.0)]
    m = interaction_metrics(segments)
    assert m.response_rate == Measure(value=1.0, n=1)
    assert m.response_latency_s == Measure(value=0.8, n=1)
    assert m.selectivity_vocal_tic == Measure(value=None, n=0)


def test_out_of_turn_speech_answered_by_a_later_turn_is_not_an_error():
    # "hold on" (to someone else) 0.0–0.6 in silence; the caller then says "yes" 1.0–1.5; the
    # agent starts at 2.3, within 2.0 s of the aside's end (2.6), but a caller turn began in
    # between (1.0): the onset answers the turn -> correct. (τ-Voice would count an error.)
    # A second aside 5.0–5.5 with the agent starting at 6.0 (<= 7.5), no turn between -> error.
    # S_ND = 1/2 = 0.5 (n=2); the turn 1.0–1.5 is answered after 0.8 s; R_R = 1/1.
    segments = [user(0.0, 0.6, "out_of_turn", text="hold on"), user(1.0, 1.5, text="yes"), agent(2.3, 4.0),
                user(5.0, 5.5, "out_of_turn", text="one sec"), agent(6.0, 7.0)]
    assert outcomes(segments) == [("non_directed", "correct", 0.0, None), ("response", "response", 1.5, 0.8),
                                  ("non_directed", "error", 5.0, None)]
    m = interaction_metrics(segments)
    assert m.selectivity_non_directed == Measure(value=0.5, n=2)
    assert m.response_rate == Measure(value=1.0, n=1)


def test_out_of_turn_speech_over_the_agent_uses_the_1_s_yield_window():
    # Aside 2.0–2.5 over agent speech 0–2.8: the agent stops 0.8 s later -> error.
    # Aside 10.0–10.5 over agent speech 9–11.2: stops 1.2 s later -> correct.
    segments = [agent(0.0, 2.8), user(2.0, 2.5, "out_of_turn"), agent(9.0, 11.2), user(10.0, 10.5, "out_of_turn")]
    assert interaction_metrics(segments).selectivity_non_directed == Measure(value=0.5, n=2)


# --- empty and bad timelines ----------------------------------------------------------------------

def test_no_events_gives_none_with_count_zero_everywhere():
    for segments in ([], [agent(0.0, 5.0)], [user(0.0, 2.0)]):
        m = interaction_metrics(segments)
        for name in ("response_latency_s", "yield_latency_s", "response_rate", "yield_rate",
                     "agent_interruption_rate", "selectivity_backchannel", "selectivity_vocal_tic",
                     "selectivity_non_directed"):
            assert getattr(m, name) == Measure(value=None, n=0), (segments, name)
        assert m.agent_interruptions == 0 and m.selectivity() is None


def test_bad_timelines_are_refused():
    with pytest.raises(ValueError, match="two user segments overlap"):
        interaction_metrics([user(0.0, 2.0), user(1.0, 3.0)])
    with pytest.raises(ValueError, match="2 conversations"):
        timeline([user(0.0, 1.0), agent(1.0, 2.0).model_copy(update={"unit_id": "unit-2"})])
    with pytest.raises(ValueError, match="not after its start"):
        user(2.0, 2.0)
    with pytest.raises(ValueError, match="outside its segment"):
        agent(0.0, 2.0, cut_at_s=2.5)


# --- the panel: display, columns, pooling ------------------------------------------------------------

def test_a_measure_over_fewer_than_10_events_is_shown_as_such():
    assert Measure(value=0.5, n=4).display() == "0.50 (n=4 < 10)"
    assert Measure(value=10 / 12, n=12).display() == "0.83 (n=12)"
    assert Measure(value=0.8, n=3).display(" s") == "0.80 s (n=3 < 10)"
    assert Measure(value=None, n=0).display() == "n/a (n=0)"
    assert not Measure(value=0.5, n=9).shown() and Measure(value=0.5, n=10).shown()


def test_selectivity_mean_needs_all_three_with_enough_events():
    full = Measure(value=0.9, n=10)
    m = summarize([]).model_copy(update={"selectivity_backchannel": full, "selectivity_vocal_tic": full,
                                         "selectivity_non_directed": Measure(value=0.6, n=10)})
    assert m.selectivity() == pytest.approx(0.8)
    assert m.model_copy(update={"selectivity_vocal_tic": Measure(value=0.9, n=9)}).selectivity() is None


def test_columns_round_trip_and_nan_reads_as_none():
    m = interaction_metrics([user(0.0, 2.0), agent(2.8, 5.0)])
    cols = m.columns("duplex_")
    assert cols["duplex_response_latency_s"] == 0.8 and cols["duplex_response_latency_n"] == 1
    assert cols["duplex_agent_interruptions"] == 0 and cols["duplex_selectivity_backchannel"] is None
    assert InteractionMetrics.from_columns(cols, "duplex_") == m
    with_nan = {**cols, "duplex_selectivity_backchannel": math.nan}
    assert InteractionMetrics.from_columns(with_nan, "duplex_") == m


def test_pooled_panels_equal_the_panel_of_the_pooled_events():
    # Call 1: latencies 0.4 and 0.5, one agent interruption, one missed turn; call 2: latency
    # 0.7, a yield of 0.3 and a backchannel. Pooling their stored panels (value x count) must give
    # what summarising all their events together gives: L_R = (0.4+0.5+0.7)/3, R_R = 3/4, ...
    call1 = [user(0.0, 3.0), agent(2.0, 2.5), agent(3.4, 5.0), user(5.5, 7.0), agent(7.5, 9.0),
             user(10.0, 11.0), user(13.0, 14.0)]
    call2 = [agent(0.0, 1.9), user(1.0, 1.3, "backchannel"), user(1.6, 3.5), agent(4.2, 5.0)]
    pooled = pool([interaction_metrics(call1), interaction_metrics(call2)])
    together = summarize(interaction_events(call1) + interaction_events(call2))
    assert pooled.response_rate == together.response_rate == Measure(value=0.75, n=4)
    assert pooled.response_latency_s.n == 3
    assert pooled.response_latency_s.value == pytest.approx(together.response_latency_s.value)
    assert pooled.response_latency_s.value == pytest.approx((0.4 + 0.5 + 0.7) / 3)
    assert pooled.agent_interruption_rate == together.agent_interruption_rate == Measure(value=0.25, n=4)
    assert pooled.yield_latency_s == together.yield_latency_s == Measure(value=0.3, n=1)
    assert pooled.selectivity_backchannel == together.selectivity_backchannel


# --- timeline and label track ------------------------------------------------------------------

def test_timeline_orders_numbers_and_marks_overlap():
    # Agent 0–3.6 (cut at 3.5), caller 3.0–5.0 over it: 0.6 s of overlap on both, the caller
    # started over the agent, and the agent was interrupted.
    marked = timeline([user(3.0, 5.0), agent(0.0, 3.6, cut_at_s=3.5)])
    assert [(s.index, s.side) for s in marked] == [(0, "agent"), (1, "user")]
    assert [s.overlap_s for s in marked] == [0.6, 0.6]
    assert (marked[0].interrupted, marked[0].started_over_other, marked[0].yielded) == (True, False, True)
    assert (marked[1].interrupted, marked[1].started_over_other, marked[1].yielded) == (False, True, False)


def _conversation() -> list[Segment]:
    return [agent(0.0, 3.6, cut_at_s=3.5, text="Let me check your account"),
            user(2.0, 2.4, "backchannel", text="mm-hmm"), user(3.0, 5.0, text="wait, it's\tthe other\nline"),
            agent(5.82, 7.0, text="Sure."), user(8.0, 8.3, "vocal_tic", text="<cough>"),
            user(10.0, 10.6, "out_of_turn", text="hold on [to someone]: one sec")]


def test_label_track_is_audacitys_tab_separated_format():
    text = label_track([user(0.0, 2.0, text="I need help"), agent(2.8, 5.0, text="Sure.")])
    assert text == "0.000000\t2.000000\tuser speech: I need help\n2.800000\t5.000000\tagent speech: Sure.\n"


def test_label_track_round_trips_segments_and_events():
    segments = timeline(_conversation())
    events = interaction_events(segments)
    labels = parse_label_track(label_track(segments, events))
    parsed = [label for label in labels if label.side is not None]
    assert [(p.side, p.kind, p.start_s, p.end_s, p.cut_at_s, p.started_over_other, p.interrupted) for p in parsed] == [
        (s.side, s.kind, s.start_s, s.end_s, s.cut_at_s, s.started_over_other, s.interrupted) for s in segments]
    # A label is one line: the tab and line break inside the caller's words became spaces.
    assert [p.text for p in parsed] == [" ".join(s.text.replace("\t", " ").splitlines()) for s in segments]
    assert parsed[2].text == "wait, it's the other line"
    read_events = [(label.event, label.outcome, label.start_s, label.latency_s) for label in labels if label.event]
    assert read_events == [(e.category, e.outcome, e.at_s, e.latency_s) for e in events]
    assert ("yield", "yield", 3.0, 0.6) in read_events and all(label.start_s == label.end_s for label in labels
                                                                if label.event)


def test_label_track_of_one_side_and_reading_audacitys_own_files():
    only_user = parse_label_track(label_track(_conversation(), side="user"))
    assert {label.side for label in only_user} == {"user"} and len(only_user) == 4
    # Audacity's extended format puts a frequency line (leading backslash) under a label; a label
    # not written by us keeps its text; an empty label text is allowed.
    audacity = "1.500000\t1.500000\tpoint\n\\\t6928.456055\t6928.456055\n\n3.400000\t6.100000\t\n7.0\t8.0\n"
    labels = parse_label_track(audacity)
    assert [(label.start_s, label.end_s, label.label, label.side) for label in labels] == [
        (1.5, 1.5, "point", None), (3.4, 6.1, "", None), (7.0, 8.0, "", None)]
    with pytest.raises(ValueError, match="line 1"):
        parse_label_track("not a label\n")
