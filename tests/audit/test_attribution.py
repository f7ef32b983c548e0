"""Who failed, from the verdict and the findings."""

from __future__ import annotations

from tauray.actors.audit.attribution import attribute
from tauray.actors.audit.finding import Finding


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


def _alone(*pairs):
    return {(f.detector, f.message_seq, f.fault_class): v for f, v in pairs}


def test_an_agent_fault_decides_with_its_turn():
    skip = _f("skipped_write", side="agent", turn=4)
    verdict = attribute(False, None, [_f("result_contradiction", effect="talk", turn=2), skip])
    assert (verdict.attribution, verdict.decisive.fault_class, verdict.decisive.turn) == ("agent", "skipped_write", 4)
    assert attribute(True, None, [skip]).attribution == "none"


def test_both_sides_at_fault_that_matter_is_mixed_with_the_earlier_turn():
    user = _f("premature_stop", turn=9)
    agent = _f("wrong_arguments", side="agent", turn=5).model_copy(update={"flips_verdict": False})
    verdict = attribute(False, None, [agent, user], alone=_alone((agent, True)))
    assert (verdict.attribution, verdict.decisive.turn) == ("mixed", 5)


def test_a_harmless_agent_fault_leaves_the_failure_to_the_simulator():
    user = _f("premature_stop", turn=9)
    agent = _f("unrequested_agent_write", side="agent", turn=5).model_copy(update={"flips_verdict": False})
    verdict = attribute(False, None, [agent, user], alone=_alone((agent, False)))
    assert (verdict.attribution, verdict.decisive.turn) == ("simulator", 9)


def test_the_side_whose_correction_rescues_the_record_decides():
    user = _f("unrequested_write", turn=3).model_copy(update={"flips_verdict": False})
    agent = _f("skipped_write", side="agent", turn=5).model_copy(update={"flips_verdict": True})
    assert attribute(False, None, [user, agent], alone=_alone((agent, True), (user, True))).attribution == "agent"
    user = user.model_copy(update={"flips_verdict": True})
    agent = agent.model_copy(update={"flips_verdict": False})
    verdict = attribute(False, None, [user, agent], alone=_alone((agent, True), (user, True)))
    assert (verdict.attribution, verdict.decisive.turn) == ("simulator", 3)
    harmless_user = user.model_copy(update={"flips_verdict": False})
    verdict = attribute(False, None, [harmless_user, agent], alone=_alone((agent, True), (harmless_user, False)))
    assert (verdict.attribution, verdict.decisive.turn) == ("agent", 5)
