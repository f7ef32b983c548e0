"""One model that plays every role, as a hosted model does when a sweep uses it as agent,
user simulator and judge at once (one provider quota for all three).

``all-roles`` reads which role a request is for from what tauray itself sends: a judge
request carries the conversation-record marker of the judge prompts, a user-simulator
request carries the user prompt's ending note; anything else is the agent. It then answers
as ``judge-good``, ``scripted-user`` or ``scripted-agent`` would.
"""

from __future__ import annotations

from typing import Any

from tauray.endpoint.judges import JUDGE_BEHAVIOURS, is_judge_request
from tauray.endpoint.replies import (
    Behaviour,
    BehaviourSettings,
    Reply,
    request_messages,
)
from tauray.endpoint.scripted import scripted_agent, scripted_user
from tauray.scenarios.prompts import USER_STOP_NOTE


def role_of(body: dict[str, Any]) -> str:
    """"judge", "user" or "agent": the role a request was sent for."""
    if is_judge_request(body):
        return "judge"
    system = " ".join(str(m.get("content") or "") for m in request_messages(body) if m.get("role") == "system")
    return "user" if USER_STOP_NOTE in system else "agent"


def all_roles(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """Agent, user or judge, whichever the request is for (see the module docs)."""
    role = role_of(body)
    if role == "judge":
        return JUDGE_BEHAVIOURS["judge-good"](body, settings)
    return scripted_user(body, settings) if role == "user" else scripted_agent(body, settings)


ROLE_BEHAVIOURS: dict[str, Behaviour] = {"all-roles": all_roles}

__all__ = ["ROLE_BEHAVIOURS", "all_roles", "role_of"]
