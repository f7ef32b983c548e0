"""Prompt assembly shared by all domains, in tauray's own words.

The agent prompt is the domain policy, then general notes, then any
domain-specific addenda. The user-simulator prompt is the customer's profile
and task, a procedural script and behaviour guidelines.
"""

from __future__ import annotations

import json

from tauray.scenarios.conventions import (
    END_CONVERSATION,
    OUT_OF_SCOPE,
    STOP,
    TRANSFER,
    TRANSFER_TO_HUMAN,
)
from tauray.scenarios.model import UserProfile

POLICY_SEPARATOR = "\n\n---\n\n"

AGENT_GENERAL_NOTES = (
    "## Notes for this conversation\n"
    "- You are talking to one customer. Follow the policy above; when it and the "
    "customer disagree, the policy wins.\n"
    "- Make at most one tool call at a time and wait for its result before deciding "
    "what to do next. Base every statement about accounts, lines, bills or devices "
    "on what a tool returned, never on a guess.\n"
    "- Ask the customer for any identifier you need instead of inventing it.\n"
    "- When the customer's request has been handled, or cannot be handled within "
    f"the policy, call `{END_CONVERSATION}`. Hand over to a human only when the policy "
    f"says to, with `{TRANSFER_TO_HUMAN}` if you have it."
)

USER_STOP_NOTE = (
    f"When the conversation is over, reply with the single token {STOP}. "
    f"If the agent hands you to a human, reply with {TRANSFER}. If the agent asks "
    f"you for something this task does not cover, reply with {OUT_OF_SCOPE}."
)

DEFAULT_USER_SCRIPT = (
    "Open by telling the agent, in your own words, why you are getting in touch.",
    "Answer the agent's questions using only the information you were given.",
    "Stop once your request is handled or the agent says nothing more can be done.",
)

DEFAULT_USER_GUIDELINES = (
    "Stay in character as the customer; you are not an assistant.",
    "Reveal information only when it is relevant or asked for; do not recite your whole task at once.",
    "Never invent facts you were not given; if asked something you do not know, say so.",
)


def agent_prompt(policy: str, addenda: tuple[str, ...] = ()) -> str:
    return "\n\n".join([policy.strip(), AGENT_GENERAL_NOTES, *[a.strip() for a in addenda]])


def _section(title: str, body: str | None) -> str | None:
    return f"## {title}\n{body.strip()}" if body and body.strip() else None


def user_prompt(profile: UserProfile, script: tuple[str, ...], guidelines: tuple[str, ...]) -> str:
    numbered = "\n".join(f"{i}. {step}" for i, step in enumerate(script, 1))
    bullets = "\n".join(f"- {rule}" for rule in guidelines)
    sections = [
        "You are role-playing a customer who contacts a support agent. Act only as this "
        "customer; the agent is played by someone else.",
        _section("Who you are", profile.persona),
        _section("Why you are getting in touch", profile.reason_for_call),
        _section("What you know", profile.known_info),
        _section("What you do not know", profile.unknown_info),
        _section("Your task", profile.instructions),
        _section("How the conversation goes", numbered),
        _section("Rules", bullets),
        _section("Ending", USER_STOP_NOTE),
    ]
    return "\n\n".join(s for s in sections if s)


REFERENCE_STEPS_INTRO = (
    "## Reference steps\n"
    "This case has a known resolution. Follow these steps in order, one per reply: "
    "an agent step is a call of that tool with these arguments; a customer step is "
    "something to ask the customer to do on their phone, then wait for what it shows."
)


def reference_steps_prompt(actions: tuple) -> str:
    """The scenario's reference actions as a ground-truth addendum to the agent prompt
    (one ``N. agent|customer: tool {json}`` line each), for an agent run with
    ``reference_steps``: checking user simulators against a known resolution, and
    benchmarks whose scripted agent follows it."""

    lines = [f"{i}. {'agent' if a.side == 'agent' else 'customer'}: {a.name} {json.dumps(a.arguments, sort_keys=True)}"
             for i, a in enumerate(actions, 1)]
    return "\n".join([REFERENCE_STEPS_INTRO, *lines])
