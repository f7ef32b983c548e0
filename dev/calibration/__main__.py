"""``python -m dev.calibration DIR``: how far the audit's findings can be trusted, measured on
faulty customers and agents (ground truth the tests own, in ``tests/test_helpers``): recall per
fault class and the false-positive rate of the detectors on the calibration sweep, or with
``--mixed`` attribution on the mixed set (faulty agents, faulty customers, both, neither).
``--endpoint URL`` runs (or resumes) the sweep first, against a test endpoint that serves the
faulty behaviours (``tauray endpoint --behaviours tests.test_helpers.faulty``). From a checkout
only: ``make audit-calibrate DIR=...`` runs it (docs/audit.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tauray.pipeline.output import print_json


def _run_sweep(args: argparse.Namespace) -> None:
    """Run (or resume) the calibration sweep (or the mixed set) into ``args.dir``, in this process."""
    from dev.calibration import mixed
    from dev.calibration.sweep import run_calibration_sweep, sweep_config
    from tauray.pipeline.sweep_file import stored_name

    out = Path(args.dir)
    name = stored_name(out) or out.name
    if args.mixed:
        sweep = mixed.sweep_config(name=name, endpoint=args.endpoint, per_family=args.per_family,
                                   trials=args.trials, split=args.split, telecom_split=args.telecom_split,
                                   max_in_flight=args.max_in_flight)
    else:
        sweep = sweep_config(name=name, endpoint=args.endpoint, split=args.split, telecom_split=args.telecom_split,
                             limit=args.limit, max_in_flight=args.max_in_flight, trials=args.trials,
                             classes=tuple(args.classes) or None)
    print(f"calibration: running the calibration sweep -> {out}", file=sys.stderr, flush=True)
    run_calibration_sweep(sweep, out)


def main(argv: list[str] | None = None) -> int:
    from dev.calibration import mixed
    from dev.calibration.measure import calibrate_path, text_lines

    args = parser().parse_args(argv)
    if args.endpoint:
        _run_sweep(args)
    if args.mixed:
        figures, _ = mixed.measure_path(args.dir, args.endpoint)
        if args.json:
            print_json(figures.model_dump(mode="json"))
        else:
            print("\n".join(mixed.text_lines(figures)))
        return 0
    result = calibrate_path(args.dir)
    if args.json:
        print_json(result.model_dump(mode="json"))
    else:
        print("\n".join(text_lines(result)))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m dev.calibration", description=__doc__)
    p.add_argument("dir", help="the calibration sweep's folder (measured as stored; run first with --endpoint)")
    p.add_argument("--endpoint", help="run (or resume) the calibration sweep first against this test endpoint, "
                   "e.g. http://127.0.0.1:8765/v1 (`tauray endpoint --behaviours tests.test_helpers.faulty`)")
    p.add_argument("--split", default="heldout", choices=("tune", "heldout"),
                   help="phrasings the faulty customers use (default: heldout)")
    p.add_argument("--telecom-split", default="base", help="telecom task split (default: base)")
    p.add_argument("--limit", type=int, help="first N scenarios of the split")
    p.add_argument("--trials", type=int, default=1, help="trials per scenario and customer: each trial draws "
                   "its own fault point and phrasing (default: 1)")
    p.add_argument("--classes", nargs="+", default=[], metavar="CLASS",
                   help="only these fault classes and hard negatives (plus the clean customer): measuring new "
                   "detectors need not rerun every class")
    p.add_argument("--max-in-flight", type=int, default=6, help="conversations in flight (default: 6)")
    p.add_argument("--mixed", action="store_true", help="measure attribution on the mixed set instead: faulty "
                   "agents (faulty-agent:<class>) alone, faulty customers alone, both in one conversation, and "
                   "neither; right side and decisive turn against the replayed behaviours")
    p.add_argument("--per-family", type=int, default=20, help="with --mixed: first N scenarios of each telecom "
                   "family (default: 20)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


if __name__ == "__main__":
    from tauray.pipeline.ray_runtime import loopback_env

    loopback_env()
    raise SystemExit(main())
