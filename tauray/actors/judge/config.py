"""What a judge is: a model bound to one versioned prompt and k samples (:class:`JudgeConfig`),
the item it is asked about (:class:`JudgeItem`), what judging an item yields
(:class:`JudgeOutcome`), and how samples are tallied into a majority.

The config id covers everything that shapes the request (model, api base,
temperature, seed, max tokens, extra params, structured mode, prompt
id/version/hash, NL pack id/version/hash): a repeated configuration costs
nothing, and any change is another id, so it is never served a stale reply.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauray.actors.judge.parse import response_format
from tauray.actors.judge.prompts import JudgePrompt, get_pack, get_prompt
from tauray.actors.llm import ModelSpec
from tauray.actors.llm.providers import litellm_module
from tauray.results.tables.records import JudgeVerdictRecord, NLAssertionRecord

# ModelSpec fields that shape a judge request (so they belong in the config id); the key,
# timeouts, retries, rate limits and concurrency do not.
_OUTPUT_FIELDS = ("model", "temperature", "seed", "max_tokens", "extra_params")


def public_api_base(api_base: str | None) -> str | None:
    """``api_base`` without credentials, query or fragment: what may be hashed and stored."""
    if not api_base:
        return None
    parts = urlsplit(api_base.strip())
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class JudgeConfig(BaseModel):
    """One judge: model and sampling, one prompt, k samples (and, for NL prompts, an optional pack)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSpec = Field(description="Judge model spec; api_base None uses litellm's standard environment.")
    prompt: str = Field(description="Prompt reference id@version (an id alone is resolved to its latest version).")
    samples: int = Field(1, ge=1, le=64, description="Judge samples per item; the majority is stored on every row.")
    nl_pack: str | None = Field(None, description="NL-assertion pack id@version whose assertions join the scenario's.")
    structured: Literal["auto", "always", "never"] = Field(
        "auto", description="Send a JSON schema as response_format: when litellm says the model supports it, "
        "always, or never. The reply is parsed robustly either way.")

    @model_validator(mode="after")
    def _resolve(self) -> JudgeConfig:
        if self.model.is_reference:
            raise ValueError(f"{self.model.model!r} is a reference policy, not a judge model")
        prompt = get_prompt(self.prompt)
        object.__setattr__(self, "prompt", prompt.ref)
        if self.nl_pack is not None:
            if prompt.kind != "nl":
                raise ValueError(f"--nl-pack needs an 'nl' prompt; {prompt.ref} is {prompt.kind!r}")
            object.__setattr__(self, "nl_pack", get_pack(self.nl_pack).ref)
        return self

    @property
    def template(self) -> JudgePrompt:
        return get_prompt(self.prompt)

    @property
    def kind(self) -> str:
        return self.template.kind

    @property
    def params(self) -> dict[str, Any]:
        return self.model.model_dump(include=set(_OUTPUT_FIELDS), mode="json")

    @property
    def pack_hash(self) -> str | None:
        return get_pack(self.nl_pack).pack_hash if self.nl_pack else None

    @property
    def identity(self) -> dict[str, Any]:
        """Everything that shapes the request, as stored beside every verdict (and hashed into the id)."""
        t = self.template
        return {"params": self.params, "api_base": public_api_base(self.model.api_base),
                "structured": self.structured, "prompt_id": t.id, "prompt_version": t.version,
                "prompt_hash": t.prompt_hash, "nl_pack": self.nl_pack, "nl_pack_hash": self.pack_hash}

    @property
    def config_id(self) -> str:
        """Hash of :attr:`identity`."""
        return hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:16]

    def request_spec(self) -> ModelSpec:
        """The model spec calls are made with: the config's, plus the reply schema as
        ``response_format`` when the structured mode asks for it."""
        if self.structured == "always" or (self.structured == "auto" and self.schema_supported):
            return self.model.model_copy(update={"extra_params": {**self.model.extra_params,
                                                                  "response_format": response_format(self.kind)}})
        return self.model

    @property
    def schema_supported(self) -> bool:
        """Whether the judge model constrains its reply to a JSON schema: a model tauray serves
        (llama.cpp turns the schema into a grammar; vLLM decodes guided by it), or one litellm
        says supports ``response_format`` with a schema."""
        return self.model.serve is not None or _supports_schema(self.model.model)

    @property
    def label(self) -> str:
        return f"{self.model.model} {self.prompt}" + (f" +{self.nl_pack}" if self.nl_pack else "")


class JudgeItem(BaseModel):
    """One conversation under one judge config: what to send and which samples are wanted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    conversation_id: str
    scenario: str
    config: JudgeConfig
    chat: list[dict[str, str]] = Field(description="The rendered messages sent to the judge.")
    transcript_hash: str = Field(description="Hash of the rendered transcript.")
    context_hash: str = Field(description="Hash of the per-item text around it (ticket, goal, assertions).")
    assertions: list[str] = Field(default_factory=list, description="Assertions judged (NL prompts only).")
    samples: list[int] = Field(description="Sample indices to produce.")
    prior: dict[int, list[bool | None]] = Field(
        default_factory=dict, description="Verdicts of samples already stored (index -> one per question), "
        "so the majority covers every sample.")


class JudgeOutcome(BaseModel):
    """What judging one item produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    overall: list[JudgeVerdictRecord] = Field(default_factory=list)
    nl: list[NLAssertionRecord] = Field(default_factory=list)
    calls: int = Field(0, description="Samples answered by a model call (not the cache); a repair turn is a "
                                      "further call, counted in repair_calls.")
    repair_calls: int = Field(0, description="Repair turns asked (one per sample whose reply did not conform).")
    cache_hits: int = Field(0, description="Samples served from the cache.")
    infra_errors: list[str] = Field(default_factory=list, description="Samples that got no reply (no row written).")


def _supports_schema(model: str) -> bool:
    try:
        return bool(litellm_module().supports_response_schema(model=model))
    except Exception:
        return False
