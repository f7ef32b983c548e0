"""Open-weight models served on the Ray cluster for a run (Ray Serve: llama.cpp, vLLM).

A model spec with a ``serve`` block (:class:`ServeSpec`) is deployed by
:class:`ServedModels` before the first unit and torn down after the last; calls
reach it through litellm like any OpenAI-compatible model. Names load lazily so
that reading a spec needs neither Ray Serve nor a backend installed.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ServeSpec": "spec", "ServeSpecError": "spec", "resolve_weights": "spec", "served_name": "spec",
    "ServedModels": "lifecycle", "ServeStartError": "lifecycle", "serve_for_sweep": "lifecycle",
    "check_backend": "lifecycle", "collect": "lifecycle",
    "LlamaCppServer": "llamacpp", "llamacpp_app": "llamacpp",
    "llm_config_kwargs": "vllm", "vllm_app": "vllm",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"tauray.actors.serving.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'tauray.actors.serving' has no attribute {name!r}")
