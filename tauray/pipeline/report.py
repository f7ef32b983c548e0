"""The report as ``tauray report`` writes it: the report of every run
(:func:`tauray.results.report.build.build_report`) with each feature's section, composed here
because the report and the features must not know each other (docs/architecture.md).

From Python: ``from tauray.pipeline.report import write_report; write_report("runs/demo-...")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tauray.actors.audit.report import AuditSection
from tauray.actors.voice.report import VoiceSection
from tauray.results.report.build import ReportSummary, build_report
from tauray.results.report.sections import ReportSection

SECTIONS: tuple[ReportSection, ...] = (VoiceSection(), AuditSection())
"""Every feature's part of the report, in page order."""


def write_report(path: Path | str, out: Path | str | None = None, **options: Any) -> ReportSummary:
    """The report of a run or sweep folder, every section included (``options``: ``build_report``'s)."""
    return build_report(path, out, sections=SECTIONS, **options)


__all__ = ["SECTIONS", "write_report"]
