"""Who failed, from the verdict and the findings."""

from __future__ import annotations

from tauray.results.audit.attribution import attribute
from tauray.results.audit.detectors import Finding


def _f(cls, effect="outcome", side="user", turn=3):
    return Finding(detector=cls, detector_version=1, fault_class=cls, blamed_side=side, effect=effect, tier="rule",
                   turn=turn, message_seq=turn, evidence="x")


def test_attribution_rules():
    assert attribute(None, "infra", [_f("premature_stop")]).attribution == "harness"
    assert attribute(True, None, [_f("premature_stop")]).attribution == "none"
    assert attribute(None, None, []).attribution == "undetermined"
    assert attribute(False, None, []).attribution == "agent"
    talk = attribute(False, None, [_f("result_contradiction", effect="talk")])
    assert talk.attribution == "undetermined"
    both = attribute(False, None, [_f("known_info_contradicted", "talk", turn=1), _f("different_action", turn=5)])
    assert (both.attribution, both.decisive.fault_class, both.decisive.turn) == ("simulator", "different_action", 5)
    mixed = attribute(False, None, [_f("premature_stop"), _f("agent_fault", side="agent")])
    assert mixed.attribution == "mixed"


def test_a_simulator_fault_whose_correction_does_not_rescue_the_verdict_is_mixed():
    unexplained = _f("unrequested_write").model_copy(update={"flips_verdict": False})
    assert attribute(False, None, [unexplained]).attribution == "mixed"
    decisive = _f("different_action", turn=7).model_copy(update={"flips_verdict": True})
    verdict = attribute(False, None, [unexplained, decisive])
    assert (verdict.attribution, verdict.decisive.turn) == ("simulator", 7)
