"""The ``tauray`` command line: dual-control agent evaluation at sweep scale."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from tauray.pipeline.ray_runtime import loopback_env

loopback_env()  # offline and on loopback for every command, before litellm or Ray load

from tauray.pipeline.output import json_only_stdout  # noqa: E402


def cmd_endpoint(args: argparse.Namespace) -> int:
    from tauray.endpoint import run_from_args

    return run_from_args(args)


def build_parser() -> argparse.ArgumentParser:
    from tauray.endpoint import add_arguments as endpoint_arguments
    from tauray.pipeline.cli import audit, bench, compact, judge, report, run, scenarios, sweep
    from tauray.pipeline.cli import tau2 as tau2_interop

    parser = argparse.ArgumentParser(prog="tauray", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    scenarios.register(sub)
    run.register(sub)
    sweep.register(sub)
    judge.register(sub)
    report.register(sub)
    compact.register(sub)
    bench.register(sub)
    tau2_interop.register(sub)
    audit.register(sub)
    __import__("tauray.pipeline.cli.models", fromlist=["register"]).register(sub)
    p = sub.add_parser("endpoint", help="serve the local OpenAI-compatible test endpoint")
    endpoint_arguments(p)
    p.set_defaults(func=cmd_endpoint)
    return parser


def _expected_errors() -> tuple[type[BaseException], ...]:
    """What a user can cause (bad input, a locked folder, an unusable model): one line, exit 2."""
    from tauray.pipeline.driver import DriverError
    from tauray.results.tables.lock import RunLockedError
    from tauray.scenarios.upstream import UpstreamError

    return (ValueError, KeyError, RunLockedError, DriverError, UpstreamError)


def _one_line(exc: BaseException) -> str:
    from pydantic import ValidationError

    from tauray.pipeline.config import format_validation

    if isinstance(exc, ValidationError):
        return format_validation(exc)
    message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(str(message).split("\n")) if message.count("\n") else str(message)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        with json_only_stdout(bool(getattr(args, "json", False))):
            return func(args)
    except _expected_errors() as exc:
        print(f"tauray {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tauray: interrupted", file=sys.stderr)
        return 130
