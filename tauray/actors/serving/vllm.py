"""vLLM on GPU nodes through Ray Serve LLM (``ray.serve.llm``): a served model as an ``LLMConfig``.

Ray Serve LLM already is a vLLM deployment with an OpenAI-compatible ingress
(``build_openai_app``), placement groups for the engine's workers and health
checks; tauray only translates a :class:`ServeSpec` into its documented
configuration. The model answers to its served name under the application's
route prefix, which is what litellm's ``openai/<name>`` with ``api_base``
expects.

Verified here only with the engine faked (no GPU on the development machine);
see docs/serve.md.
"""

from __future__ import annotations

from typing import Any

from tauray.actors.serving.spec import ServeSpec


def llm_config_kwargs(served: str, spec: ServeSpec) -> dict[str, Any]:
    """The ``LLMConfig`` arguments for ``spec``, as plain data (tested without vLLM)."""
    deployment: dict[str, Any] = {
        "num_replicas": spec.replicas,
        "max_ongoing_requests": spec.max_ongoing_requests,
        "health_check_period_s": spec.health_check_period_s,
        "health_check_timeout_s": spec.health_check_timeout_s,
        **spec.shutdown_options(),
    }
    kwargs: dict[str, Any] = {
        "model_loading_config": {"model_id": served, "model_source": spec.model_source},
        "engine_kwargs": dict(spec.engine_kwargs),
        "deployment_config": deployment,
    }
    if spec.accelerator_type:
        kwargs["accelerator_type"] = spec.accelerator_type
    if spec.resources or spec.num_gpus:
        # One bundle per engine worker (tensor x pipeline parallel); custom resources pin the
        # workers to the nodes that carry them.
        bundle: dict[str, float] = {"GPU": spec.num_gpus or 1.0, **spec.resources}
        if spec.num_cpus:
            bundle["CPU"] = spec.num_cpus
        kwargs["placement_group_config"] = {"bundle_per_worker": bundle}
    return kwargs


def vllm_app(served: str, spec: ServeSpec) -> Any:
    """The Serve application for ``spec`` (not yet running); needs ``tauray[vllm]``."""
    try:
        from ray.serve.llm import LLMConfig, build_openai_app
    except ImportError as exc:
        raise ImportError(f"serving {served!r} with backend 'vllm' needs Ray Serve LLM and vLLM: "
                          f"pip install 'tauray[vllm]' ({exc})") from None
    config = LLMConfig(**llm_config_kwargs(served, spec))
    return build_openai_app({"llm_configs": [config]})


__all__ = ["llm_config_kwargs", "vllm_app"]
