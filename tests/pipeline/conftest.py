"""Helpers of the sweep tests: small sweep configs against the local test endpoint."""

from __future__ import annotations

from typing import Any

import pytest

from tauray.pipeline.config import SweepConfig


def make_sweep(base_url: str, *, name: str = "t", agents=("a1", "a2"), users=("u1", "u2"), patterns=None,
               split: str = "small", variant: str = "manual", limit: int | None = 3, trials: int = 2,
               spec: dict[str, Any] | None = None, **top: Any) -> SweepConfig:
    spec = spec or {}
    behaviours = {"a1": "scripted-agent", "a2": "scripted-agent-quiet", "u1": "scripted-user:2",
                  "u2": "scripted-user-impatient", "j": "judge-json"}
    models = {k: {"model": f"openai/{v}", "api_base": base_url, **spec,
                  "price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}} for k, v in behaviours.items()}
    models["ref"] = {"model": "scripted"}  # the reference user policy: no model calls at all
    sel = {"domain": "telecom", "split": split, **({"patterns": patterns} if patterns else {}),
           **({"limit": limit} if limit else {})}
    raw = {"name": name, "models": models, "agents": list(agents), "users": list(users),
           "judges": [{"model": "j", "prompt": "overall-plain@1"}], "scenarios": [sel], "policy_variants": [variant],
           "trials": trials, "max_in_flight": 32, **top}
    return SweepConfig.model_validate(raw)


@pytest.fixture()
def sweep_factory():
    return make_sweep
