"""Telecom specifics: policy concatenation, agent-prompt addenda, the user
script and guidelines for a customer who holds the phone.

Every sentence here is tauray's own; the policy files themselves are read
from the installed upstream package at run time.
"""

from __future__ import annotations

from tauray.scenarios.prompts import POLICY_SEPARATOR
from tauray.scenarios.upstream import read_text

POLICY_FILES = {"manual": "tech_support_manual.md", "workflow": "tech_support_workflow.md"}


def telecom_policy(variant: str) -> str:
    """main_policy.md, a markdown rule, then the variant's tech-support file."""
    try:
        tech = POLICY_FILES[variant]
    except KeyError:
        raise ValueError(f"unknown telecom policy variant {variant!r}; choose one of {sorted(POLICY_FILES)}") from None
    return read_text("telecom", "main_policy.md").strip() + POLICY_SEPARATOR + read_text("telecom", tech).strip()


def tool_availability_note(agent_tools: list[str], phone_tools: list[str]) -> str:
    return (
        "## Which tools are yours\n"
        "The policy mentions actions on both the operator's systems and the customer's "
        "phone. You can call only these tools yourself: "
        + ", ".join(f"`{t}`" for t in agent_tools)
        + ".\nThe following exist only on the customer's phone; you cannot run them. When "
        "one is needed, tell the customer in plain words what to do on the phone and ask "
        "what it shows afterwards: "
        + ", ".join(f"`{t}`" for t in phone_tools)
        + "."
    )


STAY_ON_TASK_NOTE = (
    "## Keep to the reported problem\n"
    "Work on the problem the customer called about until it is fixed or cannot be fixed. "
    "If you come across something unrelated along the way (an overdue bill, another line, "
    "a plan that could be cheaper), do not pursue it unless it is what blocks the fix."
)

HOME_NETWORK_NOTE = (
    "## Home network\n"
    "This operator's home network is the United States; anywhere else is abroad. If the "
    "customer says they are travelling or outside the US, check roaming first: whether "
    "the line allows roaming and whether roaming is switched on in the phone, before any "
    "other troubleshooting."
)

USER_SCRIPT = (
    "Start by describing the symptom you see on your phone, in everyday words, without guessing the cause.",
    "Do what the agent asks you to do on your phone, one step at a time.",
    "After each step, tell the agent what the phone now shows, based on the result of the phone tool you used.",
    "When the problem is gone, or the agent asks you to end the call, close the conversation.",
)

USER_GUIDELINES = (
    "Use a phone tool only right after the agent has asked you to do that specific thing; "
    "never troubleshoot on your own initiative.",
    "Say identifiers such as phone numbers, names and amounts clearly and exactly as you were given them.",
    "Never make up what a tool returned: report its result, and if you have not run the tool, say so.",
    "Stay in character as the customer; you are not an assistant.",
)
