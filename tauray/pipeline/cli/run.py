"""``tauray run`` (one agent model and one user model over a selection: a one-cell sweep)
and ``tauray demo`` (the reference policies on telecom, offline)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from pydantic import ValidationError

from tauray.pipeline.cli.drive import add_drive_arguments, drive, drive_options, report
from tauray.pipeline.cli.flags import add_fields, given, key_values
from tauray.pipeline.config import ClusterConfig, Selection, SweepConfig, run_config
from tauray.pipeline.sweep_file import stored_name
from tauray.scenarios.conventions import REFERENCE_BY_SIDE

# ModelSpec fields a role's flags set (--agent-model, --user-api-base, ...), and renamed flags.
MODEL_FIELDS = ["model", "api_base", "api_key_env", "temperature", "seed", "max_tokens", "concurrency", "rpm", "tpm",
                "token_accounting", "rate_limit_wait", "timeout", "num_retries", "strict", "cut_tool_calls"]
MODEL_FLAGS = {"api_key_env": "key_env", "num_retries": "retries"}
RUN_FIELDS = ["trials", "seed", "max_steps", "max_errors", "max_in_flight", "max_attempts", "budget_usd", "audit"]
CLUSTER_FIELDS = ["coordinators", "agent_hosts", "user_hosts", "spread", "ship_project", "actor_cpus",
                  "live_calls_per_node"]


def add_selection_arguments(p: argparse.ArgumentParser, limit: bool = True) -> None:
    p.add_argument("pattern", nargs="*", help="scenario name globs (default: all)")
    add_fields(p, Selection, ["domain", "split", *(["limit"] if limit else [])])
    p.add_argument("--variant", help="policy variant: manual, workflow (telecom) or default")


def _role_arguments(p: argparse.ArgumentParser, role: str) -> None:
    from tauray.actors.llm import ModelSpec

    add_fields(p, ModelSpec, MODEL_FIELDS, prefix=role, rename=MODEL_FLAGS)
    if role == "agent":
        add_fields(p, ModelSpec, ["reference_steps"], prefix=role)
    p.add_argument(f"--{role}-param", action="append", default=[], metavar="KEY=VALUE",
                   help=f"extra litellm parameter for the {role} model (repeatable; VALUE is read as JSON when "
                   "it parses, else as text), e.g. top_p=0.9 or reasoning_effort=low")


def role_spec(args: argparse.Namespace, role: str) -> dict[str, Any]:
    spec = given(args, [*MODEL_FIELDS, "reference_steps"], prefix=role)
    extra = key_values(getattr(args, f"{role}_param", None) or [], f"--{role}-param")
    if extra:
        spec["extra_params"] = extra
    return spec


def config_from_args(args: argparse.Namespace) -> SweepConfig:
    """The one-cell sweep the flags describe; an error names the flag at fault."""
    for role, other in (("agent", "user"), ("user", "agent")):
        model = getattr(args, f"{role}_model")
        if model is None:
            raise ValueError(f"--{role}-model is required (a litellm model string, or "
                             f"'{REFERENCE_BY_SIDE[role]}' for the reference policy)")
        if model == REFERENCE_BY_SIDE[other]:
            raise ValueError(f"--{role}-model: '{model}' is the {other} side's reference policy; the {role} "
                             f"side's is '{REFERENCE_BY_SIDE[role]}'")
    specs = {role: role_spec(args, role) for role in ("agent", "user")}
    name = args.run_id
    if name is None and (args.resume or args.retry_errors) and args.out:
        name = stored_name(args.out)  # resuming a folder continues the run it holds
    try:
        return run_config(name=name, agent=specs["agent"], user=specs["user"], patterns=args.pattern,
                          domain=args.domain, split=args.split, variant=args.variant, limit=args.limit,
                          cluster=given(args, CLUSTER_FIELDS), **given(args, RUN_FIELDS))
    except ValidationError as exc:
        raise ValueError("; ".join(_flag_errors(exc, specs))) from None


def _flag_errors(exc: ValidationError, specs: dict[str, dict[str, Any]]) -> list[str]:
    """pydantic's errors of a run config, each named by the flag that set the value."""
    flag_of = {field: MODEL_FLAGS.get(field, field).replace("_", "-") for field in MODEL_FIELDS}
    out = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
        msg = err["msg"].removeprefix("Value error, ")
        if loc[:1] == ["models"] and len(loc) > 1:  # "'temperature': must be >= 0" for one role's model
            roles = [r for r, s in specs.items() if str(s.get("model")) == loc[1].split("@")[0]] or ["agent"]
            role = loc[1].rsplit("@", 1)[1] if "@" in loc[1] else roles[0]
            msg = re.sub(r"'([\w]+)[\w.]*': ", lambda m: f"--{role}-{flag_of.get(m.group(1), m.group(1))}: ", msg)
            out.append(msg)
        elif loc[:1] == ["cluster"] and len(loc) > 1:
            out.append(f"--{loc[1].replace('_', '-')}: {msg}")
        elif loc[:1] == ["name"]:
            out.append(f"--run-id: {msg}")
        elif loc and loc[0] in SweepConfig.model_fields and loc[0] != "scenarios":
            out.append(f"--{loc[0].replace('_', '-')}: {msg}")
        else:
            out.append(f"the scenario selection: {msg}" if loc[:1] == ["scenarios"] else msg)
    return out


def cmd_run(args: argparse.Namespace) -> int:
    return report(drive(config_from_args(args), args), args.json)


def cmd_demo(args: argparse.Namespace) -> int:
    from tauray.pipeline.config import new_run_id

    cfg = run_config(name=f"demo-{new_run_id()}", agent={"model": "oracle"}, user={"model": "scripted"},
                     domain="telecom", split=args.split, limit=args.limit, **given(args, ["max_in_flight"]))
    drive_options(args)  # a bad option is refused before the banner
    if not args.json:
        print(f"tauray demo: oracle agent + scripted user (reference policies, no model needed) on the telecom "
              f"'{args.split}' split, manual and workflow policies", flush=True)
    summary = drive(cfg, args)
    code = report(summary, args.json)
    if not args.json:
        _print_demo_table(summary.out)
    return code if summary.success == summary.rows else 1


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


def register(sub: Any) -> None:
    """Add ``run`` and ``demo``."""
    p = sub.add_parser("run", help="run conversations: scenarios x trials for one agent and one user model")
    add_selection_arguments(p)
    _role_arguments(p, "agent")
    _role_arguments(p, "user")
    add_fields(p, SweepConfig, RUN_FIELDS)
    add_fields(p, ClusterConfig, CLUSTER_FIELDS)
    p.add_argument("--run-id", help="run id: names the run directory and every row's run_id (default: the time)")
    add_drive_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="offline demo: reference policies on the telecom base split, both variants")
    p.add_argument("--split", default="base", help="telecom split (default: base)")
    add_fields(p, Selection, ["limit"])
    add_fields(p, SweepConfig, ["max_in_flight"])
    add_drive_arguments(p)
    p.set_defaults(func=cmd_demo)
