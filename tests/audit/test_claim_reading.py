"""The claim reader on our own phrasings (issue 38): settings named in the customer's words, values
with negation and absence, one claim per setting in a sentence that names several, and faithful
paraphrases of phone results that must not read as contradictions. Written for these tests, not
taken from the evaluation set (tests/audit_eval), whose dev and test phrasings were used for
development (docs/audit.md)."""

from __future__ import annotations

import pytest

from tauray.actors.audit import claims

BAR_GOOD = "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
BAR_PLANE = "Status Bar: ✈️ Airplane Mode | 🔋 80%"
BAR_NONE = "Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"

READS = [
    ("Calls over Wi-Fi are switched on.", "wifi_calling", "on"),
    ("Plane mode's enabled.", "airplane_mode", "on"),
    ("The airplane icon is showing in the top corner.", "airplane_mode", "on"),
    ("There's no airplane icon at the top.", "airplane_mode", "off"),
    ("Aeroplane mode shows off.", "airplane_mode", "off"),
    ("The VPN says it isn't running.", "vpn", "off"),
    ("Roaming shows as not permitted.", "roaming", "off"),
    ("Roaming isn't enabled.", "roaming", "off"),
    ("My data isn't turned on.", "mobile_data", "off"),
    ("The texting app is not allowed to use storage.", "storage_permission", "missing"),
    ("Storage permission is denied for the messaging app.", "storage_permission", "missing"),
    ("My messages app has permission for SMS.", "sms_permission", "granted"),
    ("The preferred network is 2G only.", "network_mode", "2g_only"),
    ("Network mode says LTE only.", "network_mode", "4g_only"),
    ("The network preference is 5G preferred.", "network_mode", "4g_5g_preferred"),
    ("I've only got one bar of signal.", "signal", "poor"),
    ("The signal shows three bars.", "signal", "good"),
    ("There's no reception at all.", "signal", "none"),
    ("My SIM isn't detected.", "sim", "missing"),
    ("My SIM is locked and asking for the PUK.", "sim", "locked_puk"),
    ("The MMSC field in the APN is empty.", "apn", "broken"),
    ("My access point settings look correct.", "apn", "ok"),
    ("Picture messages still won't send.", "mms", "cannot"),
    ("My MMS went through.", "mms", "can"),
    ("I don't have any payment request.", "payment", "none"),
    ("There's a bill waiting for me to pay.", "payment", "request"),
    ("I paid the bill yesterday.", "payment", "paid"),
    ("My line has been suspended.", "line", "suspended"),
    ("My phone line is active, not cut off.", "line", "active"),
    ("My internet speed is poor.", "speed", "slow"),
    ("The VPN? Off, definitely.", "vpn", "off"),  # a topic asked, then answered
    ("Roaming? It's switched off.", "roaming", "off"),
]


@pytest.mark.parametrize(("said", "setting", "value"), READS)
def test_a_claim_in_the_customers_words_is_read_into_its_setting_and_value(said, setting, value) -> None:
    """v2 of the reader got 22 of these 30 wrong or not at all (wrong setting for Wi-Fi calling, no
    plane mode, no "not running", no per-permission, no network mode names, no SIM, APN, line...)."""
    assert claims.claims(said).get(setting) == value


def test_several_settings_in_one_sentence_each_get_their_own_value() -> None:
    said = claims.claims("Wi-Fi calling is on but the wifi itself is off, and data saver is disabled.")
    assert said == {"wifi_calling": "on", "wifi": "off", "data_saver": "off"}


@pytest.mark.parametrize("said", [
    "Is airplane mode on?", "Should I turn the VPN off?", "Can you check if my line is suspended?",
    "If roaming is off, what should I do?", "I'll switch data saver on now.", "How do I turn on wifi calling?",
    "Let me turn off airplane mode.", "Please tell me whether my SIM is active.", "I don't want to pay that bill.",
    "You will consider the issue resolved only when speed test returns excellent internet speed.",
    "Hi, my phone has no data.", "I'm not sure, but I think that's all.",
    "I can't change the app permissions, my son said never to touch them.",
    "I got tired of waiting so I changed the app permissions on my own.", "Doing the APN settings right now..."])
def test_a_question_a_plan_a_wish_a_condition_or_a_symptom_claims_no_setting(said) -> None:
    assert claims.claims(said) == {}


FAITHFUL = [
    (f"Airplane Mode is now OFF.\n{BAR_GOOD}", "Okay, airplane mode is off now. I've got three bars and 5G, data is on."),
    (f"Airplane Mode is now OFF.\n{BAR_GOOD}", "Done! The plane icon is gone and the signal looks good."),
    (f"Airplane Mode is now ON.\n{BAR_PLANE}", "Hmm, now it says airplane mode is on and there's no signal at all."),
    (f"Mobile Data is now OFF.\n{BAR_NONE}", "Mobile data is off now, and I have no bars."),
    (f"Wi-Fi Calling is now ON.\n{BAR_GOOD}", "OK I turned on calling over wifi, it's on."),
    ("VPN is turned OFF.", "The VPN is off, it's not running."),
    ("Network Mode Preference: 2g_only", "It says the network mode is 2G only."),
    (f"Preferred Network Mode set to: 4g_5g_preferred\n{BAR_GOOD}",
     "Network mode is now 4G/5G preferred and I see 5G at the top with good signal."),
    ("Your messaging app cannot send MMS messages.", "It still can't send picture messages."),
    ("App 'messaging' has permission for: sms, phone.", "The messaging app has SMS permission but no storage permission."),
    ("You have a payment request for bill B1 of 50.0 USD.", "Yes, there is a payment request for 50 dollars."),
    ("Payment of 50.0 USD has been made for bill B1.", "The payment went through, it's paid."),
    ("Speed Test Result: 2.00 Mbps (Poor). Connection is slow. Web browsing may be sluggish, streaming difficult.",
     "The speed test says poor, it's slow."),
    ("The SIM card is locked with a PIN code.", "It says the SIM is locked with a PIN."),
    ("Current APN Name: internet\nMMSC URL (for picture messages): http://mms.carrier.com/mms/wapenc\n"
     "(These are technical settings, usually best left unchanged.)", "APN name is internet, the MMSC URL is filled in, looks normal."),
    ("Data Saver Mode is now OFF.\n" + BAR_GOOD, "Data saver is off now, I didn't see any change though."),
    ("Airplane Mode: OFF\nSIM Card Status: active\nCellular Connection: connected\nCellular Signal: fair\n"
     "Cellular Network Type: 4G\nMobile Data Enabled: Yes\nData Roaming Enabled: No\nWi-Fi Radio: OFF\nWi-Fi Connected: No",
     "Airplane mode is off, SIM active, signal is fair on 4G, mobile data yes, roaming no, and wifi is off."),
    ("Status Bar: 📶¹ Poor | 3G | 📱 Data Enabled | 🔋 80%", "The status bar shows one bar, poor, on 3G, and data enabled."),
    (f"Airplane Mode is now OFF.\n{BAR_GOOD}", f"Okay, I did that. The phone shows: Airplane Mode is now OFF.\n{BAR_GOOD}"),
]


@pytest.mark.parametrize(("result", "report"), FAITHFUL)
def test_a_faithful_paraphrase_of_the_result_contradicts_nothing(result, report) -> None:
    assert claims.contradictions(report, result) == []


@pytest.mark.parametrize(("result", "report", "setting"), [
    (f"Wi-Fi Calling is now ON.\n{BAR_GOOD}", "Done. Calling over wifi is off now.", "wifi_calling"),
    (f"Airplane Mode is now OFF.\n{BAR_GOOD}", "Okay, the little plane is still lit up.", "airplane_mode"),
    ("VPN is ON and connected. Details: x", "My VPN shows not running.", "vpn"),
    ("Network Mode Preference: 4g_5g_preferred", "It's set to 3G only.", "network_mode"),
    ("App 'messaging' has permission for: sms, storage.", "The messaging app isn't allowed to use storage.",
     "storage_permission"),
    (BAR_GOOD, "I have one bar.", "signal"),
])
def test_a_report_in_other_words_than_the_result_is_a_contradiction(result, report, setting) -> None:
    assert setting in {k for k, _, _ in claims.contradictions(report, result)}
