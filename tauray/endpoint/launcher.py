"""Running the test endpoint: its command line and a child process that tests start and
stop (:func:`start_endpoint`), stopped when the caller exits."""

from __future__ import annotations

import argparse
import atexit
import json
import queue
import subprocess
import sys
import tempfile
import threading
import urllib.request
from typing import Any

from pydantic import ValidationError

from tauray.endpoint.server import (
    _LISTENING_RE,
    ALL_FAULT_KINDS,
    EndpointConfig,
    base_url_for,
    serve,
)

# --------------------------------------------------------------------------- command line


def _fault_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in ALL_FAULT_KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown fault kind(s) {unknown}; choose from {', '.join(ALL_FAULT_KINDS)}")
    return kinds


def _yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("yes", "true", "1", "on"):
        return True
    if value in ("no", "false", "0", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the endpoint's options to ``parser`` (e.g. a ``tauray endpoint`` sub-command)."""
    fields = EndpointConfig.model_fields

    def default(name: str) -> str:
        value = fields[name].default
        return ",".join(value) if isinstance(value, tuple) else str(value)

    g = parser.add_argument_group("test endpoint")
    g.add_argument("--host", default=None, help=f"loopback address to listen on (default {default('host')})")
    g.add_argument("--port", type=int, default=None, help="port; 0 picks a free one (default 0)")
    g.add_argument("--latency", type=float, default=None, help="seconds each request waits (default 0)")
    g.add_argument("--latency-jitter", type=float, default=None, help="latency spread as a fraction (default 0)")
    g.add_argument("--fault-rate", type=float, default=None, help="probability of an injected fault (default 0)")
    g.add_argument(
        "--fault-kinds", type=_fault_kinds, default=None, help=f"comma-separated fault kinds (default {default('fault_kinds')})"
    )
    g.add_argument("--fault-seed", type=int, default=None, help="seed for fault draws (default 0)")
    g.add_argument(
        "--timeout-hang-s", type=float, default=None, help=f"how long a 'timeout' fault holds a request (default {default('timeout_hang_s')})"
    )
    g.add_argument("--user-turns", type=int, default=None, help=f"scripted user replies before it stops (default {default('user_turns')})")
    g.add_argument("--quota-rpm", type=int, default=None, help="requests per minute each model may take; over it: 429 (default: no quota)")
    g.add_argument("--quota-tpm", type=int, default=None, help="tokens per minute each model may take; over it: 429 (default: no quota)")
    g.add_argument("--quota-retry-after", type=_yes_no, default=None, metavar="yes|no",
                   help="whether quota 429s carry a retry-after header (default yes)")
    g.add_argument("--quota-accounting", choices=("settled", "upfront"), default=None,
                   help="settled: a request's unused max_tokens is refunded when it is answered; upfront: prompt + "
                   "max_tokens stay charged, as OpenAI counts (default settled)")
    g.add_argument("--quota-headers", type=_yes_no, default=None, metavar="yes|no",
                   help="whether answers carry OpenAI's x-ratelimit-* headers (default yes)")
    g.add_argument("--quota-period-s", type=float, default=None, help=f"the quota's rolling window (default {default('quota_period_s')})")
    g.add_argument("--behaviours", default=None, metavar="MODULE",
                   help="also serve the BEHAVIOURS dict of this Python module, e.g. tests.test_helpers.faulty "
                   "(the faulty customers, agents and judges of a source checkout; default: none)")
    g.add_argument("--access-log", action="store_true", help="log every request to stderr (off by default: it costs CPU)")
    g.add_argument("--exit-with-parent", action="store_true", help="exit when stdin closes (used by start_endpoint)")


def config_from_args(args: argparse.Namespace) -> EndpointConfig:
    """Build a config from parsed arguments; options left unset keep their defaults."""
    given = {name: getattr(args, name, None) for name in EndpointConfig.model_fields}
    return EndpointConfig(**{k: v for k, v in given.items() if v is not None})


def config_to_args(config: EndpointConfig) -> list[str]:
    """Command-line options that reproduce ``config`` (the inverse of :func:`config_from_args`)."""
    args: list[str] = []
    for name, value in config.model_dump().items():
        if value is None:
            continue
        text = ",".join(value) if isinstance(value, (list, tuple)) else str(value)
        args += [f"--{name.replace('_', '-')}", text]
    return args


def run_from_args(args: argparse.Namespace) -> int:
    """Serve with options parsed by a parser that :func:`add_arguments` set up; returns an exit code."""
    try:
        config = config_from_args(args)
    except ValidationError as exc:
        print(f"tauray endpoint: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    try:
        serve(config, exit_with_parent=bool(getattr(args, "exit_with_parent", False)), access_log=bool(getattr(args, "access_log", False)))
    except OSError as exc:  # e.g. the port is taken
        print(f"tauray endpoint: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tauray.endpoint",
        description="Local OpenAI-compatible endpoint serving scripted completions.",
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


# --------------------------------------------------------------------------- subprocess launcher

_LIVE: set[RunningEndpoint] = set()
_LIVE_LOCK = threading.Lock()


def _stop_all_at_exit() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for endpoint in live:
        endpoint.stop(grace_s=2.0)


atexit.register(_stop_all_at_exit)


class EndpointStartError(RuntimeError):
    """The endpoint subprocess did not come up."""


class RunningEndpoint:
    """Handle on an endpoint running in a child process (see :func:`start_endpoint`)."""

    def __init__(self, process: subprocess.Popen[bytes], config: EndpointConfig, host: str, port: int, stderr_file: Any) -> None:
        self.process = process
        self.config = config
        self.host = host
        self.port = port
        self._stderr_file = stderr_file
        # Bypass any HTTP proxy settings: the endpoint is always on this machine.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    @property
    def base_url(self) -> str:
        """The ``api_base`` for litellm, e.g. ``http://127.0.0.1:PORT/v1``."""
        return base_url_for(self.host, self.port)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(f"{self.base_url}{path}", method=method, data=b"" if method == "POST" else None)
        with self._opener.open(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        """The server's counters: requests, in_flight, peak_in_flight, rejected, by_behaviour, faults."""
        return self._call("GET", "/stats")

    def quota(self) -> dict[str, Any]:
        """The quota's limits, its 429 count and the log of every arrival
        ``[t, model, prompt tokens, completion tokens, status, tokens charged]`` (see :mod:`.quota`)."""
        return self._call("GET", "/quota")

    def reset_stats(self) -> None:
        """Zero the counters (requests still running stay counted in ``in_flight``)."""
        self._call("POST", "/stats/reset")

    def stop(self, grace_s: float = 5.0) -> None:
        """Terminate the child, killing it if it has not exited after ``grace_s``. Idempotent."""
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self._stderr_file.close()
        except OSError:
            pass

    def __enter__(self) -> RunningEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<RunningEndpoint {self.base_url} pid={self.process.pid} {state}>"


def _read_first_line_then_drain(stream: Any, lines: queue.Queue[bytes]) -> None:
    """Hand over the first stdout line, then keep the pipe empty so the child never blocks on it."""
    try:
        lines.put(stream.readline())
        while stream.read(4096):
            pass
    except (OSError, ValueError):
        lines.put(b"")


def start_endpoint(
    config: EndpointConfig | None = None, *, start_timeout: float = 30.0, **fields: Any
) -> RunningEndpoint:
    """Start the endpoint in a child process and wait until it accepts requests.

    ``fields`` override single settings, e.g. ``start_endpoint(latency=0.5)``.
    The child exits when :meth:`RunningEndpoint.stop` is called, at interpreter
    exit, or when this process dies (it watches its stdin pipe).
    """
    config = config or EndpointConfig()
    if fields:
        config = EndpointConfig(**(config.model_dump() | fields))
    command = [
        sys.executable,
        # Harmless if the package re-exports this module, but noisy; keep stderr for real errors.
        "-W",
        "ignore::RuntimeWarning:runpy",
        "-m",
        "tauray.endpoint",
        *config_to_args(config),
        "--exit-with-parent",
    ]
    stderr_file = tempfile.TemporaryFile(mode="a+b")  # append: the child never overwrites
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_file)
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(
        target=_read_first_line_then_drain, args=(process.stdout, lines), name="endpoint-stdout", daemon=True
    ).start()

    def fail(reason: str) -> EndpointStartError:
        if process.poll() is None:
            process.kill()
            process.wait()
        stderr_file.seek(0)
        stderr = stderr_file.read().decode(errors="replace").strip()
        stderr_file.close()
        return EndpointStartError(f"tauray endpoint failed to start: {reason}\n--- stderr ---\n{stderr or '(empty)'}")

    try:
        first = lines.get(timeout=start_timeout).decode(errors="replace")
    except queue.Empty:
        raise fail(f"no 'listening' line within {start_timeout:.0f}s") from None
    match = _LISTENING_RE.match(first.strip())
    if match is None:
        raise fail(f"unexpected first output line {first.strip()!r} (exit code {process.poll()})")
    host = match["host"].strip("[]")
    endpoint = RunningEndpoint(process, config, host, int(match["port"]), stderr_file)
    with _LIVE_LOCK:
        _LIVE.add(endpoint)
    return endpoint


__all__ = ["EndpointStartError", "RunningEndpoint", "add_arguments", "config_from_args", "config_to_args", "main",
           "run_from_args", "start_endpoint"]
