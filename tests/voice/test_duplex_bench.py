"""``tauray bench duplex`` runs half and duplex on the same conversations with the tone voice and
reports the harness's cost per simulated minute of each, and duplex with conversations in flight."""

from __future__ import annotations

import pytest

from tauray.pipeline.bench.duplex import run_duplex_bench

pytestmark = pytest.mark.slow  # a dozen conversations in process (about 10 s on 2 loaded cores)


def test_the_duplex_bench_measures_both_modes_on_the_same_conversations() -> None:
    result = run_duplex_bench(conversations=2, in_flight=(1, 2))
    for mode in ("half", "duplex"):
        figures = result[mode]
        assert figures["conversations"] == 2 and figures["errors"] == 0, figures
        assert figures["simulated_s"] > 0 and figures["cpu_s_per_simulated_min"] > 0
    assert result["duplex_vs_half_cpu_per_simulated_min"] > 0
    assert set(result["duplex_in_flight"]) == {1, 2}
