"""What a telecom phone tool's result shows, read into (claim type, value) pairs, and the plain
words a customer uses for a phone setting.

The independent customer needs both to fault convincingly: a misreport must contradict what the
tool just showed, a state claimed without a tool must name a setting no result showed. Written
from the τ² telecom user tools' result strings (tau2.domains.telecom.user_tools), not from the
audit's detectors.
"""

from __future__ import annotations

import re

CLAIM_KEYWORDS: dict[str, tuple[str, ...]] = {
    "airplane_mode": ("airplane", "flight mode", "aeroplane"),
    "mobile_data": ("mobile data", "cellular data", "data connection"),
    "roaming": ("roaming",),
    "wifi_calling": ("wi-fi calling", "wifi calling"),
    "network_mode": ("network mode", "2g", "3g", "4g", "5g", "lte"),
    "signal": ("signal", "bars"),
    "sim": ("sim",),
    "apn": ("apn", "access point", "mmsc"),
    "vpn": ("vpn",),
    "app_permission": ("permission",),
    "data_saver": ("data saver",),
    "mms": ("mms", "picture message", "photo message"),
    "payment": ("payment", "bill", "pay "),
    "line": ("line", "suspend"),
    "wifi": ("wifi", "wi-fi", "wireless"),
    "speed": ("speed",),
}
"""Words that show a claim type is already in the conversation (the task's words or a result)."""

_ON_OFF = [
    ("airplane_mode", r"Airplane Mode(?: is now|:) (ON|OFF)"),
    ("roaming", r"Data Roaming is now (ON|OFF)"),
    ("data_saver", r"Data Saver [Mm]ode is (?:now )?(ON|OFF)"),
    ("wifi_calling", r"Wi-Fi Calling is (?:now|currently turned) (ON|OFF)"),
    ("wifi", r"Wi-Fi Radio: (ON|OFF)"),
]
_YES_NO = [
    ("mobile_data", r"Mobile Data Enabled: (Yes|No)"),
    ("roaming", r"Data Roaming Enabled: (Yes|No)"),
]
_SIGNAL_WORDS = {"No Signal": "none", "Poor": "poor", "Fair": "fair", "Good": "good", "Excellent": "excellent"}


def _status_bar(text: str, out: dict[str, str]) -> None:
    match = re.search(r"Status Bar: (.*)", text)
    if not match:
        return
    bar = match.group(1)
    if "Airplane Mode" in bar:
        out.setdefault("airplane_mode", "on")
        return
    out.setdefault("airplane_mode", "off")
    for word, value in _SIGNAL_WORDS.items():
        if re.search(rf"(?:📶\S*|📵) {word}\b", bar):
            out.setdefault("signal", value)
            break
    if "Data Enabled" in bar:
        out.setdefault("mobile_data", "on")
        out.setdefault("data_saver", "on" if "Data Saver" in bar else "off")
    elif "Data Disabled" in bar:
        out.setdefault("mobile_data", "off")
    out.setdefault("vpn", "on" if "VPN Connected" in bar else "off")


def readings(text: str) -> dict[str, str]:
    """Claim type -> value that a tool result shows (only what it shows unambiguously)."""
    out: dict[str, str] = {}
    for claim, pattern in _ON_OFF:
        if m := re.search(pattern, text):
            out.setdefault(claim, m.group(1).lower())
    for claim, pattern in _YES_NO:
        if m := re.search(pattern, text):
            out.setdefault(claim, "on" if m.group(1) == "Yes" else "off")
    if m := re.search(r"(?:Network Mode Preference|Preferred Network Mode set to): (\w+)", text):
        out["network_mode"] = m.group(1)
    if m := re.search(r"Cellular Signal: (none|poor|fair|good|excellent)", text):
        out["signal"] = m.group(1)
    if "SIM card is active" in text:
        out["sim"] = "active"
    elif "No SIM card detected" in text:
        out["sim"] = "missing"
    elif "locked with a PIN" in text:
        out["sim"] = "locked_pin"
    elif "locked with a PUK" in text:
        out["sim"] = "locked_puk"
    if "VPN is ON and connected" in text:
        out["vpn"] = "on"
    elif "VPN is turned OFF" in text:
        out["vpn"] = "off"
    if "cannot send MMS" in text:
        out["mms"] = "cannot"
    elif "can send MMS" in text:
        out["mms"] = "can"
    if "You have a payment request" in text:
        out["payment"] = "request"
    elif "No payment request has been made" in text or "You do not have a payment request" in text:
        out["payment"] = "none"
    elif re.search(r"Payment of .* has been made", text):
        out["payment"] = "paid"
    if m := re.search(r"has permission for: ([^.]*)\.", text):
        perms = {p.strip().lower() for p in m.group(1).split(",")}
        if {"sms", "storage"} <= perms:
            out["app_permission"] = "granted"
    elif "has no permissions granted" in text:
        out["app_permission"] = "missing"
    if "Wi-Fi is turned OFF" in text:
        out["wifi"] = "off"
    elif re.search(r"Wi-Fi is ON and connected", text):
        out["wifi"] = "on"
    if m := re.search(r"Speed Test Result: [\d.]+ Mbps \(([^)]*)\)", text):
        desc = m.group(1).lower()
        if desc == "excellent":
            out["speed"] = "fast"
        elif "poor" in desc:
            out["speed"] = "slow"
    elif "Speed test failed" in text:
        out["speed"] = "slow"
    _status_bar(text, out)
    return out


SETTING_WORDS: dict[str, str] = {
    "toggle_airplane_mode": "airplane mode",
    "toggle_data": "mobile data",
    "toggle_roaming": "data roaming",
    "toggle_data_saver_mode": "data saver",
    "toggle_wifi": "the Wi-Fi",
    "toggle_wifi_calling": "Wi-Fi calling",
    "set_network_mode_preference": "the network mode",
    "reseat_sim_card": "the SIM card",
    "reset_apn_settings": "the APN settings",
    "set_apn_settings": "the APN settings",
    "connect_vpn": "the VPN",
    "disconnect_vpn": "the VPN",
    "grant_app_permission": "the app permissions",
    "reboot_device": "restarting the phone",
    "make_payment": "the payment",
    "run_speed_test": "the speed test",
    "can_send_mms": "the picture message test",
}


def setting_words(tool: str) -> str:
    """The plain words for the setting a phone tool touches."""
    return SETTING_WORDS.get(tool, tool.replace("_", " "))


def is_read_tool(tool: str) -> bool:
    """A phone tool that only looks (checks, tests), as opposed to one that changes the phone."""
    return tool.startswith(("check_", "can_", "run_"))


__all__ = ["CLAIM_KEYWORDS", "SETTING_WORDS", "is_read_tool", "readings", "setting_words"]
