"""What a feature adds to the report, without the report knowing the feature.

The report draws what every run has (leaderboard, pass^k, comparisons, judges, transcripts).
A feature that only some runs have (voice, the audit) brings a :class:`ReportSection`: HTML
for the index page, for each conversation's page, and pages of its own. The report hands each
section a :class:`Kit` (its template environment, so a section's templates extend the report's
own and use its ``fig`` macro; its figure and link helpers) and places what comes back, so
neither side imports the other; the caller that composes the report names the sections
(``tauray.pipeline.report``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
from jinja2 import Environment
from markupsafe import Markup

from tauray.results.report.values import Fig, count, fig, fmt_num, fmt_rate, missing, transcript_href

PerConversation = Callable[[dict[str, Any], Path], str]
"""A section's HTML for one conversation's page: (the conversation row, the page's folder) -> HTML."""


@dataclass(frozen=True)
class Kit:
    """What the report lends a section: rendering in its template environment, the folder it
    writes into, and how it shows figures and links pages."""

    env: Environment
    out_dir: Path
    fig: Callable[..., Fig] = fig
    count: Callable[..., Fig] = count
    fmt_rate: Callable[[Any], str] = fmt_rate
    fmt_num: Callable[..., str] = fmt_num
    missing: Callable[[Any], bool] = missing
    transcript_href: Callable[[str, str], str] = transcript_href

    def render(self, template: str, **context: Any) -> Markup:
        """``template`` (jinja source; may extend ``base.html.j2`` and import its macros) rendered."""
        return Markup(self.env.from_string(template).render(**context))

    def write_page(self, name: str, template: str, title: str, **context: Any) -> Path:
        """A page of the section's own at the report's top (``name``, e.g. ``audit.html``)."""
        path = self.out_dir / name
        path.write_text(self.render(template, title=title, root="", **context), encoding="utf-8")
        return path


class ReportSection(Protocol):
    """A feature's part of the report; each method may add nothing ('' or a function that returns '')."""

    name: str
    """Short id of the section (``voice``, ``audit``), its element ids' prefix."""

    def index(self, src: Path, conv: pd.DataFrame, kit: Kit) -> str:
        """HTML on the index page, after the leaderboard ('' for a run without the feature)."""
        ...

    def conversations(self, src: Path, kit: Kit) -> PerConversation:
        """What the section shows on each conversation's page, read from ``src`` once."""
        ...

    def pages(self, src: Path, kit: Kit) -> list[str]:
        """Pages of the section's own, written through ``kit.write_page``; their file names."""
        ...


__all__ = ["Kit", "PerConversation", "ReportSection"]
