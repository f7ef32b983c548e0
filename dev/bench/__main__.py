"""``python -m dev.bench …``: what measures tauray itself, from a checkout (``make bench-…``,
docs/benchmarks.md). Each prints its figures as ``tauray bench`` does (``--json``: one document).

* ``engine-floor``: ``tauray bench engine`` with the Ray floor and the bytes per conversation;
* ``coordinator``: what voice costs the coordinators against text (``--paced``: at the same pace
  and the same timing too);
* ``vs-tau2``: tauray against upstream τ²'s own runner, like for like;
* ``tau2-profile``: where τ²'s runner spends its core (py-spy);
* ``memory``: the driver's peak RSS on a large sweep against a 10× smaller one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tauray.pipeline.cli.bench import _int_tuple
from tauray.pipeline.output import print_figures


def cmd_engine_floor(args: argparse.Namespace) -> int:
    from dev.bench.engine_floor import run_engine_floor_bench

    print_figures(run_engine_floor_bench(latency=args.latency, concurrency=args.concurrency,
                                         conversations=args.conversations, domain=args.domain,
                                         progress=not args.json and sys.stderr.isatty()), args.json)
    return 0


def cmd_coordinator(args: argparse.Namespace) -> int:
    from dev.bench.coordinator import coordinator_cpu

    result: dict[str, Any] = {"coordinator": coordinator_cpu(args.conversations, asr=args.asr)}
    if args.paced:
        from dev.bench.voice_paced import paced_coordinator_cpu

        result["paced_coordinator"] = paced_coordinator_cpu(args.paced, rounds=args.paced_rounds, asr=args.asr)
    print_figures(result, args.json)
    return 0


def cmd_vs_tau2(args: argparse.Namespace) -> int:
    from dev.bench.vs_tau2 import run_tau2_bench

    kwargs: dict[str, Any] = {"tasks": args.tasks, "latency": args.latency, "waves": args.waves, "hosts": args.hosts}
    for name in ("equal", "tau2_candidates", "tauray_candidates"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    print_figures(run_tau2_bench(**kwargs), args.json)
    return 0


def cmd_tau2_profile(args: argparse.Namespace) -> int:
    from dev.bench.tau2_profile import run_tau2_profile

    print_figures(run_tau2_profile(concurrency=args.concurrency, tasks=args.tasks, waves=args.waves,
                                   latency=args.latency, rate=args.rate, py_spy=args.py_spy,
                                   keep=Path(args.keep) if args.keep else None), args.json)
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    from dev.bench.memory import run_memory_bench

    print_figures(run_memory_bench(small=args.small, large=args.large), args.json)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m dev.bench", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="bench", required=True)
    p = sub.add_parser("engine-floor", help="tauray bench engine, with the Ray floor and bytes per conversation")
    p.add_argument("--latency", type=float, default=1.0, help="endpoint latency per model call, seconds")
    p.add_argument("--concurrency", type=int, default=128, help="conversations in flight")
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--domain", default="telecom", choices=("telecom", "airline", "retail", "mock"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_engine_floor)
    p = sub.add_parser("coordinator", help="the coordinators' CPU per conversation, voice (control) vs text")
    p.add_argument("--conversations", type=int, default=24, metavar="N",
                   help="telecom tasks with the reference policies on Ray (default 24)")
    p.add_argument("--asr", default="local/whisper-tiny.en", help="recogniser (default local/whisper-tiny.en)")
    p.add_argument("--paced", type=int, default=0, metavar="N",
                   help="also on the same conversations at the same pace: the endpoint's writing pair on N telecom "
                   "tasks, each text run's latency set so it lasts as long as the voice run before it; and the same "
                   "voice conversations with their speech replayed at once against text, both at one latency")
    p.add_argument("--paced-rounds", type=int, default=2, metavar="R",
                   help="rounds of --paced, each a voice, a paced text, a replayed voice and a text run (default 2)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_coordinator)
    p = sub.add_parser("vs-tau2", help="tauray vs upstream `tau2 run` on the same telecom tasks")
    p.add_argument("--tasks", type=int, default=None, help="telecom tasks (default: sized for a few minutes)")
    p.add_argument("--latency", type=float, default=None, help="endpoint latency in seconds (default 3)")
    p.add_argument("--equal", type=int, default=None, help="the concurrency both run at (default 128)")
    p.add_argument("--tau2-candidates", type=_int_tuple, default=None, metavar="C,C,...",
                   help="concurrencies tried for tau2 (default 32,64,128; at 192 and more its threads broke or hung)")
    p.add_argument("--tauray-candidates", type=_int_tuple, default=None, metavar="C,C,...",
                   help="concurrencies tried for tauray (default 128,256,384)")
    p.add_argument("--waves", type=int, default=2, help="conversations per run = waves × concurrency (default 2)")
    p.add_argument("--hosts", type=int, default=2, help="tauray agent hosts and user hosts (each)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_vs_tau2)
    p = sub.add_parser("tau2-profile", help="where upstream `tau2 run` spends its GIL (py-spy)")
    p.add_argument("--concurrency", type=int, default=128, help="tau2 --max-concurrency (default 128)")
    p.add_argument("--tasks", type=int, default=64, help="telecom base tasks (default 64)")
    p.add_argument("--waves", type=int, default=3, help="simulations = waves × concurrency (default 3)")
    p.add_argument("--latency", type=float, default=3.0, help="endpoint latency in seconds (default 3)")
    p.add_argument("--rate", type=int, default=100, help="py-spy samples per second (default 100)")
    p.add_argument("--py-spy", default=None, help="path of the py-spy binary (default: on PATH)")
    p.add_argument("--keep", default=None, metavar="FILE", help="also write py-spy's folded stacks to FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tau2_profile)
    p = sub.add_parser("memory", help="driver peak RSS: a large sweep vs a 10x smaller one")
    p.add_argument("--small", type=int, default=1000, help="units of the small sweep")
    p.add_argument("--large", type=int, default=10000, help="units of the large sweep")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_memory)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    from tauray.pipeline.ray_runtime import loopback_env

    loopback_env()
    raise SystemExit(main())
