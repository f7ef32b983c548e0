"""The ``tauray`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable

# Offline and quiet defaults for every command (set before litellm or Ray load).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


# --- scenarios ---------------------------------------------------------------------


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("pattern", nargs="*", help="scenario name globs (default: all)")
    p.add_argument("--domain", help="telecom, airline or retail")
    p.add_argument("--split", help="upstream split: small, base, train, test, full")
    p.add_argument("--variant", help="policy variant: manual, workflow (telecom) or default")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _select(args: argparse.Namespace):
    from tauray.scenarios import select_scenarios

    return select_scenarios(args.pattern or None, domain=args.domain, split=args.split, variant=args.variant)


def cmd_scenarios_list(args: argparse.Namespace) -> int:
    entries = _select(args)
    if args.json:
        _print_json([e.model_dump() for e in entries])
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
        _print_json(report.model_dump())
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


# --- endpoint ------------------------------------------------------------------------


def _endpoint_parser(p: argparse.ArgumentParser) -> None:
    from tauray.actors import endpoint

    endpoint.add_arguments(p)


def cmd_endpoint(args: argparse.Namespace) -> int:
    from tauray.actors import endpoint

    return endpoint.run_from_args(args)


# --- wiring --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tauray", description=__doc__ or "tauray")
    sub = parser.add_subparsers(dest="command", required=True)

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

    p = sub.add_parser("endpoint", help="serve the local OpenAI-compatible test endpoint")
    _endpoint_parser(p)
    p.set_defaults(func=cmd_endpoint)
    return parser


def main(argv: list[str] | None = None) -> int:
    from tauray.scenarios.loader import ScenarioLoadError
    from tauray.scenarios.registry import UnknownScenarioError
    from tauray.scenarios.upstream import UpstreamError

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (UnknownScenarioError, ScenarioLoadError, UpstreamError) as exc:
        print(f"tauray: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tauray: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
