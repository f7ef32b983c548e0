"""The scenario record and the small records it is made of.

Every record here is frozen: a scenario is built once at load time and then
shared by gold replay, scoring and the actors, so nothing may mutate it.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Side = Literal["agent", "user"]
PolicyVariant = Literal["default", "manual", "workflow"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SuccessSignal(str, Enum):
    """The signals a verdict can be made of; each scenario says which gate."""

    DB_STATE_ASSERTION = "DB_STATE_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    DB_STATE_MATCH = "DB_STATE_MATCH"
    ACTION_MATCH = "ACTION_MATCH"
    COMMUNICATE = "COMMUNICATE"
    JUDGE_PASSED = "JUDGE_PASSED"


class ToolSpec(Frozen):
    name: str = Field(description="Function name the model calls; equals the upstream method name.")
    description: str = Field(description="What the tool does, as shown to the model.")
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments (OpenAI function format).")
    kind: Literal["read", "write", "think", "generic", "harness"] = Field(
        description="Upstream tool type; 'harness' marks tools tauray adds (end_conversation)."
    )
    side: Side = Field(description="Which side may call it.")

    @property
    def is_write(self) -> bool:
        return self.kind == "write"

    def openai(self) -> dict[str, Any]:
        """The tool in the OpenAI/litellm `tools=[...]` format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class EnvCall(Frozen):
    """A function called directly on one side's toolkit (initialization)."""

    side: Side = Field(description="Whose state the call acts on.")
    func_name: str = Field(description="Toolkit method name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments.")


class HistoryCall(Frozen):
    """A tool call inside a task's opening message history."""

    id: str = Field(description="Call id, echoed by the tool message that answers it.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments.")


class HistoryMessage(Frozen):
    """One message of the conversation a task starts from (upstream ``initial_state.message_history``)."""

    side: Side = Field(description="Who produced it: the agent (assistant messages and their tool results) or the "
                       "customer (user messages and theirs).")
    role: Literal["assistant", "user", "tool"] = Field(description="Upstream role.")
    content: str | None = Field(default=None, description="Text, if any.")
    tool_calls: tuple[HistoryCall, ...] = Field(default=(), description="Tool calls of the message.")
    tool_call_id: str | None = Field(default=None, description="For a tool message: the call it answers.")


class Predicate(EnvCall):
    """An assertion on final state: the function's result must equal assert_value."""

    index: int = Field(description="Position among the scenario's assertions.")
    assert_value: bool = Field(default=True, description="The value the function must return.")
    message: str | None = Field(default=None, description="Upstream's note on the assertion, if any.")


class ReferenceAction(Frozen):
    """One action of the reference (gold) solution, tagged with the side that performs it."""

    action_id: str = Field(description="Upstream action id, unique within the scenario.")
    side: Side = Field(description="Side whose tool this is.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments of the reference call.")
    compare_args: tuple[str, ...] | None = Field(
        default=None, description="Arguments compared when matching; None = all arguments of the executed call."
    )
    info: str | None = Field(default=None, description="Upstream's note on the action.")


class SuccessSignals(Frozen):
    gating: tuple[SuccessSignal, ...] = Field(description="Signals that must all pass for success.")
    informational: tuple[SuccessSignal, ...] = Field(
        description="Signals computed and stored as diagnostics, excluded from the verdict."
    )


class UserProfile(Frozen):
    persona: str | None = Field(default=None, description="Who the simulated customer is.")
    instructions: str = Field(description="The upstream task instructions for the simulated customer.")
    reason_for_call: str | None = Field(default=None, description="Why the customer calls, when upstream says.")
    known_info: str | None = Field(default=None, description="What the customer knows and may tell.")
    unknown_info: str | None = Field(default=None, description="What the customer does not know.")


class ScenarioEntry(Frozen):
    """What the registry knows about a scenario without building it."""

    name: str = Field(description="Registered name, e.g. tau2_telecom__mms_issue__....")
    domain: str = Field(description="Upstream domain: telecom, airline or retail.")
    upstream_id: str = Field(description="Upstream task id.")
    policy_variant: PolicyVariant = Field(description="manual/workflow for telecom, default elsewhere.")
    splits: tuple[str, ...] = Field(description="Upstream splits containing the task; 'full' is every task.")
    issue_type: str | None = Field(default=None, description="Telecom issue family, from the id.")
    persona: str | None = Field(default=None, description="Persona named in the id, if any.")


class Scenario(ScenarioEntry):
    """One upstream τ² task in one policy variant."""

    has_user_state: bool = Field(description="True when the user side owns a DB and tools (telecom).")
    ticket: str | None = Field(default=None, description="Upstream ticket: the problem as the operator sees it.")
    purpose: str | None = Field(default=None, description="Upstream description of what the task tests.")
    policy: str = Field(description="Policy text the agent follows.")
    agent_prompt: str = Field(description="Full agent system prompt: policy plus tauray's notes.")
    agent_tools: tuple[ToolSpec, ...] = Field(description="Tools the agent may call, end_conversation included.")
    user_tools: tuple[ToolSpec, ...] = Field(description="Phone tools of the simulated customer (empty if none).")
    user: UserProfile = Field(description="Persona and instructions of the simulated customer.")
    user_guidelines: tuple[str, ...] = Field(description="Behaviour rules for the user simulator.")
    user_script: tuple[str, ...] = Field(description="Procedural steps for the user simulator.")
    user_prompt: str = Field(description="Full user-simulator system prompt.")
    initialization_data: dict[str, Any] | None = Field(
        default=None, description="Upstream per-side DB updates applied before the initialization actions."
    )
    initialization_actions: tuple[EnvCall, ...] | None = Field(
        default=None, description="Calls that set up state, per side; None when the task has none."
    )
    message_history: tuple[HistoryMessage, ...] | None = Field(
        default=None, description="Conversation the task starts from (its tool calls are replayed on the state at "
        "initialization, after the initialization actions); None when the task starts afresh.")
    db_state_assertions: tuple[Predicate, ...] | None = Field(
        default=None, description="Predicates on final state; None when the task has none."
    )
    nl_assertions: tuple[str, ...] | None = Field(default=None, description="Natural-language assertions; None when absent.")
    communicate_info: tuple[str, ...] | None = Field(
        default=None, description="Facts the agent must say (upstream COMMUNICATE); None when absent."
    )
    reference_actions: tuple[ReferenceAction, ...] = Field(description="Gold actions of both sides, in order.")
    success_signals: SuccessSignals = Field(description="Which signals gate the verdict.")

    @property
    def tools_by_side(self) -> dict[str, tuple[ToolSpec, ...]]:
        return {"agent": self.agent_tools, "user": self.user_tools}
