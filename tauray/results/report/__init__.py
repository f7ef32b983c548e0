"""The static HTML report of a run or sweep folder (docs/report.md): the report every run has,
and the sections a feature adds to it (:mod:`.sections`). ``tauray.pipeline.report.write_report``
is the report with every feature's section."""

from tauray.results.report.build import ReportSummary, build_report
from tauray.results.report.sections import Kit, PerConversation, ReportSection

__all__ = ["Kit", "PerConversation", "ReportSection", "ReportSummary", "build_report"]
