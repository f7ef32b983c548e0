"""What a client sends with every call, decided from what litellm knows about the model.

Three rules, each from litellm's own tables (never a list kept here):

* **Refused parameters.** litellm refuses, before any network call, an OpenAI parameter a
  provider does not map (``seed`` at Anthropic and Bedrock) or a value a model does not
  take (``temperature=0`` at OpenAI's o-series and gpt-5: "Only temperature=1 is
  supported"). A parameter tauray set by default is then left out and named in
  ``dropped``; one the user set explicitly is a :class:`ModelConfigError` naming the model
  and the parameter, because silently changing a user's setting would change the
  experiment.
* **Thinking.** With thinking on (``thinking`` in the spec, or a ``reasoning_effort`` that
  litellm turns into Anthropic's thinking block) a default temperature is left out and a set
  one other than 1 is refused: Anthropic documents that thinking "isn't compatible with
  temperature or top_k modifications as well as forced tool use", takes ``top_p`` only from
  0.95 to 1, and needs ``budget_tokens`` of at least 1,024 and below ``max_tokens``. Each of
  those is refused here, naming the field (:func:`thinking_conflict`). A reasoning model
  without thinking gets the temperature like any other (Claude 4.x and Gemini 2.5 take 0);
  where a reasoning model refuses it (OpenAI's o-series and gpt-5), litellm says so and the
  first rule applies.
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
    dropped: tuple[str, ...] = Field(description="Parameters of the spec left out because a provider takes none or "
                                     "refuses the value (or, for a default temperature, because thinking is on).")
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
        text = str(error).removeprefix("litellm.UnsupportedParamsError: ").split(". To drop")[0].split("\n")[0]
        return text if len(text) <= 200 else text[:200].rsplit(". ", 1)[0] + "."  # whole sentences
    finally:
        litellm.drop_params = saved
    return None


def _thinking(spec: ModelSpec) -> bool:
    thinking = spec.extra_params.get("thinking")
    return bool(thinking) and (not isinstance(thinking, dict) or thinking.get("type") != "disabled")


def thinking_block(spec: ModelSpec, provider: str) -> dict[str, Any] | None:
    """The Anthropic-style thinking block litellm sends for the spec's ``thinking`` or
    ``reasoning_effort`` at ``provider`` (Claude on Anthropic, Bedrock, Vertex; DeepSeek), or
    None where it sends none (no thinking asked; Gemini's ``thinkingConfig``; OpenAI's effort)."""
    asked = {k: spec.extra_params[k] for k in ("thinking", "reasoning_effort") if k in spec.extra_params}
    if not asked:
        return None
    litellm = litellm_module()
    from litellm.utils import get_optional_params

    saved = litellm.drop_params
    litellm.drop_params = False
    try:
        bare = litellm.get_llm_provider(model=spec.model, custom_llm_provider=provider)[0]
        block = get_optional_params(model=bare, custom_llm_provider=provider, **asked).get("thinking")
    except Exception:  # a provider that takes none of them: request_params names it
        return None
    finally:
        litellm.drop_params = saved
    return block if isinstance(block, dict) and block.get("type") not in (None, "disabled") else None


def _forces_a_tool(choice: Any) -> bool:
    if isinstance(choice, dict):
        return choice.get("type") in ("any", "tool", "function")
    return choice in ("required", "any")


def thinking_conflict(spec: ModelSpec, block: dict[str, Any] | None) -> str | None:
    """What in the spec Anthropic refuses with its thinking ``block`` on (one line naming the
    field), or None. The rules are Anthropic's extended-thinking documentation."""
    if block is None:
        return None
    extra = spec.extra_params
    top_p = extra.get("top_p")
    budget = block.get("budget_tokens")
    why = "thinking on"
    if "top_k" in extra:
        return f"extra_params.top_k cannot be sent with {why} (Anthropic: thinking is not compatible with top_k); " \
            "remove top_k"
    if isinstance(top_p, (int, float)) and top_p < 0.95:
        return f"extra_params.top_p={top_p} is refused with {why} (Anthropic takes top_p from 0.95 to 1 then); " \
            "remove top_p or raise it"
    if "tool_choice" in extra and _forces_a_tool(extra["tool_choice"]):
        return f"extra_params.tool_choice forces a tool, which is refused with {why} (Anthropic: only auto or " \
            "none); remove tool_choice"
    if isinstance(budget, int) and budget < 1024:
        return f"extra_params.thinking.budget_tokens={budget} is below Anthropic's minimum of 1024; raise it"
    if isinstance(budget, int) and spec.max_tokens is not None and spec.max_tokens <= budget:
        return f"max_tokens={spec.max_tokens} must exceed the thinking budget_tokens={budget} (Anthropic); " \
            "raise max_tokens or lower the budget"
    return None


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
    block = thinking_block(spec, providers[0])
    thinking = _thinking(spec) or block is not None
    reasoning = bool(info.get("supports_reasoning")) or thinking
    conflict = thinking_conflict(spec, block)
    if conflict:
        raise ModelConfigError(f"model {spec.model!r}: {conflict}")

    wanted: dict[str, Any] = dict(spec.extra_params)
    reasons: dict[str, str] = {}
    if spec.temperature is not None:
        if "temperature" in explicit and thinking and spec.temperature != 1.0:
            raise ModelConfigError(
                f"model {spec.model!r}: temperature={spec.temperature} cannot be sent with thinking on "
                "(Anthropic: thinking is not compatible with temperature modifications); remove temperature")
        if "temperature" not in explicit and thinking:
            reasons["temperature"] = "thinking on: no temperature unless the spec sets one"
        else:
            wanted["temperature"] = spec.temperature  # a value the model refuses is dropped or refused below
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
           "model_info", "refusal", "request_params", "thinking_block", "thinking_conflict"]
