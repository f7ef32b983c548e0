"""Suite-wide settings: offline, loopback-only, quiet."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray on 127.0.0.1 for the whole suite."""
    from tauray.pipeline.ray_runtime import ensure_ray

    ray = ensure_ray(num_cpus=2)
    yield ray
    from tauray.pipeline.pool import KEPT

    KEPT.drop()
    ray.shutdown()


@pytest.fixture(scope="session")
def endpoint():
    """The local test endpoint (no faults, no latency), shared by the suite, serving the
    tests' faulty customers, agents and judges too (``tests/test_helpers``)."""
    from tauray.endpoint import start_endpoint

    with start_endpoint(latency=0.0, behaviours="tests.test_helpers.faulty") as ep:
        yield ep
