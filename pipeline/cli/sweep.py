"""Command line of sweeps and their benchmarks.

``register(subparsers)`` adds ``tauray sweep``; ``register_bench(bench_subparsers)``
adds ``tauray bench vs-tau2`` and ``tauray bench memory`` under an existing
``bench`` command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauray.pipeline.output import json_only_stdout, print_figures, print_json


def _print_summary(s: Any) -> None:
    print(f"sweep {s.sweep_id}: {s.units} units ({s.cells} cells × {s.scenarios} scenarios × trials) -> {s.out}")
    print(f"  this run: ran {s.ran}, skipped {s.skipped} already done, retried {s.retried_errors} infra rows, "
          f"{s.actor_retries} actor retries, {s.seconds:.1f}s ({s.conversations_per_second}/s)")
    if s.budget_reached:
        print(f"  budget ${s.budget_usd} reached: {s.not_submitted} units not submitted")
    cost = "n/a" if s.cost_usd is None else f"${s.cost_usd:.4f}"
    print(f"  tables: {s.rows} rows, success {s.success}, failed {s.failed}, unscored {s.unscored}, "
          f"infra {s.infra_errors}, model {s.model_errors}, internal {s.internal_errors}; "
          f"tokens {s.prompt_tokens}+{s.completion_tokens}, cost {cost}")
    print(f"  {'model':<24} {'conv':>6} {'agent':>6} {'user':>6} {'judge':>6} {'prompt_tok':>11} {'compl_tok':>10} "
          f"{'cost_usd':>10}")
    for name, m in s.per_model.items():
        c = "n/a" if m.cost_usd is None else f"{m.cost_usd:.4f}"
        print(f"  {name:<24} {m.conversations:>6} {m.as_agent:>6} {m.as_user:>6} {m.as_judge:>6} {m.prompt_tokens:>11} "
              f"{m.completion_tokens:>10} {c:>10}")
    print(f"  {'cell':<14} {'agent':<28} {'user':<30} {'done':>5} {'ok':>5} {'fail':>5} {'infra':>5} {'cost_usd':>10}")
    for c in s.per_cell:
        cost = "n/a" if c["cost_usd"] is None else f"{c['cost_usd']:.4f}"
        print(f"  {c['cell_id']:<14} {c['agent_model'][:28]:<28} {c['user_model'][:30]:<30} {c['done']:>5} "
              f"{c['success']:>5} {c['failed']:>5} {c['infra_errors']:>5} {cost:>10}")


def cmd_sweep(args: argparse.Namespace) -> int:
    from tauray.actors.llm import ModelConfigError
    from tauray.pipeline.sweep import SweepFileError
    from tauray.pipeline.sweep_run import SweepError, run_sweep

    try:
        summary = run_sweep(args.file, out=args.out, address=args.address, resume=args.resume,
                            retry_errors=args.retry_errors, progress=None if not args.no_progress else False,
                            probe=not args.no_probe)
    except (SweepFileError, SweepError, ModelConfigError) as exc:  # config: e.g. a key missing on a worker
        print(f"tauray sweep: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print_json(summary.model_dump(mode="json"), indent=1)
    else:
        _print_summary(summary)
    return 0


def register(subparsers: Any) -> None:
    """Add ``tauray sweep`` to the top-level sub-commands."""
    p = subparsers.add_parser("sweep", help="run a sweep file (models × judges × scenarios × trials), resumably")
    p.add_argument("file", help="sweep file (.toml, .yaml or .yml)")
    p.add_argument("--address", default=None, help="Ray cluster to join (default: RAY_ADDRESS, else local Ray)")
    p.add_argument("--out", default=None, help="run directory (default runs/<sweep name>)")
    p.add_argument("--resume", action="store_true", help="continue in an out dir that holds results: skip done units")
    p.add_argument("--retry-errors", action="store_true", help="resume and rerun units whose newest row is an infra or internal error")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the one real call per distinct model made before any work starts")
    p.set_defaults(func=cmd_sweep)


def cmd_bench_vs_tau2(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.vs_tau2 import run_tau2_bench

    kwargs: dict[str, Any] = {"tasks": args.tasks, "latency": args.latency, "waves": args.waves, "hosts": args.hosts}
    for name in ("equal", "tau2_candidates", "tauray_candidates"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    print_figures(run_tau2_bench(**kwargs), args.json)
    return 0


def cmd_bench_memory(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.memory import run_memory_bench

    print_figures(run_memory_bench(small=args.small, large=args.large), args.json)
    return 0


def _int_tuple(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def register_bench(bench_subparsers: Any) -> None:
    """Add ``vs-tau2`` and ``memory`` under ``tauray bench``."""
    p = bench_subparsers.add_parser("vs-tau2", help="tauray vs upstream `tau2 run` on the same telecom tasks")
    p.add_argument("--tasks", type=int, default=None, help="telecom tasks (default: sized for a few minutes)")
    p.add_argument("--latency", type=float, default=None, help="endpoint latency in seconds (default 3)")
    p.add_argument("--equal", type=int, default=None, help="the concurrency both run at (default 128)")
    p.add_argument("--tau2-candidates", type=_int_tuple, default=None, metavar="C,C,...",
                   help="concurrencies tried for tau2 (default 32,64,128; at 192 and more its threads broke or hung here)")
    p.add_argument("--tauray-candidates", type=_int_tuple, default=None, metavar="C,C,...",
                   help="concurrencies tried for tauray (default 128,256,384)")
    p.add_argument("--waves", type=int, default=2, help="conversations per run = waves × concurrency (default 2)")
    p.add_argument("--hosts", type=int, default=2, help="tauray agent hosts and user hosts (each)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_vs_tau2)
    p = bench_subparsers.add_parser("memory", help="driver peak RSS: a large sweep vs a 10x smaller one")
    p.add_argument("--small", type=int, default=1000, help="units of the small sweep")
    p.add_argument("--large", type=int, default=10000, help="units of the large sweep")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_memory)
    from tauray.pipeline.bench.tau2_profile import register as register_tau2_profile

    register_tau2_profile(bench_subparsers)


def main(argv: list[str] | None = None) -> int:
    """``python -m tauray.pipeline.cli.sweep FILE …``: the same as ``tauray sweep``."""
    from tauray.pipeline.ray_runtime import loopback_env

    loopback_env()
    parser = argparse.ArgumentParser(prog="tauray")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    bench = sub.add_parser("bench")
    register_bench(bench.add_subparsers(dest="bench_command", required=True))
    args = parser.parse_args(argv)
    with json_only_stdout(bool(getattr(args, "json", False))):
        return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
