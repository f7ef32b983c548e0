"""tauray: dual-control agent evaluation at sweep scale.

This folder is the package as installed: its rooms are ``tauray.scenarios`` (what is
evaluated), ``tauray.actors`` (what runs a conversation), ``tauray.pipeline`` (how a run
goes), ``tauray.results`` (where it lands), ``tauray.endpoint`` (the local test endpoint)
and ``tauray.data`` (prompts, NL packs, example sweeps).
"""

__version__ = "0.1.0"
