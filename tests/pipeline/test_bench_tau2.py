"""`tauray bench vs-tau2` end to end at toy size: upstream's `tau2 run` (its ground-truth
agent) and tauray on the same telecom tasks with the same writing scripted pair against
the local endpoint: the same calls per task, writes and syncs, and figures that add up."""

from __future__ import annotations

import pytest

from dev.bench.vs_tau2 import _last_error_line, run_tau2_bench, tau2_calls
from tauray.pipeline.bench.engine import bench_scenarios
from tauray.scenarios import get_scenario


def test_last_error_line_keeps_the_exception_not_the_stack():
    text = """tau2 run failed (1):
Traceback (most recent call last):
  File "x.py", line 1, in <module>
    raise InternalServerError(
litellm.exceptions.InternalServerError: Connection error.
"""
    assert _last_error_line(text) == "litellm.exceptions.InternalServerError: Connection error."
    assert _last_error_line("") == "failed"


def test_tau2_greeting_is_not_a_model_call():
    sim = {"messages": [{"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "help"},
                        {"role": "assistant", "tool_calls": [{}]}, {"role": "tool", "content": "x"},
                        {"role": "assistant", "content": "done"}, {"role": "user", "content": "bye"}]}
    assert tau2_calls(sim) == 4


def test_small_bench_runs_both_runners_like_for_like(ray_local):
    # tasks with an agent-side write (refuel, roaming), whose sync updates the phone
    names = [n for n in bench_scenarios(variant="manual") if any(a.side == "agent" for a in get_scenario(n).reference_actions)]
    bench = run_tau2_bench(tasks=2, latency=0.2, equal=2, tau2_candidates=(2,), tauray_candidates=(2, 4), waves=1,
                           hosts=1, scenarios=names[:2])
    assert bench.tau2_failed == {} and bench.tau2_failed_attempts == 0
    assert set(bench.tau2_runs) == {"2"} and set(bench.tauray_runs) == {"2", "4"}
    # every conversation completed on both sides, and each task took the same model calls on both
    assert all(r.incomplete == 0 and r.completed >= 2 for r in [*bench.tau2_runs.values(), *bench.tauray_runs.values()])
    assert bench.calls_equal
    assert bench.calls_per_conversation_tau2 == bench.calls_per_conversation_tauray > 4
    assert bench.writes_per_conversation >= 1 and bench.syncs_per_conversation > 0
    assert bench.tauray_concurrency == int(max(bench.tauray_runs, key=lambda c: bench.tauray_runs[c].per_hour))
    assert bench.speedup_best == round(bench.tauray_per_hour / bench.tau2_per_hour, 2)
    assert bench.speedup_equal_concurrency == round(bench.tauray_per_hour_at_equal / bench.tau2_per_hour_at_equal, 2)
    assert bench.tau2_per_cpu_second > 0 and bench.tauray_per_cpu_second > 0
    assert 0 < bench.tau2_cpu_per_wall_second["2"] <= 2.5
    ideal = bench.tauray_concurrency * 3600 / (bench.calls_per_conversation_tauray * bench.latency_s)
    assert bench.ideal_per_hour == pytest.approx(ideal, abs=0.1)
    assert 0 < bench.tauray_vs_ideal <= 1.05


def test_profile_parts_follow_the_stack():
    """py-spy's folded stacks: the start-up's imports, the results-file save wherever it
    sits under the runner, litellm, and the rest, in GIL seconds at the sample rate."""
    from dev.bench.tau2_profile import classify

    folded = """<module> (tau2:3);_find_and_load (<frozen importlib._bootstrap>:1176) 50
Thread.run (threading.py:982);_run (tau2/run.py:549);_save (tau2/run.py:517);dump (json/__init__.py:179) 30
Thread.run (threading.py:982);run_task (tau2/run.py:700);completion (litellm/main.py:1) 15
Thread.run (threading.py:982);run_task (tau2/run.py:700);get_response (tau2/orchestrator/x.py:1) 5
not a sample line
"""
    parts, samples = classify(folded, rate=10)
    assert samples == 100
    assert parts == {"start-up imports": 5.0, "results-file save": 3.0, "litellm": 1.5, "other": 0.5}
