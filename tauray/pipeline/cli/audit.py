"""``tauray audit RUN_OR_SWEEP``: audit stored runs for user-simulator faults (nothing is
re-run) and write the ``sim_findings`` and ``sim_attributions`` tables next to the run's.
How far the audit's findings can be trusted is measured outside the package, on faulty
customers and agents (``python -m dev.calibration``, docs/audit.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauray.pipeline.output import print_figures, print_json


def cmd_audit(args: argparse.Namespace) -> int:
    from tauray.actors.audit import audit_path

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
        from tauray.actors.audit.judge_tier import audit_checks_of

        audit_checks_of(configs)  # refuse what cannot be audited with before any call
        self.configs, self.use_ray, self.concurrency = configs, use_ray, concurrency
        self.progress, self.probe = progress, probe
        self.judge: Any = None

    @property
    def labels(self) -> list[str]:
        return [f"{c.prompt}:{c.model.model}" for c in self.configs]

    def _run(self, items: list[Any]) -> list[Any]:
        import asyncio

        from tqdm import tqdm

        from tauray.actors.llm import close_clients
        from tauray.pipeline.judging import run_items

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
        from tauray.actors.audit.judge_tier import judge_findings
        from tauray.actors.judge import JudgeHost, judge_actor_class
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
    from tauray.actors.audit.judge_tier import audit_judge_configs
    from tauray.pipeline.cli.flags import given
    from tauray.pipeline.cli.judge import JUDGE_MODEL_FIELDS

    options = given(args, JUDGE_MODEL_FIELDS, prefix="judge")
    configs = audit_judge_configs([{"model": m, **options} for m in args.judge], args.judge_prompt or None,
                                  samples=args.judge_samples)
    return AuditJudge(configs, use_ray=args.ray, concurrency=args.concurrency or 16,
                      progress=not args.json and sys.stderr.isatty(), probe=args.probe is not False)


def _print_tables(path: str) -> None:
    import pandas as pd

    from tauray.actors.audit.summary import adjusted_success, faults_per_100, ranking

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


def register(sub: Any) -> None:
    """Add ``audit``."""
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

