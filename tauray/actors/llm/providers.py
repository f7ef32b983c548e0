"""Which provider serves a model, and what it may be sent.

litellm resolves a model string to a provider and knows which OpenAI parameters each
provider maps; tauray asks it here, once per client, so that a provider is never sent a
parameter it refuses (litellm refuses ``seed`` for Anthropic and Bedrock before any
network call) and so that a local server gets a placeholder key, never a real one.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any
from urllib.parse import urlparse

from tauray.actors import heap
from tauray.actors.llm.errors import ModelConfigError
from tauray.actors.llm.spec import ModelSpec

# Sent when a loopback or self-hosted endpoint needs *some* key; deliberately not key-shaped.
_PLACEHOLDER_KEY = "tauray-no-key-needed"


def litellm_module() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    heap.loaded("litellm")  # its model table stays for the process's life (a long-lived actor freezes it)

    # Stops litellm printing a provider list to stdout on every unknown model; a
    # display setting, set where clients are built, never at import.
    litellm.suppress_debug_info = True
    return litellm


def is_loopback(api_base: str | None) -> bool:
    if not api_base:
        return False
    host = (urlparse(api_base).hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def env_api_base(provider: str) -> str | None:
    """The base URL litellm takes from the environment for ``provider`` when a spec gives none
    (``OPENAI_BASE_URL``/``OPENAI_API_BASE`` for openai, ``<PROVIDER>_API_BASE`` otherwise)."""
    names = ["OPENAI_BASE_URL", "OPENAI_API_BASE"] if provider == "openai" else [f"{provider.upper()}_API_BASE"]
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def _provider(litellm: Any, model: str, api_base: str | None, label: str) -> str:
    try:
        return str(litellm.get_llm_provider(model=model, api_base=api_base)[1])
    except Exception:
        raise ModelConfigError(
            f"model {model!r} ({label}): litellm cannot tell which provider serves it; "
            'write it as "provider/model", e.g. "openai/gpt-4o-mini"'
        ) from None


def missing_env(litellm: Any, model: str) -> list[str]:
    try:
        report = litellm.validate_environment(model=model)
    except Exception:
        return []
    return [str(name) for name in report.get("missing_keys") or []]


def provider_names(spec: ModelSpec) -> tuple[str, list[str]]:
    """The provider of the model and of each fallback; checks the fallbacks can share the key."""
    litellm = litellm_module()
    main = _provider(litellm, spec.model, spec.api_base, "the configured model")
    fallback_providers = [_provider(litellm, fb, None, f"fallback of {spec.model}") for fb in spec.fallbacks]
    if spec.api_key_env:
        # The key is sent with each call and the Router applies call parameters to every
        # deployment it tries, so a fallback from another provider would receive it.
        foreign = [fb for fb, p in zip(spec.fallbacks, fallback_providers) if p != main]
        if foreign:
            raise ModelConfigError(
                f"model {spec.model!r}: fallbacks {foreign} are served by another provider than {main!r}, "
                f"so they cannot share the key named by api_key_env={spec.api_key_env!r}; "
                "drop api_key_env (use the providers' standard variables) or those fallbacks"
            )
    return main, fallback_providers


def supported_params(model: str, provider: str) -> frozenset[str] | None:
    """The OpenAI parameters litellm maps for ``model`` at ``provider``; None when litellm cannot say."""
    litellm = litellm_module()
    try:
        bare = litellm.get_llm_provider(model=model, custom_llm_provider=provider)[0]
        params = litellm.get_supported_openai_params(model=bare, custom_llm_provider=provider)
    except Exception:
        return None
    return frozenset(params) if params else None


__all__ = ["env_api_base", "litellm_module", "provider_names", "supported_params"]
