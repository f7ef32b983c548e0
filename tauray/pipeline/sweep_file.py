"""Sweep files: read one into a :class:`~tauray.pipeline.config.SweepConfig`, and the
configuration as a run folder stores it (``sweep.json``) with no secret in it.

``${VAR}`` in any string of the file is replaced by the environment variable when the
file is read (an endpoint URL, a key name); the stored copy keeps ``${VAR}`` as written.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tauray.actors.llm.errors import REDACTED, redacted_params
from tauray.pipeline.config import SweepConfig, format_validation
from tauray.pipeline.files import ConfigFileError, read_config_file

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand_env(value: Any, where: str, path: Path, written: dict[tuple[Any, ...], str],
                at: tuple[Any, ...] = ()) -> Any:
    """``${VAR}`` in any string is replaced by the environment variable (e.g. an endpoint URL);
    ``written`` keeps each such string as the file wrote it, by its path in the config."""
    if isinstance(value, dict):
        return {k: _expand_env(v, f"{where}.{k}" if where else str(k), path, written, (*at, k))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, f"{where}[{i}]", path, written, (*at, i)) for i, v in enumerate(value)]
    if isinstance(value, str):
        if _ENV_REF.search(value):
            written[at] = value

        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in os.environ:
                raise ConfigFileError(path, f"field '{where}': environment variable {m.group(1)} is not set "
                                     f"(expected it to hold the value for ${{{m.group(1)}}})")
            return os.environ[m.group(1)]
        return _ENV_REF.sub(sub, value)
    return value


def stored_name(out: Path | str) -> str | None:
    """The name of the configuration a run folder holds (its ``sweep.json``), if any."""

    try:
        return str(json.loads((Path(out) / "sweep.json").read_text())["sweep"]["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load_sweep(path: Path | str) -> SweepConfig:
    """Read and validate a sweep file (``.toml``, ``.yaml`` or ``.yml``)."""
    path = Path(path)
    raw = read_config_file(path)
    written: dict[tuple[Any, ...], str] = {}
    raw = _expand_env(raw, "", path, written)
    raw.setdefault("name", path.stem)
    try:
        cfg = SweepConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigFileError(path, format_validation(exc)) from None
    cfg._source = str(path)
    cfg._written = written
    return cfg


def as_stored(cfg: SweepConfig) -> dict[str, Any]:
    """The configuration as a run folder keeps it (``sweep.json``): a value the file took from
    ``${VAR}`` is stored as written, credential-like extra parameters and the cluster's
    ``env_vars`` values are left out, so no secret reaches the folder."""
    data = cfg.model_dump(mode="json")
    for at, text in cfg._written.items():
        node = data
        try:
            for step in at[:-1]:
                node = node[step]
            node[at[-1]] = text
        except (KeyError, IndexError, TypeError):
            pass
    for entry in data.get("models", {}).values():
        entry["extra_params"] = redacted_params(entry.get("extra_params", {}))
    env_vars = data.get("cluster", {}).get("runtime_env", {}).get("env_vars")
    if isinstance(env_vars, dict):
        data["cluster"]["runtime_env"]["env_vars"] = {k: REDACTED for k in env_vars}
    return data


