"""Model access: a role's :class:`ModelSpec`, provider rules and the litellm Router client.

One concept per module: :mod:`.spec` (what a model is), :mod:`.errors` (what went
wrong, classified and scrubbed of secrets), :mod:`.providers` (provider resolution),
:mod:`.params` (the parameters a model accepts), :mod:`.history` (the history a
provider family accepts), :mod:`.tool_schemas` (tool schemas per family),
:mod:`.client` (the Router client, one per process and spec), :mod:`.replies` (a
completion reduced to what tauray keeps), :mod:`.inline_executor` (litellm's request
building on the loop), :mod:`.ratelimit` (waiting out a refusal for load); whether a
model can be used is :mod:`.usable`'s one answer (the free checks, the probe of
:mod:`.probe`, served models), from what litellm's tables say (:mod:`.model_map`);
:mod:`.check` is ``tauray models check``. litellm itself is imported only when a call
is made.
"""

from tauray.actors.llm.client import ModelClient, allowed_fails_policy, close_clients, get_client, retry_policy
from tauray.actors.llm.errors import ModelCallError, ModelConfigError, classify, scrub
from tauray.actors.llm.history import adapt_history
from tauray.actors.llm.inline_executor import LitellmInlineExecutor
from tauray.actors.llm.params import RequestParams, request_params
from tauray.actors.llm.providers import env_api_base, supported_params
from tauray.actors.llm.replies import ModelReply, RawToolCall
from tauray.actors.llm.spec import REFERENCE_POLICIES, ModelSpec
from tauray.actors.llm.usable import check_model_ready

__all__ = [
    "REFERENCE_POLICIES", "LitellmInlineExecutor", "ModelCallError", "ModelClient", "ModelConfigError",
    "ModelReply", "ModelSpec", "RawToolCall", "RequestParams", "adapt_history", "allowed_fails_policy", "check_model_ready",
    "classify", "close_clients", "env_api_base", "get_client", "request_params", "retry_policy", "scrub",
    "supported_params",
]
