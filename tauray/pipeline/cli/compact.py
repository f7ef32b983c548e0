"""``tauray compact RUN_OR_SWEEP_DIR``: rewrite each table into one file (:mod:`tauray.results.tables.compact`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauray.results.tables.compact import compact
from tauray.results.tables.lock import RunLockedError


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``compact`` command to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("compact", help="rewrite a run's tables into one file each, dropping superseded rows")
    p.add_argument("path", metavar="RUN_OR_SWEEP_DIR", help="a run directory, or a folder of run directories")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document")
    p.set_defaults(func=cmd_compact)
    return p


def cmd_compact(args: argparse.Namespace) -> int:
    from tauray.pipeline.output import print_figures

    try:
        summary = compact(args.path)
    except (FileNotFoundError, RunLockedError) as exc:
        print(f"tauray {args.command}: error: {exc}", file=sys.stderr)
        return 2
    print_figures(summary, args.json)
    return 0
