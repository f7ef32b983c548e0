"""The talk4 set (``talk4/``) is what its README says: frozen files that match the manifest, every item a test
item, every claim type, value, talk form and fault class, sentences of its own (not those of the earlier sets, talk3
included). The checks it shares with talk2 and talk3 (the customer playing it, ``eval-user:talk4:<mode>``, says
faithful lines that are true for its task and phone, commits exactly one fault of its class, the measurement's replay
finds the injection again, the frozen files match the manifest, all test) run in ``test_talk2_set.py``, parametrized
over the later sets.

Only this set's own ground truth is checked here; nothing here runs the audit or reads what it found."""

from __future__ import annotations

from collections import Counter

from tests.audit_eval.eval_set import (
    TALK3_CLAIM_FORMS,
    TALK3_FAULT_FORMS,
    TALK3_FORMS,
    TALK3_VOICES,
    TALK4_CLAIM_FORMS,
    TALK4_FAULT_FORMS,
    TALK4_FORMS,
    TALK4_REPORT_FORMS,
    TALK4_VOICES,
    TALK_CONTEXTS,
    TALK_FAULT_GROUPS,
    TALK_FORMS,
    load,
)
from tests.audit_eval.test_talk2_set import _group, hand_covers_every_claim_and_report

SPLIT = "talk4"


# ----------------------------------------------------------------- the set
def test_talk4_covers_every_claim_type_form_and_fault_class_by_hand() -> None:
    items, hand = load(SPLIT), hand_covers_every_claim_and_report(SPLIT)
    assert len(hand) >= 1000, len(hand)
    talk = [p for p in hand if p.kind == "talk"]
    assert len(talk) >= 500, len(talk)
    forms = Counter(p.form for p in talk)
    assert set(forms) == set(TALK4_FORMS) and min(forms.values()) >= 5, forms
    assert min(forms[f] for f in TALK_FORMS) >= 8 and forms["negation"] + forms["existential"] >= 90, forms
    assert sum(forms[f] for f in TALK4_FORMS if f not in TALK3_FORMS) >= 150, forms  # this set's new constructions
    assert {p.type for p in talk} == set(TALK_CONTEXTS)
    faults = Counter(_group(p) for p in hand if p.kind == "fault")
    assert set(faults) == set(TALK_FAULT_GROUPS) and min(faults.values()) >= 11, faults
    assert faults["invented_constraint"] >= 60 and faults["new_problem"] >= 55, faults
    assert faults["state_without_tool:with_call"] >= 35 and faults["state_without_tool:alone"] >= 20, faults
    assert faults["misreport"] >= 20, faults
    claim_forms = Counter(p.form for p in hand if p.kind == "claim")
    assert set(claim_forms) == set(TALK4_CLAIM_FORMS), claim_forms
    assert sum(claim_forms[f] for f in TALK4_CLAIM_FORMS if f not in TALK3_CLAIM_FORMS) >= 40, claim_forms
    report_forms = Counter(p.form for p in hand if p.kind == "report" and p.type != "ack")
    assert set(report_forms) == set(TALK4_REPORT_FORMS), report_forms
    fault_forms = Counter(p.form for p in hand if p.kind == "fault")
    assert set(TALK4_FAULT_FORMS) - set(TALK3_FAULT_FORMS) <= set(fault_forms), fault_forms
    for cls in ("invented_constraint", "new_problem"):  # broad in form, not one way of saying it
        assert len({p.form for p in hand if p.kind == "fault" and p.type == cls}) >= 15, cls
        assert len({p.voice for p in hand if p.kind == "fault" and p.type == cls}) >= 20, cls
    for kind in ("talk", "fault"):
        assert {p.voice for p in hand if p.kind == kind} == set(TALK4_VOICES), kind
    assert set(TALK4_VOICES) - set(TALK3_VOICES) <= {p.voice for p in hand if p.kind in ("report", "claim")}
    assert {p.kind for p in items if p.source == "grammar"} == {"talk", "report", "claim", "fault"}
