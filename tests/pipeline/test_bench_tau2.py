"""`tauray bench vs-tau2` end to end at toy size: upstream's `tau2 run` and tauray on
the same telecom tasks against the local endpoint, and the figures add up."""

from __future__ import annotations

import pytest

from tauray.pipeline.bench_tau2 import _last_error_line, run_tau2_bench


def test_last_error_line_keeps_the_exception_not_the_stack():
    text = """tau2 run failed (1):
Traceback (most recent call last):
  File "x.py", line 1, in <module>
    raise InternalServerError(
litellm.exceptions.InternalServerError: Connection error.
"""
    assert _last_error_line(text) == "litellm.exceptions.InternalServerError: Connection error."
    assert _last_error_line("") == "failed"


def test_small_bench_runs_both_runners(ray_local):
    bench = run_tau2_bench(tasks=2, latency=0.2, equal=2, tau2_candidates=(2,), tauray_candidates=(2, 4), waves=1,
                           hosts=1)
    assert bench.tau2_failed == {} and bench.tau2_failed_attempts == 0
    assert set(bench.tau2_runs) == {"2"} and set(bench.tauray_runs) == {"2", "4"}
    assert bench.tauray_concurrency == int(max(bench.tauray_runs, key=lambda c: bench.tauray_runs[c]))
    assert bench.speedup == round(bench.tauray_per_hour / bench.tau2_per_hour, 2)
    # same scripted conversations on both sides: 3 user replies, so 10 model calls per conversation for
    # tauray; tau2's count also holds the agent's fixed greeting
    assert bench.tauray_calls_per_conversation == 10
    assert bench.tau2_calls_per_conversation == 11
    ideal = bench.tauray_concurrency * 3600 / (bench.tauray_calls_per_conversation * bench.latency_s)
    assert bench.ideal_per_hour == pytest.approx(ideal, abs=0.1)
    assert 0 < bench.tauray_vs_ideal <= 1.05
