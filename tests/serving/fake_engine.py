"""A stand-in for Ray Serve LLM's vLLM application, for machines without a GPU.

``ray.serve.llm`` cannot even be imported without vLLM, so the vLLM path is
tested with this module in its place: ``LLMConfig`` is Ray's own config class
(so the arguments tauray builds are validated for real), and
``build_openai_app`` returns a tiny Serve deployment that answers OpenAI chat
completions under the configured model id, the way Ray Serve LLM's ingress does.
"""

from __future__ import annotations

import time
import types
from typing import Any

BUILT: list[Any] = []


class FakeOpenAIIngress:
    """Answers ``/v1/models`` and ``/v1/chat/completions`` for one model id, with a fixed reply."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    async def __call__(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        path = request.url.path.rstrip("/")
        if path.endswith("/v1/models"):
            return JSONResponse({"object": "list", "data": [{"id": self.model_id, "object": "model"}]})
        body = await request.json()
        if body.get("model") != self.model_id:
            return JSONResponse({"error": {"message": f"model {body.get('model')!r} not served",
                                           "type": "invalid_request_error"}}, status_code=404)
        return JSONResponse({
            "id": "fake-1", "object": "chat.completion", "created": int(time.time()), "model": self.model_id,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"fake engine: {len(body['messages'])} messages"}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        })


def build_openai_app(args: dict[str, Any]) -> Any:
    from ray import serve

    (config,) = args["llm_configs"]
    BUILT.append(config)
    opts = config.deployment_config
    # Ray Serve LLM applies the config's deployment options to its server deployment; so does this
    shutdown = {k: opts[k] for k in ("graceful_shutdown_timeout_s", "graceful_shutdown_wait_loop_s") if k in opts}
    return serve.deployment(FakeOpenAIIngress, name="fake-vllm", num_replicas=opts.get("num_replicas", 1),
                            ray_actor_options={"num_cpus": 0}, **shutdown).bind(config.model_id)


def module() -> types.ModuleType:
    """A ``ray.serve.llm`` stand-in: Ray's real ``LLMConfig``, a faked engine."""
    from ray.llm._internal.serve.core.configs.llm_config import LLMConfig

    fake = types.ModuleType("ray.serve.llm")
    fake.LLMConfig = LLMConfig  # type: ignore[attr-defined]
    fake.build_openai_app = build_openai_app  # type: ignore[attr-defined]
    return fake
