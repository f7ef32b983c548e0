"""The one door to model providers: a litellm Router per model spec.

Every agent, user simulator and judge call goes through :class:`ModelClient`, so there is
exactly one place that talks to litellm and one place that retries a model call
(litellm's Router, configured from the :class:`~tauray.actors.llm.spec.ModelSpec`). The
engine above it sees only two outcomes: a :class:`~tauray.actors.llm.replies.ModelReply`
(possibly empty or with broken tool-call JSON, which are the model's doing and get
counted) or a :class:`~tauray.actors.llm.errors.ModelCallError` that says whether the
provider or the request was at fault, because the two are scored differently.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from tauray.actors.llm.errors import ModelCallError, ModelConfigError, classify, scrub
from tauray.actors.llm.history import adapt_history, litellm_adaptations, with_reasoning
from tauray.actors.llm.inline_executor import use_inline_executor
from tauray.actors.llm.model_map import is_priced
from tauray.actors.llm.params import model_info, request_params
from tauray.actors.llm.providers import (
    _PLACEHOLDER_KEY,
    env_api_base,
    is_loopback,
    litellm_module,
    missing_env,
    provider_names,
)
from tauray.actors.llm.ratelimit import (
    backoff_s,
    error_headers,
    is_overloaded,
    is_rate_limit,
    prompt_chars,
    retry_after_s,
    spent,
    upfront_accounting,
)
from tauray.actors.llm.replies import ModelReply, reply_of
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.llm.tool_schemas import strict_tool, tools_for
from tauray.actors.quota import Limits, Settlement, quota_key, rate_info, response_headers
from tauray.actors.quota import gate as quota_gate
from tauray.results.tables.records import INFRA

THINKING_KEPT = 4096
"""Tool-calling replies whose thinking blocks a client keeps (oldest forgotten first)."""


def retry_policy(num_retries: int) -> Any:
    """Which failures the Router retries (with its exponential backoff) and which it does not.

    Transient provider trouble (timeouts, 5xx, connection errors, which fall under
    ``DefaultRetries``) gets ``num_retries``. A 429 and a 503 (unavailable) get none here: the
    client waits them out itself (the provider's ``retry-after``, the model paused for every
    caller, a bounded total wait; :meth:`ModelClient.complete`), and so it does with an
    overloaded answer (Anthropic's 529) once the Router's retries are spent. A request the provider
    refused for what it is (bad request, context window, content policy, unknown
    model, credentials) gets none, because an identical retry cannot succeed.
    """
    from litellm.types.router import RetryPolicy

    return RetryPolicy(
        RateLimitErrorRetries=0,
        TimeoutErrorRetries=num_retries,
        InternalServerErrorRetries=num_retries,
        ServiceUnavailableErrorRetries=0,
        DefaultRetries=num_retries,
        BadRequestErrorRetries=0,
        ContentPolicyViolationErrorRetries=0,
        AuthenticationErrorRetries=0,
        NotFoundErrorRetries=0,
    )


def allowed_fails_policy() -> Any:
    """Errors that never cool a deployment down: requests refused for what they are.

    litellm's Router cools a deployment down after a 401 or 404 (and, for a single
    deployment, after any error litellm would not retry), after which every call,
    however good, fails with "no deployments available" for the cooldown period. A
    bad request, a refused key, a missing model or a content-policy refusal is the
    request's (or the configuration's) doing, so it is allowed without limit; rate
    limits and server errors keep litellm's default handling.
    """
    from litellm.types.router import AllowedFailsPolicy

    unlimited = 10**9
    return AllowedFailsPolicy(
        BadRequestErrorAllowedFails=unlimited,
        AuthenticationErrorAllowedFails=unlimited,
        NotFoundErrorAllowedFails=unlimited,
        ContentPolicyViolationErrorAllowedFails=unlimited,
    )


_ZERO_RATES = dict.fromkeys(("input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
                             "cache_creation_input_token_cost"), 0.0)


def _attempted_retries(hidden: Mapping[str, Any]) -> int:
    """The Router's retry count for a reply, from the header it stamps on every response."""
    headers = hidden.get("additional_headers") or {}
    try:
        return max(0, int(headers.get("x-litellm-attempted-retries") or 0))
    except (TypeError, ValueError):
        return 0


class ModelClient:
    """Calls one model (and its fallbacks) through a single litellm Router.

    Safe to share across the coroutines of one event loop; ``spec.concurrency``
    bounds the calls in flight. Build it once per spec and process via
    :func:`get_client`.
    """

    def __init__(self, spec: ModelSpec) -> None:
        if spec.is_reference:
            raise ModelConfigError(f"{spec.label} is played without a model; it has no ModelClient")
        litellm = litellm_module()
        main_provider, fallback_providers = provider_names(spec)
        self.spec = spec
        self._key_env = spec.api_key_env
        self._priced = {model: is_priced(model) for model in [spec.model, *spec.fallbacks]}

        def deployment(model: str, provider: str, is_main: bool) -> dict[str, Any]:
            params: dict[str, Any] = {"model": model, "timeout": spec.timeout}
            shares_endpoint = is_main or provider == main_provider
            if spec.api_base and shares_endpoint:
                params["api_base"] = spec.api_base
            # A local or self-hosted server (named by the spec or by the provider's standard
            # environment variable) needs some key but must never get a real one by accident
            # (loopback), or has none to give (no variable set).
            base = spec.api_base if spec.api_base and shares_endpoint else env_api_base(provider)
            if base and not spec.api_key_env and (is_loopback(base) or missing_env(litellm, model)):
                params["api_key"] = _PLACEHOLDER_KEY
            if not self._priced[model]:
                # The Router files an empty price entry (about 200 keys) for a deployment litellm
                # cannot price, and after every reply scans it all for a rate to explain a $0 cost:
                # about 2.5 ms of CPU a call, more than the Router's own work (docs/benchmarks.md).
                # Explicit zero rates end that scan at its first test (the cache rates too, or
                # litellm warns that it defaults them). The cost stays unknown to tauray (None,
                # from self._priced), never $0 against a budget.
                params.update(_ZERO_RATES)
            return {"model_name": model, "litellm_params": params}

        model_list = [deployment(spec.model, main_provider, True)]
        model_list += [deployment(fb, p, False) for fb, p in zip(spec.fallbacks, fallback_providers)]
        router_kwargs: dict[str, Any] = {
            "model_list": model_list,
            "num_retries": spec.num_retries,
            "timeout": spec.timeout,
            "retry_policy": retry_policy(spec.num_retries),
        }
        # A refused request says nothing about the deployment's health, so it must never put
        # the deployment in cooldown (which would turn every other call into "no deployments").
        router_kwargs["allowed_fails_policy"] = allowed_fails_policy()
        if spec.fallbacks:
            router_kwargs["fallbacks"] = [{spec.model: list(spec.fallbacks)}]
        # rpm/tpm are not the Router's: its limits are per process and count tokens after the
        # fact. The model's one quota (tauray.actors.quota) admits each call before it is sent,
        # declared or learned from the provider's rate-limit headers.
        self._router = litellm.Router(**router_kwargs)
        self._quota_key = quota_key(spec.model, spec.api_base)
        self._limits = Limits(rpm=spec.rpm, tpm=spec.tpm)
        self._upfront = upfront_accounting(spec.token_accounting, main_provider)

        # Built once: per call only messages, tools, seed and the key are added.
        self.request = request_params(spec, [main_provider, *fallback_providers])
        self._base_kwargs = dict(self.request.params)
        self._providers = {spec.model: main_provider, **dict(zip(spec.fallbacks, fallback_providers))}
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        # Thinking blocks of the replies that made tool calls, by call id: Anthropic and Bedrock
        # refuse a tool round whose assistant turn lost its thinking block (and its signature).
        self._thinking: OrderedDict[str, tuple[list[dict[str, Any]], str | None]] = OrderedDict()

    @property
    def provider(self) -> str:
        """The provider litellm resolves for the spec's model."""
        return self._providers[self.spec.model]

    def __repr__(self) -> str:
        return f"ModelClient({self.spec.label!r}, concurrency={self.spec.concurrency})"

    def _slots(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; a cached client may outlive a loop (tests,
        # asyncio.run per batch), so each loop gets its own bound.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            use_inline_executor(loop)
            self._semaphore = asyncio.Semaphore(self.spec.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, seed: int | None = None
    ) -> ModelReply:
        """One completion; raises :class:`ModelCallError` only when no reply came back.

        ``messages`` and ``tools`` are passed to litellm as they are (not copied),
        so callers must not mutate them while the call runs.
        """
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        kwargs = dict(self._base_kwargs)
        seed = self.spec.seed if seed is None else seed
        seed_applied = None if seed is None else self.request.seed
        if seed_applied:
            kwargs["seed"] = seed
        # The Router may hand the same messages to a fallback: every family's rules apply.
        providers = list(dict.fromkeys(self._providers.values()))
        messages, adapted = with_reasoning(messages, providers, self._thinking)
        for provider in providers:
            messages, marks = adapt_history(messages, provider)
            tools, changed = tools_for(provider, tools)
            adapted = tuple(sorted({*adapted, *marks, *(("tool_schemas",) if changed else ())}))
        for model, provider in self._providers.items():  # what litellm changes on its way out
            adapted = tuple(sorted({*adapted, *litellm_adaptations(messages, model, provider, kwargs)}))
        if tools and self.spec.strict:
            tools = [strict_tool(t) for t in tools]
            adapted = tuple(sorted({*adapted, "strict_tools"}))
        if tools:
            kwargs["tools"] = tools
        key: str | None = None
        if self._key_env:
            key = os.environ.get(self._key_env)
            if not key:
                raise ModelConfigError(
                    f"model {self.spec.model!r}: the environment variable {self._key_env!r} named by api_key_env is not set"
                )
            kwargs["api_key"] = key

        async with self._slots():
            response, latency, waits = await self._send(messages, kwargs, key)
        reply = self._reply(response, latency, seed_applied, adapted)
        return reply.model_copy(update={"retries": reply.retries + waits}) if waits else reply

    async def _send(self, messages: list[dict[str, Any]], kwargs: dict[str, Any],
                    key: str | None) -> tuple[Any, float, int]:
        """(response, latency of the answered attempt, waits): each attempt is admitted by the
        model's quota first (unless the model has none and its answers report none); a 429 or an
        overloaded answer pauses the model (for everyone) for the provider's ``retry-after`` or a
        backoff and tries again, until ``rate_limit_wait`` seconds of waiting are spent; a spent
        quota or spend cap stops the model's calls."""
        waited, waits = 0.0, 0
        qkey, gate = self._quota_key, quota_gate()
        metered, chars = qkey not in gate.unmetered, 0
        while True:
            if metered and not chars:  # what the quota estimates the prompt's tokens from
                chars = prompt_chars(messages, kwargs.get("tools"))
            if qkey in gate.stopped:
                raise ModelCallError(INFRA, gate.stopped[qkey], error_type="QuotaSpent")
            asked = time.perf_counter()
            ticket = None
            if metered:
                ticket = await gate.acquire(qkey, self._limits, chars, self.spec.max_tokens, self._upfront)
                if ticket.stopped:
                    raise ModelCallError(INFRA, ticket.stopped, error_type="QuotaSpent")
            started = time.perf_counter()
            # at most this long between the book admitting the call and the call going out
            delay = max(0.0, started - asked - ticket.waited_s) if ticket is not None else None
            try:
                response = await self._router.acompletion(model=self.spec.model, messages=messages, **kwargs)
            except asyncio.CancelledError:
                if ticket is not None:
                    gate.settle(ticket, Settlement(delay=delay))
                raise
            except Exception as error:
                limited, rate = is_rate_limit(error), rate_info(error_headers(error))
                if ticket is not None:
                    gate.settle(ticket, Settlement(sent=not limited, delay=delay, rate=rate))
                elif rate is not None:
                    gate.learn(qkey, rate)
                    metered = True
                reason = spent(error)
                if reason is not None:
                    line = (f"{self.spec.model}: the provider says this model's quota or spend cap is spent ({reason}); "
                            "no more calls to it in this run: raise the limit or add credit, then rerun the failed "
                            "conversations with --retry-errors")
                    gate.stop(qkey, line)
                    raise ModelCallError(INFRA, line, status_code=getattr(error, "status_code", None),
                                         error_type=type(error).__name__) from None
                busy = limited or is_overloaded(error)
                pause = (retry_after_s(error) or backoff_s(waits)) if busy else None
                if pause is not None and waited + pause <= self.spec.rate_limit_wait:
                    waited, waits = waited + pause, waits + 1
                    gate.pause(qkey, pause)  # every caller of the model waits it out, in the book
                    metered = True
                    continue
                kind, status = classify(error)
                text = scrub(f"{self.spec.model}: {type(error).__name__}: {error}", key)
                if busy and waits:
                    text += (f" (after waiting out {waits} rate-limited or overloaded answers for {waited:.0f} s; "
                             f"rate_limit_wait={self.spec.rate_limit_wait:g})")
                elif busy:
                    text += f" (rate_limit_wait={self.spec.rate_limit_wait:g})"
                raise ModelCallError(kind, text[:4000], status_code=status, error_type=type(error).__name__) from None
            latency = time.perf_counter() - started
            rate = rate_info(response_headers(response))
            if ticket is not None:
                usage = getattr(response, "usage", None)
                prompt = getattr(usage, "prompt_tokens", None) or None
                completion = getattr(usage, "completion_tokens", None)
                gate.settle(ticket, Settlement(prompt_tokens=prompt, completion_tokens=completion if prompt else None,
                                               replied=True, delay=delay, rate=rate))
            elif rate is not None:
                gate.learn(qkey, rate)
            return response, latency, waits

    def _reply(self, response: Any, latency: float, seed_applied: bool | None = None,
               adapted: tuple[str, ...] = ()) -> ModelReply:
        hidden = getattr(response, "_hidden_params", None) or {}
        served = str(hidden.get("litellm_model_name") or self.spec.model)
        cost = hidden.get("response_cost")
        cost_usd = float(cost) if isinstance(cost, (int, float)) and self._priced.get(served, False) else None
        reply = reply_of(response, latency_s=latency, model=served, cost_usd=cost_usd, seed_applied=seed_applied,
                         retries=_attempted_retries(hidden), adapted=adapted,
                         dropped=tuple(n for n in self.request.dropped if n != "seed"))
        if (reply.thinking_blocks or reply.reasoning_content) and reply.tool_calls:
            self._thinking[reply.tool_calls[0].id] = (reply.thinking_blocks, reply.reasoning_content)
            while len(self._thinking) > THINKING_KEPT:
                self._thinking.popitem(last=False)
        return reply

    async def aclose(self) -> None:
        """Drop the Router's process-wide registrations (callbacks, usage trackers)."""
        if not self._closed:
            self._closed = True
            self._router.retire()


# --------------------------------------------------------------------------- cache

_CLIENTS: dict[str, ModelClient] = {}


def _reasons(spec: ModelSpec) -> bool:
    return bool(model_info(spec.model).get("supports_reasoning")) or "thinking" in spec.extra_params


def get_client(spec: ModelSpec) -> ModelClient:
    """The process's client for ``spec``: one Router per distinct spec, so rate limits and
    concurrency bounds are shared by every conversation in the process."""
    key = spec.model_dump_json()
    if "temperature" in spec.model_fields_set and not spec.is_reference and _reasons(spec):
        key += "|temperature"  # a given temperature is sent to a reasoning model, a default one is not
    client = _CLIENTS.get(key)
    if client is None or client._closed:
        client = _CLIENTS[key] = ModelClient(spec)
    return client


async def close_clients() -> None:
    """Close and forget every cached client (end of a run, or between tests)."""
    clients = list(_CLIENTS.values())
    _CLIENTS.clear()
    for client in clients:
        await client.aclose()


__all__ = ["ModelClient", "allowed_fails_policy", "close_clients", "get_client", "retry_policy"]
