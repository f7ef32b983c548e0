"""Figures and names of the static report: how a value is shown and carried.

Every figure on a page sits in an element with ``data-metric``/``data-value``
(and the arm, pair or judge it belongs to), so a test can read the rendered page
and compare it with the metric functions; page names are readable and
collision-free.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


def missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def dv(x: Any) -> str:
    """A figure as the data-value text: full precision, 'NaN' when missing."""
    return "NaN" if missing(x) else f"{float(x):.12g}"


def fmt_rate(x: Any) -> str:
    return "–" if missing(x) else f"{float(x):.3f}"


def fmt_num(x: Any, digits: int = 0) -> str:
    return "–" if missing(x) else f"{float(x):,.{digits}f}"


@dataclass(frozen=True)
class Fig:
    """One figure: its exact value, its shown text and the data-* attributes naming it."""

    value: str
    text: str
    attrs: list[tuple[str, str]] = field(default_factory=list)


def fig(value: Any, text: str | None = None, **attrs: Any) -> Fig:
    return Fig(dv(value), text if text is not None else fmt_rate(value),
               [(k.replace("_", "-"), str(v)) for k, v in attrs.items()])


def count(value: Any, **attrs: Any) -> Fig:
    return fig(value, fmt_num(value), **attrs)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "x"


def _name(text: str) -> str:
    # readable and collision-free: two ids with the same slug differ in the hash
    return f"{slug(text)}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def transcript_href(run_id: str, conversation_id: str) -> str:
    """Path of a conversation's page inside the report (unique per run and conversation)."""
    return f"transcripts/{_name(str(run_id))}/{_name(str(conversation_id))}.html"


def arm_anchor(arm: str) -> str:
    return f"arm-{_name(arm)}"
