"""What ``tauray run``, ``tauray sweep`` and ``tauray demo`` share: the driver's flags
(generated from :class:`~tauray.pipeline.config.DriveOptions`), the call into the one
driver, and the summary they print."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pydantic import ValidationError

from tauray.pipeline.cli.flags import add_fields, given
from tauray.pipeline.config import DriveOptions, SweepConfig
from tauray.pipeline.output import print_json

DRIVE_FIELDS = ["out", "address", "resume", "retry_errors", "probe"]


def add_drive_arguments(p: argparse.ArgumentParser) -> None:
    add_fields(p, DriveOptions, DRIVE_FIELDS)
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document")


def drive_options(args: argparse.Namespace) -> DriveOptions:
    """The driver's options as given on the command line; an error names the flag."""
    try:
        return DriveOptions(**given(args, DRIVE_FIELDS))
    except ValidationError as exc:
        raise ValueError("; ".join(f"--{str(e['loc'][0]).replace('_', '-')}: {e['msg'].removeprefix('Value error, ')}"
                                   for e in exc.errors(include_url=False, include_input=False))) from None


def drive(cfg: SweepConfig, args: argparse.Namespace) -> Any:
    """Run ``cfg`` through the one driver with the options given on the command line."""
    from tauray.pipeline.driver import execute

    opts = drive_options(args)
    progress = False if (args.no_progress or args.json) else None
    return execute(cfg, **opts.model_dump(), progress=progress)


def print_summary(s: Any) -> None:
    print(f"{s.run_id}: {s.units} units ({s.cells} cells × {s.scenarios} scenarios × trials) -> {s.out}")
    print(f"  this run: ran {s.ran}, skipped {s.skipped} already done, retried {s.retried_errors} infra rows, "
          f"{s.actor_retries} actor retries, {s.seconds:.1f} s ({s.conversations_per_second}/s)")
    if s.by_termination:
        print("  terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(s.by_termination.items())))
    if s.budget_reached:
        print(f"  budget ${s.budget_usd} reached: {s.not_submitted} units not submitted")
    cost = "n/a" if s.cost_usd is None else f"${s.cost_usd:.4f}"
    print(f"  tables: {s.rows} rows, success {s.success}, failed {s.failed}, unscored {s.unscored}, "
          f"infra {s.infra_errors}, model {s.model_errors}, internal {s.internal_errors}; "
          f"tokens {s.prompt_tokens}+{s.completion_tokens}, cost {cost}")
    stops = stop_line(s.per_cell)
    if stops:
        print(f"  replies: {stops}")
    print(f"  {'model':<24} {'conv':>6} {'agent':>6} {'user':>6} {'judge':>6} {'prompt_tok':>11} {'compl_tok':>10} "
          f"{'cost_usd':>10}")
    for name, m in s.per_model.items():
        c = "n/a" if m.cost_usd is None else f"{m.cost_usd:.4f}"
        print(f"  {name[:24]:<24} {m.conversations:>6} {m.as_agent:>6} {m.as_user:>6} {m.as_judge:>6} "
              f"{m.prompt_tokens:>11} {m.completion_tokens:>10} {c:>10}")
    repairs = {name: m for name, m in s.per_model.items() if m.judge_calls}
    if repairs:
        print("  judge repair turns: " + ", ".join(f"{name} {m.repair_calls} of {m.judge_calls} calls"
                                                   for name, m in repairs.items()))
    if getattr(s, "attributions", None):
        print("  who failed (audit): " + ", ".join(f"{k} {v}" for k, v in sorted(s.attributions.items()))
              + f"; {s.audit_findings} findings (`tauray audit {s.out} --no-write` lists them)")
    if len(s.per_cell) > 1:
        print(f"  {'cell':<14} {'agent':<28} {'user':<30} {'done':>5} {'ok':>5} {'fail':>5} {'infra':>5}")
        for c in s.per_cell:
            print(f"  {c['cell_id']:<14} {c['agent_model'][:28]:<28} {c['user_model'][:30]:<30} {c['done']:>5} "
                  f"{c['success']:>5} {c['failed']:>5} {c['infra_errors']:>5}")
    print(f"  tables: {s.out}  (pandas.read_parquet('{s.out}/conversations'))")


STOP_NAMES = {"truncated_replies": "cut at max_tokens", "truncated_tool_calls": "tool calls cut (not run)",
              "filtered_replies": "output filtered", "prompt_filtered_replies": "prompt filtered",
              "refused_replies": "refused", "malformed_call_replies": "tool calls the provider could not parse",
              "text_tool_call_replies": "tool calls written as text"}
"""The cell rows' stop counts (pipeline.accounting.STOPS) as the run summary names them."""


def stop_line(cells: list[dict[str, Any]]) -> str:
    """How model replies ended badly over the cells, each kind named ("" when none did)."""
    totals = {name: sum(int(c.get(column) or 0) for c in cells) for column, name in STOP_NAMES.items()}
    line = ", ".join(f"{name} {n}" for name, n in totals.items() if n)
    if totals["tool calls written as text"]:
        line += " (the server parses no tool calls: vLLM needs --enable-auto-tool-choice --tool-call-parser)"
    return line


def report(summary: Any, as_json: bool) -> int:
    """Print the summary; exit 1 when rows ended in infra or internal errors (rerun them with
    --retry-errors), else 0."""
    if as_json:
        print_json(summary.model_dump(mode="json"), indent=1)
    else:
        print_summary(summary)
    if summary.infra_errors + summary.internal_errors:
        print(f"tauray: {summary.infra_errors} infra and {summary.internal_errors} internal error rows; "
              f"`--retry-errors` reruns them", file=sys.stderr)
        return 1
    return 0
