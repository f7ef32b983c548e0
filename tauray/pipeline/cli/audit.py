"""``tauray audit RUN_OR_SWEEP``: audit stored runs for user-simulator faults (nothing is
re-run) and write the ``sim_findings`` and ``sim_attributions`` tables next to the run's;
``tauray audit-calibrate DIR``: measure the detectors on the calibration sweep (faulty
endpoint customers, clean ones and hard negatives), running it first when asked;
``tauray audit-calibrate DIR --mixed``: measure attribution on the mixed set (faulty agents,
faulty customers, both, neither)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tauray.pipeline.output import print_figures, print_json


def cmd_audit(args: argparse.Namespace) -> int:
    from tauray.results.audit import audit_path

    judge = _judge_tier(args)
    try:
        summary, audits = audit_path(args.path, write=not args.no_write, judge=judge,
                                     judge_labels=judge.labels if judge else None)
    except FileNotFoundError as exc:  # not a run: one line, exit 2 (like every bad input)
        raise ValueError(str(exc)) from None
    if args.json:
        data = summary.model_dump(mode="json")
        data["flagged"] = [{**a.keys, "user_model": a.user_model, "attribution": a.attribution, "reason": a.reason,
                            "findings": [f.model_dump(mode="json") for f in a.findings]}
                           for a in audits if a.findings]
        print_json(data)
        return 0
    print_figures(summary, False)
    shown = [a for a in audits if a.findings][: args.show]
    for a in shown:
        f = a.decisive or a.findings[0]
        print(f"  {a.keys['scenario'][:70]:70} {a.attribution:12} turn {f.turn}: {f.fault_class}: {f.evidence[:100]}")
    if summary.written and summary.conversations:
        _print_tables(args.path)
    return 0


class AuditJudge:
    """The audit's judge tier run as ``tauray judge`` runs a judge: its items on an in-process
    judge host or a Ray judge actor, at most ``concurrency`` in flight, every judge model
    probed once first; it hands the audit the findings per conversation and its totals."""

    def __init__(self, configs: list[Any], use_ray: bool = False, concurrency: int = 16, progress: bool = False,
                 probe: bool = True) -> None:
        from tauray.actors.judge.audit_tier import audit_checks_of

        audit_checks_of(configs)  # refuse what cannot be audited with before any call
        self.configs, self.use_ray, self.concurrency = configs, use_ray, concurrency
        self.progress, self.probe = progress, probe
        self.judge: Any = None

    @property
    def labels(self) -> list[str]:
        return [f"{c.prompt}:{c.model.model}" for c in self.configs]

    def _run(self, items: list[Any]) -> list[Any]:
        import asyncio

        from tauray.actors.llm import close_clients
        from tauray.pipeline.judging import run_items
        from tqdm import tqdm

        bar = tqdm(total=len(items), unit="item", desc="audit judge", disable=not self.progress, dynamic_ncols=True)

        async def main() -> list[Any]:
            try:
                return await run_items(items, self.judge, self.concurrency, lambda *_: bar.update(1))
            finally:
                await close_clients()

        try:
            return asyncio.run(main())
        finally:
            bar.close()

    def tier(self, trajectories: list[Any]) -> Any:
        """The judge tier on these conversations (a ``JudgeTierResult``)."""
        from tauray.actors.judge import JudgeHost, judge_actor_class
        from tauray.actors.judge.audit_tier import judge_findings
        from tauray.pipeline.judging import probe_judges

        if self.judge is None:
            if self.probe:
                probe_judges(self.configs)
            if self.use_ray:
                from tauray.pipeline.ray_runtime import connect

                connect()
                self.judge = judge_actor_class().remote()
            else:
                self.judge = JudgeHost()
        return judge_findings(trajectories, self.configs, self._run)

    def __call__(self, trajectories: list[Any]) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
        tier = self.tier(trajectories)
        return [a.findings for a in tier.audits], tier.model_dump(exclude={"audits", "configs"})


def _judge_tier(args: argparse.Namespace) -> AuditJudge | None:
    """The judge tier the flags ask for (None without --judge): every judge model x every
    audit prompt, through the judge layer (docs/audit-judge.md)."""
    if not args.judge:
        if args.judge_prompt:
            raise ValueError("--judge-prompt needs --judge MODEL (the audit judge's model)")
        return None
    from tauray.actors.judge.audit_tier import audit_judge_configs
    from tauray.pipeline.cli.flags import given
    from tauray.pipeline.cli.judge import JUDGE_MODEL_FIELDS

    options = given(args, JUDGE_MODEL_FIELDS, prefix="judge")
    configs = audit_judge_configs([{"model": m, **options} for m in args.judge], args.judge_prompt or None,
                                  samples=args.judge_samples)
    return AuditJudge(configs, use_ray=args.ray, concurrency=args.concurrency or 16,
                      progress=not args.json and sys.stderr.isatty(), probe=args.probe is not False)


def _print_tables(path: str) -> None:
    import pandas as pd
    from tauray.results.audit.summary import adjusted_success, faults_per_100, ranking

    with pd.option_context("display.width", 200, "display.max_columns", 30):
        adjusted = adjusted_success(path)
        print("\nsuccess, raw and with simulator-caused failures set aside:")
        print(adjusted[["agent_model", "user_model", "conversations", "raw_rate", "simulator_failures",
                        "adjusted_rate", "mixed", "undetermined"]].round(3).to_string(index=False))
        print("\nagents ranked, raw and simulator-adjusted (rank_change > 0: moves up):")
        print(ranking(path)[["agent_model", "conversations", "raw_rate", "raw_rank", "adjusted_rate",
                             "adjusted_rank", "rank_change"]].round(3).to_string(index=False))
        print("\nsimulator faults per 100 conversations:")
        print(faults_per_100(path).to_string(index=False))


def _run_sweep(args: argparse.Namespace) -> None:
    """Run (or resume) the calibration sweep (or the mixed set) into ``args.dir``, in this process."""
    from tauray.pipeline.bench import calibration_mixed
    from tauray.pipeline.bench.calibration_sweep import run_calibration_sweep, sweep_config
    from tauray.pipeline.sweep_file import stored_name

    out = Path(args.dir)
    name = stored_name(out) or out.name
    if args.mixed:
        sweep = calibration_mixed.sweep_config(name=name, endpoint=args.endpoint, per_family=args.per_family,
                                               trials=args.trials, split=args.split, telecom_split=args.telecom_split,
                                               max_in_flight=args.max_in_flight)
    else:
        sweep = sweep_config(name=name, endpoint=args.endpoint, split=args.split, telecom_split=args.telecom_split,
                             limit=args.limit, max_in_flight=args.max_in_flight, trials=args.trials,
                             classes=tuple(args.classes) or None)
    print(f"tauray audit-calibrate: running the calibration sweep -> {out}", file=sys.stderr, flush=True)
    run_calibration_sweep(sweep, out)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from tauray.pipeline.bench.calibration import calibrate_path, text_lines

    if args.endpoint:
        _run_sweep(args)
    if args.mixed:
        from tauray.pipeline.bench import calibration_mixed as mixed

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


def register(sub: Any) -> None:
    """Add ``audit`` and ``audit-calibrate``."""
    p = sub.add_parser("audit", help="audit stored runs for user-simulator faults; write sim_findings and "
                       "sim_attributions (nothing is re-run)")
    p.add_argument("path", help="a run directory or a sweep folder")
    p.add_argument("--no-write", action="store_true", help="print only; write no audit tables")
    p.add_argument("--show", type=int, default=20, help="flagged conversations to list (default: 20)")
    p.add_argument("--judge", action="append", default=[], metavar="MODEL",
                   help="also ask this judge model the checks that need judgement (persona, a reasonable stop, "
                   "staying in character; repeatable; docs/audit-judge.md)")
    p.add_argument("--judge-prompt", action="append", default=[], metavar="ID[@VERSION]",
                   help="audit prompt (repeatable, for ablations; default: the latest sim-audit)")
    p.add_argument("--judge-samples", type=int, default=1, help="samples per check; they vote, a tie is unscored")
    from tauray.actors.llm import ModelSpec
    from tauray.pipeline.cli.flags import add_fields
    from tauray.pipeline.cli.judge import JUDGE_MODEL_FIELDS
    from tauray.pipeline.cli.run import MODEL_FLAGS
    from tauray.pipeline.config import DriveOptions

    add_fields(p, ModelSpec, JUDGE_MODEL_FIELDS, prefix="judge", rename=MODEL_FLAGS)
    add_fields(p, ModelSpec, ["concurrency"])
    p.add_argument("--ray", action="store_true", help="judge on a Ray judge actor instead of in this process")
    add_fields(p, DriveOptions, ["probe"])
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("audit-calibrate", help="recall per fault class and false-positive rate of the audit's "
                       "detectors on the calibration sweep (faulty endpoint customers)")
    p.add_argument("dir", help="the calibration sweep's folder (measured as stored; run first with --endpoint)")
    p.add_argument("--endpoint", help="run (or resume) the calibration sweep first against this test endpoint, "
                   "e.g. http://127.0.0.1:8765/v1 (`tauray endpoint --behaviours tests.test_helpers.faulty`, "
                   "from a source checkout)")
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
    p.set_defaults(func=cmd_calibrate)
