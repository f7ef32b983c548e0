"""The talk2 set (``talk2/``) is what its README says: frozen files that match the manifest, every item a test
item, every claim type, value, talk form and fault class, sentences of its own (not those of the earlier sets);
and the talk customer playing it (``eval-user:talk2:<mode>``) says faithful lines that are true for its task and
phone (checked against the real phone tools' results and the task's own fields), commits exactly one fault of
its class, and the measurement's replay finds the injection again.

Only this set's own ground truth is checked here; nothing here runs the audit or reads what it found."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from tests.audit_eval import customer as cust
from tests.audit_eval.eval_set import (
    ALL_TALK_SPLITS,
    CLAIM_VALUES,
    FAULT_CLASSES,
    REPORT_VALUES,
    TALK2_FORMS,
    TALK2_VOICES,
    TALK_CONTEXTS,
    TALK_FAULT_GROUPS,
    TALK_FORMS,
    TALK_SETS,
    UNREAD_TYPES,
    build_talk,
    load,
    render,
    talk_manifest,
)
from tests.audit_eval.simulate import converse
from tests.audit_eval.test_eval_set import QUOTED, RESULTS
from tests.audit_eval.test_talk_set import (
    REQUIRED,
    _check_talk,
    _norm,
    _own,
    _tasks,
    commits_one_fault,
    replay_finds_injections,
)

SPLIT = "talk2"
LATER_SETS = ("talk2", "talk3", "talk4", "talk5")
"""The later talk sets (test only): the checks below hold for each (``test_talk3_set.py``, ``test_talk4_set.py`` and
``test_talk5_set.py`` have their own)."""


def _group(p: Any) -> str:
    return p.type if p.variant == "-" else f"{p.type}:{p.variant}"


# ----------------------------------------------------------------- the set
def hand_covers_every_claim_and_report(split: str) -> list[Any]:
    """The set's hand-written items, once checked to hold every claim and report value (and no report of a type
    the customer cannot read)."""
    items = load(split)
    hand = [p for p in items if p.source == "hand"]
    assert {(p.type, p.variant) for p in hand if p.kind == "claim"} == {(t, v) for t, vs in CLAIM_VALUES.items()
                                                                         for v in vs}
    assert {(p.type, p.variant) for p in hand if p.kind == "report"} == {(t, v) for t, vs in REPORT_VALUES.items()
                                                                          for v in vs}
    assert not any(p.type in UNREAD_TYPES for p in items if p.kind == "report")
    return hand


def test_talk2_covers_every_claim_type_form_and_fault_class_by_hand() -> None:
    items, hand = load(SPLIT), hand_covers_every_claim_and_report(SPLIT)
    assert len(hand) >= 400, len(hand)
    talk = [p for p in hand if p.kind == "talk"]
    assert len(talk) >= 150, len(talk)
    forms = Counter(p.form for p in talk)
    assert set(forms) == set(TALK2_FORMS) and min(forms[f] for f in TALK_FORMS) >= 10, forms
    assert forms["negation"] >= 60 and forms["doubleneg"] + forms["correction"] >= 20, forms
    assert {p.type for p in talk} == set(TALK_CONTEXTS)
    faults = Counter(_group(p) for p in hand if p.kind == "fault")
    assert set(faults) == set(TALK_FAULT_GROUPS) and min(faults.values()) >= 8, faults
    assert faults["invented_constraint"] >= 35 and faults["new_problem"] >= 35, faults
    assert faults["state_without_tool:with_call"] >= 25 and faults["state_without_tool:alone"] >= 12, faults
    for kind in ("talk", "fault"):
        assert {p.voice for p in hand if p.kind == kind} == set(TALK2_VOICES), kind
    assert {p.kind for p in items if p.source == "grammar"} == {"talk", "report", "claim", "fault"}


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_were_written_apart_from_the_earlier_sets(split: str) -> None:
    """No sentence of a later set (lower case, punctuation dropped) is one of an earlier set's, the first set's,
    the holdout's, the first talk set's or the customer's own constants; no id is shared; and no two items of a set
    say the same (talk4 and later). Every set froze with none shared (their READMEs): any match fails."""
    before = LATER_SETS[:LATER_SETS.index(split)]
    earlier_items = (*load(), *load("holdout"), *load("talk"), *(q for s in before for q in load(s)))
    earlier = {_norm(p.text) for p in earlier_items}
    earlier |= {_norm(t) for t in (*cust.OPENINGS, *cust.REPORTS, cust.MORE, cust.NO_SUCH_TOOL, *cust.THANKS)}
    mine = load(split)
    assert sorted(p.id for p in mine if _norm(p.text) in earlier) == []
    assert not {p.id for p in mine} & {p.id for p in earlier_items}
    if split not in ("talk2", "talk3"):
        assert len({_norm(p.text) for p in mine}) == len(mine)


# ----------------------------------------------------------------- the customer, on real phone tools
@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_frames_hold_their_slots_where_the_customer_fills_them(split: str) -> None:
    for p in load(split):
        text = p.text
        if p.kind == "fault":
            if p.type in ("misreport", "state_without_tool"):
                assert "{claim}" in text, p.id
            if "{claim}" in text:  # a claim sentence starts with a capital: only where a sentence starts
                assert re.search(r"(^|[.?!:] )\{claim\}", text), p.id
            assert not re.search(r"(^|[.?!] )\{setting\}", text), p.id  # setting words are lower case
        elif p.kind == "talk":
            assert ("{result}" in text) == (p.type == "quote"), p.id
            assert "{claim}" not in text and "{setting}" not in text, p.id


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_faithful_lines_never_call_it_fixed_or_refuse(split: str) -> None:
    banned = re.compile(r"\b(fixed|sorted it|working again|works now|working now|all good now|won't do that|"
                        r"not doing that|not allowed)\b", re.IGNORECASE)
    for p in load(split):
        if p.kind in ("talk", "report"):
            assert not banned.search(p.text), (p.id, p.text)


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_reports_say_only_what_the_result_shows(split: str) -> None:
    by_id = {p.id: p for p in load(split)}
    for result, expected in RESULTS.items():
        for salt in range(8):
            said = cust.report(result, "toggle_data", split, salt, "key")
            assert said is not None, result
            for i in said[1]:
                p = by_id[i]
                assert p.kind == "report" and (p.type == "ack" or expected.get(p.type) == p.variant), (result, i)
    for result in QUOTED:
        assert cust.report(result, "reboot_device", split, 0, "key") is None, result


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_faithful_customer_says_true_talk_and_commits_no_fault(split: str) -> None:
    forms: Counter = Counter()
    by_id = {p.id: p for p in load(split)}
    extra_openings = 0
    for s in _tasks(4):
        for seed in range(3):
            said: list[tuple[str, ...]] = []
            conv, injections = converse(s, f"eval-user:{split}:faithful", seed, phone=True, said=said)
            assert injections == []
            forms += _check_talk(s, conv, said, split)  # each line's key holds for the task and the real result
            extra_openings += any(by_id[i].type == "open" for i in said[0])
            own = _own(conv)
            assert len(own) == len(said) and all(not m.get("content") for m in own if m.get("tool_calls"))
    assert set(TALK_FORMS) - {"conditional"} <= set(forms), forms
    assert extra_openings >= 24, extra_openings


@pytest.mark.parametrize("fault", FAULT_CLASSES)
@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_customer_commits_exactly_one_fault_of_its_class(split: str, fault: str) -> None:
    commits_one_fault(split, fault)


@pytest.mark.parametrize("mode", ["faithful", "drawn", "state_without_tool", "invented_constraint", "new_problem"])
@pytest.mark.parametrize("split", LATER_SETS)
def test_the_replay_of_decide_finds_a_later_sets_injection_again(split: str, mode: str) -> None:
    replay_finds_injections(split, mode)


@pytest.mark.parametrize("split", LATER_SETS)
def test_the_measurement_takes_a_later_split(split: str) -> None:
    from tests.audit_eval.measure import _split, sweep

    assert _split(split) == split
    config = sweep("n", "http://x", split, {"mms_issue": ["a"]}, "oracle", ["new_problem"], 1, 1)
    assert config["models"]["u-faithful"]["model"] == f"openai/eval-user:{split}:faithful"
    with pytest.raises(ValueError, match=re.escape(f"eval-user:<{split}>:<mode>")):
        cust.decide({"model": "eval-user:talk6:faithful", "messages": []})


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_frozen_files_are_a_fresh_expansion_and_match_their_manifest(split: str) -> None:
    folder = TALK_SETS[split].folder
    for name, fresh in build_talk(split).items():
        assert (folder / "frozen" / name).read_text(encoding="utf-8") == render(fresh), f"{split}/{name} differs"
    listed = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$",
                             (folder / "README.md").read_text(encoding="utf-8"), re.MULTILINE))
    assert listed == talk_manifest(split), f"{split}/README.md's manifest differs from the files: changed after freezing"


@pytest.mark.parametrize("split", LATER_SETS)
def test_later_sets_are_all_test_with_template_split_keys(split: str) -> None:
    items = load(split)
    assert TALK_SETS[split].splits == (split,) and split in ALL_TALK_SPLITS
    assert len({p.id for p in items}) == len(items)
    assert all(p.split == "test" for p in items)  # no dev side: nobody tunes on it
    assert all(p.id.startswith(TALK_SETS[split].prefix + ".") for p in items)
    assert all(p.split_key == p.id for p in items if p.source == "hand")
    assert all(p.id.startswith((p.split_key + ".", p.split_key + "#")) for p in items if p.source == "grammar")
    assert {_group(p) for p in items if p.kind == "fault"} == set(TALK_FAULT_GROUPS)
    assert {(p.type, p.variant) for p in items if p.kind == "talk"} >= set(REQUIRED)
