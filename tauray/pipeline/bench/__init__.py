"""Benchmarks that print their figures (``tauray bench …``), one module each: :mod:`.engine`
(engine throughput vs the latency-bound ideal and a bare-litellm replay), :mod:`.judge`
(re-judging throughput), :mod:`.vs_tau2` and :mod:`.tau2_profile` (against upstream's
runner), :mod:`.memory` (driver memory of a large sweep)."""
