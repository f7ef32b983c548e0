"""Assets of the static report: the stylesheet, the render check script and
the inline-SVG chart makers (no JavaScript libraries, nothing fetched)."""

from tauray.results.report.assets.charts import (
    svg_bars,
    svg_forest,
    svg_heatmap,
    svg_lines,
)
from tauray.results.report.assets.style import CSS, RENDER_CHECK_JS, TIMELINE_JS

__all__ = ["CSS", "RENDER_CHECK_JS", "TIMELINE_JS", "svg_bars", "svg_forest", "svg_heatmap", "svg_lines"]
