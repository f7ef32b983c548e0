"""A provider's completion, reduced to what the engine records and scores, whatever its shape.

Servers disagree on the details of a reply, and litellm passes some of them on
as they came. Each shape has one documented outcome here, so that a server's
habit is never mistaken for the model's misbehaviour (or the other way round),
and never becomes an internal error:

=====================================  ==============================================================
Shape of the reply                     Outcome
=====================================  ==============================================================
arguments ``None``, ``""``, ``{}``     a call with no arguments: ``"{}"`` (valid, not malformed)
arguments a JSON object (not text)     its JSON text; the call runs as usual
arguments text that is not JSON        kept as sent: the engine answers "not valid JSON", counts it
                                       malformed, and the model may try again
tool call without an id (or a          a generated id (``call_<hex>``), unique, so each tool result
duplicate id within the reply)         answers exactly one call
several tool calls in one reply        run one at a time in order; after a write the rest wait for
                                       the sync (``SideSession``), then run
text beside tool calls                 kept in the speaker's own transcript with the calls; not said
                                       to the other side (only a reply without calls is)
no ``choices`` at all                  an empty reply, counted (``empty_replies``), reason
                                       ``no_choices``; the conversation goes on
``content`` ``None`` or blank, no      an empty reply ``""``, counted (``empty_replies``), reason
tool calls                             ``no_content``; the conversation goes on
stopped at the length limit            ``stop="length"`` (the provider's ``length``, ``max_tokens``,
                                       ``MAX_TOKENS``, which litellm passes on as ``length``); a tool call in such a reply is
                                       *truncated*: never run (even
                                       ``end_conversation``), told or retried (the spec's
                                       ``cut_tool_calls``); not malformed JSON
content filter / safety stop           ``stop="content_filter"`` (the provider withheld the output)
``message.refusal`` text (OpenAI), or  ``stop="refusal"``, the text in ``refusal`` where there is one
Anthropic's ``stop_reason: refusal``
Gemini's ``MALFORMED_FUNCTION_CALL``   ``stop="malformed_call"``: the model wrote a call the provider
                                       could not parse; an empty reply, passed on as one
HTTP 400 for a flagged prompt (Azure's ``stop="prompt_filter"`` (:func:`filtered_prompt`): no reply, so
``content_filter``; litellm's          an empty one stands for it and the conversation goes on, as
``ContentPolicyViolationError``)       after a filtered output
a tool call written as text in         ``tool_call_text`` names its format (``<tool_call>``, ...): the
``content`` (a server without a tool   server parses no tool calls (:data:`TEXT_TOOL_CALLS`); the text
parser)                                stays what the model said; the probe fails such a server
=====================================  ==============================================================

The provider's own stop reason is kept beside litellm's mapped ``finish_reason`` in
``native_finish_reason``, from where litellm leaves it: the choice's
``provider_specific_fields["native_finish_reason"]`` (any reason litellm maps to another word as
it builds the choice: Gemini and Vertex AI, OpenAI-compatible servers) or the message's
``provider_specific_fields["stop_reason"]`` (Anthropic's ``refusal`` and ``pause_turn``). Where
litellm keeps none (Anthropic's other reasons, Bedrock's, a blocked Gemini prompt) it is null and
``finish_reason`` is all there is. ``stop`` is read from the native reason when tauray knows the
word, else from ``finish_reason``.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauray.scenarios.conventions import is_reference

EmptyReason = Literal["no_choices", "no_content"]
Stop = Literal["stop", "length", "content_filter", "prompt_filter", "refusal", "malformed_call", "tool_calls", "other"]

# Providers' stop reasons (as litellm passes them on) in one vocabulary; the raw one is kept too.
_STOPS: dict[str, Stop] = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "eos": "stop", "finish_reason_unspecified": "stop",
    "length": "length", "max_tokens": "length", "model_length": "length",
    "content_filter": "content_filter", "safety": "content_filter", "recitation": "content_filter",
    "blocklist": "content_filter", "prohibited_content": "content_filter", "spii": "content_filter",
    "guardrail_intervened": "content_filter", "content_filtered": "content_filter", "language": "content_filter",
    "image_safety": "content_filter", "image_prohibited_content": "content_filter",
    "refusal": "refusal",
    "malformed_function_call": "malformed_call",
    "tool_calls": "tool_calls", "function_call": "tool_calls", "tool_use": "tool_calls",
    "other": "other", "pause_turn": "other", "too_many_tool_calls": "other",
}


def stop_of(finish_reason: str | None, refusal: str | None = None, native: str | None = None) -> Stop | None:
    """The reply's stop reason in tauray's vocabulary: the provider's own word where tauray knows
    it, else litellm's mapped one (a refusal text makes it a refusal)."""
    if refusal:
        return "refusal"
    if native and str(native).lower() in _STOPS:
        return _STOPS[str(native).lower()]
    if not finish_reason:
        return None
    return _STOPS.get(str(finish_reason).lower(), "other")


TEXT_TOOL_CALLS: dict[str, str | None] = {
    "<tool_call>": "hermes", "<|python_tag|>": "llama3_json", "[TOOL_CALLS]": "mistral",
    "<|tool_calls_section_begin|>": "kimi_k2", "<｜tool▁calls▁begin｜>": "deepseek_v3", "<function=": None,
    "json": "llama3_json",
}
"""A tool call written as text in ``content`` (its marker, or ``json``: the whole text one
``{"name": ..., "arguments"|"parameters": {...}}`` object, Llama 3's JSON form) -> vLLM's
``--tool-call-parser`` for that format (None: the model's own)."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _json_call(text: str) -> bool:
    fenced = _FENCE.match(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return False
    calls = value if isinstance(value, list) and value else [value]
    return all(isinstance(c, dict) and isinstance(c.get("name"), str)
               and isinstance(c.get("arguments", c.get("parameters")), dict) for c in calls)


def tool_call_text(content: str | None) -> str | None:
    """The format of a tool call the model wrote as text (a key of :data:`TEXT_TOOL_CALLS`), or None."""
    text = (content or "").strip()
    if not text:
        return None
    marker = next((m for m in TEXT_TOOL_CALLS if m != "json" and m in text), None)
    if marker is not None:
        return marker
    return "json" if text[0] in "{[`" and _json_call(text) else None


class RawToolCall(BaseModel):
    """A tool call as the model (or a reference policy) produced it (id and no-argument forms
    normalised); the engine parses (and judges) the arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Provider-assigned id that the tool result must echo (generated when missing).")
    name: str = Field(description="Name of the called tool.")
    arguments: str = Field(description="Arguments as the raw JSON text returned, possibly malformed.")


class ModelReply(BaseModel):
    """One completion, reduced to what the engine records and scores; a reference policy's
    reply has the same shape (its ``model`` the policy's name, no usage), so a side's session
    makes its transcript message from either the same way."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None = Field(description='Text of the reply; "" for an empty reply, None beside tool calls.')
    tool_calls: list[RawToolCall] = Field(default_factory=list, description="Tool calls, in the order returned.")
    finish_reason: str | None = Field(None, description="Why generation stopped, as litellm passed it on (its "
                                      "OpenAI word: stop, length, tool_calls, content_filter).")
    native_finish_reason: str | None = Field(None, description="The provider's own stop reason where litellm keeps "
                                             "one (Gemini's MALFORMED_FUNCTION_CALL, Anthropic's refusal); null where "
                                             "it keeps none or the provider's word is finish_reason itself.")
    stop: Stop | None = Field(None, description="The stop reason in one vocabulary (stop, length, content_filter, "
                              "prompt_filter, refusal, malformed_call, tool_calls, other), from the native reason "
                              "where tauray knows it; refusal when the reply carries refusal text.")
    tool_call_text: str | None = Field(None, description="The format of a tool call the model wrote as text in "
                                       "content instead of tool_calls ('<tool_call>', 'json', ...): the server "
                                       "parses no tool calls; None otherwise.")
    refusal: str | None = Field(None, description="The model's refusal text (OpenAI's message.refusal), if any.")
    reasoning_tokens: int = Field(0, ge=0, description="Of completion_tokens, those spent reasoning (as reported).")
    cached_tokens: int = Field(0, ge=0, description="Of prompt_tokens, those read from the provider's cache.")
    reasoning_content: str | None = Field(None, description="The model's reasoning text, where the provider returns it.")
    thinking_blocks: list[dict[str, Any]] = Field(
        default_factory=list, description="Anthropic/Bedrock thinking blocks (with signatures), to be sent back "
        "unchanged with the tool results of this reply.")
    adapted: tuple[str, ...] = Field((), description="History rules applied to the request for the provider "
                                     "family (tauray.actors.llm.history), e.g. user_first.")
    dropped: tuple[str, ...] = Field((), description="Parameters of the spec left out of the call (the provider or "
                                     "model takes none, or a reasoning model's default temperature).")
    prompt_tokens: int = Field(0, ge=0, description="Input tokens billed for the successful attempt.")
    completion_tokens: int = Field(0, ge=0, description="Output tokens billed for the successful attempt.")
    cost_usd: float | None = Field(None, description="litellm's cost estimate; None when litellm has no price for the model.")
    latency_s: float = Field(0.0, ge=0.0, description="Seconds from sending the request to the reply, retries included.")
    retries: int = Field(0, ge=0, description="Retries the call needed before this reply: the Router's, plus 429s waited out (0: first attempt).")
    fingerprint: str | None = Field(None, description="What the server said produced the reply (OpenAI's "
                                    "system_fingerprint; a llama.cpp deployment of tauray's names its grammar).")
    model: str = Field(description="litellm model string of the deployment that answered (a fallback if one did); "
                       "a reference policy's name (oracle, scripted) when no model was called.")
    seed_applied: bool | None = Field(
        None, description="True when a seed was sent with the call, False when one was asked for but the provider "
        "takes none (left out), None when no seed was asked for.")
    empty: EmptyReason | None = Field(
        None, description="Why the reply is empty (no_choices: the completion had none; no_content: no text and no "
        "tool calls); None for a reply with something in it.")

    @property
    def called_model(self) -> bool:
        """A model was called for this reply (not a reference policy): it counts as a call."""
        return not is_reference(self.model)

    @property
    def truncated(self) -> bool:
        """The reply was cut at the length limit: none of its tool calls is complete enough to run."""
        return self.stop == "length"


def arguments_text(arguments: Any) -> str:
    """The arguments as JSON text; ``None``, blank text and ``{}`` all mean "no arguments"."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments if arguments.strip() else "{}"
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError):
        return str(arguments)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def tool_calls_of(message: Any) -> list[RawToolCall]:
    """The message's tool calls with arguments as text and ids present and distinct."""
    calls: list[RawToolCall] = []
    seen: set[str] = set()
    for call in _field(message, "tool_calls") or []:
        function = _field(call, "function")
        call_id = str(_field(call, "id") or "")
        if not call_id or call_id in seen:
            call_id = f"call_{uuid.uuid4().hex[:16]}"
        seen.add(call_id)
        calls.append(RawToolCall(id=call_id, name=str(_field(function, "name") or ""),
                                 arguments=arguments_text(_field(function, "arguments"))))
    return calls


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and value > 0 else 0


def usage_of(response: Any) -> dict[str, int]:
    """Prompt, completion, reasoning and cached token counts (0 where not reported)."""
    usage = _field(response, "usage")
    completion_details = _field(usage, "completion_tokens_details")
    prompt_details = _field(usage, "prompt_tokens_details")
    return dict(prompt_tokens=_int(_field(usage, "prompt_tokens")),
                completion_tokens=_int(_field(usage, "completion_tokens")),
                reasoning_tokens=_int(_field(completion_details, "reasoning_tokens")),
                cached_tokens=_int(_field(prompt_details, "cached_tokens")
                                   or _field(usage, "cache_read_input_tokens")))


def reply_of(response: Any, *, latency_s: float, model: str, cost_usd: float | None,
             seed_applied: bool | None, retries: int = 0, adapted: tuple[str, ...] = (),
             dropped: tuple[str, ...] = ()) -> ModelReply:
    """The :class:`ModelReply` of a litellm ``ModelResponse``, every shape mapped as the table says."""
    fingerprint = _field(response, "system_fingerprint")
    common = dict(usage_of(response), cost_usd=cost_usd, latency_s=latency_s, model=model,
                  seed_applied=seed_applied, retries=retries, adapted=adapted, dropped=dropped,
                  fingerprint=str(fingerprint) if fingerprint else None)
    choices = _field(response, "choices") or []
    if not choices:
        return ModelReply(content="", empty="no_choices", finish_reason=None, **common)
    choice = choices[0]
    message = _field(choice, "message")
    calls = tool_calls_of(message)
    content = _field(message, "content")
    if content is not None and not isinstance(content, str):  # content parts
        content = "".join(str(_field(p, "text") or "") for p in content) if isinstance(content, list) else str(content)
    empty: EmptyReason | None = None
    if not calls and not (content or "").strip():
        content, empty = content or "", "no_content"  # an empty reply is a reply; the engine counts it
    refusal = _field(message, "refusal")
    refusal = str(refusal) if refusal else None
    finish = _field(choice, "finish_reason")
    native = native_reason(choice, message)
    blocks = [dict(b) if not isinstance(b, dict) else b for b in _field(message, "thinking_blocks") or []]
    reasoning = _field(message, "reasoning_content")
    return ModelReply(content=content, tool_calls=calls, finish_reason=finish, native_finish_reason=native,
                      stop=stop_of(finish, refusal, native), refusal=refusal,
                      tool_call_text=None if calls else tool_call_text(content),
                      reasoning_content=str(reasoning) if reasoning else None,
                      thinking_blocks=blocks, empty=empty, **common)


def native_reason(choice: Any, message: Any) -> str | None:
    """The provider's own stop reason, where litellm keeps one (see the module docs)."""
    for fields, key in ((_field(choice, "provider_specific_fields"), "native_finish_reason"),
                        (_field(message, "provider_specific_fields"), "stop_reason")):
        value = _field(fields, key) if fields else None
        if value:
            return str(value)
    return None


def filtered_prompt(error: Any, model: str) -> ModelReply | None:
    """The reply a call stands for when the provider refused it because its content filter flagged
    the prompt (litellm raises ``ContentPolicyViolationError``: Azure's HTTP 400 ``content_filter``,
    OpenAI's ``content_policy_violation``): empty, ``stop="prompt_filter"``, so the conversation goes
    on as after a filtered output (``content_filter`` where the error says the output was blocked,
    as Anthropic on Vertex AI does); None for any other failure."""
    if getattr(error, "error_type", None) != "ContentPolicyViolationError":
        return None
    output = "output blocked" in str(getattr(error, "message", "")).lower()
    return ModelReply(content="", stop="content_filter" if output else "prompt_filter", empty="no_content", model=model)


__all__ = ["TEXT_TOOL_CALLS", "EmptyReason", "ModelReply", "RawToolCall", "Stop", "arguments_text", "filtered_prompt",
           "native_reason", "reply_of", "stop_of", "tool_call_text", "tool_calls_of", "usage_of"]
