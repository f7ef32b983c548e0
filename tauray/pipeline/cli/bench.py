"""``tauray bench …``: benchmarks a user runs on their own setup, printing their figures (one
module each in :mod:`tauray.pipeline.bench`). What measures tauray against its own floors and
against τ²'s runner is ``python -m dev.bench`` in a checkout (docs/benchmarks.md)."""

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
                              audit=not args.no_audit)
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


def _workers(text: str) -> tuple[int, ...]:
    return () if text.strip().lower() == "none" else _int_tuple(text)


def cmd_bench_voice(args: argparse.Namespace) -> int:
    from tauray.actors.voice.errors import SpeechConfigError
    from tauray.pipeline.bench.voice import run_voice_bench

    try:
        result = run_voice_bench(utterances=args.utterances, workers=args.workers, turns=args.turns,
                                 tts=tuple(args.tts.split(",")), asr=tuple(args.asr.split(",")),
                                 decodings=tuple(args.decoding.split(",")), accuracy_utterances=args.accuracy,
                                 profiles=tuple(args.profiles.split(",")), seed=args.seed,
                                 voices=tuple(v for v in args.voices.split(",") if v))
    except SpeechConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_figures(result, args.json)
    return 0


def cmd_bench_duplex(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.duplex import run_duplex_bench

    result = run_duplex_bench(conversations=args.conversations, in_flight=args.in_flight)
    print_figures(result, args.json)
    return 0 if result["half"]["errors"] == 0 and result["duplex"]["errors"] == 0 else 1


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
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_engine)
    p = bench_sub.add_parser("duplex", help="the duplex clock's harness cost against half duplex (tone voice)")
    p.add_argument("--conversations", type=int, default=10, help="telecom tasks, each run half and duplex")
    p.add_argument("--in-flight", type=_int_tuple, default=(1, 4), metavar="N,N",
                   help="duplex conversations in flight to measure (default 1,4)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_duplex)
    p = bench_sub.add_parser("judge", help="re-judging throughput against the latency-bound ideal")
    p.add_argument("--latency", type=float, default=2.0)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_judge)
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
    p = bench_sub.add_parser("voice", help="speech channel: real-time factors, speech cost per conversation, "
                             "throughput per speech worker, WER and identifier errors per profile")
    p.add_argument("--utterances", type=int, default=6, help="caller utterances timed per measurement (default 6)")
    p.add_argument("--workers", type=_workers, default=(1, 2), metavar="N,N,...",
                   help="speech worker counts whose throughput is measured (default 1,2; 'none': no throughput)")
    p.add_argument("--turns", type=int, default=20, help="utterances in the conversation costed (default 20)")
    p.add_argument("--tts", default="local/neural", metavar="MODEL,...",
                   help="synthesiser (default local/neural); several, comma-separated, for --accuracy")
    p.add_argument("--asr", default="local/whisper-tiny.en", metavar="MODEL,...",
                   help="recogniser (default local/whisper-tiny.en); several, comma-separated, for --accuracy")
    p.add_argument("--decoding", default="default", metavar="NAME,...",
                   help="a local recogniser's decoding for --accuracy: default (beam 5 and the domain prompt), "
                   "greedy, beam, greedy+prompt, vad; several, comma-separated")
    p.add_argument("--accuracy", type=int, default=0, metavar="N",
                   help="also measure WER and identifier errors on N telecom caller utterances per profile")
    p.add_argument("--profiles", default="control,regular", help="profiles of --accuracy (comma-separated)")
    p.add_argument("--seed", type=int, default=2027,  # CORPUS_SEED (tauray/actors/voice/corpus.py)
                   help="seed of the --accuracy utterances' draw (default 2027, the frozen corpus)")
    p.add_argument("--voices", default="", metavar="VOICE,...",
                   help="with --accuracy: also per caller voice of the first --tts, e.g. piper/joe,hibari/heart "
                   "(control, first --asr and --decoding)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_voice)
