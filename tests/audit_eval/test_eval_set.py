"""The evaluation set is what it says it is: enough phrasings per claim type and fault class, a split
that is the frozen sha256 rule and did not move, files that match the README's manifest, and a
customer that commits exactly one fault per conversation, recorded where the measurement finds it."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tauray.scenarios.registry import default_registry
from tests.audit_eval import customer as cust
from tests.audit_eval.eval_set import FAULT_CLASSES, FROZEN, FROZEN_FILES, HERE, build, load, render, sha256_file, split_of
from tests.audit_eval.readings import readings
from tests.audit_eval.simulate import converse

CLAIM_TYPES = {"airplane_mode", "mobile_data", "roaming", "wifi_calling", "network_mode", "signal", "sim", "apn",
               "vpn", "app_permission", "data_saver", "mms", "payment", "line"}
VOICES = {"terse", "chatty", "non-native", "hedged", "frustrated", "elderly"}


def test_at_least_eight_hand_written_per_claim_type_and_fault_class_in_varied_voices() -> None:
    hand = [p for p in load() if p.source == "hand"]
    claims = Counter(p.type for p in hand if p.kind == "claim")
    faults = Counter(p.type if p.type != "hang_up" else f"hang_up:{p.variant}" for p in hand if p.kind == "fault")
    assert CLAIM_TYPES <= set(claims)
    assert min(claims.values()) >= 8, claims
    assert {*FAULT_CLASSES} - {"hang_up"} | {"hang_up:leave", "hang_up:fixed"} == set(faults)
    assert min(faults.values()) >= 8, faults
    assert {p.voice for p in hand} == VOICES
    grammar = [p for p in load() if p.source == "grammar"]
    assert {p.type for p in grammar if p.kind == "claim"} >= CLAIM_TYPES
    assert {p.type for p in grammar if p.kind == "fault"} == set(FAULT_CLASSES)
    assert len({p.id for p in load()}) == len(load())


def test_split_is_the_frozen_sha256_rule_about_thirty_seventy() -> None:
    items = load()
    assert all(p.split == split_of(p.split_key) for p in items)
    assert all(p.split_key == p.id for p in items if p.source == "hand")
    assert all(p.id.startswith(p.split_key + ".") or p.id.startswith(p.split_key + "#")
               for p in items if p.source == "grammar")
    dev = sum(p.split == "dev" for p in items) / len(items)
    assert 0.2 < dev < 0.45
    assert split_of("h.claim.airplane_mode.on.01") == "test" and split_of("h.fault.fake_done.03") == "dev"
    for cls in FAULT_CLASSES:  # the customer can phrase every class from either split
        for split in ("dev", "test"):
            assert any(p.kind == "fault" and p.type == cls and p.split == split for p in items), (cls, split)


def test_frozen_files_are_a_fresh_expansion_of_the_sources_and_match_the_manifest() -> None:
    for name, fresh in build().items():
        assert (FROZEN / name).read_text(encoding="utf-8") == render(fresh), f"{name} differs from its sources"
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", readme, re.MULTILINE))
    assert set(listed) >= {f"phrasings/frozen/{n}" for n in FROZEN_FILES}
    for path, digest in listed.items():
        assert sha256_file(HERE / path) == digest, f"{path} changed after the split was frozen"


def test_readings_of_phone_results() -> None:
    assert readings("Airplane Mode is now ON.") == {"airplane_mode": "on"}
    bar = readings("Preferred Network Mode set to: 3g_only\nStatus Bar: 📶¹ Poor | 3G | 📵 Data Disabled | 🔋 80%")
    assert bar == {"network_mode": "3g_only", "airplane_mode": "off", "signal": "poor", "mobile_data": "off",
                   "vpn": "off"}
    assert readings("Your messaging app cannot send MMS messages.") == {"mms": "cannot"}
    assert readings("App 'messaging' has permission for: sms, storage.")["app_permission"] == "granted"
    assert "app_permission" not in readings("App 'messaging' has permission for: sms.")


def _scenarios(n: int) -> list:
    registry = default_registry()
    entries = registry.select(domain="telecom", split="base")
    return [registry.get(entries[i].name) for i in range(0, len(entries), max(1, len(entries) // n))][:n]


@pytest.mark.parametrize("fault", FAULT_CLASSES)
def test_the_customer_commits_exactly_one_fault_at_the_replayed_turn(fault: str) -> None:
    committed = 0
    for s in _scenarios(6):
        for seed in (0, 1):
            conv, injections = converse(s, f"eval-user:test:{fault}", seed)
            assert len(injections) <= 1, injections
            if not injections:
                continue
            committed += 1
            inj = injections[0]
            assert inj.fault_class == fault
            own = [m for side, m in conv if side == "user" and m.get("role") == "assistant"]
            assert len(own) > inj.reply_index
            faithful, _ = converse(s, "eval-user:test:faithful", seed)
            faithful_own = [m for side, m in faithful if side == "user" and m.get("role") == "assistant"]
            assert own[:inj.reply_index] == faithful_own[:inj.reply_index]  # faithful up to the fault
            assert own[inj.reply_index] != faithful_own[inj.reply_index]
            assert all(p.split == "test" for p in load() if p.id in inj.phrasing_ids)
    assert committed >= 6, f"{fault}: committed in only {committed} of 12 conversations"


def test_faithful_customer_never_injects_and_drawn_spreads_over_classes() -> None:
    drawn = Counter()
    for s in _scenarios(8):
        for seed in range(3):
            assert converse(s, "eval-user:dev:faithful", seed)[1] == []
            drawn.update(i.fault_class for i in converse(s, "eval-user:dev:drawn", seed)[1])
    assert len(drawn) >= 5, drawn


def test_injection_is_written_to_the_truth_file_with_its_join_key(tmp_path, monkeypatch) -> None:
    path = tmp_path / "truth.jsonl"
    monkeypatch.setenv(cust.TRUTH_ENV, str(path))
    s = _scenarios(1)[0]
    base = {"model": "eval-user:test:hang_up", "messages": [{"role": "system", "content": s.user_prompt}]}
    seed = next(n for n in range(100) if (c := cust.Customer({**base, "seed": n})).variant == "leave" and c.first <= 1)
    body = {"model": "eval-user:test:hang_up", "seed": seed, "tools": [t.openai() for t in s.user_tools],
            "messages": [{"role": "system", "content": s.user_prompt},
                         {"role": "user", "content": "Hi! How can I help you today?"},
                         {"role": "assistant", "content": "Hello, my phone is acting up."},
                         {"role": "user", "content": 'Could you please reboot it?\n(phone action: reboot_device {})'}]}
    reply = cust.eval_user(body, None)  # type: ignore[arg-type]
    assert "###STOP###" in str(reply.message.get("content"))
    cust.eval_user({**body, "model": "eval-user:test:faithful"}, None)  # type: ignore[arg-type]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["fault_class"] == "hang_up" and lines[0]["side"] == "simulator"
    assert lines[0]["key"] == cust.request_key(body) and lines[0]["reply_index"] == 1


def test_bad_model_name_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="eval-user:<dev|test>"):
        cust.decide({"model": "eval-user:train:faithful", "messages": []})
