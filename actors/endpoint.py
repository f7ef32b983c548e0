"""A local OpenAI-compatible endpoint that serves scripted completions.

Three ways to run it:

* ``python -m tauray.actors.endpoint --port 8000 --latency 0.5`` (or the ``tauray
  endpoint`` sub-command, wired through :func:`add_arguments` and :func:`run_from_args`);
* :func:`serve` to block in the current process;
* :func:`start_endpoint` to run it in a child process that is stopped when the caller
  exits, which is what tests use.

The parts live in :mod:`~tauray.actors.endpoint_server` (config and server),
:mod:`~tauray.actors.endpoint_launcher` (command line and child process) and the
behaviour modules (:mod:`~tauray.actors.endpoint_behaviours` and the modules it names);
this module re-exports them.
"""

from __future__ import annotations

import sys

from tauray.actors.endpoint_launcher import (
    EndpointStartError,
    RunningEndpoint,
    add_arguments,
    config_from_args,
    config_to_args,
    main,
    run_from_args,
    start_endpoint,
)
from tauray.actors.endpoint_server import (
    ALL_FAULT_KINDS,
    LISTENING_PREFIX,
    MALFORMED_ARGUMENTS,
    EndpointConfig,
    FaultKind,
    base_url_for,
    create_app,
    run_server,
    serve,
)

__all__ = ["ALL_FAULT_KINDS", "LISTENING_PREFIX", "MALFORMED_ARGUMENTS", "EndpointConfig", "EndpointStartError",
           "FaultKind", "RunningEndpoint", "add_arguments", "base_url_for", "config_from_args", "config_to_args",
           "create_app", "main", "run_from_args", "run_server", "serve", "start_endpoint"]

if __name__ == "__main__":
    sys.exit(main())
