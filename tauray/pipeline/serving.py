"""A sweep's ``serve:`` models brought up for one run, and its model specs pointed at them.

The deployments themselves are :mod:`tauray.actors.serving`'s; this is the pipeline's
side of it, the one place that rewrites a sweep configuration with their addresses.
"""

from __future__ import annotations

from typing import Any

from tauray.actors.llm.usable import probe_models
from tauray.actors.serving import ServedModels
from tauray.pipeline.config import ModelEntry, SweepConfig


def serve_for_sweep(cfg: SweepConfig, probe: bool = True) -> tuple[Any, ServedModels]:
    """Deploy the sweep's served models; returns the sweep with their ``api_base`` filled in and the
    handle whose ``stop()`` the caller must call in a ``finally`` (it is a no-op without served models).

    With ``probe``, each served model then gets the same one-call probe as every other model
    (which ran before Ray started, when these had no address yet).
    """
    # A served recogniser (a speech entry with serve) is the speech pool's (tauray/actors/voice/pool.py).
    served = ServedModels(entry.spec for entry in cfg.models.values() if entry.speech is None)
    if not served:
        return cfg, served
    served.start()
    try:
        models = {}
        for name, entry in cfg.models.items():
            if entry.spec.get("serve") and entry.speech is None:
                price = {"price": entry.price} if entry.price is not None else {}
                entry = ModelEntry.model_validate({**served.resolve(entry.spec), **price})
            models[name] = entry
        cfg = cfg.model_copy(update={"models": models})
        if probe:
            probe_models({label: spec for label, spec in cfg.probe_specs().items() if spec.get("serve")},
                         seed=cfg.seed)
    except BaseException:
        served.stop()
        raise
    return cfg, served


__all__ = ["serve_for_sweep"]
