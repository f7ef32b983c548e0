"""The talk5 set (``talk5/``) is what its README says: frozen files that match the manifest, every item a test
item, every claim type, value, talk form and fault class, sentences of its own (not those of the earlier sets, talk4
included). The checks it shares with talk2, talk3 and talk4 (the customer playing it, ``eval-user:talk5:<mode>``, says
faithful lines that are true for its task and phone, commits exactly one fault of its class, the measurement's replay
finds the injection again, the frozen files match the manifest, all test) run in ``test_talk2_set.py``, parametrized
over the later sets.

Only this set's own ground truth is checked here; nothing here runs the audit or reads what it found."""

from __future__ import annotations

from collections import Counter

from tests.audit_eval import customer as cust
from tests.audit_eval.eval_set import (
    TALK4_CLAIM_FORMS,
    TALK4_FAULT_FORMS,
    TALK4_FORMS,
    TALK4_REPORT_FORMS,
    TALK4_VOICES,
    TALK5_CLAIM_FORMS,
    TALK5_FAULT_FORMS,
    TALK5_FORMS,
    TALK5_REPORT_FORMS,
    TALK5_VOICES,
    TALK_CONTEXTS,
    TALK_FAULT_GROUPS,
    TALK_FORMS,
    load,
)
from tests.audit_eval.test_talk2_set import _group, hand_covers_every_claim_and_report

SPLIT = "talk5"


# ----------------------------------------------------------------- the set
def test_talk5_covers_every_claim_type_form_and_fault_class_by_hand() -> None:
    items, hand = load(SPLIT), hand_covers_every_claim_and_report(SPLIT)
    assert len(hand) >= 1100, len(hand)
    talk = [p for p in hand if p.kind == "talk"]
    assert len(talk) >= 600, len(talk)
    forms = Counter(p.form for p in talk)
    assert set(forms) == set(TALK5_FORMS) and min(forms.values()) >= 5, forms
    assert min(forms[f] for f in TALK_FORMS) >= 8 and forms["negation"] + forms["existential"] >= 90, forms
    assert sum(forms[f] for f in TALK5_FORMS if f not in TALK4_FORMS) >= 250, forms  # this set's new constructions
    assert {p.type for p in talk} == set(TALK_CONTEXTS)
    faults = Counter(_group(p) for p in hand if p.kind == "fault")
    assert set(faults) == set(TALK_FAULT_GROUPS) and min(faults.values()) >= 11, faults
    assert faults["invented_constraint"] >= 60 and faults["new_problem"] >= 60, faults
    assert faults["state_without_tool:with_call"] >= 35 and faults["state_without_tool:alone"] >= 20, faults
    assert faults["misreport"] >= 20, faults
    claim_forms = Counter(p.form for p in hand if p.kind == "claim")
    assert set(claim_forms) == set(TALK5_CLAIM_FORMS), claim_forms
    assert sum(claim_forms[f] for f in TALK5_CLAIM_FORMS if f not in TALK4_CLAIM_FORMS) >= 60, claim_forms
    report_forms = Counter(p.form for p in hand if p.kind == "report" and p.type != "ack")
    assert set(report_forms) == set(TALK5_REPORT_FORMS), report_forms
    assert sum(report_forms[f] for f in TALK5_REPORT_FORMS if f not in TALK4_REPORT_FORMS) >= 20, report_forms
    fault_forms = Counter(p.form for p in hand if p.kind == "fault")
    assert set(TALK5_FAULT_FORMS) - set(TALK4_FAULT_FORMS) <= set(fault_forms), fault_forms
    for cls in ("invented_constraint", "new_problem", "state_without_tool"):  # broad in form, not one way of saying it
        assert len({p.form for p in hand if p.kind == "fault" and p.type == cls}) >= 15, cls
        assert len({p.voice for p in hand if p.kind == "fault" and p.type == cls}) >= 25, cls
    for kind in ("talk", "fault"):
        assert {p.voice for p in hand if p.kind == kind} == set(TALK5_VOICES), kind
    assert set(TALK5_VOICES) - set(TALK4_VOICES) <= {p.voice for p in hand if p.kind in ("report", "claim")}
    assert {p.kind for p in items if p.source == "grammar"} == {"talk", "report", "claim", "fault"}


def test_talk5_faithful_lines_on_a_fact_name_no_other_setting() -> None:
    """A line keyed by a fact of the task names no claim type's keyword beyond what that fact itself names (so it
    never brings a setting into the conversation that nobody named)."""
    allowed = {"mms": {"mms"}, "mms:write": {"mms"}, "data": {"mobile_data"}, "data:write": {"mobile_data"},
               "nowifi": {"wifi"}, "speedtest=failed": {"speed"}, "speedtest=notexcellent": {"speed"}}
    for p in load(SPLIT):
        if p.kind == "talk" and "=" not in p.variant.replace("speedtest=", ""):
            named = {c for c in cust.CLAIM_KEYWORDS if cust._mentions(p.text.lower(), c)}
            assert named <= allowed.get(p.variant, set()), (p.id, named, p.text)
