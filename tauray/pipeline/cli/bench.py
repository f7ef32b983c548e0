"""``tauray bench …``: benchmarks that print their figures (one module each in
:mod:`tauray.pipeline.bench`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tauray.pipeline.output import print_figures


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.engine import run_engine_bench

    result = run_engine_bench(latency=args.latency, concurrency=args.concurrency,
                              conversations=args.conversations, baseline_processes=args.baseline_processes,
                              progress=not args.json and sys.stderr.isatty(), domain=args.domain,
                              audit=not args.no_audit, floor=not args.no_floor)
    print_figures(result, args.json)
    ok = (result.lost == 0 and result.duplicated == 0 and result.requests_match
          and (result.syncs_per_conversation > 0 or result.domain != "telecom")
          and result.baseline_calls == result.llm_calls)
    return 0 if ok else 1


def cmd_bench_judge(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.judge import run_judge_bench

    print_figures(run_judge_bench(latency=args.latency, concurrency=args.concurrency,
                                  conversations=args.conversations), args.json)
    return 0


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


def cmd_bench_quota(args: argparse.Namespace) -> int:
    from tauray.endpoint.launcher import _yes_no
    from tauray.pipeline.bench.quota import run_quota_bench

    result = run_quota_bench(rpm=args.rpm, tpm=args.tpm, conversations=args.conversations, latency=args.latency,
                             retry_after=_yes_no(args.retry_after), hosts=args.hosts, coordinators=args.coordinators,
                             domain=args.domain, progress=not args.json and sys.stderr.isatty(),
                             log_file=Path(args.log) if args.log else None, max_tokens=args.max_tokens,
                             accounting=args.accounting, declared=_yes_no(args.declared),
                             headers=_yes_no(args.headers))
    print_figures(result, args.json)
    within = all((result.get(k) or 0) <= 1.02 for k in ("max_window_rpm_ratio", "max_window_tpm_ratio"))
    return 0 if within and result["lost"] == 0 and result["infra_rows"] == 0 else 1


def _int_tuple(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def cmd_bench_tau2_profile(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.tau2_profile import run_tau2_profile

    print_figures(run_tau2_profile(concurrency=args.concurrency, tasks=args.tasks, waves=args.waves,
                                   latency=args.latency, rate=args.rate, py_spy=args.py_spy,
                                   keep=Path(args.keep) if args.keep else None), args.json)
    return 0


def _workers(text: str) -> tuple[int, ...]:
    return () if text.strip().lower() == "none" else _int_tuple(text)


def cmd_bench_voice(args: argparse.Namespace) -> int:
    from tauray.actors.speech.errors import SpeechConfigError
    from tauray.pipeline.bench.voice import run_voice_bench

    try:
        result = run_voice_bench(utterances=args.utterances, workers=args.workers, turns=args.turns,
                                 asr=tuple(args.asr.split(",")), accuracy_utterances=args.accuracy,
                                 profiles=tuple(args.profiles.split(",")), seed=args.seed,
                                 voices=tuple(v for v in args.voices.split(",") if v), conversations=args.conversations)
        if args.paced:
            from tauray.pipeline.bench.voice_paced import paced_coordinator_cpu

            result["paced_coordinator"] = paced_coordinator_cpu(args.paced, rounds=args.paced_rounds,
                                                                asr=tuple(args.asr.split(","))[0])
    except SpeechConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_figures(result, args.json)
    return 0


def register(sub: Any) -> None:
    """Add ``bench`` and its benchmarks."""
    bench = sub.add_parser("bench", help="benchmarks that print their figures")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    p = bench_sub.add_parser("engine", help="engine throughput against the latency-bound ideal")
    p.add_argument("--latency", type=float, default=1.0, help="endpoint latency per model call, seconds")
    p.add_argument("--concurrency", type=int, default=128, help="conversations in flight")
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--domain", default="telecom", choices=("telecom", "airline", "retail", "mock"),
                   help="domain of the scenarios (default telecom, where both sides write and sync)")
    p.add_argument("--baseline-processes", type=int, default=2,
                   help="processes the bare-litellm replay spreads the conversations over (the engine calls "
                   "models from an agent host and a user host)")
    p.add_argument("--no-audit", action="store_true",
                   help="run the conversations without the in-loop audit (to measure what the audit costs)")
    p.add_argument("--no-floor", action="store_true",
                   help="skip the Ray floor (the same requests by bare litellm inside Ray actors, one actor call "
                   "per model call: what Ray costs before tauray does anything)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_engine)
    p = bench_sub.add_parser("judge", help="re-judging throughput against the latency-bound ideal")
    p.add_argument("--latency", type=float, default=2.0)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_judge)
    p = bench_sub.add_parser("vs-tau2", help="tauray vs upstream `tau2 run` on the same telecom tasks")
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
    p = bench_sub.add_parser("memory", help="driver peak RSS: a large sweep vs a 10x smaller one")
    p.add_argument("--small", type=int, default=1000, help="units of the small sweep")
    p.add_argument("--large", type=int, default=10000, help="units of the large sweep")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_memory)
    p = bench_sub.add_parser("quota", help="a sweep against a provider-like quota: overshoot, utilisation, 429s")
    p.add_argument("--rpm", type=int, default=240, help="the endpoint's and the model's requests per minute")
    p.add_argument("--tpm", type=int, default=40000, help="the endpoint's and the model's tokens per minute")
    p.add_argument("--conversations", type=int, default=45, help="about 5 minutes at the default quota")
    p.add_argument("--latency", type=float, default=0.5, help="endpoint latency per call, seconds")
    p.add_argument("--retry-after", default="yes", metavar="yes|no", help="whether the endpoint's 429s carry retry-after")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="the model spec's max_tokens, sent with every call (default: none)")
    p.add_argument("--accounting", default="settled", choices=("settled", "upfront"),
                   help="how the endpoint counts max_tokens: settled refunds what a reply did not use, upfront "
                   "keeps prompt + max_tokens charged as OpenAI does (default settled)")
    p.add_argument("--declared", default="yes", metavar="yes|no",
                   help="whether the model spec declares the quota (no: tauray learns it from the endpoint's "
                   "x-ratelimit-* headers)")
    p.add_argument("--headers", default="yes", metavar="yes|no",
                   help="whether the endpoint's answers carry x-ratelimit-* headers")
    p.add_argument("--hosts", type=int, default=2, help="agent hosts and user hosts (each)")
    p.add_argument("--coordinators", type=int, default=2)
    p.add_argument("--domain", default="mock", choices=("telecom", "airline", "retail", "mock"))
    p.add_argument("--log", default=None, metavar="FILE", help="also write the endpoint's log of every arrival (JSON lines)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_quota)
    p = bench_sub.add_parser("tau2-profile", help="where upstream `tau2 run` spends its GIL (py-spy)")
    p.add_argument("--concurrency", type=int, default=128, help="tau2 --max-concurrency (default 128)")
    p.add_argument("--tasks", type=int, default=64, help="telecom base tasks (default 64)")
    p.add_argument("--waves", type=int, default=3, help="simulations = waves × concurrency (default 3)")
    p.add_argument("--latency", type=float, default=3.0, help="endpoint latency in seconds (default 3)")
    p.add_argument("--rate", type=int, default=100, help="py-spy samples per second (default 100)")
    p.add_argument("--py-spy", default=None, help="path of the py-spy binary (default: on PATH)")
    p.add_argument("--keep", default=None, metavar="FILE", help="also write py-spy's folded stacks to FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_tau2_profile)
    p = bench_sub.add_parser("voice", help="speech channel: real-time factors, speech cost per conversation, "
                             "throughput per speech worker, WER and identifier errors per profile")
    p.add_argument("--utterances", type=int, default=6, help="caller utterances timed per measurement (default 6)")
    p.add_argument("--workers", type=_workers, default=(1, 2), metavar="N,N,...",
                   help="speech worker counts whose throughput is measured (default 1,2; 'none': no throughput)")
    p.add_argument("--turns", type=int, default=20, help="utterances in the conversation costed (default 20)")
    p.add_argument("--asr", default="local/whisper-tiny.en", metavar="MODEL,...",
                   help="recogniser (default local/whisper-tiny.en); several, comma-separated, for --accuracy")
    p.add_argument("--accuracy", type=int, default=0, metavar="N",
                   help="also measure WER and identifier errors on N telecom caller utterances per profile")
    p.add_argument("--profiles", default="control,regular", help="profiles of --accuracy (comma-separated)")
    p.add_argument("--seed", type=int, default=2026, help="seed of the --accuracy utterances' draw (default 2026)")
    p.add_argument("--voices", default="", metavar="VOICE,...",
                   help="with --accuracy: also per caller voice, e.g. en-us+f2,en-us+m7 (control, first --asr)")
    p.add_argument("--conversations", type=int, default=0, metavar="N",
                   help="also the coordinator's CPU per conversation, voice (control) vs text, and the speech cost "
                   "per conversation, on N telecom tasks with the reference policies on Ray")
    p.add_argument("--paced", type=int, default=0, metavar="N",
                   help="also the coordinator's CPU per conversation, voice (control) vs text, on the same "
                   "conversations at the same pace: the endpoint's writing pair on N telecom tasks, each text run's "
                   "latency set so it lasts as long as the voice run before it; and the same voice conversations "
                   "with their speech replayed at once against text, both at one latency")
    p.add_argument("--paced-rounds", type=int, default=2, metavar="R",
                   help="rounds of --paced, each a voice, a paced text, a replayed voice and a text run (default 2)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_voice)
