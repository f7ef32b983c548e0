"""A realtime speech model as a sweep's agent: its ``[models]`` entry parsed once
(:class:`RealtimeAgentSpec`), what of it makes a cell, where and with which key its session
opens, what it costs, and its probe (``tauray models check``).

A sweep names one like a model, with a ``realtime`` table (docs/live-agents.md)::

    [models.rt]
    model = "openai/gpt-realtime"                    # or "azure/<deployment>" with api_base
    realtime = {voice = "alloy", answer_timeout_s = 20}

``realtime`` holds the session's settings (:class:`RealtimeSession`), prices per million tokens
(:class:`RealtimePrices`, for a model litellm does not price) and, as a phone bot's table does,
any field of :class:`~.settings.PhoneSettings` and :class:`~.bot_stream.PhoneAgentSettings`. The
spec's ``api_base`` says where (the local endpoint: ``http://127.0.0.1:PORT/v1``), its
``api_key_env`` which variable holds the key (default ``OPENAI_API_KEY`` or ``AZURE_API_KEY``).

* **Identity.** The model, the session's settings and the call's; never the address or the key.
* **Refusals.** As a phone bot's (only an agent, only duplex, heard through the line): see
  :func:`~.agent.check_phone_agents`.
* **Cost.** litellm's audio and text token prices where it knows the model, else the spec's;
  None (unpriced) when neither has them.
"""

from __future__ import annotations

import os
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.model_map import realtime_prices
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.voice.duplex.errors import DuplexConfigError, load_settings
from tauray.actors.voice.live.bot_stream import PhoneAgentSettings
from tauray.actors.voice.live.realtime_gemini import GEMINI_URL, GeminiLive
from tauray.actors.voice.live.realtime_openai import OpenAIRealtime, realtime_url, ws_url
from tauray.actors.voice.live.settings import PhoneSettings

__all__ = ["RealtimeAgentSpec", "RealtimePrices", "RealtimeSession", "probe_realtime", "realtime_agent"]

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "azure": "AZURE_API_KEY", "gemini": "GEMINI_API_KEY"}


class RealtimeSession(BaseModel):
    """What the session is told besides the scenario's prompt and tools."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    voice: str | None = Field(None, description="The model's voice (None: 'alloy' for OpenAI, the model's own "
                              "for Gemini).")
    transcription_model: str = Field("whisper-1", description="The provider's model transcribing the caller.")
    shape: Literal["beta", "ga"] = Field("beta", description="The protocol's shape: 'beta' (OpenAI-Beta: "
                                         "realtime=v1, g711_ulaw) or 'ga' (session.type realtime, audio/pcmu).")
    api_version: str | None = Field(None, description="Azure's api-version (default 2024-10-01-preview).")
    vad: dict[str, Any] = Field(default_factory=dict, description="server_vad's own fields (threshold, "
                                "prefix_padding_ms, silence_duration_ms).")


class RealtimePrices(BaseModel):
    """USD per million tokens, for a model litellm has no audio price for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_text_per_mtok: float = Field(0.0, ge=0)
    input_audio_per_mtok: float = Field(0.0, ge=0)
    cached_input_per_mtok: float = Field(0.0, ge=0)
    output_text_per_mtok: float = Field(0.0, ge=0)
    output_audio_per_mtok: float = Field(0.0, ge=0)

    def per_token(self) -> dict[str, float]:
        return {"input_text_tokens": self.input_text_per_mtok / 1e6,
                "input_audio_tokens": self.input_audio_per_mtok / 1e6,
                "input_cached_tokens": self.cached_input_per_mtok / 1e6,
                "output_text_tokens": self.output_text_per_mtok / 1e6,
                "output_audio_tokens": self.output_audio_per_mtok / 1e6}


class RealtimeQuota(BaseModel):
    """How a session is admitted against the spec's ``tpm`` (not part of the identity)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_tokens: int = Field(6000, gt=0, description="Tokens a session is admitted with before it opens "
                                "(settled to its usage when it ends): about two minutes of a call.")


class RealtimeAgentSpec(BaseModel):
    """A realtime model's entry, parsed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="The litellm model string, 'openai/<model>' or 'azure/<deployment>'.")
    api_base: str | None = Field(None, description="Where the session opens (not part of the identity).")
    api_key_env: str | None = Field(None, description="The variable holding the key (its name only).")
    session: RealtimeSession = Field(default_factory=RealtimeSession)
    prices: RealtimePrices | None = Field(None, description="The spec's prices; None: litellm's.")
    quota: RealtimeQuota = Field(default_factory=RealtimeQuota)
    call: PhoneSettings = Field(default_factory=PhoneSettings)
    line: PhoneAgentSettings = Field(default_factory=PhoneAgentSettings)

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    def identity(self) -> dict[str, Any]:
        """What of the model makes a cell: its name and settings, not its address or key."""
        return {"session": self.session.model_dump(mode="json"), "call": self.call.model_dump(mode="json"),
                "line": self.line.model_dump(mode="json")}

    def url(self) -> tuple[str, str]:
        """The session's websocket URL and the header its key goes in."""
        if self.provider == "gemini":  # api_base, when given, is the websocket's own URL (a proxy, a fake)
            return (ws_url(self.api_base) if self.api_base else GEMINI_URL), "x-goog-api-key"
        return realtime_url(self.model, self.api_base, api_version=self.session.api_version)

    def key(self) -> str | None:
        """The key from the environment (read when the session opens, never stored); None for a
        loopback server without one."""
        return os.environ.get(self.api_key_env or KEY_VARIABLES[self.provider]) or None

    def missing_key(self) -> str | None:
        """Why no session can open for want of a key (one line), or None."""
        if self.key() is not None or _loopback(self.api_base):
            return None
        variable = self.api_key_env or KEY_VARIABLES[self.provider]
        return f"{self.model}: the key's variable {variable} is not set (or empty)"

    def protocol(self, instructions: str, tools: list[dict[str, Any]]) -> OpenAIRealtime | GeminiLive:
        s = self.session
        if self.provider == "gemini":
            return GeminiLive(model=self.model.split("/", 1)[1], instructions=instructions, tools=tools, voice=s.voice)
        return OpenAIRealtime(instructions=instructions, tools=tools, voice=s.voice or "alloy",
                              transcription_model=s.transcription_model, shape=s.shape, vad=s.vad)

    def prices_per_token(self) -> dict[str, float] | None:
        return self.prices.per_token() if self.prices is not None else realtime_prices(self.model)

    def cost(self, usage: dict[str, int]) -> float | None:
        """USD for a session's usage; None when the model is not priced."""
        prices = self.prices_per_token()
        if prices is None:
            return None
        return round(sum(prices.get(name, 0.0) * count for name, count in usage.items()), 8)


def realtime_agent(spec: ModelSpec) -> RealtimeAgentSpec:
    """The realtime agent a spec names; :class:`DuplexConfigError` (one line, ``realtime.FIELD: ...``)
    on a bad or unknown setting."""
    if spec.realtime is None:
        raise DuplexConfigError("realtime: the model is not a realtime model (its spec has no realtime)")
    written = spec.realtime.settings
    groups = {"session": RealtimeSession, "prices": RealtimePrices, "quota": RealtimeQuota, "call": PhoneSettings,
              "line": PhoneAgentSettings}
    known = [name for model in groups.values() for name in model.model_fields]
    unknown = sorted(set(written) - set(known))
    if unknown:
        raise DuplexConfigError(f"realtime: unknown parameter {unknown[0]!r}; known: {', '.join(known)}")
    parsed = {group: load_settings(model, {k: v for k, v in written.items() if k in model.model_fields}, "realtime")
              for group, model in groups.items()}
    if not any(k in RealtimePrices.model_fields for k in written):
        parsed["prices"] = None
    return RealtimeAgentSpec(model=spec.model, api_base=spec.api_base, api_key_env=spec.api_key_env, **parsed)


def _loopback(base: str | None) -> bool:
    try:
        return base is not None and urlsplit(base).hostname in ("127.0.0.1", "localhost", "::1")
    except ValueError:
        return False


async def probe_realtime(agent: RealtimeAgentSpec) -> float:
    """Open a session and close it at ``session.created``, no audio sent: the seconds it took, or
    the :class:`~.errors.CallFault` a call would have met."""
    from tauray.actors.voice.live.realtime_call import probe_session  # lazy: websockets, of the extra tauray[live]

    url, header = agent.url()
    return await probe_session(url, protocol=agent.protocol("", []), key_header=header, key=agent.key(),
                               settings=agent.call)
