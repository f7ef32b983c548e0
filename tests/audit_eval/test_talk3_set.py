"""The talk3 set (``talk3/``) is what its README says: frozen files that match the manifest, every item a test
item, every claim type, value, talk form and fault class, sentences of its own (not those of the earlier sets, talk2
included). The checks it shares with talk2 (the customer playing it, ``eval-user:talk3:<mode>``, says faithful
lines that are true for its task and phone, commits exactly one fault of its class, and the measurement's replay
finds the injection again) run in ``test_talk2_set.py``, parametrized over both sets.

Only this set's own ground truth is checked here; nothing here runs the audit or reads what it found."""

from __future__ import annotations

from collections import Counter

from tests.audit_eval.eval_set import (
    TALK2_FORMS,
    TALK3_CLAIM_FORMS,
    TALK3_FORMS,
    TALK3_VOICES,
    TALK_CONTEXTS,
    TALK_FAULT_GROUPS,
    TALK_FORMS,
    load,
)
from tests.audit_eval.test_talk2_set import _group, hand_covers_every_claim_and_report

SPLIT = "talk3"



# ----------------------------------------------------------------- the set
def test_talk3_covers_every_claim_type_form_and_fault_class_by_hand() -> None:
    items, hand = load(SPLIT), hand_covers_every_claim_and_report(SPLIT)
    assert len(hand) >= 800, len(hand)
    talk = [p for p in hand if p.kind == "talk"]
    assert len(talk) >= 350, len(talk)
    forms = Counter(p.form for p in talk)
    assert set(forms) == set(TALK3_FORMS) and min(forms.values()) >= 5, forms
    assert min(forms[f] for f in TALK_FORMS) >= 8 and forms["negation"] >= 60, forms
    assert sum(forms[f] for f in TALK3_FORMS if f not in TALK2_FORMS) >= 100, forms  # this set's new constructions
    assert {p.type for p in talk} == set(TALK_CONTEXTS)
    faults = Counter(_group(p) for p in hand if p.kind == "fault")
    assert set(faults) == set(TALK_FAULT_GROUPS) and min(faults.values()) >= 10, faults
    assert faults["invented_constraint"] >= 45 and faults["new_problem"] >= 40, faults
    assert faults["state_without_tool:with_call"] >= 28 and faults["state_without_tool:alone"] >= 15, faults
    claim_forms = Counter(p.form for p in hand if p.kind == "claim")
    assert set(claim_forms) == set(TALK3_CLAIM_FORMS), claim_forms
    for kind in ("talk", "fault"):
        assert {p.voice for p in hand if p.kind == kind} == set(TALK3_VOICES), kind
    assert {p.kind for p in items if p.source == "grammar"} == {"talk", "report", "claim", "fault"}
