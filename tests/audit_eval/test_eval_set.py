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
from tests.audit_eval.eval_set import (
    CLAIM_VALUES,
    FAULT_CLASSES,
    FAULT_GROUPS,
    FROZEN,
    FROZEN_FILES,
    HERE,
    HOLDOUT,
    HOLDOUT_FROZEN,
    HOLDOUT_VOICES,
    REPORT_VALUES,
    build,
    build_holdout,
    holdout_manifest,
    load,
    render,
    sha256_file,
    split_of,
)
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
    with pytest.raises(ValueError, match=re.escape("eval-user:<dev|test|holdout>:<faithful|drawn|")):
        cust.decide({"model": "eval-user:train:faithful", "messages": []})


# ----------------------------------------------------------------- the holdout set (issue 38)
HOLDOUT_README = HOLDOUT / "README.md"
RESULTS = {  # tool result -> what it shows without doubt (strings as the τ² telecom user tools write them)
    "Airplane Mode is now OFF.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"airplane_mode": "off",
                                                                                      "signal": "good"},
    "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%": {"airplane_mode": "on"},
    "Mobile Data is now OFF.\nStatus Bar: 📶¹ Poor | 3G | 📵 Data Disabled | 🔋 80%": {"mobile_data": "off",
                                                                                     "signal": "poor"},
    "Status Bar: 📶² Fair | 4G | 📵 Data Disabled | 🔒 VPN Connected | 🔋 80%": {"signal": "fair", "vpn": "on"},
    "Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%": {"signal": "none"},
    ("Airplane Mode: OFF\nSIM Card Status: active\nCellular Connection: connected\nCellular Signal: excellent\n"
     "Cellular Network Type: 5G\nMobile Data Enabled: Yes\nData Roaming Enabled: No\nWi-Fi Radio: ON\n"
     "Wi-Fi Connected: No"): {"airplane_mode": "off", "signal": "excellent", "mobile_data": "on", "roaming": "off",
                              "wifi": "on"},
    "Network Mode Preference: 2g_only": {"network_mode": "2g_only"},
    "Preferred Network Mode set to: 4g_5g_preferred\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%": {
        "network_mode": "4g_5g_preferred", "signal": "excellent"},
    "Data Roaming is now ON.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"roaming": "on", "signal": "good"},
    "Data Saver Mode is now OFF.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"data_saver": "off",
                                                                                          "signal": "good"},
    "Data Saver mode is ON (limits data usage).": {"data_saver": "on"},
    "Wi-Fi Calling is currently turned OFF.": {"wifi_calling": "off"},
    "Wi-Fi Calling is now ON.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"wifi_calling": "on",
                                                                                      "signal": "good"},
    "Wi-Fi is now OFF.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"wifi": "off", "signal": "good"},
    "Wi-Fi is ON and connected to 'Home'. Signal strength: good.": {"wifi": "on"},
    "Your SIM card is active and working.": {"sim": "active"},
    "No SIM card detected in the phone.": {"sim": "missing"},
    "The SIM card is locked with a PUK code.": {"sim": "locked_puk"},
    "VPN is ON and connected. Details: server us-1": {"vpn": "on"},
    "VPN disconnected successfully.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%": {"vpn": "off",
                                                                                            "signal": "good"},
    "App 'messaging' has permission for: sms, storage.": {"app_permission": "granted"},
    "App 'messaging' currently has no permissions granted.": {"app_permission": "missing"},
    "Your messaging app can send MMS messages.": {"mms": "can"},
    "Your messaging app cannot send MMS messages.": {"mms": "cannot"},
    "You have a payment request for bill B-1 of 25.0 USD.": {"payment": "request"},
    "No payment request has been made.": {"payment": "none"},
    "Payment of 25.0 USD has been made for bill B-1.": {"payment": "paid"},
    "Speed Test Result: 210.00 Mbps (Excellent). Connection is very fast.": {"speed": "fast"},
    "Speed Test Result: 0.80 Mbps (Very Poor). Connection is very slow.": {"speed": "slow"},
}
QUOTED = ["Restarting network services...\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%",
          "Speed test failed: No cellular connection.", "Speed Test Result: 12.00 Mbps (Fair). Connection is okay.",
          "Current APN Name: internet\nMMSC URL (for picture messages): http://mms\n(These are technical settings.)",
          "Success. Permission 'sms' granted to app 'messaging'.\nStatus Bar: 📶³ Good | 4G | 📱 Data Enabled | 🔋 80%",
          "VPN is turned ON in settings, but currently not connected.", "App 'messaging' has permission for: sms."]
"""Results whose own lines show nothing the customer can name for sure: quoted word for word."""


def test_holdout_frozen_files_are_a_fresh_expansion_and_match_its_manifest() -> None:
    for name, fresh in build_holdout().items():
        assert (HOLDOUT_FROZEN / name).read_text(encoding="utf-8") == render(fresh), f"holdout/{name} differs"
    listed = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", HOLDOUT_README.read_text(encoding="utf-8"),
                             re.MULTILINE))
    assert listed == holdout_manifest(), "holdout/README.md's manifest differs from the files: changed after freezing"


def test_holdout_has_enough_items_per_claim_type_value_and_fault_class() -> None:
    items = load("holdout")
    assert items and all(p.split == "holdout" for p in items) and len({p.id for p in items}) == len(items)
    hand = [p for p in items if p.source == "hand"]
    for kind, values, least in (("claim", CLAIM_VALUES, 12), ("report", REPORT_VALUES, 12)):
        per_type = Counter(p.type for p in hand if p.kind == kind)
        per_value = Counter((p.type, p.variant) for p in hand if p.kind == kind)
        assert {t: n for t, n in per_type.items() if n < least and t != "ack"} == {}, (kind, per_type)
        assert {(t, v) for t, vs in values.items() for v in vs} == set(per_value), kind
        grammar = {(p.type, p.variant) for p in items if p.kind == kind and p.source == "grammar"}
        assert {(t, v) for t, vs in values.items() for v in vs if t != "ack"} == grammar, kind
    faults = Counter(p.type if p.variant == "-" else f"{p.type}:{p.variant}" for p in hand if p.kind == "fault")
    assert set(faults) == set(FAULT_GROUPS) and min(faults.values()) >= 12, faults
    grammar_faults = {p.type if p.variant == "-" else f"{p.type}:{p.variant}" for p in items
                      if p.kind == "fault" and p.source == "grammar"}
    assert grammar_faults == set(FAULT_GROUPS)
    assert {p.voice for p in hand} == set(HOLDOUT_VOICES)
    claim_forms = Counter(p.form for p in hand if p.kind == "claim")
    assert claim_forms["indirect"] >= 20 and claim_forms["negation"] >= 30 and claim_forms["symptom"] >= 2, claim_forms
    assert {p.voice for p in hand if p.kind == "fault"} == set(HOLDOUT_VOICES)


def test_holdout_was_written_apart_from_the_first_set() -> None:
    def norm(text: str) -> str:
        return re.sub(r"[^a-z0-9{} ]", "", text.lower()).strip()

    first = {norm(p.text) for p in load()}
    items = load("holdout")
    same = [p.id for p in items if norm(p.text) in first]
    assert [i for i in same if i.startswith("ho.h.")] == []  # no hand-written sentence of the first set
    assert len(same) / len(items) < 0.05, same  # the grammar's plainest sentences ("Wi-Fi: on.") may coincide
    assert not {p.id for p in items} & {p.id for p in load()}


def test_shown_names_only_what_a_result_shows_without_doubt() -> None:
    for result, expected in RESULTS.items():
        assert cust.shown(result) == expected, result
    assert cust.shown("Status Bar: 📶¹ Poor | 3G | 📵 Data Disabled | 🔋 80%") == {"signal": "poor"}
    assert cust.shown("Speed test failed: No cellular connection.") == {}


def test_holdout_reports_say_only_what_the_result_shows() -> None:
    by_id = {p.id: p for p in load("holdout")}
    used: set[str] = set()
    for result, expected in RESULTS.items():
        for salt in range(12):
            said = cust.report(result, "toggle_data", "holdout", salt, "key")
            assert said is not None, result
            text, ids = said
            named = [by_id[i] for i in ids if by_id[i].type != "ack"]
            assert named and all(p.kind == "report" and expected.get(p.type) == p.variant for p in named), (result, ids)
            assert "Status Bar" not in text and len(named) <= cust.REPORT_MAX
            used.update(ids)
    assert sum(i.startswith("ho.g.") for i in used) >= 40 and sum(i.startswith("ho.h.") for i in used) >= 40
    for result in QUOTED:
        assert cust.report(result, "reboot_device", "holdout", 0, "key") is None, result


def test_holdout_faithful_customer_paraphrases_and_never_injects() -> None:
    for s in _scenarios(4):
        for seed in (0, 1):
            conv, injections = converse(s, "eval-user:holdout:faithful", seed)
            assert injections == []
            said = [str(m.get("content") or "") for side, m in conv if side == "user" and m.get("role") == "assistant"]
            assert len(said) >= 3 and not any("Status Bar" in t for t in said)


@pytest.mark.parametrize("group", FAULT_GROUPS)
def test_the_holdout_customer_commits_each_fault_from_holdout_phrasings(group: str) -> None:
    cls, _, variant = group.partition(":")
    by_id = {p.id: p for p in load("holdout")}
    frames = [re.compile(re.escape(p.text).replace(re.escape("{setting}"), ".+?") + r"(?:\s|$)")
              for p in by_id.values() if p.kind == "fault" and p.type == cls and p.variant == (variant or "-")]
    committed = 0
    for s in _scenarios(6):
        for seed in range(4):
            conv, injections = converse(s, f"eval-user:holdout:{cls}", seed)
            assert len(injections) <= 1 and all(i.fault_class == cls for i in injections)
            if not injections or (variant and injections[0].variant != variant):
                continue
            inj = injections[0]
            committed += 1
            own = [m for side, m in conv if side == "user" and m.get("role") == "assistant"]
            if inj.phrasing_ids:  # phrased at the fault: a holdout frame of this class (and a holdout claim)
                first = by_id[inj.phrasing_ids[0]]
                assert (first.kind, first.type, first.variant) == ("fault", cls, variant or "-")
                claims = [by_id[i] for i in inj.phrasing_ids[1:]]
                assert all(c.kind == "claim" for c in claims)
                assert cls != "misreport" or all(c.form != "symptom" for c in claims)
            else:  # an unasked or wrong phone action: phrased in the next reply, before the result
                assert cls in ("unasked_action", "wrong_action") and own[inj.reply_index].get("tool_calls")
                follow = str(own[inj.reply_index + 1].get("content"))
                assert any(f.match(follow) for f in frames), follow
    assert committed >= 4, f"{group}: committed in only {committed} conversations"
