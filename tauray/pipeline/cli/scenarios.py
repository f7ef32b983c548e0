"""``tauray scenarios list`` and ``tauray scenarios validate`` (gold replay, parity with upstream)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauray.pipeline.cli.run import add_selection_arguments
from tauray.pipeline.output import print_json


def _selection_args(p: argparse.ArgumentParser) -> None:
    add_selection_arguments(p, limit=False)
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _select(args: argparse.Namespace):
    from tauray.scenarios import select_scenarios

    return select_scenarios(args.pattern or None, domain=args.domain, split=args.split, variant=args.variant)


def cmd_scenarios_list(args: argparse.Namespace) -> int:
    entries = _select(args)
    if args.json:
        print_json([e.model_dump() for e in entries])
        return 0
    for e in entries:
        print(f"{e.name}\t{e.domain}\t{e.policy_variant}\t{','.join(e.splits)}")
    print(f"{len(entries)} scenarios", file=sys.stderr)
    return 0


def cmd_scenarios_validate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from tauray.scenarios.validate import validate

    entries = _select(args)
    with tqdm(total=len(entries), desc="gold replay", unit="scenario", file=sys.stderr,
              disable=args.json or not sys.stderr.isatty()) as bar:
        report = validate(entries, compare_upstream=args.compare_upstream, progress=bar.update)
    if args.json:
        print_json(report.model_dump())
    else:
        print(f"scenarios        {report.scenarios} ({report.tasks} distinct tasks)")
        print(f"gold pass        {report.gold_pass}/{report.scenarios}")
        for f in report.gold_failures:
            print(f"  FAIL {f['scenario']}: {f['reason']}")
        if report.reference_call_errors:
            print(f"reference calls that error (same in upstream): {len(report.reference_call_errors)} tasks")
        print(f"gold replay      {report.seconds:.2f} s")
        if args.compare_upstream:
            print(f"upstream replay  {report.upstream_seconds:.2f} s  (tauray {report.speedup}x faster)")
            print(f"parity           {report.parity_sequences} sequences over {report.parity_checked} scenarios, "
                  f"{report.parity_mismatches} mismatches")
            for m in report.parity_examples:
                print(f"  MISMATCH {m['scenario']} [{m['sequence']}]: {'; '.join(m['differences'])}")
    ok = report.gold_pass == report.scenarios and report.parity_mismatches == 0
    return 0 if ok else 1


def register(sub: Any) -> None:
    """Add ``scenarios list`` and ``scenarios validate``."""
    scen = sub.add_parser("scenarios", help="list and validate registered scenarios")
    scen_sub = scen.add_subparsers(dest="scenarios_command", required=True)
    p = scen_sub.add_parser("list", help="list registered scenarios")
    _selection_args(p)
    p.set_defaults(func=cmd_scenarios_list)
    p = scen_sub.add_parser("validate", help="gold-replay scenarios and check their verdicts")
    _selection_args(p)
    p.add_argument("--compare-upstream", action="store_true",
                   help="also run gold and perturbed action sequences through upstream τ² and compare")
    p.set_defaults(func=cmd_scenarios_validate)
