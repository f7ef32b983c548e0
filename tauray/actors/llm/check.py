"""What tauray will do with a model, told offline before any money is spent.

``tauray models check MODEL…`` prints one :class:`ModelCheck` per model: the provider
litellm resolves, whether its model map really has the name (:mod:`.names`; a misspelt name
fails with the nearest known ones), what each call will carry and leave out (temperature, seed,
max_tokens, thinking), whether litellm can price it, its context window, tool and
structured-output support, and which history rules (:mod:`.history`) the provider
family gets. Nothing is called and no key is needed: it reads litellm's tables.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.errors import ModelConfigError
from tauray.actors.llm.history import adapt_history, outgoing_adaptations
from tauray.actors.llm.model_map import check_name, litellm_price
from tauray.actors.llm.params import model_info, request_params
from tauray.actors.llm.providers import provider_names
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.llm.tool_schemas import tools_for

# The shapes of a conversation's calls whose adaptation a provider family may need.
_SAMPLE_VIEWS: dict[str, list[dict[str, Any]]] = {
    "agent's first call (greeting first)": [
        {"role": "system", "content": "s"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "hi"}],
    "after an empty reply": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": ""},
        {"role": "user", "content": "hello?"}],
    "user's call after the agent said nothing": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "no signal"}, {"role": "user", "content": ""}],
    "after a tool round (id call_1)": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}],
}


class ModelCheck(BaseModel):
    """One model as tauray will call it (offline; from litellm's tables)."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="litellm model string as given.")
    provider: str | None = Field(description="Provider litellm resolves; None when it cannot tell.")
    known: bool = Field(description="litellm's model map has an exact entry for the model at its provider (as "
                        "given, or with or without the provider prefix).")
    name_check: str | None = Field(None, description="What the model-map check found: the entry, or why the name "
                                   "was not checked (a server of yours answers it), or that it is missing.")
    nearest: list[str] = Field(default_factory=list, description="For a name missing from the map: the provider's "
                               "known names nearest to it.")
    sends: dict[str, Any] = Field(description="Parameters every call carries (temperature, max_tokens, extras).")
    seed: bool = Field(description="A unit's seed is sent (False: the provider takes none; rows say seed_applied).")
    dropped: dict[str, str] = Field(description="Parameters left out, each with why.")
    reasoning: bool = Field(description="litellm marks it a reasoning model, or thinking is on.")
    thinking: bool = Field(description="Extended thinking is requested (extra_params.thinking).")
    priced: bool = Field(description="litellm can price it; else a budgeted sweep needs an explicit price.")
    usd_per_mtok: tuple[float, float] | None = Field(description="litellm's price, USD per million prompt and "
                                                     "completion tokens.")
    context_window: int | None = Field(description="Most input tokens (litellm's max_input_tokens).")
    max_output_tokens: int | None = Field(description="Most output tokens (litellm's max_output_tokens).")
    tools: bool | None = Field(description="Supports tool calls (litellm); None: unknown.")
    structured_output: bool | None = Field(description="Supports a response schema (litellm); None: unknown.")
    history: dict[str, list[str]] = Field(description="Per call shape, the history (and tool schema) rules applied "
                                          "for this provider family (empty: sent as written).")
    error: str | None = Field(None, description="Why the model cannot be used as configured; None when it can.")
    served: str | None = Field(None, description="For a `serve:` model: how its one live generation went (it is "
                               "deployed for the check unless --offline); None for other models.")


def check_model(value: str | dict[str, Any] | ModelSpec) -> ModelCheck:
    """The :class:`ModelCheck` of one model string or spec; never raises for a bad model."""
    try:
        spec = ModelSpec.parse(value)
    except Exception as error:  # a spec that does not validate
        return _failed(str(value)[:200], f"invalid model spec: {type(error).__name__}")
    try:
        provider, fallback_providers = provider_names(spec)
        request = request_params(spec, [provider, *fallback_providers])
    except ModelConfigError as error:
        return _failed(spec.model, str(error))
    names = [check_name(spec, m, p, provider) for m, p in zip([spec.model, *spec.fallbacks],
                                                               [provider, *fallback_providers])]
    failed = next((n for n in names if n.error), None)
    info = model_info(spec.model)
    price = litellm_price(spec.model)
    history = {shape: sorted({*adapt_history(view, provider)[1], *outgoing_adaptations(view, spec.model, provider,
                                                                                      request.params)})
               for shape, view in _SAMPLE_VIEWS.items()}
    bare_tool = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    history["a tool without arguments"] = ["tool_schemas"] if tools_for(provider, bare_tool)[1] else []

    def flag(name: str) -> bool | None:
        value = info.get(name)
        return None if value is None else bool(value)

    return ModelCheck(
        model=spec.model, provider=provider, known=names[0].key is not None, name_check=names[0].found,
        nearest=failed.nearest if failed else [], error=failed.error if failed else None,
        sends=dict(request.params), seed=request.seed,
        dropped=dict(request.reasons), reasoning=request.reasoning, thinking="thinking" in spec.extra_params,
        priced=price is not None, usd_per_mtok=(price[0] * 1000, price[1] * 1000) if price else None,
        context_window=info.get("max_input_tokens"), max_output_tokens=info.get("max_output_tokens"),
        tools=flag("supports_function_calling"), structured_output=flag("supports_response_schema"),
        history=history)


def _failed(model: str, error: str) -> ModelCheck:
    return ModelCheck(model=model, provider=None, known=False, sends={}, seed=False, dropped={}, reasoning=False,
                      thinking=False, priced=False, usd_per_mtok=None, context_window=None, max_output_tokens=None,
                      tools=None, structured_output=None, history={}, error=error)


def describe(check: ModelCheck) -> str:
    """A few human lines for one model."""
    if check.error:
        return f"{check.model}: cannot be used: {check.error}"
    price = (f"${check.usd_per_mtok[0]:g} / ${check.usd_per_mtok[1]:g} per M tokens in/out"
             if check.usd_per_mtok else "not priced by litellm (a budget needs an explicit price)")
    lines = [f"{check.model}  (provider {check.provider}{', reasoning' if check.reasoning else ''})",
             f"  sends: {', '.join(f'{k}={v}' for k, v in check.sends.items()) or 'nothing extra'}; "
             f"seed {'sent' if check.seed else 'not taken'}",
             f"  cost: {price}",
             f"  name: {check.name_check}",
             f"  context {check.context_window or '?'} tokens in, {check.max_output_tokens or '?'} out; "
             f"tools {_yes(check.tools)}; structured output {_yes(check.structured_output)}"]
    lines += [f"  left out: {name} ({why})" for name, why in check.dropped.items()]
    adapted = {shape: rules for shape, rules in check.history.items() if rules}
    lines += [f"  history, {shape}: {', '.join(rules)}" for shape, rules in adapted.items()]
    return "\n".join(lines)


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


__all__ = ["ModelCheck", "check_model", "describe"]
