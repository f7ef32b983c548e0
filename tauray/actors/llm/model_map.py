"""What litellm's tables say about a model: its exact entry in the model map (is the name
known at all), the provider's names nearest a misspelt one, and its price.

Whether litellm really knows a model name: an exact entry in its model map.

litellm answers ``get_model_info`` for a name it has no entry for when a rule of its own
generalises the name (any ``anthropic/claude-…`` gets Claude's defaults), so a misspelt
Claude name looked known. Here a name is known only when ``litellm.model_cost`` has an
entry for it at its provider: as given, without the provider prefix or with it (litellm
keys OpenAI and Anthropic models bare, Gemini's prefixed), and for Bedrock also its base
model without region or route (litellm's ``BedrockModelInfo.get_base_model``).

A name that a server of yours answers is not checked (:func:`unchecked_because`): the
server knows its own names and litellm's map does not list them.

Prices are litellm's own resolution (provider prefixes, Bedrock's ``us.``/``global.``
cross-region ids, Vertex's Gemini entries filed under another provider label): tauray asks
:func:`litellm.cost_per_token` and keeps no rule of its own. One trap: a Router registers an
empty price entry for every deployment it serves, after which litellm prices an unknown model
at $0. A model is therefore priced only when litellm charges something for a thousand tokens
each way; a free model needs an explicit ``price`` (0 is allowed there).
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Any, NamedTuple

from tauray.actors.llm.providers import env_api_base, is_loopback, litellm_module
from tauray.actors.llm.spec import ModelSpec

_CHAT_MODES = frozenset({"chat", "responses", "completion"})


class NameCheck(NamedTuple):
    """What the model map says about one model name."""

    key: str | None  # the map entry's key; None when there is none (or the name was not checked)
    found: str  # one line: the entry, or why the name was not checked, or that it is missing
    nearest: list[str]  # the provider's known names closest to it (only for a missing name)
    error: str | None  # why the name fails the check; None when it passes


def _provider_match(info: dict[str, Any], provider: str) -> bool:
    litellm_module()
    try:
        from litellm.utils import _check_provider_match  # litellm's own rule (vertex_ai-*, bedrock_*, ...)
    except ImportError:  # an older litellm
        return info.get("litellm_provider") in (None, provider)
    return bool(_check_provider_match(info, provider))


def map_key(model: str, provider: str) -> str | None:
    """The key of litellm's model-map entry for ``model`` at ``provider``; None when it has none."""
    litellm = litellm_module()
    try:
        bare = str(litellm.get_llm_provider(model=model, custom_llm_provider=provider)[0])
    except Exception:
        bare = model.split("/", 1)[-1]
    candidates = [model, bare, f"{provider}/{bare}"]
    if provider.startswith("bedrock"):
        from litellm.llms.bedrock.common_utils import BedrockModelInfo

        base = str(BedrockModelInfo.get_base_model(bare))
        candidates += [base, f"{provider}/{base}"]
    cost = litellm.model_cost
    return next((k for k in dict.fromkeys(candidates) if k in cost and _provider_match(cost[k], provider)), None)


@lru_cache(maxsize=64)
def known_names(provider: str) -> tuple[str, ...]:
    """The chat models litellm's map lists for ``provider``, written ``provider/name``."""
    names: dict[str, None] = {}
    for key, info in litellm_module().model_cost.items():
        if not isinstance(info, dict) or info.get("mode") not in _CHAT_MODES or not _provider_match(info, provider):
            continue
        rest = key
        for prefix in (provider, str(info.get("litellm_provider") or "")):
            if prefix and rest.startswith(prefix + "/"):
                rest = rest[len(prefix) + 1:]
                break
        names[f"{provider}/{rest}"] = None
    return tuple(names)


def nearest_names(model: str, provider: str, n: int = 3) -> list[str]:
    """The ``n`` known names of ``provider`` closest to ``model`` (difflib), best first."""
    bare = model.split("/", 1)[1] if model.startswith(provider + "/") else model
    return difflib.get_close_matches(f"{provider}/{bare}", known_names(provider), n=n, cutoff=0.6)


def unchecked_because(spec: ModelSpec, model: str, provider: str, main_provider: str) -> str | None:
    """Why ``model`` is not checked against the map (a server of yours answers it), or None.

    Not checked: a model tauray serves (``serve:``); one sent to the spec's ``api_base`` (the
    Router gives it to the model and to fallbacks of the same provider); one sent to a base URL
    the provider's environment variable names (``OPENAI_BASE_URL``, ``<PROVIDER>_API_BASE``);
    one whose provider litellm sends to this machine by default (Ollama); and one of a provider
    litellm lists no chat models for (``hosted_vllm``, ``lm_studio``, ...).
    """
    if spec.serve is not None:
        return "tauray serves it (serve:)"
    if spec.api_base and provider == main_provider:
        return "sent to the spec's api_base"
    if env_api_base(provider):
        return f"sent to the base URL the environment sets for {provider}"
    try:
        default_base = litellm_module().get_llm_provider(model=model, custom_llm_provider=provider)[3]
    except Exception:
        default_base = None
    if is_loopback(default_base):
        return f"sent to this machine ({provider}'s default base URL)"
    if not known_names(provider):
        return f"litellm lists no models of {provider}"
    return None


def check_name(spec: ModelSpec, model: str, provider: str, main_provider: str) -> NameCheck:
    """The model-map check of one name of ``spec`` (the model or a fallback)."""
    key = map_key(model, provider)
    if key is not None:
        return NameCheck(key, f"litellm's model map has it ({key!r})", [], None)
    why = unchecked_because(spec, model, provider, main_provider)
    if why is not None:
        return NameCheck(None, f"not in litellm's model map, not checked: {why}", [], None)
    nearest = nearest_names(model, provider)
    near = f"nearest: {', '.join(nearest)}" if nearest else "no known name is near it"
    error = (f"{model!r} is not in litellm's model map for {provider} ({near}); a misspelt name fails at the "
             "provider's first call: check the spelling (a model at an api_base you give is not checked)")
    return NameCheck(None, f"not in litellm's model map for {provider}", nearest, error)


def litellm_price(model: str) -> tuple[float, float] | None:
    """USD for 1,000 prompt and 1,000 completion tokens by litellm's table; None when it has no price."""
    litellm = litellm_module()
    try:
        prompt, completion = litellm.cost_per_token(model=model, prompt_tokens=1000, completion_tokens=1000)
    except Exception:
        return None
    if not (prompt or 0) + (completion or 0) > 0:
        return None
    return float(prompt), float(completion)


def realtime_prices(model: str) -> dict[str, float] | None:
    """USD per token of a realtime model (``openai/gpt-realtime``) by litellm's table: input and
    output text and audio, cached input; None when it has no audio price."""
    provider = model.split("/", 1)[0]
    key = map_key(model, provider)
    info = litellm_module().model_cost.get(key) if key else None
    if not isinstance(info, dict) or not info.get("input_cost_per_audio_token"):
        return None
    read = {"input_text_tokens": "input_cost_per_token", "input_audio_tokens": "input_cost_per_audio_token",
            "input_cached_tokens": "cache_read_input_token_cost", "output_text_tokens": "output_cost_per_token",
            "output_audio_tokens": "output_cost_per_audio_token"}
    return {name: float(info.get(field) or 0.0) for name, field in read.items()}


def is_priced(model: str) -> bool:
    """Whether litellm prices ``model`` (see the module note on $0)."""
    return litellm_price(model) is not None


__all__ = ["NameCheck", "check_name", "is_priced", "known_names", "litellm_price", "map_key", "nearest_names",
           "realtime_prices", "unchecked_because"]
