"""The one door to model providers: a spec, a readiness check and a litellm Router client.

Every agent, user simulator and judge call goes through :class:`ModelClient`, so
there is exactly one place that talks to litellm and one place that retries a
model call (litellm's Router, configured from the :class:`ModelSpec`). The
engine above it sees only two outcomes: a :class:`ModelReply` (possibly empty
or with broken tool-call JSON, which are the model's doing and get counted) or
a :class:`ModelCallError` that says whether the provider or the request was at
fault, because the two are scored differently.

Secrets never live in a spec: it names the environment variable that holds the
key, the key is read when a call is made, and every error text that leaves
this module is scrubbed of it and of anything shaped like a credential.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import ipaddress
import os
import re
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauray.actors.replies import ModelReply, RawToolCall, reply_of

from tauray.actors.serving.spec import ServeSpec, served_name

REFERENCE_POLICIES: frozenset[str] = frozenset({"oracle", "scripted"})

# Sent when a loopback or self-hosted endpoint needs *some* key; deliberately not key-shaped.
_PLACEHOLDER_KEY = "tauray-no-key-needed"

# Parameters the client itself owns; letting extra_params set them would bypass the spec
# (or, for credentials, put a secret into a spec that gets logged and stored).
_RESERVED_PARAMS = frozenset(
    {
        "model", "messages", "tools", "stream", "api_key", "api_base", "base_url", "timeout",
        "num_retries", "max_retries", "fallbacks", "metadata", "seed", "temperature", "max_tokens",
    }
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelConfigError(ValueError):
    """The model cannot be used as configured; raised before any conversation starts."""


class ModelCallError(Exception):
    """A call that produced no reply.

    ``kind`` decides how the run treats it: ``"infra"`` means the provider or the
    network failed even after the Router's retries (the work unit may be retried,
    and the conversation is not the model's fault); ``"model"`` means the request
    itself was refused (bad request, context window, content policy, unknown
    model, credentials), which retrying would not change.
    """

    def __init__(self, kind: Literal["infra", "model"], message: str, *, status_code: int | None = None, error_type: str = "") -> None:
        super().__init__(message)
        self.kind: Literal["infra", "model"] = kind
        self.message = message
        self.status_code = status_code
        self.error_type = error_type

    def __repr__(self) -> str:
        return f"ModelCallError(kind={self.kind!r}, message={self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # It crosses Ray actor boundaries; the default reduction would drop ``kind``.
        return (self.__class__, (self.kind, self.message), {"status_code": self.status_code, "error_type": self.error_type})


# --------------------------------------------------------------------------- spec


class ModelSpec(BaseModel):
    """How to reach one model role (agent, user or judge); safe to log and to store."""

    # Validation errors leave inputs out: a key pasted into the wrong field must not be echoed.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model: str = Field(
        description='litellm model string such as "openai/gpt-4o-mini", or a reference policy '
        '("oracle", "scripted") that is played without a model.',
        min_length=1,
    )
    temperature: float | None = Field(0.0, ge=0.0, description="Sampling temperature; None leaves the provider default.")
    seed: int | None = Field(None, description="Sampling seed sent with every call unless a call passes its own.")
    max_tokens: int | None = Field(None, gt=0, description="Cap on completion tokens; None leaves the provider default.")
    api_base: str | None = Field(None, description="Base URL of the provider or of an OpenAI-compatible server.")
    api_key_env: str | None = Field(
        None,
        description="NAME of the environment variable that holds the API key (never the key). "
        "None uses the provider's standard variable.",
    )
    concurrency: int = Field(64, ge=1, description="Most calls in flight at once through one client.")
    rpm: int | None = Field(None, gt=0, description="Requests-per-minute limit enforced on the deployment by the Router.")
    tpm: int | None = Field(None, gt=0, description="Tokens-per-minute limit enforced on the deployment by the Router.")
    timeout: float = Field(120.0, gt=0.0, description="Seconds one attempt may take before it counts as a timeout.")
    num_retries: int = Field(3, ge=0, description="Router retries for transient failures (429, 5xx, timeouts, connection).")
    fallbacks: list[str] = Field(
        default_factory=list, description="Other litellm model strings tried, in order, when this model keeps failing."
    )
    extra_params: dict[str, Any] = Field(
        default_factory=dict, description="Further litellm completion parameters (e.g. top_p), passed through as given."
    )
    reference_steps: bool = Field(
        False, description="Agent only: the scenario's reference actions are added to the system prompt (a "
        "ground-truth agent, as τ²'s llm_agent_gt), to check user simulators against a known resolution and "
        "for benchmarks whose scripted agent follows the steps (endpoint behaviour scripted-agent-writes).",
    )
    serve: ServeSpec | None = Field(
        None, description="Bring the model up on the Ray cluster for the run (Ray Serve: llama.cpp or vLLM) "
        "instead of calling a running provider; model must then read 'openai/<name>'. See docs/serve.md.",
    )

    @field_validator("model")
    @classmethod
    def _strip_model(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("model must not be empty")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name_not_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        # The error must not echo the value: if it is a key, echoing it would leak it.
        if value.startswith("sk-") or len(value) > 100 or any(c.isspace() for c in value) or not _ENV_NAME.match(value):
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                "not the key itself; the given value looks like a key or is not a variable name"
            )
        return value

    @field_validator("fallbacks")
    @classmethod
    def _clean_fallbacks(cls, value: list[str]) -> list[str]:
        cleaned = [v.strip() for v in value]
        if any(not v for v in cleaned):
            raise ValueError("fallback model strings must not be empty")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError(f"fallbacks contain duplicates: {cleaned}")
        if REFERENCE_POLICIES & set(cleaned):
            raise ValueError("reference policies cannot be fallbacks")
        return cleaned

    @field_validator("extra_params")
    @classmethod
    def _no_reserved_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(_RESERVED_PARAMS & set(value))
        if reserved:
            raise ValueError(f"extra_params may not set {reserved}; use the ModelSpec fields instead")
        return value

    @model_validator(mode="after")
    def _fallbacks_differ(self) -> ModelSpec:
        if self.model in self.fallbacks:
            raise ValueError(f"model {self.model!r} is listed among its own fallbacks")
        if self.serve is not None:
            served_name(self.model)
        return self

    @property
    def is_reference(self) -> bool:
        """True for the built-in reference policies, which never call a model."""
        return self.model in REFERENCE_POLICIES

    @property
    def label(self) -> str:
        """How the model is named in reports."""
        return f"{self.model} (reference policy)" if self.is_reference else self.model

    @classmethod
    def parse(cls, value: str | Mapping[str, Any] | ModelSpec) -> ModelSpec:
        """A spec from a bare model string, a JSON object text, or a mapping."""
        if isinstance(value, ModelSpec):
            return value
        if isinstance(value, Mapping):
            return cls.model_validate(dict(value))
        text = value.strip()
        if text.startswith("{"):
            return cls.model_validate_json(text)
        return cls(model=text)


# --------------------------------------------------------------------------- secrets


_SECRET_PATTERNS = (
    (re.compile(r"(?i)\b(bearer)\s+[^\s'\",;]+"), r"\1 [REDACTED]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{4,}"), "sk-[REDACTED]"),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization)['\"]?\s*[:=]\s*['\"]?)[^\s'\",;}]+"), r"\1[REDACTED]"),
)


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` without the given secret values or anything that looks like a credential."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# --------------------------------------------------------------------------- readiness


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # Stops litellm printing a provider list to stdout on every unknown model; a
    # display setting, set where clients are built, never at import.
    litellm.suppress_debug_info = True
    return litellm


def _is_loopback(api_base: str | None) -> bool:
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


def _missing_env(litellm: Any, model: str) -> list[str]:
    try:
        report = litellm.validate_environment(model=model)
    except Exception:
        return []
    return [str(name) for name in report.get("missing_keys") or []]


def _providers(spec: ModelSpec) -> tuple[str, list[str]]:
    """The provider of the model and of each fallback; checks the fallbacks can share the key."""
    litellm = _litellm()
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


def check_model_ready(spec: ModelSpec) -> None:
    """Fail fast, naming the model, if calls to ``spec`` cannot work for configuration reasons.

    Checks the model string resolves to a provider, that a named key variable is
    set, and that a provider which needs a key can find one. It never calls the
    provider, so it costs nothing and is safe offline.
    """
    if spec.is_reference:
        return
    if spec.serve is not None and spec.api_base is None:  # not deployed yet: tauray brings it up
        from tauray.actors.serving.lifecycle import check_backend

        check_backend(spec.serve)
        return
    litellm = _litellm()
    main, fallback_providers = _providers(spec)
    if spec.api_key_env:
        if not os.environ.get(spec.api_key_env):
            raise ModelConfigError(
                f"model {spec.model!r}: api_key_env names the environment variable "
                f"{spec.api_key_env!r}, which is not set (or empty)"
            )
    elif not spec.api_base and not env_api_base(main):
        # With a base URL from the environment the server may need no key (a local one).
        missing = _missing_env(litellm, spec.model)
        if missing:
            raise ModelConfigError(
                f"model {spec.model!r} (provider {main!r}) needs {', '.join(missing)} in the environment, "
                "or set api_key_env to the variable that holds its key"
            )
    for fallback, provider in zip(spec.fallbacks, fallback_providers):
        if provider == main and (spec.api_key_env or spec.api_base):
            continue  # shares the model's credentials and endpoint
        missing = _missing_env(litellm, fallback)
        if missing:
            raise ModelConfigError(
                f"fallback {fallback!r} of model {spec.model!r} (provider {provider!r}) needs "
                f"{', '.join(missing)} in the environment"
            )


# --------------------------------------------------------------------------- provider-safe parameters


def supported_params(model: str, provider: str) -> frozenset[str] | None:
    """The OpenAI parameters litellm maps for ``model`` at ``provider``; None when litellm cannot say."""
    litellm = _litellm()
    try:
        bare = litellm.get_llm_provider(model=model, custom_llm_provider=provider)[0]
        params = litellm.get_supported_openai_params(model=bare, custom_llm_provider=provider)
    except Exception:
        return None
    return frozenset(params) if params else None


class RequestParams(BaseModel):
    """What a client sends with every call, after leaving out what the provider does not take."""

    model_config = ConfigDict(frozen=True)

    params: dict[str, Any] = Field(description="Parameters sent with every call (temperature, max_tokens, extras).")
    seed: bool = Field(description="Whether a seed may be sent; False when a provider of the spec takes none.")
    dropped: tuple[str, ...] = Field(description="Parameters of the spec left out because a provider takes none.")


def request_params(spec: ModelSpec, providers: list[str] | None = None) -> RequestParams:
    """The spec's call parameters that every deployment (the model and its fallbacks) accepts.

    litellm refuses, before any network call, an OpenAI parameter that a provider
    does not map (``seed`` at Anthropic or Bedrock), which would end every
    conversation on its first call. The parameters litellm's table says a provider
    does not take are left out and named in ``dropped``; provider-specific extras
    (not OpenAI parameters, e.g. ``top_k`` or ``thinking``) pass through as given,
    for the provider to judge. Where litellm cannot tell, everything is sent.
    """
    litellm = _litellm()
    if providers is None:
        main, fallback_providers = _providers(spec)
        providers = [main, *fallback_providers]
    models = [spec.model, *spec.fallbacks]
    known = [supported_params(m, p) for m, p in zip(models, providers)]
    openai_params = frozenset(getattr(litellm, "OPENAI_CHAT_COMPLETION_PARAMS", ()) or ())

    def accepted(name: str) -> bool:
        return all(k is None or name in k for k in known)

    wanted: dict[str, Any] = dict(spec.extra_params)
    if spec.temperature is not None:
        wanted["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        wanted["max_tokens"] = spec.max_tokens
    params, dropped = {}, []
    for name, value in wanted.items():
        if name in openai_params and not accepted(name):
            dropped.append(name)
        else:
            params[name] = value
    seed = accepted("seed")
    if not seed and spec.seed is not None:
        dropped.append("seed")
    return RequestParams(params=params, seed=seed, dropped=tuple(dropped))


# --------------------------------------------------------------------------- retry policy


def retry_policy(num_retries: int) -> Any:
    """Which failures the Router retries (with its exponential backoff) and which it does not.

    Transient provider trouble (429, timeouts, 5xx, unavailable, connection errors,
    which fall under ``DefaultRetries``) gets ``num_retries``; a request the provider
    refused for what it is (bad request, context window, content policy, unknown
    model, credentials) gets none, because an identical retry cannot succeed.
    """
    from litellm.types.router import RetryPolicy

    return RetryPolicy(
        RateLimitErrorRetries=num_retries,
        TimeoutErrorRetries=num_retries,
        InternalServerErrorRetries=num_retries,
        ServiceUnavailableErrorRetries=num_retries,
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


# --------------------------------------------------------------------------- errors


def _classify(error: BaseException) -> tuple[Literal["infra", "model"], int | None]:
    import openai

    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    infra_types: tuple[type[BaseException], ...] = (
        openai.RateLimitError,
        openai.APIConnectionError,  # includes timeouts
        openai.InternalServerError,
        asyncio.TimeoutError,
        ConnectionError,
    )
    model_types: tuple[type[BaseException], ...] = (
        openai.BadRequestError,  # includes context window and content policy
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
        openai.UnprocessableEntityError,
    )
    if isinstance(error, infra_types):
        return "infra", status
    if isinstance(error, model_types):
        return "model", status
    if status is not None and 400 <= status < 500 and status not in (408, 409, 429):
        return "model", status
    # 5xx, 408/409/429, ServiceUnavailable/BadGateway, and failures with no status
    # (the Router finding no deployment, broken transports): not the model's doing.
    return "infra", status


# --------------------------------------------------------------------------- client


def _attempted_retries(hidden: Mapping[str, Any]) -> int:
    """The Router's retry count for a reply, from the header it stamps on every response."""
    headers = hidden.get("additional_headers") or {}
    try:
        return max(0, int(headers.get("x-litellm-attempted-retries") or 0))
    except (TypeError, ValueError):
        return 0


def _has_price(litellm: Any, model: str, provider: str) -> bool:
    """Whether litellm's price table knows ``model``. A Router registers an empty entry for
    each deployment, so mere presence proves nothing; a per-token price must be there."""
    bare = model.split("/", 1)[1] if "/" in model else model
    for name, must_match_provider in ((model, False), (bare, True)):
        entry = litellm.model_cost.get(name)
        if not isinstance(entry, dict):
            continue
        if must_match_provider and entry.get("litellm_provider") != provider:
            continue
        if entry.get("input_cost_per_token") is not None or entry.get("output_cost_per_token") is not None:
            return True
    return False



def _is_litellm_request_build(fn: Any) -> bool:
    """``partial(Context.run, partial(<litellm function>, ...))``: how litellm's async
    entry points hand their synchronous half to the loop's executor."""
    if not isinstance(fn, functools.partial) or not fn.args:
        return False
    run, inner = fn.func, fn.args[0]
    return (isinstance(getattr(run, "__self__", None), contextvars.Context)
            and isinstance(inner, functools.partial)
            and str(getattr(inner.func, "__module__", "")).startswith("litellm"))


class LitellmInlineExecutor(ThreadPoolExecutor):
    """A loop's default executor that runs litellm's request-building step in place.

    ``litellm.acompletion`` passes its synchronous half (``completion``, which only
    builds the request and returns the coroutine that sends it) to the default
    executor. That is CPU work under the GIL, so a thread buys nothing and costs two
    thread hand-offs and a GIL switch per call, which at hundreds of calls in flight
    shows up as latency in every conversation. Only that step runs in place; any other
    job (DNS lookups, file reads) still goes to a small thread pool.
    """

    def __init__(self, max_workers: int = 2, thread_name_prefix: str = "tauray-io") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        if not _is_litellm_request_build(fn):
            return super().submit(fn, *args, **kwargs)
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the awaiting coroutine, as a pool would
            future.set_exception(error)
        return future


_INLINE_LOOPS: set[int] = set()  # ids of loops given the executor (uvloop's loops take no attributes)


def _use_inline_executor(loop: asyncio.AbstractEventLoop) -> None:
    if id(loop) not in _INLINE_LOOPS:
        loop.set_default_executor(LitellmInlineExecutor())
        _INLINE_LOOPS.add(id(loop))


class ModelClient:
    """Calls one model (and its fallbacks) through a single litellm Router.

    Safe to share across the coroutines of one event loop; ``spec.concurrency``
    bounds the calls in flight. Build it once per spec and process via
    :func:`get_client`.
    """

    def __init__(self, spec: ModelSpec) -> None:
        if spec.is_reference:
            raise ModelConfigError(f"{spec.label} is played without a model; it has no ModelClient")
        litellm = _litellm()
        main_provider, fallback_providers = _providers(spec)
        self.spec = spec
        self._key_env = spec.api_key_env

        def deployment(model: str, provider: str, is_main: bool) -> dict[str, Any]:
            params: dict[str, Any] = {"model": model, "timeout": spec.timeout}
            shares_endpoint = is_main or provider == main_provider
            if spec.api_base and shares_endpoint:
                params["api_base"] = spec.api_base
            # A local or self-hosted server (named by the spec or by the provider's standard
            # environment variable) needs some key but must never get a real one by accident
            # (loopback), or has none to give (no variable set).
            base = spec.api_base if spec.api_base and shares_endpoint else env_api_base(provider)
            if base and not spec.api_key_env and (_is_loopback(base) or _missing_env(litellm, model)):
                params["api_key"] = _PLACEHOLDER_KEY
            if is_main:
                if spec.rpm is not None:
                    params["rpm"] = spec.rpm
                if spec.tpm is not None:
                    params["tpm"] = spec.tpm
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
        if spec.rpm is not None or spec.tpm is not None:
            # Without this the Router treats rpm/tpm as routing weights only; with it an
            # over-limit call fails as a rate limit, which the retry policy backs off from.
            router_kwargs["optional_pre_call_checks"] = ["enforce_model_rate_limits"]
        self._router = litellm.Router(**router_kwargs)


        # Built once: per call only messages, tools, seed and the key are added.
        self.request = request_params(spec, [main_provider, *fallback_providers])
        self._base_kwargs = dict(self.request.params)
        self._priced = {
            model: _has_price(litellm, model, provider)
            for model, provider in [(spec.model, main_provider), *zip(spec.fallbacks, fallback_providers)]
        }
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"ModelClient({self.spec.label!r}, concurrency={self.spec.concurrency})"

    def _slots(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; a cached client may outlive a loop (tests,
        # asyncio.run per batch), so each loop gets its own bound.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            _use_inline_executor(loop)
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
        if tools:
            kwargs["tools"] = tools
        seed = self.spec.seed if seed is None else seed
        seed_applied = None if seed is None else self.request.seed
        if seed_applied:
            kwargs["seed"] = seed
        key: str | None = None
        if self._key_env:
            key = os.environ.get(self._key_env)
            if not key:
                raise ModelConfigError(
                    f"model {self.spec.model!r}: the environment variable {self._key_env!r} named by api_key_env is not set"
                )
            kwargs["api_key"] = key

        async with self._slots():
            started = time.perf_counter()
            try:
                response = await self._router.acompletion(model=self.spec.model, messages=messages, **kwargs)
            except Exception as error:
                kind, status = _classify(error)
                text = scrub(f"{self.spec.model}: {type(error).__name__}: {error}", key)
                raise ModelCallError(kind, text[:4000], status_code=status, error_type=type(error).__name__) from None
            latency = time.perf_counter() - started
        return self._reply(response, latency, seed_applied)

    def _reply(self, response: Any, latency: float, seed_applied: bool | None = None) -> ModelReply:
        hidden = getattr(response, "_hidden_params", None) or {}
        served = str(hidden.get("litellm_model_name") or self.spec.model)
        cost = hidden.get("response_cost")
        cost_usd = float(cost) if isinstance(cost, (int, float)) and self._priced.get(served, False) else None
        return reply_of(response, latency_s=latency, model=served, cost_usd=cost_usd, seed_applied=seed_applied,
                        retries=_attempted_retries(hidden))

    async def aclose(self) -> None:
        """Drop the Router's process-wide registrations (callbacks, usage trackers)."""
        if not self._closed:
            self._closed = True
            self._router.retire()


# --------------------------------------------------------------------------- cache

_CLIENTS: dict[str, ModelClient] = {}


def get_client(spec: ModelSpec) -> ModelClient:
    """The process's client for ``spec``: one Router per distinct spec, so rate limits and
    concurrency bounds are shared by every conversation in the process."""
    key = spec.model_dump_json()
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


__all__ = [
    "REFERENCE_POLICIES",
    "ModelCallError",
    "LitellmInlineExecutor",
    "ModelClient",
    "ModelConfigError",
    "ModelReply",
    "ModelSpec",
    "RawToolCall",
    "RequestParams",
    "check_model_ready",
    "close_clients",
    "get_client",
    "request_params",
    "retry_policy",
    "scrub",
    "supported_params",
]
