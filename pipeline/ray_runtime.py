"""Starting or joining Ray, on loopback unless told otherwise.

Local Ray binds to the machine's external interface unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` is set before it starts; with it,
every Ray port listens on 127.0.0.1. ``address="local"`` always starts a fresh
local instance instead of joining whatever cluster a crashed run left behind.
"""

from __future__ import annotations

import os
from typing import Any

LOOPBACK_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}


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
