"""Upstream task JSON → ``Scenario``.

The raw task is validated against tauray's own description of upstream's task
shape, so a task missing a field or naming a function no side has fails here,
with the task id and the field in the message. ``env_type: user|assistant`` is
normalised to ``side: user|agent`` in this one place.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tauray.scenarios import prompts
from tauray.scenarios.domains import END_CONVERSATION, DomainSpec
from tauray.scenarios.model import (
    EnvCall,
    HistoryCall,
    HistoryMessage,
    Predicate,
    ReferenceAction,
    Scenario,
    ScenarioEntry,
    SuccessSignal,
    SuccessSignals,
    UserProfile,
)


class ScenarioLoadError(ValueError):
    """An upstream task cannot become a scenario; says which task and which field."""

    def __init__(self, task_id: str, field: str, problem: str):
        self.task_id, self.field, self.problem = task_id, field, problem
        super().__init__(f"task {task_id!r}: field '{field}': {problem}")


# --- upstream's task shape, as tauray reads it -------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _RawCall(_Lenient):
    env_type: Literal["user", "assistant"]
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class _RawAssertion(_RawCall):
    assert_value: bool = True
    message: str | None = None


class _RawAction(_Lenient):
    action_id: str
    requestor: Literal["user", "assistant"] = "assistant"
    name: str
    arguments: dict[str, Any]
    info: str | None = None
    compare_args: list[str] | None = None


class _RawInstructions(_Lenient):
    domain: str | None = None
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str


class _RawUserScenario(_Lenient):
    persona: str | None = None
    instructions: _RawInstructions | str


class _RawHistoryCall(_Lenient):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["user", "assistant"] | None = None


class _RawHistoryMessage(_Lenient):
    role: Literal["assistant", "user", "tool"]
    content: str | None = None
    tool_calls: list[_RawHistoryCall] | None = None
    id: str | None = None  # a tool message: the call it answers
    requestor: Literal["user", "assistant"] | None = None


class _RawInitialState(_Lenient):
    initialization_data: dict[str, Any] | None = None
    initialization_actions: list[_RawCall] | None = None
    message_history: list[_RawHistoryMessage] | None = None


class _RawCriteria(_Lenient):
    actions: list[_RawAction] | None = None
    env_assertions: list[_RawAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]] = Field(
        default_factory=lambda: ["DB", "COMMUNICATE"]
    )


class _RawDescription(_Lenient):
    purpose: str | None = None


class _RawTask(_Lenient):
    id: str
    description: _RawDescription | None = None
    user_scenario: _RawUserScenario
    ticket: str | None = None
    initial_state: _RawInitialState | None = None
    evaluation_criteria: _RawCriteria


def _side(env_type: str) -> Literal["agent", "user"]:
    return "agent" if env_type == "assistant" else "user"


_BASIS_TO_SIGNAL = {
    "DB": SuccessSignal.DB_STATE_MATCH,
    "ENV_ASSERTION": SuccessSignal.DB_STATE_ASSERTION,
    "NL_ASSERTION": SuccessSignal.NL_ASSERTION,
    "ACTION": SuccessSignal.ACTION_MATCH,
    "COMMUNICATE": SuccessSignal.COMMUNICATE,
}


def success_signals(domain: str, criteria: _RawCriteria) -> SuccessSignals:
    """Telecom: predicates gate, NL assertions gate when present; the rest are diagnostics.
    Other domains: upstream's reward basis gates."""
    if domain == "telecom":
        gating = [SuccessSignal.DB_STATE_ASSERTION]
        if criteria.nl_assertions:
            gating.append(SuccessSignal.NL_ASSERTION)
    else:
        gating = [_BASIS_TO_SIGNAL[b] for b in dict.fromkeys(criteria.reward_basis)]
    diagnostics = [SuccessSignal.DB_STATE_MATCH, SuccessSignal.ACTION_MATCH, SuccessSignal.JUDGE_PASSED]
    return SuccessSignals(gating=tuple(gating), informational=tuple(s for s in diagnostics if s not in gating))


def parse_task(raw: dict[str, Any]) -> _RawTask:
    task_id = str(raw.get("id", "<no id>")) if isinstance(raw, dict) else "<not an object>"
    try:
        return _RawTask.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ScenarioLoadError(task_id, field, err["msg"]) from None


def check_functions(spec: DomainSpec, task: _RawTask) -> None:
    """Every initialization action, assertion and reference action must name a
    function the side really has."""
    init = (task.initial_state.initialization_actions if task.initial_state else None) or []
    crit = task.evaluation_criteria
    for label, calls in (("initial_state.initialization_actions", init),
                         ("evaluation_criteria.env_assertions", crit.env_assertions or [])):
        for i, call in enumerate(calls):
            side = _side(call.env_type)
            if call.func_name not in spec.functions(side):
                raise ScenarioLoadError(task.id, f"{label}[{i}].func_name",
                                        f"the {side} side has no function '{call.func_name}'")
    for i, action in enumerate(crit.actions or []):
        side = _side(action.requestor)
        if action.name not in spec.tool_kinds(side):
            raise ScenarioLoadError(task.id, f"evaluation_criteria.actions[{i}].name",
                                    f"the {side} side has no tool '{action.name}'")
    history = (task.initial_state.message_history if task.initial_state else None) or []
    for i, message in enumerate(history_messages(task.id, history)):
        for call in message.tool_calls:
            if call.name not in spec.tool_kinds(message.side):
                raise ScenarioLoadError(task.id, f"initial_state.message_history[{i}].tool_calls",
                                        f"the {message.side} side has no tool '{call.name}'")


def history_messages(task_id: str, raw: list[_RawHistoryMessage]) -> tuple[HistoryMessage, ...]:
    """Upstream's opening messages with each one's side; a tool message belongs to the side
    whose call it answers, and must follow that call (as upstream requires)."""
    messages: list[HistoryMessage] = []
    callers: dict[str, Literal["agent", "user"]] = {}
    for i, m in enumerate(raw):
        if m.role == "tool":
            if m.id is None or m.id not in callers:
                raise ScenarioLoadError(task_id, f"initial_state.message_history[{i}].id",
                                        "a tool message must answer an earlier tool call by its id")
            messages.append(HistoryMessage(side=callers[m.id], role="tool", content=m.content, tool_call_id=m.id))
            continue
        side: Literal["agent", "user"] = "agent" if m.role == "assistant" else "user"
        calls = tuple(HistoryCall(id=c.id, name=c.name, arguments=c.arguments) for c in m.tool_calls or [])
        for call in calls:
            callers[call.id] = side
        messages.append(HistoryMessage(side=side, role=m.role, content=m.content, tool_calls=calls))
    return tuple(messages)


def build_scenario(spec: DomainSpec, task: _RawTask, entry: ScenarioEntry) -> Scenario:
    crit = task.evaluation_criteria
    init_state = task.initial_state
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        profile = UserProfile(persona=task.user_scenario.persona, instructions=instructions)
    else:
        profile = UserProfile(
            persona=task.user_scenario.persona,
            instructions=instructions.task_instructions,
            reason_for_call=instructions.reason_for_call,
            known_info=instructions.known_info,
            unknown_info=instructions.unknown_info,
        )
    script, guidelines = spec.user_script(), spec.user_guidelines()
    init_actions = init_state.initialization_actions if init_state else None
    return Scenario(
        **entry.model_dump(),
        has_user_state=spec.has_user_state,
        ticket=task.ticket,
        purpose=task.description.purpose if task.description else None,
        policy=_policy(spec, entry.policy_variant),
        agent_prompt=_agent_prompt(spec, entry.policy_variant),
        agent_tools=spec.tool_specs("agent") + (END_CONVERSATION,),
        user_tools=spec.tool_specs("user"),
        user=profile,
        user_guidelines=guidelines,
        user_script=script,
        user_prompt=prompts.user_prompt(profile, script, guidelines),
        initialization_data=init_state.initialization_data if init_state else None,
        message_history=history_messages(task.id, init_state.message_history)
        if init_state and init_state.message_history else None,
        initialization_actions=None if init_actions is None else tuple(
            EnvCall(side=_side(a.env_type), func_name=a.func_name, arguments=a.arguments) for a in init_actions
        ),
        db_state_assertions=None if crit.env_assertions is None else tuple(
            Predicate(index=i, side=_side(a.env_type), func_name=a.func_name, arguments=a.arguments,
                      assert_value=a.assert_value, message=a.message)
            for i, a in enumerate(crit.env_assertions)
        ),
        nl_assertions=tuple(crit.nl_assertions) if crit.nl_assertions else None,
        communicate_info=tuple(crit.communicate_info) if crit.communicate_info else None,
        reference_actions=tuple(
            ReferenceAction(action_id=a.action_id, side=_side(a.requestor), name=a.name, arguments=a.arguments,
                            compare_args=tuple(a.compare_args) if a.compare_args is not None else None, info=a.info)
            for a in crit.actions or []
        ),
        success_signals=success_signals(spec.name, crit),
    )


_POLICIES: dict[tuple[str, str], str] = {}
_AGENT_PROMPTS: dict[tuple[str, str], str] = {}


def _policy(spec: DomainSpec, variant: str) -> str:
    # One string object per (domain, variant), shared by every scenario of it.
    key = (spec.name, variant)
    if key not in _POLICIES:
        _POLICIES[key] = spec.policy(variant)
    return _POLICIES[key]


def _agent_prompt(spec: DomainSpec, variant: str) -> str:
    key = (spec.name, variant)
    if key not in _AGENT_PROMPTS:
        _AGENT_PROMPTS[key] = prompts.agent_prompt(_policy(spec, variant), spec.agent_addenda(variant))
    return _AGENT_PROMPTS[key]
