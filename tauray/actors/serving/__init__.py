"""Open-weight models served on the Ray cluster for a run (Ray Serve: llama.cpp, vLLM).

A model spec with a ``serve`` block (:class:`ServeSpec`) is deployed by
:class:`ServedModels` before the first unit and torn down after the last; calls
reach it through litellm like any OpenAI-compatible model. Ray Serve and the
backends are imported only when a deployment starts, so reading a spec needs
neither installed.
"""

from tauray.actors.serving.lifecycle import ServedModels, ServeStartError, check_backend, collect
from tauray.actors.serving.llamacpp import LlamaCppServer, llamacpp_app
from tauray.actors.serving.spec import ServeSpec, ServeSpecError, resolve_weights, served_name
from tauray.actors.serving.vllm import llm_config_kwargs, vllm_app

__all__ = ["LlamaCppServer", "ServeSpec", "ServeSpecError", "ServeStartError", "ServedModels", "check_backend",
           "collect", "llamacpp_app", "llm_config_kwargs", "resolve_weights", "served_name",
           "vllm_app"]
