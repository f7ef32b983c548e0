"""One real call per distinct model before any work starts.

The readiness check (:func:`~tauray.actors.llm.check_model_ready`) is free
but blind: it cannot know that a model name is a typo, that a key is refused,
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

import asyncio
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm import ModelCallError, ModelClient, ModelConfigError, ModelSpec, check_model_ready
from tauray.actors.llm.cost import is_priced
from tauray.actors.llm.replies import TEXT_TOOL_CALLS, ModelReply
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


def _distinct(specs: Mapping[str, ModelSpec | Mapping[str, Any] | str]) -> list[tuple[ModelSpec, list[str]]]:
    """Specs that call a model, each once, with every role that uses it (in the order given)."""
    groups: dict[str, tuple[ModelSpec, list[str]]] = {}
    for role, value in specs.items():
        spec = ModelSpec.parse(value)
        if spec.is_reference:
            continue
        key = spec.model_dump_json()
        groups.setdefault(key, (spec, []))[1].append(role)
    return list(groups.values())


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


async def _probe_one(spec: ModelSpec, roles: list[str], seed: int | None) -> ProbeError | ProbeReport:
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


async def probe_models_async(specs: Mapping[str, ModelSpec | Mapping[str, Any] | str], *,
                             seed: int | None = 0) -> list[ProbeReport]:
    """:func:`probe_models` for callers already inside an event loop."""
    groups = _distinct(specs)
    for spec, roles in groups:
        try:
            check_model_ready(spec)
        except ProbeError:
            raise
        except ModelConfigError as error:
            raise ProbeError(f"{' and '.join(roles)}: {error}", roles=tuple(roles), model=spec.model) from None
    outcomes = await asyncio.gather(*(_probe_one(s, r, seed) for s, r in groups))
    failures = [f for f in outcomes if isinstance(f, ProbeError)]
    if len(failures) == 1:
        raise failures[0]
    if failures:
        first = failures[0]
        raise ProbeError("; ".join(str(f) for f in failures), roles=first.roles, model=first.model,
                         status_code=first.status_code)
    return [o for o in outcomes if isinstance(o, ProbeReport)]


def probe_models(specs: Mapping[str, ModelSpec | Mapping[str, Any] | str], *, seed: int | None = 0,
                 notes: Any = None) -> list[ProbeReport]:
    """Probe every distinct model spec in ``specs`` (role label -> spec) once, concurrently.

    Reference policies (``oracle``, ``scripted``) are skipped; identical specs under
    several roles are probed once and named with all of them. ``seed`` is sent as the
    engine sends a unit's seed (dropped where the provider does not take one), so a
    provider that refuses it fails here. Raises :class:`ProbeError` (a
    :class:`ModelConfigError`) naming the role(s), the model and the provider's answer,
    scrubbed of secrets. Returns one :class:`ProbeReport` per model probed; ``notes``
    (e.g. ``print`` to stderr) receives a line for each model whose provider takes some
    of the spec's parameters not (they are left out of every call).
    """
    reports: list[ProbeReport] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            reports.extend(asyncio.run(probe_models_async(specs, seed=seed)))
        except BaseException as error:  # re-raised in the caller's thread
            errors.append(error)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        target()
    else:  # called from inside a loop (a notebook, an async caller): the probe gets its own
        thread = threading.Thread(target=target, name="tauray-probe")
        thread.start()
        thread.join()
    if errors:
        raise errors[0]
    for report in reports:
        line = report.note()
        if line and notes is not None:
            notes(line)
    return reports


__all__ = ["PROBE_MESSAGES", "PROBE_SHAPES", "PROBE_TOOLS", "ProbeError", "ProbeReport", "probe_messages", "probe_models",
           "probe_models_async", "text_tool_call_line"]
