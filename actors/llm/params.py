"""What a client sends with every call, decided from what litellm knows about the model.

Three rules, each from litellm's own tables (never a list kept here):

* **Refused parameters.** litellm refuses, before any network call, an OpenAI parameter a
  provider does not map (``seed`` at Anthropic and Bedrock) or a value a model does not
  take (``temperature=0`` at OpenAI's o-series and gpt-5: "Only temperature=1 is
  supported"). A parameter tauray set by default is then left out and named in
  ``dropped``; one the user set explicitly is a :class:`ModelConfigError` naming the model
  and the parameter, because silently changing a user's setting would change the
  experiment.
* **Reasoning and thinking.** A model litellm marks ``supports_reasoning`` gets no
  temperature unless the user set one (OpenAI documents that reasoning models take only
  the default; Anthropic documents that thinking "isn't compatible with temperature or
  top_k modifications", so an explicit temperature with ``thinking`` is refused here).
* **A finite max_tokens.** Left unset, litellm sends Anthropic the model's maximum (64,000;
  128,000 for a model missing from its map, which the API refuses). Without a spec value
  a model gets :data:`DEFAULT_MAX_TOKENS` (more for reasoning models, whose hidden
  reasoning counts against it), capped at litellm's ``max_output_tokens``, and above a
  thinking budget. A self-hosted model litellm does not know is left to its server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.errors import ModelConfigError, scrub
from tauray.actors.llm.providers import litellm_module, provider_names, supported_params
from tauray.actors.llm.spec import ModelSpec

DEFAULT_MAX_TOKENS = 4096
"""Completion cap when the spec sets none (a τ² turn is a few hundred tokens)."""

DEFAULT_REASONING_MAX_TOKENS = 16384
"""Completion cap for reasoning models when the spec sets none (reasoning tokens count)."""

CAPPED_PROVIDERS = frozenset({"anthropic", "bedrock", "vertex_ai", "bedrock_converse"})
"""Providers that need a max_tokens even for a model litellm does not know."""


class RequestParams(BaseModel):
    """What a client sends with every call, after leaving out what the provider does not take."""

    model_config = ConfigDict(frozen=True)

    params: dict[str, Any] = Field(description="Parameters sent with every call (temperature, max_tokens, extras).")
    seed: bool = Field(description="Whether a seed may be sent; False when a provider of the spec takes none.")
    dropped: tuple[str, ...] = Field(description="Parameters of the spec left out because a provider takes none "
                                     "(or, for temperature, because the model reasons).")
    reasons: dict[str, str] = Field(default_factory=dict, description="Why each dropped parameter was left out.")
    reasoning: bool = Field(False, description="litellm marks the model as a reasoning model, or thinking is on.")


def model_info(model: str) -> dict[str, Any]:
    """litellm's entry for the model ({} when it has none)."""
    try:
        return dict(litellm_module().get_model_info(model=model) or {})
    except Exception:
        return {}


def refusal(model: str, provider: str, name: str, value: Any) -> str | None:
    """litellm's reason for refusing ``name=value`` for the model (None when it maps it).

    Asked with litellm's global ``drop_params`` off for the length of this synchronous call:
    an imported package may have turned it on (``tau2.utils.llm_utils`` does, at import),
    and then litellm would drop a refused parameter silently, a user's setting included.
    """
    litellm = litellm_module()
    from litellm.utils import get_optional_params

    saved = litellm.drop_params
    litellm.drop_params = False
    try:
        bare = litellm.get_llm_provider(model=model, custom_llm_provider=provider)[0]
        get_optional_params(model=bare, custom_llm_provider=provider, **{name: value})
    except Exception as error:  # UnsupportedParamsError and kin
        if type(error).__name__ != "UnsupportedParamsError":
            return None
        text = str(error).removeprefix("litellm.UnsupportedParamsError: ")
        return text.split(". To drop")[0].split("\n")[0][:200]
    finally:
        litellm.drop_params = saved
    return None


def _thinking(spec: ModelSpec) -> bool:
    thinking = spec.extra_params.get("thinking")
    return bool(thinking) and (not isinstance(thinking, dict) or thinking.get("type") != "disabled")


def default_max_tokens(spec: ModelSpec, provider: str, info: dict[str, Any], reasoning: bool) -> int | None:
    """The cap sent when the spec gives none; None leaves it to a server litellm does not know."""
    ceiling = info.get("max_output_tokens") or info.get("max_tokens")
    if not ceiling and provider not in CAPPED_PROVIDERS:
        return None
    value = DEFAULT_REASONING_MAX_TOKENS if reasoning else DEFAULT_MAX_TOKENS
    thinking = spec.extra_params.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    if isinstance(budget, int):
        value = max(value, budget + DEFAULT_MAX_TOKENS)  # Anthropic: max_tokens must exceed budget_tokens
    return min(value, int(ceiling)) if ceiling else value


def request_params(spec: ModelSpec, providers: list[str] | None = None) -> RequestParams:
    """The spec's call parameters that every deployment (the model and its fallbacks) accepts.

    Provider-specific extras (not OpenAI parameters, e.g. ``top_k`` or ``thinking``) pass
    through as given, for the provider to judge. Raises :class:`ModelConfigError` for an
    explicitly set parameter that a deployment refuses.
    """
    litellm = litellm_module()
    if providers is None:
        main, fallback_providers = provider_names(spec)
        providers = [main, *fallback_providers]
    models = [spec.model, *spec.fallbacks]
    known = [supported_params(m, p) for m, p in zip(models, providers)]
    openai_params = frozenset(getattr(litellm, "OPENAI_CHAT_COMPLETION_PARAMS", ()) or ())
    explicit = spec.model_fields_set | set(spec.extra_params)
    info = model_info(spec.model)
    thinking = _thinking(spec)
    reasoning = bool(info.get("supports_reasoning")) or thinking

    wanted: dict[str, Any] = dict(spec.extra_params)
    reasons: dict[str, str] = {}
    if spec.temperature is not None:
        if "temperature" in explicit and thinking and spec.temperature != 1.0:
            raise ModelConfigError(
                f"model {spec.model!r}: temperature={spec.temperature} cannot be sent with thinking enabled "
                "(Anthropic: thinking is not compatible with temperature modifications); remove temperature")
        if "temperature" not in explicit and reasoning:
            reasons["temperature"] = "reasoning model: no temperature unless the spec sets one"
        else:
            wanted["temperature"] = spec.temperature
    max_tokens = spec.max_tokens or default_max_tokens(spec, providers[0], info, reasoning)
    if max_tokens is not None:
        wanted["max_tokens"] = max_tokens
    params: dict[str, Any] = {}
    for name, value in wanted.items():
        why = None
        if name in openai_params:
            why = next((f"{p} takes no {name}" for k, p in zip(known, providers) if k is not None and name not in k),
                       None)
            why = why or next((r for m, p in zip(models, providers) if (r := refusal(m, p, name, value))), None)
        if why is None:
            params[name] = value
        elif name in explicit:
            # Only a number is echoed: a header or a nested setting may carry a secret.
            shown = f"{name}={value!r}" if isinstance(value, (int, float, bool)) else name
            raise ModelConfigError(f"model {spec.model!r}: {shown} is refused for this model ({scrub(why)}); "
                                   f"remove {name} from the model's settings")
        else:
            reasons[name] = why
    seed = all(k is None or "seed" in k for k in known)
    if not seed and spec.seed is not None:
        reasons["seed"] = f"{providers[0]} takes no seed"
    return RequestParams(params=params, seed=seed, dropped=tuple(reasons), reasons=reasons, reasoning=reasoning)


__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_MAX_TOKENS", "RequestParams", "default_max_tokens",
           "model_info", "refusal", "request_params"]
