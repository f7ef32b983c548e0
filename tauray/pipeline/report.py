"""The report as ``tauray report`` writes it: the report of every run
(:func:`tauray.results.report.build.build_report`) with each feature's section, composed here
because the report and the features must not know each other (docs/architecture.md).

From Python: ``from tauray.pipeline.report import write_report; write_report("runs/demo-...")``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tauray.actors.audit.report import AuditSection
from tauray.actors.voice.analysis import paired_retention
from tauray.actors.voice.duplex.metrics import InteractionMetrics, pool
from tauray.actors.voice.report import VoiceSection
from tauray.results.report.build import ReportSummary, build_report
from tauray.results.report.duplex import PREFIX, DuplexSection
from tauray.results.report.sections import ReportSection


def pooled_panel(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Duplex conversation rows' stored interaction panels pooled by the engine's own ``pool``, as
    the same flat columns: what the report's duplex panel shows per cell."""
    return pool(InteractionMetrics.from_columns(row, PREFIX) for row in rows).columns(PREFIX)


SECTIONS: tuple[ReportSection, ...] = (VoiceSection(), DuplexSection(pooled_panel, paired_retention),
                                       AuditSection())
"""Every feature's part of the report, in page order."""


def write_report(path: Path | str, out: Path | str | None = None, **options: Any) -> ReportSummary:
    """The report of a run or sweep folder, every section included (``options``: ``build_report``'s)."""
    return build_report(path, out, sections=SECTIONS, **options)


__all__ = ["SECTIONS", "pooled_panel", "write_report"]
