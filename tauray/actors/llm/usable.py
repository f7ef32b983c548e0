"""Can this model be used? The one place that answers, at three depths, for every caller (a
run before it starts, ``tauray judge``, the audit's judge tier, ``tauray models check``):

* free and offline (:func:`check_model_ready`): the model string resolves to a provider, no
  setting the user gave is one the model refuses, a named key variable is set, a provider that
  needs a key can find one; and a budgeted sweep refuses a model litellm cannot price
  (:func:`budget_refusal`: a missing price must never count as $0);
* one real call per distinct model (:func:`probe_models`, the call itself in :mod:`.probe`): a
  typo, a refused key, a parameter the provider rejects or a base URL that answers nobody stops
  the command there, naming the role, the model and what the provider said;
* a model tauray serves itself, deployed and asked for one generation (:func:`check_served`):
  what can be wrong with it (a build that crashes on this CPU, weights that do not load, a
  replica that cannot be placed) is only seen when it runs.

What litellm's tables know of a name and a price is :mod:`.model_map`'s; what tauray will send
each model is ``tauray models check`` (:mod:`.check`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.errors import ModelConfigError
from tauray.actors.llm.model_map import is_priced
from tauray.actors.llm.params import request_params
from tauray.actors.llm.probe import ProbeError, ProbeReport, probe_one
from tauray.actors.llm.providers import env_api_base, litellm_module, missing_env, provider_names
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.serving import ServedModels, ServeSpecError, ServeStartError, lifecycle
from tauray.scenarios.conventions import REFERENCE_POLICIES

# --- free ---------------------------------------------------------------------------------

def check_model_ready(spec: ModelSpec) -> None:
    """Fail fast, naming the model, if calls to ``spec`` cannot work for configuration reasons.

    Checks the model string resolves to a provider, that no setting the user gave is
    one the model refuses, that a named key variable is set, and that a provider which
    needs a key can find one. It never calls the
    provider, so it costs nothing and is safe offline.
    """
    if spec.is_reference or spec.is_live:  # a live agent makes no model call (its checks: actors/voice/live)
        return
    if spec.serve is not None and spec.api_base is None:  # not deployed yet: tauray brings it up
        lifecycle.check_backend(spec.serve)
        return
    litellm = litellm_module()
    main, fallback_providers = provider_names(spec)
    # A setting the model refuses (temperature=0 at o-series, frequency_penalty at Anthropic) is
    # named here, for free, before the probe or any unit.
    request_params(spec, [main, *fallback_providers])
    if spec.api_key_env:
        if not os.environ.get(spec.api_key_env):
            raise ModelConfigError(
                f"model {spec.model!r}: api_key_env names the environment variable "
                f"{spec.api_key_env!r}, which is not set (or empty)"
            )
    elif not spec.api_base and not env_api_base(main):
        # With a base URL from the environment the server may need no key (a local one).
        missing = missing_env(litellm, spec.model)
        if missing:
            raise ModelConfigError(
                f"model {spec.model!r} (provider {main!r}) needs {', '.join(missing)} in the environment, "
                "or set api_key_env to the variable that holds its key"
            )
    for fallback, provider in zip(spec.fallbacks, fallback_providers):
        if provider == main and (spec.api_key_env or spec.api_base):
            continue  # shares the model's credentials and endpoint
        missing = missing_env(litellm, fallback)
        if missing:
            raise ModelConfigError(
                f"fallback {fallback!r} of model {spec.model!r} (provider {provider!r}) needs "
                f"{', '.join(missing)} in the environment"
            )


def unpriced_models(models: Iterable[tuple[str, str, bool]]) -> list[str]:
    """The models (``(name, litellm model string, has explicit price)``) a budget cannot count.

    Reference policies and models with an explicit price are fine; any other model litellm
    does not price is named, as ``name (model)``, in the order given, each once.
    """

    out: list[str] = []
    for name, model, has_price in models:
        label = f"{name} ({model})" if name != model else model
        if has_price or model in REFERENCE_POLICIES or label in out or is_priced(model):
            continue
        out.append(label)
    return out


def budget_refusal(models: Iterable[tuple[str, str, bool]], budget_usd: float | None) -> str | None:
    """The one line a sweep with ``budget_usd`` is refused with when a model cannot be priced; None if fine."""
    if budget_usd is None:
        return None
    missing = unpriced_models(models)
    if not missing:
        return None
    return (f"budget_usd={budget_usd} is set but litellm has no price for {', '.join(missing)}: "
            "give each a price (input_per_mtok, output_per_mtok) in [models.NAME.price], a speech model "
            "usd_per_minute or usd_per_million_chars, or drop the budget")



# --- one call ---------------------------------------------------------------------------

def _distinct(specs: Mapping[str, ModelSpec | Mapping[str, Any] | str]) -> list[tuple[ModelSpec, list[str]]]:
    """Specs that call a model, each once, with every role that uses it (in the order given)."""
    groups: dict[str, tuple[ModelSpec, list[str]]] = {}
    for role, value in specs.items():
        spec = ModelSpec.parse(value)
        if spec.is_reference or spec.is_live:  # a live agent's probe opens its socket (actors/voice/live/agent.py)
            continue
        key = spec.model_dump_json()
        groups.setdefault(key, (spec, []))[1].append(role)
    return list(groups.values())


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
    outcomes = await asyncio.gather(*(probe_one(s, r, seed) for s, r in groups))
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



# --- served models ----------------------------------------------------------------------

class ServedCheck(BaseModel):
    """One served model's live check."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="litellm model string of the served model.")
    ok: bool = Field(description="It came up and answered one generation.")
    line: str = Field(description="One line for the user: how long it took, or what went wrong.")


def check_served(specs: Sequence[ModelSpec]) -> list[ServedCheck]:
    """Deploy ``specs`` (all with ``serve``) on the Ray the caller connected to, probe each once,
    tear them down."""
    if not specs:
        return []
    dumps = [s.model_dump(exclude_none=True) for s in specs]
    out: list[ServedCheck] = []
    with ServedModels(dumps) as served:
        for spec, dump in zip(specs, dumps):
            try:
                (report,) = probe_models({"served": served.resolve(dump)}, seed=None)
                out.append(ServedCheck(model=spec.model, ok=True,
                                       line=f"{spec.model}: served; answered a generation in {report.seconds:.1f} s"))
            except ProbeError as error:
                out.append(ServedCheck(model=spec.model, ok=False, line=str(error)))
    return out


def check_served_lines(specs: Sequence[ModelSpec]) -> list[ServedCheck]:
    """:func:`check_served`, a deployment that does not come up reported as every model's failed check
    (one line), not raised."""
    try:
        return check_served(specs)
    except (ServeStartError, ServeSpecError) as error:
        line = " ".join(str(error).split())
        return [ServedCheck(model=s.model, ok=False, line=line) for s in specs]


__all__ = ["ProbeError", "ProbeReport", "ServedCheck", "budget_refusal", "check_model_ready", "check_served",
           "check_served_lines", "probe_models", "probe_models_async", "unpriced_models"]
