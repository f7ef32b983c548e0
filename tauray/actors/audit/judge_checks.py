"""An audit prompt's checks, as a judge is asked them and as its answers are read back.

An audit prompt is an ordinary versioned judge prompt of kind ``nl`` (``data/judge_prompts/
sim-audit-v*.toml``, released in ``released.json``), so a ``JudgeConfig`` names it, the judge
host samples and caches it, ``parse_nl`` reads the reply, and a prompt ablation is one more
file, exactly as for the other judge prompts. Its checks are the NL "assertions": each is a
line of the prompt text itself, ``A1 [fault_class] statement``, so the classes asked are
hashed with the prompt and a changed check is a new version, never a silent change under an
old name. A check is phrased so that ``met`` means no fault and ``not_met`` means the customer
committed it; the reasoning of a ``not_met`` starts with the record message that shows it
(``#7: ...``), the numbers ``render_transcript`` gives the messages.

The ``goal`` slot carries the customer's whole task instructions (what the simulator was
told), defused like every value placed in a prompt; ``assertions`` lists the check ids.

Whatever cannot be read back as one verdict per check is unscored with the parser's reason,
never a fault and never clean; several samples vote, and a tie is unscored too. The tier
that runs these over conversations is :mod:`.judge_tier`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.judge.config import JudgeConfig, JudgeItem
from tauray.actors.judge.parse import ParsedVerdict, parse_nl
from tauray.actors.judge.prompts import JudgePrompt, get_prompt
from tauray.actors.judge.render import render_transcript, text_hash

_CHECK = re.compile(r"^A(\d+) \[([a-z][a-z0-9_]*)\] (.+)$", re.MULTILINE)
_CITED = re.compile(r"^\s*[\"'`*]*#\s*(\d+)\s*[:.)\-\u2013\u2014]?\s*")
NO_INSTRUCTIONS = "(the task's instructions are not known: its scenario is not registered)"


class NotAnAuditPrompt(ValueError):
    """A judge prompt that holds no audit checks (or cannot version its findings)."""


class AuditCheck(BaseModel):
    """One check of an audit prompt, as its text states it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Id the judge answers under (A1, A2, ...).")
    fault_class: str = Field(description="Fault class a not_met verdict reports.")
    statement: str = Field(description="The check's first line, as the prompt states it.")


class CheckReading(BaseModel):
    """What a judge said about one check of one conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Check id.")
    fault_class: str = Field(description="Fault class the check rules out.")
    fault: bool | None = Field(description="True: the customer committed it; False: no fault; None: unscored.")
    message_number: int | None = Field(None, description="Record message (#N) the reasoning cites for a fault.")
    evidence: str | None = Field(None, description="The judge's reasoning, without the cited number.")
    unscored_reason: str | None = Field(None, description="Why no verdict could be read; None when scored.")


def audit_checks(prompt: JudgePrompt) -> tuple[AuditCheck, ...]:
    """The checks an audit prompt asks, in id order; :class:`NotAnAuditPrompt` for any other
    prompt. Its version must be a whole number: findings carry it as their detector version."""
    text = "\n".join((prompt.system, prompt.before, prompt.after))
    checks = [AuditCheck(id=f"A{m.group(1)}", fault_class=m.group(2), statement=m.group(3).strip())
              for m in _CHECK.finditer(text)]
    if prompt.kind != "nl" or not checks:
        raise NotAnAuditPrompt(f"judge prompt {prompt.ref} is no audit prompt: it holds no check lines "
                               "'A1 [fault_class] ...' (audit prompts: sim-audit@N)")
    if [c.id for c in checks] != [f"A{i + 1}" for i in range(len(checks))]:
        raise NotAnAuditPrompt(f"judge prompt {prompt.ref}: its checks must be numbered A1, A2, ... in order, "
                               f"not {', '.join(c.id for c in checks)}")
    if len({c.fault_class for c in checks}) != len(checks):
        raise NotAnAuditPrompt(f"judge prompt {prompt.ref}: two checks name the same fault class")
    if not prompt.version.isdigit() or int(prompt.version) < 1:
        raise NotAnAuditPrompt(f"judge prompt {prompt.ref}: an audit prompt's version must be a whole number "
                               "from 1 (findings carry it as the detector version)")
    return tuple(checks)


def check_audit_config(config: JudgeConfig) -> tuple[AuditCheck, ...]:
    """The checks of an audit judge config; refuses a config that is not one."""
    checks = audit_checks(config.template)
    if config.nl_pack is not None:
        raise NotAnAuditPrompt(f"{config.label}: an audit judge takes no NL-assertion pack")
    return checks


def _shown(message: Any) -> dict[str, Any]:
    calls = getattr(message, "tool_calls", None)
    return {"side": message.side, "role": message.role, "content": message.content,
            "tool_calls": list(calls) if calls else None, "tool_call_id": getattr(message, "tool_call_id", None)}


def build_audit_item(trajectory: Any, config: JudgeConfig,
                     samples: list[int] | None = None) -> tuple[JudgeItem, tuple[Any, ...]]:
    """The judge item for one stored conversation (a :class:`~tauray.actors.audit.trajectory.Trajectory`)
    and the messages in the order they are numbered in it (``#N`` is ``shown[N - 1]``)."""
    checks = check_audit_config(config)
    shown = tuple(sorted(trajectory.messages, key=lambda m: m.seq))
    transcript = render_transcript([_shown(m) for m in shown])
    values = {"goal": (trajectory.task.user_text or "").strip() or NO_INSTRUCTIONS,
              "assertions": ", ".join(c.id for c in checks)}
    keys = trajectory.keys
    item = JudgeItem(run_id=str(keys["run_id"]), conversation_id=str(keys["conversation_id"]),
                     scenario=str(keys["scenario"]), config=config, chat=config.template.render(transcript, values),
                     transcript_hash=text_hash(transcript), context_hash=text_hash(json.dumps(values, sort_keys=True)),
                     assertions=[c.id for c in checks],
                     samples=list(range(config.samples)) if samples is None else samples)
    return item, shown


def read_check(parsed: ParsedVerdict, check: AuditCheck) -> CheckReading:
    """One parsed NL verdict as an audit reading: ``met`` is no fault, ``not_met`` a fault whose
    reasoning may cite the record message that shows it."""
    if parsed.verdict is None:
        return CheckReading(id=check.id, fault_class=check.fault_class, fault=None, evidence=parsed.reasoning,
                            unscored_reason=parsed.unscored_reason or "no verdict")
    reasoning = " ".join((parsed.reasoning or "").split())
    number = None
    if not parsed.verdict and (m := _CITED.match(reasoning)):
        number, reasoning = int(m.group(1)), reasoning[m.end():]
    return CheckReading(id=check.id, fault_class=check.fault_class, fault=not parsed.verdict,
                        message_number=number, evidence=reasoning or None)


def parse_audit_reply(text: str | None, checks: Sequence[AuditCheck]) -> list[CheckReading]:
    """One reading per check from one reply (the judge layer's NL parser underneath)."""
    return [read_check(p, c) for p, c in zip(parse_nl(text, len(checks)), checks)]


def combine_samples(readings: Sequence[CheckReading]) -> CheckReading:
    """Several samples' readings of one check: the majority of the scored ones (a fault keeps
    the first faulting sample's citation); a tie, or nothing scored, is unscored."""
    if not readings:
        return CheckReading(id="", fault_class="", fault=None, unscored_reason="no sample")
    faults = [r for r in readings if r.fault is True]
    cleans = [r for r in readings if r.fault is False]
    unscored = [r for r in readings if r.fault is None]
    if len(faults) > len(cleans):
        return faults[0]
    if len(cleans) > len(faults):
        return cleans[0]
    first = readings[0]
    if not faults:
        return unscored[0]
    return CheckReading(id=first.id, fault_class=first.fault_class, fault=None,
                        unscored_reason=f"no majority over {len(readings)} samples: {len(faults)} fault, "
                                        f"{len(cleans)} clean, {len(unscored)} unscored")


__all__ = ["NO_INSTRUCTIONS", "AuditCheck", "CheckReading", "NotAnAuditPrompt", "audit_checks", "build_audit_item",
           "refuse_audit_prompt",
           "check_audit_config", "combine_samples", "parse_audit_reply", "read_check"]


def refuse_audit_prompt(ref: str) -> str:
    """``ref`` unchanged, unless it names an audit prompt: those judge the customer, so a
    conversation judge (``tauray judge``, a sweep's ``judges``) given one would score the
    scenario's assertions against checks that mean nothing there. Unknown ids pass here and
    fail where prompts are resolved, with the list of known ones."""

    try:
        prompt = get_prompt(ref)
        audit_checks(prompt)
    except Exception:  # noqa: BLE001 - not an audit prompt (or not a prompt): not this check's concern
        return ref
    raise ValueError(f"judge prompt {prompt.ref} is the user-simulator audit's (it judges the customer, not the "
                     f"conversation); run it with `tauray audit RUN --judge MODEL --judge-prompt {prompt.ref}`")
