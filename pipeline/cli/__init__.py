"""The ``tauray`` command line, one module per command group; :func:`main` is the entry point."""

from tauray.pipeline.cli.main import main

__all__ = ["main"]
