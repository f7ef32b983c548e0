"""The probe: one real call of a model, before any work starts, as the engine would make it
(:func:`~tauray.actors.llm.usable.probe_models` probes every distinct model of a run).

The free checks (:func:`~tauray.actors.llm.usable.check_model_ready`) are
blind: it cannot know that a model name is a typo, that a key is refused,
that a provider rejects a parameter or that a base URL answers nobody. Found
by the conversations themselves, each of those turns every row of a run into
an error (and, for a judge, into unscored rows). A probe makes one minimal
request per distinct spec through the very client the engine uses (same
Router, same provider-safe parameters, the seed sent the same way) and stops
the command with a message naming the role, the model and what the provider
answered, before any run directory or row exists.

Any reply, even an empty one, passes: the probe asks whether the model can be called, not
whether it is good. One exception: an agent or user model is asked to call the probe's tool,
and a reply that writes the call as text in its content (``<tool_call>{...}</tool_call>``)
fails, naming the server option that is missing (vLLM's ``--enable-auto-tool-choice
--tool-call-parser``): such a server parses no tool calls, and every call the model makes
would reach the other side as text.
"""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.client import ModelClient
from tauray.actors.llm.errors import ModelCallError, ModelConfigError
from tauray.actors.llm.model_map import is_priced
from tauray.actors.llm.replies import TEXT_TOOL_CALLS, ModelReply
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.serving.llama_worker import crash_line

PROBE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Reply with the single word: ready"}]
"""The probe's conversation for a judge: short, so that a probe costs a handful of tokens."""

_SYSTEM = {"role": "system", "content": "You are taking part in a short test. Reply with the single word: ready"}
# Tool roles are asked to call the tool, so that a server answering tool calls as text shows it.
_TOOL_SYSTEM = {"role": "system", "content": "You are taking part in a short test. First call lookup_status with "
                "item_id A1; after its result, reply with the single word: ready"}
_GREETING = "Hello, you have reached customer support. How can I help you today?"
PROBE_SHAPES: dict[str, list[dict[str, Any]]] = {
    # The agent's first real call: system prompt, its own greeting (assistant first), the customer.
    "agent": [_TOOL_SYSTEM, {"role": "assistant", "content": _GREETING}, {"role": "user", "content": "Hello."}],
    # The user simulator's first real call: system prompt, the agent's greeting as the user turn.
    "user": [_TOOL_SYSTEM, {"role": "user", "content": _GREETING}],
    "judge": [_SYSTEM, PROBE_MESSAGES[0]],
}
"""Per role, the shape of its first real call (what the probe passes, the run's first call can do)."""

# Agents and user simulators are always offered tools, so their probe is too: a model or server
# that cannot take tools (some local servers, some small models) must fail here, not in every row.
PROBE_TOOLS: list[dict[str, Any]] = [{
    "type": "function",
    "function": {
        "name": "lookup_status",
        "description": "Look up the status of an item by its id.",
        "parameters": {"type": "object", "properties": {"item_id": {"type": "string", "description": "Item id."}},
                       "required": ["item_id"]},
    },
}]

TOOL_ROLES = ("agent", "user")
"""Roles whose calls carry tools; a label's first word names its roles, e.g. "agent/judge (models.a)"."""


class ProbeReport(BaseModel):
    """One model that answered its probe."""

    model_config = ConfigDict(frozen=True)

    roles: tuple[str, ...] = Field(description="Roles the spec plays (labels as given).")
    model: str = Field(description="litellm model string.")
    dropped: tuple[str, ...] = Field(description="Parameters of the spec left out because the provider takes none.")
    reasons: dict[str, str] = Field(default_factory=dict, description="Why each parameter was left out.")
    priced: bool = Field(True, description="litellm can price the model; False: its cost is unknown (null) unless "
                         "the sweep gives a price, and a budgeted sweep must refuse it (cost.budget_refusal).")
    seconds: float = Field(description="Seconds the probe call took.")

    def note(self) -> str | None:
        """A line for the user when the provider takes some of the spec's parameters not."""
        if not self.dropped:
            return None
        why = "; ".join(f"{name}: {self.reasons[name]}" for name in self.dropped if name in self.reasons)
        return (f"note: the {' and '.join(self.roles)} model {self.model!r} is sent no {', '.join(self.dropped)}"
                + (f" ({why})" if why else "") + "; left out of every call"
                + (" (rows record seed_applied=false)" if "seed" in self.dropped else ""))


class ProbeError(ModelConfigError):
    """A model answered its probe with an error; nothing was run."""

    def __init__(self, message: str, *, roles: tuple[str, ...] = (), model: str = "", status_code: int | None = None):
        super().__init__(message)
        self.roles = roles
        self.model = model
        self.status_code = status_code


def probe_messages(roles: list[str]) -> list[dict[str, Any]]:
    """The most demanding first-call shape among ``roles`` (agent, then user, then judge)."""
    named = {part for role in roles if role.strip() for part in role.split()[0].split("/")}
    return next((PROBE_SHAPES[r] for r in ("agent", "user") if r in named), PROBE_SHAPES["judge"])


def _uses_tools(roles: list[str]) -> bool:
    """Whether any label's first word names a tool-using role ("agent", "user/judge (models.x)")."""
    return any(set(role.split()[0].split("/")) & set(TOOL_ROLES) for role in roles if role.strip())


def _answer(message: str, limit: int = 600) -> str:
    """The provider's words without litellm's repeated prefixes and routing epilogue."""
    text = message.split("\n\nLiteLLM: model group", 1)[0].strip()
    for prefix in ("litellm.", "OpenAIException - "):
        while prefix in text:
            head, _, tail = text.partition(prefix)
            text = head + tail
    text = re.sub(r"\b(\w+Error: )(?:\1)+", r"\1", " ".join(text.split())).rstrip(". ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def probe_one(spec: ModelSpec, roles: list[str], seed: int | None) -> ProbeError | ProbeReport:
    """One probe call of ``spec`` for ``roles``: its report, or the error that stops a run (returned, not raised)."""
    # A fresh client built exactly as the engine's (same retries for transient failures), so that
    # the run's own clients inherit no state from the probe.
    client = ModelClient(spec)
    dropped, reasons = client.request.dropped, dict(client.request.reasons)
    if seed is not None and not client.request.seed and "seed" not in dropped:  # the runs' unit seeds
        dropped += ("seed",)
        reasons["seed"] = f"{client.provider} takes no seed"
    started = time.perf_counter()
    try:
        reply = await client.complete(probe_messages(roles), PROBE_TOOLS if _uses_tools(roles) else None, seed=seed)
    except ModelCallError as error:
        who = " and ".join(roles)
        if (crash := crash_line(error.message)) is not None:  # not "could not be reached": it crashed
            return ProbeError(f"probe of the {who} model {spec.model!r} failed: {crash}. Nothing was run.",
                              roles=tuple(roles), model=spec.model, status_code=error.status_code)
        status = f"HTTP {error.status_code} " if error.status_code else ""
        kind = "refused the request" if error.kind == "model" else "could not be reached"
        return ProbeError(
            f"probe of the {who} model {spec.model!r} failed: the provider {kind} "
            f"({status}{error.error_type or 'error'}): {_answer(error.message)}. Nothing was run; fix the model spec "
            "(name, key variable, api_base, extra_params) or pass --no-probe to skip this check.",
            roles=tuple(roles), model=spec.model, status_code=error.status_code)
    except ModelConfigError as error:
        return ProbeError(f"{' and '.join(roles)}: {error}", roles=tuple(roles), model=spec.model)
    finally:
        await client.aclose()
    if reply.tool_call_text is not None and _uses_tools(roles):
        return ProbeError(text_tool_call_line(" and ".join(roles), spec.model, reply), roles=tuple(roles),
                          model=spec.model)
    return ProbeReport(roles=tuple(roles), model=spec.model, dropped=dropped, reasons=reasons,
                       priced=is_priced(spec.model),
                       seconds=round(time.perf_counter() - started, 3))


def text_tool_call_line(who: str, model: str, reply: ModelReply) -> str:
    """Why a model whose server answers tool calls as text cannot run, and the option it lacks."""
    marker = reply.tool_call_text or ""
    parser = TEXT_TOOL_CALLS.get(marker)
    shown = "a JSON object" if marker == "json" else f"{marker}…"
    return (f"probe of the {who} model {model!r} failed: it answered the tool call as text in its reply ({shown}) "
            "instead of as a tool call, so the server parses no tool calls and every call would reach the other side "
            "as words. Start the server with tool calling on: vLLM --enable-auto-tool-choice --tool-call-parser "
            f"{parser or '<the parser of the model family>'} (the parser for this format); another server, its "
            "tool-call parsing for the model's format. Nothing was run.")


__all__ = ["PROBE_MESSAGES", "PROBE_SHAPES", "PROBE_TOOLS", "TOOL_ROLES", "ProbeError", "ProbeReport", "probe_messages",
           "probe_one", "text_tool_call_line"]
