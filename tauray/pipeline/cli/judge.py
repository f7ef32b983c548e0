"""``tauray judge`` and ``tauray judge-report``.

``tauray judge RUN_DIR --judge-model M --prompt ID[@VERSION] ...`` judges the
stored conversations of a run under every (model × prompt) combination given
and appends verdict rows; running it again with the same configuration adds
nothing. ``tauray judge --list-prompts`` prints the available prompts, one
``id@version`` per line first thing on the line. ``tauray judge-report RUN_DIR``
prints the meta-evaluation of every judge config stored in the run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauray.pipeline.output import print_json
from tauray.results.tables import layout

# ModelSpec fields the judge flags set (--judge-api-base, --judge-temperature, ...).
JUDGE_MODEL_FIELDS = ["api_base", "api_key_env", "temperature", "seed", "max_tokens", "timeout", "num_retries",
                      "rpm", "tpm", "rate_limit_wait"]
JUDGE_FIELDS = ["samples", "nl_pack", "structured"]


def add_judge_arguments(p: argparse.ArgumentParser) -> None:
    from tauray.actors.llm import ModelSpec
    from tauray.pipeline.cli.flags import add_fields
    from tauray.pipeline.cli.run import MODEL_FLAGS
    from tauray.pipeline.config import DriveOptions, JudgeEntry

    p.add_argument("run_dir", nargs="?", help="run directory holding conversations and messages tables")
    p.add_argument("--judge-model", action="append", default=[], metavar="M",
                   help="litellm model string of a judge (repeatable; every model x every prompt is a config). "
                        "Without --judge-api-base litellm's standard environment applies, e.g. OPENAI_API_BASE")
    add_fields(p, ModelSpec, JUDGE_MODEL_FIELDS, prefix="judge", rename=MODEL_FLAGS)
    add_fields(p, ModelSpec, ["concurrency"])
    p.add_argument("--prompt", action="append", default=[], metavar="ID[@VERSION]",
                   help="judge prompt (repeatable); see --list-prompts")
    add_fields(p, JudgeEntry, JUDGE_FIELDS)
    p.add_argument("--ray", action="store_true", help="judge on a Ray judge actor instead of in this process")
    add_fields(p, DriveOptions, ["probe"])
    p.add_argument("--list-prompts", action="store_true", help="print the available prompts and packs, then exit")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def configs_from_args(args: argparse.Namespace) -> list[Any]:
    from tauray.actors.judge import JudgeConfig
    from tauray.actors.judge.prompts import get_prompt
    from tauray.pipeline.cli.flags import given

    if not args.judge_model:
        raise ValueError("give at least one --judge-model")
    from tauray.actors.audit.judge_checks import refuse_audit_prompt

    prompts = [get_prompt(refuse_audit_prompt(p)) for p in args.prompt]
    if args.nl_pack and not any(p.kind == "nl" for p in prompts):
        prompts.append(get_prompt("nl-assertions"))
    if not prompts:
        raise ValueError("give at least one --prompt (see tauray judge --list-prompts)")
    options = given(args, JUDGE_FIELDS)
    configs = []
    for model in args.judge_model:
        spec: dict[str, Any] = {"model": model, **given(args, JUDGE_MODEL_FIELDS, prefix="judge"),
                                **given(args, ["concurrency"])}
        for prompt in prompts:
            configs.append(JudgeConfig(model=spec, prompt=prompt.ref, **{
                **options, "nl_pack": options.get("nl_pack") if prompt.kind == "nl" else None}))
    return configs


def cmd_judge(args: argparse.Namespace) -> int:
    from tauray.actors.judge.prompts import UnknownPromptError, list_prompts, pack_registry
    from tauray.actors.llm import ModelConfigError

    try:
        if args.list_prompts:
            for p in list_prompts():
                print(f"{p.ref}\t{p.kind}\t{p.prompt_hash}\t{p.description}")
            for ref in pack_registry().refs():
                print(f"{ref}\tnl-pack\t-\t{pack_registry().get(ref).description}")  # type: ignore[attr-defined]
            return 0
        if not args.run_dir:
            raise ValueError("give RUN_DIR (or --list-prompts)")
        from tauray.pipeline.judging import rejudge

        configs = configs_from_args(args)
        summary = rejudge(args.run_dir, configs, concurrency=configs[0].model.concurrency,
                          use_ray=args.ray, progress=not args.json and sys.stderr.isatty(),
                          probe=args.probe is not False,
                          notes=lambda line: print(line, file=sys.stderr))
    except (UnknownPromptError, ModelConfigError, ValueError) as exc:
        print(f"tauray judge: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print_json(summary.model_dump())
    else:
        print(f"judged {summary.conversations} conversations under {len(summary.configs)} configs in "
              f"{summary.seconds:.1f} s: {summary.items} items to do, {summary.skipped_items} already stored")
        for c in summary.configs:
            print(f"  {c['judge_config_id']}  {c['kind']:7}  {c['label']}  samples {c['samples']}")
        print(f"  calls {summary.calls}  cache hits {summary.cache_hits}  rows {summary.rows}  "
              f"unscored rows {summary.unscored_rows}  infra errors {summary.infra_errors}")
        for model, n in sorted(summary.repair_calls.items()):
            print(f"  repair calls {model}: {n} of {summary.judge_calls.get(model, 0)} judge calls")
        for e in summary.infra_error_examples:
            print(f"  error: {e}")
    return 0 if summary.infra_errors == 0 else 1


def cmd_judge_report(args: argparse.Namespace) -> int:
    from tauray.results.stats.judges import format_report, judge_report

    if not layout.has_conversations(args.run_dir):
        print(f"tauray judge-report: error: {args.run_dir} holds no conversations table", file=sys.stderr)
        return 2
    report = judge_report(args.run_dir)
    if args.json:
        print_json(report)
    else:
        print(format_report(report))
    return 0


def register(subparsers: Any) -> None:
    """Add ``judge`` and ``judge-report`` to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("judge", help="judge stored conversations (re-judging without re-running)")
    add_judge_arguments(p)
    p.set_defaults(func=cmd_judge)
    p = subparsers.add_parser("judge-report", help="meta-evaluate the judge configs stored in a run")
    p.add_argument("run_dir", help="run directory")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_judge_report)
