"""``tauray report RUN_OR_SWEEP_DIR [--out DIR]``: the static HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tauray.pipeline.output import print_json


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` command to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("report", help="static HTML report (opens offline) of a run or sweep directory")
    p.add_argument("path", metavar="RUN_OR_SWEEP_DIR", help="a run directory, or a folder of run directories")
    p.add_argument("--out", help="report folder (default RUN_OR_SWEEP_DIR/report)")
    p.add_argument("--k-max", type=int, default=4, help="largest k for pass^k (default 4)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document")
    p.set_defaults(func=cmd_report)
    return p


def cmd_report(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from tauray.pipeline.report import write_report
    from tauray.results.tables.layout import run_dirs
    from tauray.results.tables.readers import conversations_df

    src = Path(args.path)
    if not src.is_dir():
        print(f"tauray {args.command}: error: no such directory: {src}", file=sys.stderr)
        return 2
    try:
        run_dirs(src)  # says what a run or sweep folder is when src is neither
        total = len(conversations_df(src, columns=["conversation_id"]))
    except FileNotFoundError as exc:
        print(f"tauray {args.command}: error: {exc}", file=sys.stderr)
        return 2
    with tqdm(total=total, desc="transcripts", unit="page", file=sys.stderr,
              disable=args.json or not sys.stderr.isatty()) as bar:
        summary = write_report(src, args.out, k_max=args.k_max, n_boot=args.bootstrap, seed=args.seed,
                               confidence=args.confidence, progress=bar.update)
    if args.json:
        print_json(summary.model_dump())
    else:
        print(f"report: {summary.index}  ({summary.conversations} conversations, {len(summary.arms)} arms, "
              f"{summary.judge_configs} judge configs, {summary.transcripts} transcript pages)")
    return 0
