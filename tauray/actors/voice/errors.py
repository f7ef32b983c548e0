"""The one error class of bad speech input: raised before any model call, one line."""

from __future__ import annotations

INSTALL_HINT = "pip install 'tauray[voice]'"


class SpeechConfigError(ValueError):
    """Bad speech input (an unknown voice, profile, effect or engine, a value out of range, a
    missing optional package): a one-line message that names the field and what is allowed."""
