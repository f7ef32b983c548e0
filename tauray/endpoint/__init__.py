"""The local OpenAI-compatible test endpoint: scripted completions over real HTTP.

It is a server, not a Ray actor: tests, benchmarks and dry-run sweeps talk to it on
127.0.0.1. Run it with ``tauray endpoint`` or ``python -m tauray.endpoint``;
tests start it in a child process with :func:`start_endpoint`. :mod:`.server` holds
the config and the aiohttp app, :mod:`.launcher` the command line and the child
process, :mod:`.behaviours` the registry of what the endpoint replies (built from
:mod:`.replies`, :mod:`.judges`, :mod:`.shapes` and :mod:`.writers`).
"""

from tauray.endpoint.launcher import (
    EndpointStartError,
    RunningEndpoint,
    add_arguments,
    config_from_args,
    config_to_args,
    main,
    run_from_args,
    start_endpoint,
)
from tauray.endpoint.server import (
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
