"""How to reach one model role (agent, user or judge): the :class:`ModelSpec`.

Safe to log and to store: it names the environment variable that holds a key, never the
key; the key is read when a call is made.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauray.actors.serving.spec import ServeSpec, served_name
from tauray.scenarios.conventions import REFERENCE_POLICIES

# Parameters the client itself owns; letting extra_params set them would bypass the spec
# (or, for credentials, put a secret into a spec that gets logged and stored).
_RESERVED_PARAMS = frozenset(
    {
        "model", "messages", "tools", "stream", "api_key", "api_base", "base_url", "timeout",
        "num_retries", "max_retries", "fallbacks", "metadata", "seed", "temperature", "max_tokens",
    }
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PHONE_PREFIX = "phone/"
_PHONE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class PhoneSpec(BaseModel):
    """A live phone bot as the agent (docs/live-agents.md): where tauray calls it, what it is sent in
    ``start``'s custom parameters, and the call's settings (any field of ``PhoneSettings`` and
    ``PhoneAgentSettings``, written flat beside ``url``). Those settings are checked, one line naming
    the field, by the voice room when a sweep loads (``tauray.actors.voice.live.agent``): model access
    knows nothing of calls."""

    model_config = ConfigDict(frozen=True, extra="allow", hide_input_in_errors=True)

    url: str = Field(description="The bot's websocket, ws:// or wss:// (Twilio Media Streams). Not part of "
                     "the cell's identity, like api_base: a bot that moves to another port or host is the same bot.")
    parameters: dict[str, str] = Field(default_factory=dict, description="Extra custom parameters sent to the "
                                       "bot in start (beside conversation_id and tool_server_url); part of the "
                                       "identity, stored with the sweep: no secret here.")

    @field_validator("url")
    @classmethod
    def _websocket(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("ws://", "wss://")):  # the value is not echoed: it may hold credentials
            raise ValueError("expected a websocket URL, ws:// or wss://")
        return value

    @field_validator("parameters")
    @classmethod
    def _not_ours(cls, value: dict[str, str]) -> dict[str, str]:
        taken = sorted({"conversation_id", "tool_server_url"} & set(value))
        if taken:
            raise ValueError(f"parameters may not set {taken}: tauray sends them for each conversation")
        return value

    @property
    def settings(self) -> dict[str, Any]:
        """The call's settings as written (the fields beside url and parameters)."""
        return dict(self.model_extra or {})


REALTIME_PROVIDERS = ("openai", "azure", "gemini")  # the protocols spoken: tauray/actors/voice/live/realtime_*.py


class RealtimeSpec(BaseModel):
    """A realtime speech model as the agent (docs/live-agents.md): its session's settings (voice,
    transcription model, the protocol's shape, Azure's api_version, prices per million tokens) and
    the call's, written flat. The model, api_base and api_key_env are the spec's own; the settings
    are checked, one line naming the field, by the voice room when a sweep loads
    (``tauray.actors.voice.live.realtime_agent``)."""

    model_config = ConfigDict(frozen=True, extra="allow", hide_input_in_errors=True)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings as written."""
        return dict(self.model_extra or {})


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
    concurrency: int = Field(64, ge=1, description="Most conversations in flight using this model, cluster-wide (the "
                             "scheduler's bound), and most calls in flight at once through one client.")
    rpm: int | None = Field(None, gt=0, description="The provider's requests-per-minute quota for this model: one "
                            "limit for every role, host and node that calls the model at this api_base.")
    tpm: int | None = Field(None, gt=0, description="The provider's tokens-per-minute quota (prompt + completion) for "
                            "this model, shared like rpm; calls are admitted by estimated tokens before they are sent.")
    token_accounting: Literal["upfront", "settled"] | None = Field(
        None, description="How the provider counts a call's max_tokens against tpm: 'upfront' (prompt + max_tokens "
        "when the call arrives, nothing refunded), 'settled' (corrected to the real usage when it ends); None: the "
        "provider's known way (upfront for OpenAI and Azure, settled for the others).")
    rate_limit_wait: float = Field(300.0, ge=0.0, description="Most seconds one call spends waiting out 429s and "
                                   "overloaded answers (503, 529: the provider's retry-after, else backoff from 1 s) "
                                   "before it fails as an infra error; 0 fails at the first one.")
    timeout: float = Field(120.0, gt=0.0, description="Seconds one attempt may take before it counts as a timeout.")
    num_retries: int = Field(3, ge=0, description="Router retries for transient failures (5xx, timeouts, connection "
                             "errors); a 429 is not one of them: the call waits it out (rate_limit_wait).")
    fallbacks: list[str] = Field(
        default_factory=list, description="Other litellm model strings tried, in order, when this model keeps failing."
    )
    extra_params: dict[str, Any] = Field(
        default_factory=dict, description="Further litellm completion parameters (e.g. top_p), passed through as given."
    )
    strict: bool = Field(False, description="Send tools in OpenAI's strict mode: the schemas are rewritten so strict "
                         "mode accepts them (no additional properties, every property required, no defaults) and "
                         "marked strict; for providers that honour it (OpenAI, Azure).")
    cut_tool_calls: Literal["tell", "retry"] = Field(
        "tell", description="What happens to the tool calls of a reply cut at max_tokens (never run: a provider "
        "hands back a cut call with whatever arguments it parsed, Anthropic and Bedrock {}): tell answers each "
        "call that it was cut and lets the model reply again; retry keeps the cut reply out of the model's view and "
        "sends the same request once more (its tokens still counted; a second cut is told).",
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
    phone: PhoneSpec | None = Field(
        None, description="A live phone bot as the agent, called over a media-stream websocket on the wall clock "
        "(duplex voice cells only); model must then read 'phone/<name>'. See docs/live-agents.md.",
    )

    realtime: RealtimeSpec | None = Field(
        None, description="A realtime speech model as the agent (OpenAI's Realtime protocol, Azure's deployment "
        "of it, Gemini Live), streamed the line's audio on the wall clock (duplex voice cells only); model must then "
        "read 'openai/<model>', 'azure/<deployment>' or 'gemini/<model>'. See docs/live-agents.md.",
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
        if self.phone is not None and self.realtime is not None:
            raise ValueError("a model is a phone bot or a realtime model, not both: drop phone or realtime")
        if self.phone is not None:
            name = self.model.removeprefix(PHONE_PREFIX)
            if not self.model.startswith(PHONE_PREFIX) or not _PHONE_NAME.match(name):
                raise ValueError(f"a model with phone must be written 'phone/<name>' (name: letters, digits, '.', "
                                 f"'_', '-'), got {self.model!r}")
            if self.serve is not None or self.fallbacks:
                raise ValueError("a phone bot is called, not served, and has no fallbacks: drop serve and fallbacks")
        elif self.realtime is not None:
            if self.model.split("/", 1)[0] not in REALTIME_PROVIDERS or "/" not in self.model:
                raise ValueError(f"a realtime model must be written 'openai/<model>', 'azure/<deployment>' or "
                                 f"'gemini/<model>', got {self.model!r}")
            if self.serve is not None or self.fallbacks:
                raise ValueError("a realtime model is called over its websocket, not served, and has no fallbacks: "
                                 "drop serve and fallbacks")
        elif self.model.startswith(PHONE_PREFIX):
            raise ValueError(f"model {self.model!r} names a phone bot: give its phone = {{url = \"ws://...\"}}")
        return self

    @property
    def is_reference(self) -> bool:
        """True for the built-in reference policies, which never call a model."""
        return self.model in REFERENCE_POLICIES

    @property
    def is_phone(self) -> bool:
        """True for a live phone bot, which tauray calls instead of a model."""
        return self.phone is not None

    @property
    def is_realtime(self) -> bool:
        """True for a realtime speech model, which tauray streams the call to over its websocket."""
        return self.realtime is not None

    @property
    def is_live(self) -> bool:
        """True for an agent on the wall clock: a phone bot or a realtime model."""
        return self.phone is not None or self.realtime is not None

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


__all__ = ["PHONE_PREFIX", "REALTIME_PROVIDERS", "REFERENCE_POLICIES", "ModelSpec", "PhoneSpec", "RealtimeSpec"]
