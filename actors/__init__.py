"""Who acts: model access over litellm, the agent / user-simulator / judge hosts
and the coordinator (Ray actors), the reference policies and the test endpoint.

Names are imported lazily so that ``import tauray.actors`` stays cheap (litellm
and Ray load only when used)."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ModelSpec": "models", "ModelClient": "models", "ModelCallError": "models", "ModelConfigError": "models",
    "check_model_ready": "models", "get_client": "models",
    "AgentHost": "hosts", "UserSimHost": "hosts", "remote_classes": "hosts",
    "CoordinatorHost": "coordinator", "run_conversation": "coordinator", "Termination": "coordinator",
    "coordinator_class": "coordinator",
    "JudgeHost": "judge", "JudgeConfig": "judge", "judge_result": "judge", "judge_actor_class": "judge",
    "OracleAgent": "policies", "ScriptedUser": "policies", "LLMPolicy": "policies",
    "start_endpoint": "endpoint", "EndpointConfig": "endpoint",
    "probe_models": "probe", "ProbeError": "probe",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"tauray.actors.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'tauray.actors' has no attribute {name!r}")
