"""Fail fast, for free: a model that cannot work as configured is named before any work.

No provider is called here (that is the probe's job, :mod:`tauray.actors.llm.probe`): the
model string must resolve to a provider, a named key variable must be set, and a
provider that needs a key must find one.
"""

from __future__ import annotations

import os

from tauray.actors.llm.errors import ModelConfigError
from tauray.actors.llm.params import request_params
from tauray.actors.llm.providers import (
    env_api_base,
    litellm_module,
    missing_env,
    provider_names,
)
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.serving import lifecycle


def check_model_ready(spec: ModelSpec) -> None:
    """Fail fast, naming the model, if calls to ``spec`` cannot work for configuration reasons.

    Checks the model string resolves to a provider, that no setting the user gave is
    one the model refuses, that a named key variable is set, and that a provider which
    needs a key can find one. It never calls the
    provider, so it costs nothing and is safe offline.
    """
    if spec.is_reference:
        return
    if spec.serve is not None and spec.api_base is None:  # not deployed yet: tauray brings it up
        lifecycle.check_backend(spec.serve)
        return
    litellm = litellm_module()
    main, fallback_providers = provider_names(spec)
    # A setting the model refuses (temperature=0 at o-series, frequency_penalty at Anthropic) is
    # named here, for free, before the probe or any unit.
    request_params(spec, [main, *fallback_providers])
    if spec.api_key_env:
        if not os.environ.get(spec.api_key_env):
            raise ModelConfigError(
                f"model {spec.model!r}: api_key_env names the environment variable "
                f"{spec.api_key_env!r}, which is not set (or empty)"
            )
    elif not spec.api_base and not env_api_base(main):
        # With a base URL from the environment the server may need no key (a local one).
        missing = missing_env(litellm, spec.model)
        if missing:
            raise ModelConfigError(
                f"model {spec.model!r} (provider {main!r}) needs {', '.join(missing)} in the environment, "
                "or set api_key_env to the variable that holds its key"
            )
    for fallback, provider in zip(spec.fallbacks, fallback_providers):
        if provider == main and (spec.api_key_env or spec.api_base):
            continue  # shares the model's credentials and endpoint
        missing = missing_env(litellm, fallback)
        if missing:
            raise ModelConfigError(
                f"fallback {fallback!r} of model {spec.model!r} (provider {provider!r}) needs "
                f"{', '.join(missing)} in the environment"
            )


__all__ = ["check_model_ready"]
