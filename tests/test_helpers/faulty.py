"""Every faulty behaviour, as the test endpoint loads them: ``tauray endpoint --behaviours
tests.test_helpers.faulty`` or ``start_endpoint(behaviours="tests.test_helpers.faulty")``."""

from __future__ import annotations

from tests.test_helpers.faulty_agent import FAULTY_AGENT_BEHAVIOURS
from tests.test_helpers.faulty_judges import FAULTY_JUDGES
from tests.test_helpers.faulty_user import FAULTY_BEHAVIOURS

BEHAVIOURS = {**FAULTY_BEHAVIOURS, **FAULTY_AGENT_BEHAVIOURS, **FAULTY_JUDGES}
"""Model name -> behaviour, added to the endpoint's registry."""
MODULE = __name__
"""What to pass as ``behaviours``."""
