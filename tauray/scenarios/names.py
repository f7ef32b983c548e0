"""Scenario names: readable, unique, stable, derived from the upstream id.

``[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]`` becomes
``tau2_telecom__mobile_data_issue__airplane_mode_on__data_mode_off``; a persona
other than None is kept as a suffix (``...__persona_easy``) so the three
persona versions of a task stay distinguishable. Airline and retail ids are
numbers and become ``tau2_airline__task_7``.
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"^\[(?P<issue>[^\]]+)\](?P<body>.*?)(?:\[PERSONA:(?P<persona>[^\]]*)\])?$")
_UNSAFE = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _UNSAFE.sub("_", text.lower()).strip("_")


def domain_prefix(domain: str, policy_variant: str) -> str:
    if policy_variant in ("default", "manual"):
        return f"tau2_{domain}"
    return f"tau2_{domain}_{policy_variant}"


def scenario_name(domain: str, policy_variant: str, upstream_id: str) -> str:
    prefix = domain_prefix(domain, policy_variant)
    match = _BRACKETED.match(upstream_id)
    if match is None:
        body = slug(upstream_id)
        if not body:
            raise ValueError(f"cannot derive a scenario name from upstream id {upstream_id!r}")
        if body[0].isdigit():
            body = f"task_{body}"
        return f"{prefix}__{body}"
    parts = [slug(match["issue"])]
    parts += [slug(p) for p in match["body"].split("|") if slug(p)]
    persona = match["persona"]
    if persona and persona.lower() != "none":
        parts.append(f"persona_{slug(persona)}")
    return "__".join([prefix, *parts])


def parse_issue_type(upstream_id: str) -> str | None:
    """The issue family of a bracketed id (telecom: mms_issue, service_issue, ...)."""
    match = _BRACKETED.match(upstream_id)
    return slug(match["issue"]) if match else None


def parse_persona(upstream_id: str) -> str | None:
    match = _BRACKETED.match(upstream_id)
    if match is None or not match["persona"] or match["persona"].lower() == "none":
        return None
    return slug(match["persona"])
