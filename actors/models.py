"""Model access, re-exported from where each part lives (one concept per module):

* :mod:`~tauray.actors.model_spec`: the :class:`ModelSpec`;
* :mod:`~tauray.actors.model_errors`: the error classes, their classification, scrubbing;
* :mod:`~tauray.actors.providers`: provider resolution and provider-safe parameters;
* :mod:`~tauray.actors.readiness`: the free readiness check;
* :mod:`~tauray.actors.client`: the litellm Router client and its per-process cache;
* :mod:`~tauray.actors.replies`: what a completion is reduced to, whatever its shape;
* :mod:`~tauray.actors.inline_executor`: the loop executor for litellm's request building.
"""

from __future__ import annotations

from tauray.actors.client import (
    ModelClient,
    allowed_fails_policy,
    close_clients,
    get_client,
    retry_policy,
)
from tauray.actors.inline_executor import LitellmInlineExecutor
from tauray.actors.model_errors import ModelCallError, ModelConfigError, classify, scrub
from tauray.actors.model_spec import REFERENCE_POLICIES, ModelSpec
from tauray.actors.providers import RequestParams, _litellm, env_api_base, request_params, supported_params
from tauray.actors.readiness import check_model_ready
from tauray.actors.replies import ModelReply, RawToolCall

__all__ = [
    "REFERENCE_POLICIES",
    "LitellmInlineExecutor",
    "ModelCallError",
    "ModelClient",
    "ModelConfigError",
    "ModelReply",
    "ModelSpec",
    "RawToolCall",
    "RequestParams",
    "_litellm",
    "allowed_fails_policy",
    "check_model_ready",
    "classify",
    "close_clients",
    "env_api_base",
    "get_client",
    "request_params",
    "retry_policy",
    "scrub",
    "supported_params",
]
