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


from tauray.pipeline.output import json_only_stdout, print_figures, print_json  # noqa: E402


# --- scenarios ---------------------------------------------------------------------


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("pattern", nargs="*", help="scenario name globs (default: all)")
    p.add_argument("--domain", help="telecom, airline, retail or mock")
    p.add_argument("--split", help="upstream split: small, base, train, test, full")
    p.add_argument("--variant", help="policy variant: manual, workflow (telecom) or default")
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
    from tauray.scenarios.validate import validate
    from tqdm import tqdm

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


# --- endpoint ------------------------------------------------------------------------


def _endpoint_parser(p: argparse.ArgumentParser) -> None:
    from tauray.actors import endpoint

    endpoint.add_arguments(p)


def cmd_endpoint(args: argparse.Namespace) -> int:
    from tauray.actors import endpoint

    return endpoint.run_from_args(args)


# --- run / demo ------------------------------------------------------------------------


def _model_args(p: argparse.ArgumentParser, role: str, default: str | None) -> None:
    p.add_argument(f"--{role}-model", default=default, required=default is None,
                   help=f"litellm model string for the {role}"
                   + (" or 'oracle' (reference policy)" if role == "agent" else " or 'scripted' (reference policy)"))
    p.add_argument(f"--{role}-api-base", help=f"API base URL for the {role} model")
    p.add_argument(f"--{role}-key-env", help=f"NAME of the environment variable holding the {role} model's key")
    p.add_argument(f"--{role}-temperature", type=float, default=None)
    p.add_argument(f"--{role}-concurrency", type=int, default=None, help="max in-flight calls to this model")
    p.add_argument(f"--{role}-retries", type=int, default=None, help="retries of a failed call (litellm Router)")
    p.add_argument(f"--{role}-timeout", type=float, default=None, help="seconds per call before it counts as failed")
    p.add_argument(f"--{role}-max-tokens", type=int, default=None, help="cap on completion tokens per call")
    if role == "agent":
        p.add_argument("--agent-reference-steps", action="store_true", default=None,
                       help="append the scenario's reference actions to the agent's system prompt (an upper "
                       "bound: how well the model executes a known plan)")
    p.add_argument(f"--{role}-param", action="append", default=[], metavar="KEY=VALUE",
                   help=f"extra litellm parameter for the {role} model (repeatable; VALUE is read as JSON when "
                   "it parses, else as text), e.g. top_p=0.9 or reasoning_effort=low")


def _params(pairs: list[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict; values that parse as JSON (numbers, booleans, objects) are typed."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag}: expected KEY=VALUE, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        params[key.strip()] = value
    return params


def add_probe_argument(p: argparse.ArgumentParser) -> None:
    """``--no-probe``, shared by the commands that call models."""
    p.add_argument("--no-probe", action="store_true",
                   help="skip the one real call per distinct model made before any work starts")


def _model_spec(args: argparse.Namespace, role: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"model": getattr(args, f"{role}_model")}
    for flag, field in (("api_base", "api_base"), ("key_env", "api_key_env"), ("temperature", "temperature"),
                        ("concurrency", "concurrency"), ("retries", "num_retries"), ("timeout", "timeout"),
                        ("max_tokens", "max_tokens")):
        value = getattr(args, f"{role}_{flag}")
        if value is not None:
            spec[field] = value
    if getattr(args, f"{role}_reference_steps", None):
        spec["reference_steps"] = True
    extra = _params(getattr(args, f"{role}_param", None) or [], f"--{role}-param")
    if extra:
        spec["extra_params"] = extra
    return spec


def probe_run_models(agent: dict[str, Any], user: dict[str, Any], seed: int | None) -> None:
    """The probe of ``tauray run``: before any run directory or row exists."""
    from tauray.actors.llm.probe import probe_models

    from tauray.actors.serving.lifecycle import unserved

    probe_models(unserved({"agent": agent, "user": user}), seed=seed,  # served ones: once deployed
                 notes=lambda line: print(line, file=sys.stderr))


def _print_summary(summary: Any) -> None:
    s = summary
    print(f"run {s.run_id}: {s.conversations} conversations in {s.seconds:.1f} s "
          f"({s.conversations_per_second:.1f}/s)")
    print(f"  agent {s.agent_model} | user {s.user_model}")
    print(f"  success {s.success}  failed {s.failed}  unscored {s.unscored}  "
          f"infra errors {s.infra_errors}  model errors {s.model_errors}  internal errors {s.internal_errors}")
    print("  terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(s.by_termination.items())))
    if s.actor_retries:
        print(f"  {s.actor_retries} conversations rerun on fresh actors after an actor died "
              f"({s.actor_generations} sets of actors)")
    print(f"  tables: {s.out}  (pandas.read_parquet('{s.out}/conversations'))")


def _run(cfg_kwargs: dict[str, Any], as_json: bool) -> int:
    from tauray.pipeline.run import RunConfig, execute

    cfg = RunConfig(**cfg_kwargs)
    summary = execute(cfg, progress=not as_json and sys.stderr.isatty())
    if as_json:
        print_json(summary.model_dump())
    else:
        _print_summary(summary)
    return 0 if summary.infra_errors + summary.internal_errors == 0 else 1


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    kwargs: dict[str, Any] = dict(
        patterns=args.pattern, domain=args.domain, split=args.split, variant=args.variant,
        agent=_model_spec(args, "agent"), user=_model_spec(args, "user"), trials=args.trials,
        concurrency=args.concurrency, max_steps=args.max_steps, max_errors=args.max_errors, seed=args.seed,
        address=args.address, agent_hosts=args.agent_hosts, user_hosts=args.user_hosts,
        coordinators=args.coordinators, max_attempts=args.max_attempts,
    )
    if args.run_id:
        kwargs["run_id"] = args.run_id
    from tauray.pipeline.run import RunConfig

    run_id = kwargs.get("run_id") or RunConfig.model_fields["run_id"].default_factory()
    kwargs["run_id"] = run_id
    kwargs["out"] = Path(args.out) if args.out else Path("runs") / run_id
    if not args.no_probe:
        probe_run_models(kwargs["agent"], kwargs["user"], args.seed)
    return _run(kwargs, args.json)


def cmd_demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tauray.pipeline.run import RunConfig

    run_id = "demo-" + RunConfig.model_fields["run_id"].default_factory()
    out = Path(args.out) if args.out else Path("runs") / run_id
    from tauray.scenarios.conventions import ORACLE, SCRIPTED

    kwargs = dict(domain="telecom", split=args.split, agent={"model": ORACLE}, user={"model": SCRIPTED},
                  concurrency=args.concurrency, out=out, run_id=run_id)
    if not args.json:
        print(f"tauray demo: oracle agent + scripted user (reference policies, no model needed) on the telecom "
              f"'{args.split}' split, manual and workflow policies", flush=True)
    from tauray.pipeline.run import execute

    summary = execute(RunConfig(**kwargs), progress=not args.json and sys.stderr.isatty())
    if args.json:
        print_json({**summary.model_dump(), "out": str(out)})
    else:
        _print_summary(summary)
        _print_demo_table(out)
    return 0 if summary.success == summary.conversations else 1


def _print_demo_table(out: Any) -> None:
    from tauray.results import conversations_df

    df = conversations_df(out)
    if df.empty:
        return
    table = df.groupby(["policy_variant", "issue_type"]).agg(
        conversations=("conversation_id", "count"), success=("success", "sum"),
        mean_turns=("turns", "mean"), tool_calls=("agent_tool_calls", "sum"), syncs=("sync_events", "sum"))
    print()
    print(table.to_string())


# --- bench ---------------------------------------------------------------------------


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.engine import run_engine_bench

    result = run_engine_bench(latency=args.latency, concurrency=args.concurrency,
                              conversations=args.conversations, baseline_processes=args.baseline_processes,
                              progress=not args.json and sys.stderr.isatty())
    print_figures(result, args.json)
    ok = (result.lost == 0 and result.duplicated == 0 and result.requests_match and result.syncs_per_conversation > 0
          and result.baseline_calls == result.llm_calls)
    return 0 if ok else 1


def cmd_bench_judge(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.judge import run_judge_bench

    print_figures(run_judge_bench(latency=args.latency, concurrency=args.concurrency,
                                  conversations=args.conversations), args.json)
    return 0


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

    p = sub.add_parser("run", help="run conversations: scenarios x trials for one agent and one user model")
    _selection_args(p)
    _model_args(p, "agent", None)
    _model_args(p, "user", None)
    p.add_argument("--trials", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=64, help="conversations in flight")
    p.add_argument("--max-steps", type=int, default=100)
    p.add_argument("--max-errors", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="run directory (default runs/RUN_ID)")
    p.add_argument("--run-id")
    p.add_argument("--address", help="Ray address to join (default: local Ray on 127.0.0.1)")
    p.add_argument("--agent-hosts", type=int, default=1,
                   help="agent host actors (each a process; more spread model-call work over cores)")
    p.add_argument("--user-hosts", type=int, default=1, help="user-simulator host actors")
    p.add_argument("--coordinators", type=int, default=1, help="coordinator actors (work goes to the least loaded)")
    p.add_argument("--max-attempts", type=int, default=3,
                   help="tries per conversation when an actor dies under it (then an infra row)")
    add_probe_argument(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="offline demo: reference policies on the telecom base split, both variants")
    p.add_argument("--split", default="base")
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--out", help="run directory (default runs/demo-RUN_ID)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)

    bench = sub.add_parser("bench", help="benchmarks that print their figures")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    p = bench_sub.add_parser("engine", help="engine throughput against the latency-bound ideal")
    p.add_argument("--latency", type=float, default=1.0, help="endpoint latency per model call, seconds")
    p.add_argument("--concurrency", type=int, default=128, help="conversations in flight")
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--baseline-processes", type=int, default=2,
                   help="processes the bare-litellm replay spreads the conversations over (the engine calls "
                   "models from an agent host and a user host)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_engine)
    p = bench_sub.add_parser("judge", help="re-judging throughput against the latency-bound ideal")
    p.add_argument("--latency", type=float, default=2.0)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--conversations", type=int, default=500)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_judge)

    from tauray.pipeline.cli.judge import register as register_judge
    from tauray.pipeline.cli.report import register as register_report
    from tauray.pipeline.cli.sweep import register as register_sweep
    from tauray.pipeline.cli.sweep import register_bench as register_sweep_benches

    register_sweep(sub)
    register_sweep_benches(bench_sub)
    register_judge(sub)
    register_report(sub)
    from tauray.results.compact import register as register_compact

    register_compact(sub)

    p = sub.add_parser("endpoint", help="serve the local OpenAI-compatible test endpoint")
    _endpoint_parser(p)
    p.set_defaults(func=cmd_endpoint)
    return parser


def main(argv: list[str] | None = None) -> int:
    from tauray.scenarios.loader import ScenarioLoadError
    from tauray.scenarios.registry import UnknownScenarioError
    from tauray.results.lock import RunLockedError
    from tauray.scenarios.upstream import UpstreamError

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        with json_only_stdout(bool(getattr(args, "json", False))):
            return func(args)
    except (UnknownScenarioError, ScenarioLoadError, UpstreamError, ValueError, RunLockedError) as exc:
        print(f"tauray: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tauray: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
