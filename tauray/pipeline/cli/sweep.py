"""``tauray sweep FILE``: run a sweep file (models × judges × scenarios × trials), resumably."""

from __future__ import annotations

import argparse
from typing import Any

from tauray.pipeline.cli.drive import add_drive_arguments, drive, report


def cmd_sweep(args: argparse.Namespace) -> int:
    from tauray.pipeline.sweep_file import load_sweep

    return report(drive(load_sweep(args.file), args), args.json)


def register(subparsers: Any) -> None:
    """Add ``tauray sweep``."""
    p = subparsers.add_parser("sweep", help="run a sweep file (models × judges × scenarios × trials), resumably")
    p.add_argument("file", help="sweep file (.toml, .yaml or .yml)")
    add_drive_arguments(p)
    p.set_defaults(func=cmd_sweep)
