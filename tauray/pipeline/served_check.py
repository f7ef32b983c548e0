"""``tauray models check`` for ``serve:`` models: deploy each one and ask it for one generation.

A hosted model's check is offline (litellm's tables say what it takes). A model tauray
serves itself costs nothing to call, and what can be wrong with it is only seen when it
runs: a llama.cpp build that crashes on this CPU, weights that do not load, a replica that
cannot be placed. So the check brings the served models up on local Ray (or the cluster
in ``RAY_ADDRESS``), sends each the run's own probe, and tears them down: one line per
model, the crash named as a crash (:mod:`tauray.actors.serving.llama_worker`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.probe import ProbeError, probe_models
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.serving import ServedModels, ServeSpecError, ServeStartError
from tauray.pipeline.ray_runtime import connect


class ServedCheck(BaseModel):
    """One served model's live check."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="litellm model string of the served model.")
    ok: bool = Field(description="It came up and answered one generation.")
    line: str = Field(description="One line for the user: how long it took, or what went wrong.")


def check_served(specs: Sequence[ModelSpec]) -> list[ServedCheck]:
    """Deploy ``specs`` (all with ``serve``), probe each once, tear them down."""
    if not specs:
        return []
    connect()
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


__all__ = ["ServedCheck", "check_served", "check_served_lines"]
