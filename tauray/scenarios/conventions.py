"""Names every layer must agree on, in one place: the tokens a simulated customer ends
with (τ²'s convention), the harness tools that end or hand off a conversation, and the
reference policies that play a side without a model.

Prompts (scenarios), sessions, policies, the coordinator, the endpoint's scripted
behaviours, the judge renderer and the pipeline all read these names from here; a
copy elsewhere would drift."""

from __future__ import annotations

import re
from typing import Final

STOP: Final = "###STOP###"
"""The customer is done."""
TRANSFER: Final = "###TRANSFER###"
"""The customer was handed to a human."""
OUT_OF_SCOPE: Final = "###OUT-OF-SCOPE###"
"""The customer's instructions do not cover what the agent asked."""
STOP_TOKENS: Final = (STOP, TRANSFER, OUT_OF_SCOPE)

END_CONVERSATION: Final = "end_conversation"
"""The agent's harness tool that ends the conversation (tauray adds it to every agent)."""
TRANSFER_TO_HUMAN: Final = "transfer_to_human_agents"
"""The agent's upstream tool that hands the customer to a human (ends the conversation)."""
HARNESS_TOOLS: Final = frozenset({END_CONVERSATION, TRANSFER_TO_HUMAN})

ORACLE: Final = "oracle"
"""Reference agent: the scenario's reference actions, then end."""
SCRIPTED: Final = "scripted"
"""Reference user: states the problem, does exactly what the agent asks."""
REFERENCE_BY_SIDE: Final = {"agent": ORACLE, "user": SCRIPTED}
REFERENCE_POLICIES: Final = frozenset(REFERENCE_BY_SIDE.values())


def is_reference(model: str | None) -> bool:
    """Whether a model string names a reference policy (played without a model)."""
    return model in REFERENCE_POLICIES


PHONE_REQUEST: Final = re.compile(r"\(phone action: (?P<name>[a-z_][a-z0-9_]*) (?P<args>\{.*?\})\)$", re.MULTILINE)
"""The tag the oracle agent ends a phone request with, which the scripted user acts on and
the audit reads as the exact action asked for."""


def parse_phone_request(text: str | None) -> tuple[str, str] | None:
    """(tool, JSON arguments) of a tagged phone request in ``text``; None when it has none."""
    match = PHONE_REQUEST.search(text or "")
    return (match["name"], match["args"]) if match else None


__all__ = ["END_CONVERSATION", "HARNESS_TOOLS", "ORACLE", "OUT_OF_SCOPE", "PHONE_REQUEST", "REFERENCE_BY_SIDE",
           "REFERENCE_POLICIES", "SCRIPTED", "STOP", "STOP_TOKENS", "TRANSFER", "TRANSFER_TO_HUMAN", "is_reference",
           "parse_phone_request"]
