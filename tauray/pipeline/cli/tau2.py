"""``tauray export-tau2`` and ``tauray import-tau2``: a run as τ² results files, and τ² results
files as a run (:mod:`tauray.results.tau2.to_tau2`, :mod:`tauray.results.tau2.from_tau2`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``export-tau2`` and ``import-tau2`` to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("export-tau2", help="write a run or sweep as τ² results files (tau2 view, "
                              "evaluate-trajs, submit)")
    p.add_argument("path", metavar="RUN_OR_SWEEP_DIR", help="a run directory, or a folder of run directories")
    p.add_argument("--out", required=True, help="folder for the τ² results files (one per agent × user × domain)")
    p.add_argument("--cell", action="append", metavar="CELL_ID", help="export only this cell (repeatable)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document")
    p.set_defaults(func=cmd_export)
    p = subparsers.add_parser("import-tau2", help="read τ² results files into a run directory, re-scored by tauray")
    p.add_argument("files", nargs="+", metavar="FILE", help="τ² results files (tau2 run's JSON)")
    p.add_argument("--out", required=True, help="run directory to write")
    p.add_argument("--run-id", help="run id of the imported rows (default: from the files' contents)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document")
    p.set_defaults(func=cmd_import)


def _print(summary: Any, as_json: bool, lines: list[str]) -> None:
    from tauray.pipeline.output import print_json

    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        print("\n".join(lines))


def cmd_export(args: argparse.Namespace) -> int:
    from tauray.results.tau2.to_tau2 import export_tau2
    from tauray.scenarios.upstream import silence_upstream_logging

    silence_upstream_logging()  # τ²'s own start-up lines (".env", model notes) are not this command's

    try:
        summary = export_tau2(args.path, args.out, cells=args.cell)
    except FileNotFoundError as exc:
        print(f"tauray export-tau2: error: {exc}", file=sys.stderr)
        return 2
    lines = [f"{f.path}: {f.simulations} simulations of {f.tasks} tasks, {f.successes} rewarded"
             for f in summary.files]
    _print(summary, args.json, [*lines, f"{summary.conversations} conversations in {summary.seconds:.1f} s"])
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tauray.actors.audit import audit_result
    from tauray.results.tau2.from_tau2 import import_tau2
    from tauray.scenarios.upstream import silence_upstream_logging

    silence_upstream_logging()

    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        print(f"tauray import-tau2: error: {missing[0]}: no such file", file=sys.stderr)
        return 2
    summary = import_tau2(args.files, args.out, run_id=args.run_id, finish=audit_result)  # who failed, as a run says it
    _print(summary, args.json, [
        f"{summary.out} (run {summary.run_id}): {summary.simulations} conversations, {summary.success} success, "
        f"{summary.failed} failed, {summary.unscored} waiting on a judge",
        f"tauray's verdict equals τ²'s reward for {summary.tau2_agree}, differs for {summary.tau2_disagree}"
        f" ({summary.tau2_unrewarded} without a reward); replayed results differing from recorded: "
        f"{summary.replay_mismatches}"])
    return 0
