"""τ² interop: a run as τ² results files (:func:`export_tau2`) and τ² results files as a run,
re-scored by tauray (:func:`import_tau2`); docs/tau2.md."""

from tauray.results.tau2.from_tau2 import import_tau2, tau2_rewards_df
from tauray.results.tau2.to_tau2 import export_tau2

__all__ = ["export_tau2", "import_tau2", "tau2_rewards_df"]
