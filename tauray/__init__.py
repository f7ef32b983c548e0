"""tauray: dual-control agent evaluation at sweep scale.

The sub-packages live in the repository's top-level folders and are installed
as ``tauray.scenarios``, ``tauray.actors``, ``tauray.pipeline``,
``tauray.results`` and ``tauray.data``.
"""

__version__ = "0.1.0"
