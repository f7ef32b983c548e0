"""The ``tauray`` command line, one module per command group; the entry point is
:func:`tauray.pipeline.cli.main.main`."""
