"""Telecom caller utterances to measure the channel on, made from the telecom domain's own
data (its customers' phone numbers, line ids and customer ids) and spoken the way voice mode's
caller speaks identifiers: one character at a time, comma-separated, symbols spelled out.

The sentence frames are ours and are fixed here, apart from any tuning of the channel; the
draw is seeded, so the same ``count`` and ``seed`` give the same utterances everywhere.
"""

from __future__ import annotations

import tomllib
from typing import Final

from tauray.actors.voice.seeding import rng_for
from tauray.scenarios.upstream import data_file

_FRAMES: tuple[str, ...] = (
    "Hi, my phone number is {phone}.",
    "The number on the account is {phone}.",
    "Sure, it's {phone}.",
    "My line id is {line}.",
    "It's the line {line}, the one that stopped working.",
    "My customer id is {customer}.",
    "The customer id should be {customer}, I think.",
    "My number is {phone} and the line is {line}.",
    "Yes, customer {customer}, and my phone number is {phone}.",
    "I'm calling about line {line}, my customer id is {customer}.",
)


def spell(identifier: str) -> str:
    """One character at a time, comma-separated, a dash spelled out: '555-1' -> '5, 5, 5, dash, 1'."""
    return ", ".join("dash" if c == "-" else c for c in identifier)


def telecom_identifiers() -> dict[str, list[str]]:
    """Phone numbers, line ids and customer ids of the telecom domain's database."""
    db = tomllib.loads(data_file("telecom", "db.toml").read_text())
    found: dict[str, set[str]] = {"phone": set(), "line": set(), "customer": set()}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "phone_number" and isinstance(value, str):
                    found["phone"].add(value)
                elif key == "line_id" and isinstance(value, str):
                    found["line"].add(value)
                elif key == "customer_id" and isinstance(value, str):
                    found["customer"].add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(db)
    return {k: sorted(v) for k, v in found.items()}


CORPUS_SEED: Final = 2027
"""The frozen corpus's draw (docs/voice.md): measured once after the choices were made on other
draws (seed 99). 2027 since the callers slow down to spell (profiles version 2); 2026 before."""


def caller_utterances(count: int, seed: int = CORPUS_SEED) -> list[str]:
    """``count`` caller utterances, each with one or two spelled identifiers (seeded draw)."""
    ids = telecom_identifiers()
    rng = rng_for("corpus", seed)
    out = []
    for _ in range(count):
        frame = _FRAMES[int(rng.integers(len(_FRAMES)))]
        values = {k: spell(v[int(rng.integers(len(v)))]) for k, v in ids.items()}
        out.append(frame.format(**values))
    return out
