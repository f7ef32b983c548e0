"""Starting or joining Ray, on loopback unless told otherwise.

Local Ray binds to the machine's external interface unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` is set before it starts; with it,
every Ray port listens on 127.0.0.1. ``address="local"`` always starts a fresh
local instance instead of joining whatever cluster a crashed run left behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tauray

LOOPBACK_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}
SHIP_EXCLUDES = ("__pycache__", "*.pyc")
"""What a run does not ship to a cluster's workers: bytecode caches (each node writes its own)."""


def loopback_env() -> None:
    for key, value in LOOPBACK_ENV.items():
        os.environ.setdefault(key, value)


def ensure_ray(address: str | None = None, num_cpus: int | None = None, runtime_env: dict[str, Any] | None = None):
    """Join ``address`` (or RAY_ADDRESS) when given, else start local Ray on loopback."""
    loopback_env()
    import ray

    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS")
    common = dict(include_dashboard=False, log_to_driver=True, configure_logging=True, logging_level="WARNING")
    if address:
        ray.init(address=address, runtime_env=runtime_env, **common)
    else:
        ray.init(address="local", num_cpus=num_cpus or max(os.cpu_count() or 2, 2),
                 _node_ip_address="127.0.0.1", runtime_env=runtime_env, **common)
    return ray


def connect(address: str | None = None, ship_project: bool = True, runtime_env: dict[str, Any] | None = None):
    """Local Ray on loopback, or the cluster at ``address`` (or RAY_ADDRESS) with the project
    shipped to its workers (``py_modules``), merged with ``runtime_env``. ``run``, ``sweep``
    and ``judge --ray`` all connect here, so their actors find the same code on every node."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    import ray

    env = None
    if not ray.is_initialized():
        if address and ship_project:
            env = project_runtime_env(runtime_env)
        elif runtime_env:
            env = runtime_env
    return ensure_ray(address, runtime_env=env)


def project_runtime_env(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A runtime env that ships the running ``tauray`` package to every worker: its folder as it
    is, whether installed from a wheel or a checkout (they are the same tree), without caches."""
    env: dict[str, Any] = {"py_modules": [str(Path(tauray.__path__[0]))], "excludes": list(SHIP_EXCLUDES),
                           "env_vars": {k: LOOPBACK_ENV[k] for k in ("LITELLM_LOCAL_MODEL_COST_MAP",
                                                                     "RAY_USAGE_STATS_ENABLED")}}
    for key, value in (extra or {}).items():
        if key == "env_vars":
            env["env_vars"].update(value)
        elif key in ("py_modules", "excludes"):
            env[key] += list(value)
        else:
            env[key] = value
    return env
