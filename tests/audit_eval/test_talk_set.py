"""The talk set (``talk/``) is what its README says: frozen files that match the manifest, the frozen sha256
split, every claim type, talk form and fault class, sentences of its own; and a customer
(``eval-user:talk*:<mode>``) whose faithful talk is true for its task and phone, that commits exactly one
fault of its class, and whose injection the measurement's replay finds again.

Only this set's own ground truth is checked here (the customer's ``Decision``, its phrasing ids, the replay
of ``customer.decide``); nothing here runs the audit or reads what it found."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Any

import pytest

from tauray.scenarios.registry import default_registry
from tests.audit_eval import customer as cust
from tests.audit_eval.eval_set import (
    CLAIM_VALUES,
    FAULT_CLASSES,
    REPORT_VALUES,
    TALK,
    TALK_CONTEXTS,
    TALK_FAULT_GROUPS,
    TALK_FORMS,
    TALK_FROZEN,
    TALK_SPLITS,
    TALK_VOICES,
    UNREAD_TYPES,
    build_talk,
    load,
    render,
    split_of,
    talk_manifest,
)
from tests.audit_eval.readings import CLAIM_KEYWORDS, is_read_tool
from tests.audit_eval.simulate import converse
from tests.audit_eval.test_eval_set import QUOTED, RESULTS

FAMILY = {"mms_issue": "mms", "mobile_data_issue": "data", "service_issue": "service"}
REQUIRED = [("symptom", k) for k in ("mms", "data", "service", "any")] + [(c, "any") for c in
                                                                           ("quote", "more", "close", "nosuch")]
"""Faithful pools the customer cannot do without, in each split."""


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9{} ]", "", text.lower()).strip()


@cache
def _tasks(per_family: int) -> tuple[Any, ...]:
    """The first ``per_family`` telecom base tasks of each family, spread over the list."""
    registry = default_registry()
    out = []
    for family in FAMILY:
        names = [e.name for e in registry.select(domain="telecom", split="base") if f"__{family}__" in e.name]
        step = max(1, len(names) // per_family)
        out += [registry.get(n) for n in names[::step][:per_family]]
    return tuple(out)


def _expected_facts(s: Any) -> set[str]:
    """The facts of a task from its structured fields (not from the prompt the customer reads)."""
    facts = {"any", FAMILY[s.issue_type]}
    known = s.user.known_info or ""
    facts |= {"abroad"} if "abroad" in known else {"home"} if "at home" in known else set()
    if "do not have access to wifi" in s.user.reason_for_call:
        facts.add("nowifi")
    if "do not want to change your mobile data plan" in s.user.instructions:
        facts.add("plan")
    if "excellent internet speed" in s.user.instructions:
        facts.add("speedgoal")
    return facts


# ----------------------------------------------------------------- the set
def test_talk_frozen_files_are_a_fresh_expansion_and_match_its_manifest() -> None:
    for name, fresh in build_talk().items():
        assert (TALK_FROZEN / name).read_text(encoding="utf-8") == render(fresh), f"talk/{name} differs"
    listed = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", (TALK / "README.md").read_text(encoding="utf-8"),
                             re.MULTILINE))
    assert listed == talk_manifest(), "talk/README.md's manifest differs from the files: changed after freezing"


def test_talk_split_is_the_frozen_sha256_rule_about_thirty_seventy() -> None:
    items = load("talk")
    assert len({p.id for p in items}) == len(items)
    assert all(p.split == split_of(p.split_key) for p in items)
    assert all(p.split_key == p.id for p in items if p.source == "hand")
    assert all(p.id.startswith((p.split_key + ".", p.split_key + "#")) for p in items if p.source == "grammar")
    sides: dict[str, set[str]] = {}
    for p in items:
        sides.setdefault(p.split_key, set()).add(p.split)
    assert all(len(s) == 1 for s in sides.values())  # every paraphrase of one template on one side
    assert 0.2 < sum(p.split == "dev" for p in items) / len(items) < 0.45
    dev, test = load("talk-dev"), load("talk-test")
    assert {p.id for p in dev} | {p.id for p in test} == {p.id for p in items} and not {p.id for p in dev} & {
        p.id for p in test}
    assert (split_of("tk.h.talk.open.nowifi.01"), split_of("tk.h.fault.invented_constraint.01")) == ("dev", "test")
    assert (split_of("tk.g.fault.new_problem.t0"), split_of("tk.h.claim.mobile_data.off.02")) == ("dev", "test")
    for side in (dev, test):  # the customer can play every mode from either side
        groups = {p.type if p.variant == "-" else f"{p.type}:{p.variant}" for p in side if p.kind == "fault"}
        assert groups == set(TALK_FAULT_GROUPS)
        assert {(p.type, p.variant) for p in side if p.kind == "talk"} >= set(REQUIRED)
        assert {p.variant for p in side if p.kind == "report" and p.type == "ack"} == {"read", "write"}
        assert {p.type for p in side if p.kind == "claim"} == set(CLAIM_VALUES)


def test_talk_set_covers_every_claim_type_talk_form_and_fault_class() -> None:
    items = load("talk")
    hand = [p for p in items if p.source == "hand"]
    assert {(p.type, p.variant) for p in hand if p.kind == "claim"} == {(t, v) for t, vs in CLAIM_VALUES.items()
                                                                         for v in vs}
    assert {(p.type, p.variant) for p in hand if p.kind == "report"} == {(t, v) for t, vs in REPORT_VALUES.items()
                                                                          for v in vs}
    assert not any(p.type in UNREAD_TYPES for p in items if p.kind == "report")
    talk = [p for p in hand if p.kind == "talk"]
    forms = Counter(p.form for p in talk)
    assert set(forms) == set(TALK_FORMS) and min(forms.values()) >= 15, forms
    assert forms["negation"] >= 60, forms
    assert {p.type for p in talk} == set(TALK_CONTEXTS)
    weight = Counter("mms/data" if p.variant.split(":")[0] in ("mms", "data", "nowifi", "speedgoal", "plan") else
                     "service" if p.variant.split(":")[0] == "service" else "other" for p in talk)
    assert weight["mms/data"] >= 3 * weight["service"], weight  # extra weight on MMS and mobile data
    faults = Counter(p.type if p.variant == "-" else f"{p.type}:{p.variant}" for p in hand if p.kind == "fault")
    assert set(faults) == set(TALK_FAULT_GROUPS) and min(faults.values()) >= 8, faults
    assert faults["invented_constraint"] >= 25 and faults["new_problem"] >= 25, faults
    assert faults["state_without_tool:with_call"] >= 20, faults
    for kind in ("talk", "fault", "claim", "report"):
        assert {p.voice for p in hand if p.kind == kind} == set(TALK_VOICES), kind
    assert {p.kind for p in items if p.source == "grammar"} == {"talk", "report", "claim", "fault"}


def test_talk_was_written_apart_from_the_earlier_sets() -> None:
    earlier = {_norm(p.text) for p in (*load(), *load("holdout"))}
    earlier |= {_norm(t) for t in (*cust.OPENINGS, *cust.REPORTS, cust.MORE, cust.NO_SUCH_TOOL, *cust.THANKS)}
    items = load("talk")
    same = [p.id for p in items if _norm(p.text) in earlier]
    assert [i for i in same if i.startswith("tk.h.")] == []  # no hand-written sentence of an earlier set
    assert len(same) / len(items) < 0.01, same  # a plain grammar filling may coincide
    assert not {p.id for p in items} & {p.id for p in (*load(), *load("holdout"))}


def test_bad_talk_split_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="talk-dev"):
        load("talk-train")  # type: ignore[arg-type]
    assert set(TALK_SPLITS) == {"talk", "talk-dev", "talk-test"}


# ----------------------------------------------------------------- the customer's faithful talk
def test_talk_facts_agree_with_every_telecom_task() -> None:
    registry = default_registry()
    for entry in registry.select(domain="telecom", split="base"):
        s = registry.get(entry.name)
        assert set(cust.talk_facts(s.user_prompt)) == _expected_facts(s), entry.name


def test_talk_reports_say_only_what_the_result_shows() -> None:
    by_id = {p.id: p for p in load("talk")}
    for split in TALK_SPLITS:
        for result, expected in RESULTS.items():
            for salt in range(8):
                said = cust.report(result, "toggle_data", split, salt, "key")
                assert said is not None or split != "talk", result
                for i in said[1] if said else ():
                    p = by_id[i]
                    assert p.kind == "report" and (p.type == "ack" or expected.get(p.type) == p.variant), (result, i)
                    assert split == "talk" or p.split == split.partition("-")[2]
        for result in QUOTED:
            assert cust.report(result, "reboot_device", split, 0, "key") is None, result


def _check_talk(s: Any, conv: list[tuple[str, dict[str, Any]]], said: list[tuple[str, ...]], split: str) -> Counter:
    """Every faithful line and report in the conversation is true: its key holds (a fact of the task, what the
    last result showed, a setting already in the conversation) and its report matches the result. The forms."""
    by_id = {p.id: p for p in load(split)}  # type: ignore[arg-type]
    facts, family = _expected_facts(s), FAMILY[s.issue_type]
    forms: Counter = Counter()
    replies, results, agent, calls = iter(said), [], [], []
    for j, (side, m) in enumerate(conv):
        if side == "agent" and m.get("role") == "assistant" and m.get("content"):
            agent.append(str(m["content"]))
        if side == "user" and m.get("role") == "tool":
            results.append(str(m["content"]))
        if side != "user" or m.get("role") != "assistant":
            continue
        ids = next(replies)
        after_tool = conv[j - 1][0] == "user" and conv[j - 1][1].get("role") == "tool"
        last = results[-1] if after_tool else None
        wrote = after_tool and not is_read_tool(calls[-1])
        if m.get("tool_calls"):
            calls.append(m["tool_calls"][0]["function"]["name"])
        words = " ".join([s.user.reason_for_call, s.user.known_info or "", *agent, *results]).lower()
        named = set(cust._TAG.findall(" ".join(agent))) | {(c, "") for c in calls}
        for i in ids:
            p = by_id[i]
            forms[p.form] += 1
            key = p.variant
            if p.kind == "report":
                assert p.type == "ack" or (last is not None and cust.shown(last).get(p.type) == p.variant), (i, last)
                continue
            assert p.kind == "talk", i
            if p.type == "symptom":
                ok = key == family
            elif key in facts:
                ok = True
            elif key == "fresh":
                ok = p.type == "open" and not results
            elif key.endswith(":write"):
                ok = key == f"{family}:write" and p.type == "after" and wrote
            elif key.startswith("speedtest="):
                ok = last is not None and ("Speed test failed" in last if key.endswith("failed") else
                                           re.search(r"\((?:Very Poor|Poor|Fair|Good)\)", last) is not None)
            elif key.startswith("about="):
                c = key.removeprefix("about=")
                ok = (any(re.search(rf"(?<![a-z0-9]){re.escape(w.strip())}(?![a-z0-9])", words)
                          for w in CLAIM_KEYWORDS[c])
                      or c in {cust.TOOL_TYPES.get(t) for t, _ in named} or (c == "roaming" and "abroad" in facts))
            else:
                ctype, _, value = key.partition("=")
                ok = last is not None and cust.shown(last).get(ctype) == value
            assert ok, (s.name, i, key, p.text)
    return forms


@pytest.mark.parametrize("split", ["talk-dev", "talk-test"])
def test_talk_faithful_customer_says_true_new_talk_and_commits_no_fault(split: str) -> None:
    forms: Counter = Counter()
    new_openings = 0
    by_id = {p.id: p for p in load(split)}  # type: ignore[arg-type]
    for s in _tasks(4):
        for seed in range(3):
            said: list[tuple[str, ...]] = []
            conv, injections = converse(s, f"eval-user:{split}:faithful", seed, phone=True, said=said)
            assert injections == []
            forms += _check_talk(s, conv, said, split)
            new_openings += any(by_id[i].kind == "talk" and by_id[i].type == "open" for i in said[0])
            own = [m for side, m in conv if side == "user" and m.get("role") == "assistant"]
            assert len(own) == len(said) and all(not m.get("content") for m in own if m.get("tool_calls"))
    assert set(TALK_FORMS) <= set(forms), forms  # every kind of faithful talk was said
    assert new_openings >= 24, new_openings  # nearly every opening carries a line besides its symptom


def _own(conv: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [m for side, m in conv if side == "user" and m.get("role") == "assistant"]


def _position(conv: list[tuple[str, dict[str, Any]]], reply_index: int) -> int:
    """Where the customer's reply number ``reply_index`` is in the conversation."""
    return [j for j, (side, m) in enumerate(conv) if side == "user" and m.get("role") == "assistant"][reply_index]


@pytest.mark.parametrize("fault", FAULT_CLASSES)
def test_talk_customer_commits_exactly_one_fault_of_its_class(fault: str) -> None:
    commits_one_fault("talk-test", fault)


def commits_one_fault(split: str, fault: str) -> None:
    """On 3 tasks x 3 seeds of ``split``, the ``fault`` customer commits at most one fault, of its
    class, phrased from this split, faithful up to it, and does in at least 6 of the 9."""
    by_id = {p.id: p for p in load(split)}
    committed, variants, indices = 0, Counter(), Counter()
    for s in _tasks(3):
        for seed in range(3):
            said: list[tuple[str, ...]] = []
            conv, injections = converse(s, f"eval-user:{split}:{fault}", seed, phone=True, said=said)
            assert len(injections) <= 1, injections
            _check_talk(s, conv, said, split)  # its faithful talk stays true around the fault
            if not injections:
                continue
            inj = injections[0]
            committed += 1
            variants[inj.variant] += 1
            indices[inj.reply_index] += 1
            assert inj.fault_class == fault
            own = _own(conv)
            faithful = _own(converse(s, f"eval-user:{split}:faithful", seed, phone=True)[0])
            assert own[:inj.reply_index] == faithful[:inj.reply_index]  # faithful up to the fault
            assert own[inj.reply_index] != faithful[inj.reply_index]
            frames = [by_id[i] for i in inj.phrasing_ids]  # phrased from this split only
            assert all(p.kind == "fault" and p.type == fault for p in frames[:1])
            assert all(p.kind == "claim" for p in frames[1:])
            if fault == "state_without_tool":
                before = conv[:_position(conv, inj.reply_index)]
                results = [str(m["content"]) for side, m in before if side == "user" and m.get("role") == "tool"]
                assert all(frames[1].type not in cust.shown(r) for r in results)  # no result showed it
                if inj.variant == "with_call":
                    assert own[inj.reply_index].get("tool_calls") and own[inj.reply_index].get("content")
                    assert own[inj.reply_index]["tool_calls"] == faithful[inj.reply_index]["tool_calls"]
            if fault == "new_problem":
                assert inj.reply_index >= 1
    assert committed >= 6, f"{fault}: committed in only {committed} of 9 conversations"
    if fault == "state_without_tool":
        assert set(variants) == {"alone", "with_call"}, variants
    if fault == "new_problem":
        assert len(indices) >= 2, indices  # not always at the same point of the call


def _stored(conv: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The conversation as the results tables keep it (what ``measure.replay`` reads)."""
    out = []
    for seq, (side, m) in enumerate(conv):
        calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                 for c in m.get("tool_calls") or []]
        out.append({"side": side, "role": m["role"], "content": m.get("content"), "tool_calls": calls or None,
                    "tool_call_id": m.get("tool_call_id"), "seq": seq, "turn": seq})
    return out


@pytest.mark.parametrize("mode", ["faithful", "state_without_tool", "new_problem", "invented_constraint",
                                  "misreport", "wrong_action", "drawn"])
def test_the_replay_of_decide_finds_the_injection_again(mode: str) -> None:
    replay_finds_injections("talk-dev", mode)


def replay_finds_injections(split: str, mode: str) -> None:
    """The measurement's replay of ``decide`` on a played conversation finds its one injection
    (class, variant, message) again, on 2 tasks x 2 seeds of ``split`` in ``mode``."""
    from tests.audit_eval.measure import replay  # only its replay: no sweep, no audit table is read

    found = 0
    for s in _tasks(2):
        for seed in range(2):
            model = f"eval-user:{split}:{mode}"
            conv, injections = converse(s, model, seed, phone=True)
            row = {"user_model": f"openai/{model}", "agent_model": "openai/scripted-agent-writes", "unit_id": "u",
                   "scenario": s.name, "seed": seed}
            truth = replay(row, _stored(conv), None)
            assert truth.mismatch is None, truth.mismatch
            if not injections:
                assert truth.fault_class is None
                continue
            found += 1
            inj = injections[0]
            assert (truth.fault_class, truth.variant) == (inj.fault_class, inj.variant)
            assert truth.seq == _position(conv, inj.reply_index)
    assert found >= (0 if mode == "faithful" else 3)


def test_the_measurement_takes_the_talk_splits() -> None:
    from tests.audit_eval.measure import _split, sweep

    assert [_split(s) for s in ("talk-dev", "talk-test")] == ["talk-dev", "talk-test"]
    config = sweep("n", "http://x", "talk-test", {"mms_issue": ["a"]}, "oracle", ["new_problem"], 1, 1)
    assert config["models"]["u-faithful"]["model"] == "openai/eval-user:talk-test:faithful"
    with pytest.raises(ValueError, match=re.escape("eval-user:<talk|talk-dev|talk-test>:<mode>")):
        cust.decide({"model": "eval-user:talk-train:faithful", "messages": []})
