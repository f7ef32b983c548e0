"""Static HTML report of a run or sweep folder.

One folder, opened offline: ``index.html`` (leaderboard, pass^k, paired
comparisons, manual-vs-workflow A/B, breakdowns, judge agreement, cost),
``conversations.html`` (every conversation by arm, linked), one page per
conversation under ``transcripts/`` and the shared stylesheet and script under
``assets/`` (written once, not inlined into thousands of pages). Pages are
rendered by jinja2 templates (``assets/templates``) with autoescaping,
so no table value can inject markup. Charts are inline SVG drawn from the
metric functions' output; a Content-Security-Policy forbids any fetch. Every
figure sits in an element with ``data-metric``/``data-value`` (and the arm,
pair or judge it belongs to), so a test can read the rendered page and compare
it with the metric functions (design rule 8: the report reads only analysis
outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field

from tauray.results.report.assets import CSS, RENDER_CHECK_JS, TIMELINE_JS
from tauray.results.report.index import index_context
from tauray.results.report.pages import write_transcripts
from tauray.results.report.sections import Kit, ReportSection
from tauray.results.report.values import arm_anchor, transcript_href
from tauray.results.stats import analysis
from tauray.results.tables import readers
from tauray.results.tables.layout import REPORT_DIR
from tauray.results.tables.readers import plain_records

CSP = ("default-src 'none'; style-src 'self' 'unsafe-inline' file:; script-src 'self' file:; img-src data:; "
       "media-src 'self' file:")  # media: a voice run's own audio files, by relative path
_TEMPLATES = Path(__file__).resolve().parent / "assets" / "templates"


class ReportSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    out: str = Field(description="Report folder.")
    index: str = Field(description="Path of index.html.")
    conversations: int = Field(description="Conversations in the report.")
    transcripts: int = Field(description="Transcript pages written.")
    arms: list[str] = Field(description="Arms (agent model | user model) on the leaderboard.")
    judge_configs: int = Field(description="Judge configs with verdicts.")


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=False, lstrip_blocks=False)
    env.globals["csp"] = Markup(CSP)  # a constant of ours, quotes kept as written
    return env


def write_assets(out_dir: Path) -> None:
    """The stylesheet and script every page links to (one copy per report)."""
    assets = out_dir / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / "report.css").write_text(CSS, encoding="utf-8")
    (assets / "report.js").write_text(RENDER_CHECK_JS + TIMELINE_JS, encoding="utf-8")


def build_report(path: Path | str, out: Path | str | None = None, *, k_max: int = 4, n_boot: int = 1000,
                 seed: int = 0, confidence: float = 0.95, progress: Callable[[int], None] | None = None,
                 sections: Sequence[ReportSection] = ()) -> ReportSummary:
    """Write the report of a run or sweep folder into ``out`` (default PATH/report), with each of
    ``sections`` (a feature's part: :mod:`.sections`; ``tauray.pipeline.report`` names them all)."""
    src = Path(path)
    out_dir = Path(out) if out is not None else src / REPORT_DIR
    conv = analysis.with_arms(readers.conversations_df(src))
    if conv.empty:
        raise ValueError(f"no conversations in {src}")
    jv = readers.judge_verdicts_df(src)
    context, arms = index_context(conv, jv, k_max=k_max, n_boot=n_boot, seed=seed, confidence=confidence,
                                  nl=readers.nl_verdicts_df(src))
    env = environment()
    out_dir.mkdir(parents=True, exist_ok=True)
    kit = Kit(env=env, out_dir=out_dir)
    context["sections"] = [html for s in sections if (html := s.index(src, conv, kit))]
    write_assets(out_dir)
    index = env.get_template("index.html.j2").render(title="tauray report", root="", source=str(src), **context)
    (out_dir / "index.html").write_text(index, encoding="utf-8")
    listing = []
    for arm in arms:
        g = conv[conv["arm"] == arm].sort_values(["scenario", "trial"])
        rows = plain_records(g[["run_id", "conversation_id", "scenario", "trial", "attempt", "success",
                          "termination_reason", "predicates_met", "predicates_total", "turns", "error_kind"]])
        for r in rows:
            r["href"] = transcript_href(r["run_id"], r["conversation_id"])
        listing.append({"name": arm, "anchor": arm_anchor(arm), "rows": rows})
    (out_dir / "conversations.html").write_text(
        env.get_template("conversations.html.j2").render(title="Conversations", root="", arms=listing),
        encoding="utf-8")
    n = write_transcripts(src, out_dir, conv, jv, env, progress, [s.conversations(src, kit) for s in sections])
    for s in sections:
        s.pages(src, kit)
    return ReportSummary(out=str(out_dir), index=str(out_dir / "index.html"), conversations=len(conv),
                         transcripts=n, arms=arms, judge_configs=int(jv["judge_config_id"].nunique()))
