"""Claims, not phrasings: a customer's statement about its phone or account read into
(setting or reading, value) pairs, and the same pairs read from the phone tools' results, so
the audit compares what was claimed with what the customer's own tools last showed.

Why: the audit's first word rules matched the result templates' own words ("X is on"), so a
customer who said "it's showing X on", "X is still on though" or named the network mode, the
signal, an app permission or a payment was never read (issue 38: misreport recall 0.106,
state claimed without a tool 0.081 on independently written customers). A claim is read from
a sentence that names a setting (its synonyms below) and a value word near it; a sentence
that only asks ("is X on?") or only talks about the future ("I'll turn X on") claims nothing.

Tool results are read from the τ² telecom user tools' fixed result strings (``shown``).
What the rules here cannot read is left to the audit's judge tier (``actors/judge/audit_tier``).
"""

from __future__ import annotations

import re

SETTINGS: dict[str, str] = {
    "airplane_mode": r"air ?plane(?: mode)?|aeroplane(?: mode)?|flight mode",
    "mobile_data": r"(?:mobile|cellular|cell) data|data connection|\bmobile internet|\bdata\b(?! saver| roaming| plan| usage)",
    "roaming": r"(?:data )?roaming",
    "wifi_calling": r"wi-?fi calling|wifi calls",
    "wifi": r"\bwi-?fi\b(?! calling)|wireless(?! calling)",
    "data_saver": r"data saver|data-saver|saver mode|low data mode",
    "vpn": r"\bvpn\b",
    "network_mode": r"network mode|network type|network preference|preferred network|\b[2345]g\b|\blte\b",
    "signal": r"\bsignal\b|(?<!status )\bbars?\b|\breception\b|\bservice\b",
    "mms": r"\bmms\b|picture messages?|photo messages?|multimedia messages?|pictures? (?:won'?t|will not|don'?t) send",
    "app_permission": r"permissions?",
    "payment": r"\bpayment\b|\bbill\b|\bpaid\b|\bpay\b",
    "speed": r"\bspeed\b|speed test",
    "sim": r"\bsim\b",
}
"""Each readable setting and the words a customer uses for it."""

_ON = r"\b(?:on|enabled?|active|activated|switched on|turned on|connected|lit up|showing on)\b"
_OFF = r"\b(?:off|disabled?|inactive|deactivated|switched off|turned off|disconnected|greyed out|grayed out)\b"
_NEG_ON = r"\b(?:not|isn'?t|aren'?t|wasn'?t|never)\s+(?:\w+\s+)?(?:on|enabled|active|connected)\b"
_NEG_OFF = r"\b(?:not|isn'?t|aren'?t|wasn'?t|never)\s+(?:\w+\s+)?(?:off|disabled)\b"
_SWITCHES = ("airplane_mode", "mobile_data", "roaming", "wifi_calling", "wifi", "data_saver", "vpn")
_FUTURE = re.compile(r"\b(?:i'?ll|i will|going to|gonna|let me|should i|shall i|do you want|want me to|"
                     r"could you|can you|would you|how do i|how can i|try to|trying to)\b", re.IGNORECASE)
_QUESTION = re.compile(r"\?\s*$")
_MODE = re.compile(r"\b(2g|3g|4g|5g|lte)(?:\s*(?:/|and|or|,)\s*(2g|3g|4g|5g|lte))*(?:\s*only)?\b", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?;])\s+|\n+|\s+(?:but|though|and|while)\s+", text or "") if s.strip()]


def _value_near(sentence: str, start: int, end: int) -> str | None:
    """on/off said of the setting at [start, end): the nearest value word after it (within 40
    characters), else before it ("turned off the data")."""
    after, before = sentence[end:end + 40], sentence[max(0, start - 30):start]
    verb = re.search(r"\b(?:turned|switched|toggled|flipped|shut|disabled|enabled|activated|deactivated)\s*(on|off)?\s+"
                     r"(?:the |my |your )?\S*\s*$", before, re.IGNORECASE)
    windows = [after] + ([verb.group(0)] if verb else [])
    for window in windows:
        if re.search(_NEG_ON, window, re.IGNORECASE):
            return "off"
        if re.search(_NEG_OFF, window, re.IGNORECASE):
            return "on"
        on, off = re.search(_ON, window, re.IGNORECASE), re.search(_OFF, window, re.IGNORECASE)
        if on and (not off or on.start() < off.start()):
            return "on"
        if off:
            return "off"
    return None


def _reading(setting: str, sentence: str, start: int, end: int) -> str | None:
    s = sentence.lower()
    if setting in _SWITCHES:
        return _value_near(sentence, start, end)
    if setting == "network_mode":
        m = _MODE.search(s)
        return m.group(0).replace(" ", "").replace("only", "") if m else None
    if setting == "signal":
        if re.search(r"\bno (?:signal|bars|service|reception)\b|\bzero bars\b|\bnothing\b|\bnone\b|sos only|"
                     r"emergency calls only", s):
            return "none"
        for word in ("excellent", "good", "fair", "poor", "weak", "strong", "full"):
            if re.search(rf"\b{word}\b", s):
                return {"weak": "poor", "strong": "good", "full": "excellent"}.get(word, word)
        m = re.search(r"\b([1-5]|one|two|three|four|five) bars?\b", s)
        return "some" if m else None
    if setting == "mms":
        if re.search(r"\b(?:can'?t|cannot|can not|unable|won'?t|will not|doesn'?t|does not|don'?t|fail\w*|not)\b", s):
            return "cannot"
        if re.search(r"\b(?:can|works?|working|went through|sent|goes through|success\w*)\b", s):
            return "can"
        return None
    if setting == "app_permission":
        if re.search(r"\b(?:no|not|missing|without|denied|lacks?|isn'?t|doesn'?t have)\b", s):
            return "missing"
        if re.search(r"\b(?:has|have|granted|allowed|enabled|got)\b", s):
            return "granted"
        return None
    if setting == "payment":
        if re.search(r"\b(?:no|not|haven'?t|hasn'?t|didn'?t|unpaid|outstanding|overdue|pending)\b", s):
            return "unpaid"
        if re.search(r"\b(?:paid|went through|made the payment|settled|cleared)\b", s):
            return "paid"
        return None
    if setting == "speed":
        if re.search(r"\b(?:slow|poor|crawl\w*|terrible|bad|fair|sluggish)\b", s):
            return "slow"
        if re.search(r"\b(?:fast|excellent|great|quick|good)\b", s):
            return "fast"
        return None
    if setting == "sim":
        if re.search(r"\b(?:no sim|not detected|missing|locked|not (?:recogni[sz]ed|inserted)|isn'?t (?:detected|there))\b", s):
            return "problem"
        if re.search(r"\b(?:active|detected|fine|working|recogni[sz]ed|ok)\b", s):
            return "active"
    return None


def claims(text: str | None) -> dict[str, str]:
    """setting -> value that a customer's text claims (first claim of each setting). A question
    or a statement about what the customer will do claims nothing."""
    out: dict[str, str] = {}
    for sentence in _sentences(text or ""):
        if _QUESTION.search(sentence) or _FUTURE.search(sentence):
            continue
        for setting, pattern in SETTINGS.items():
            if setting in out:
                continue
            m = re.search(pattern, sentence, re.IGNORECASE)
            if m is None:
                continue
            value = _reading(setting, sentence, m.start(), m.end())
            if value is not None:
                out[setting] = value
    if "wifi_calling" in out and out.get("wifi") == out["wifi_calling"]:
        out.pop("wifi")  # "wi-fi calling" also matched the bare Wi-Fi words
    return out


_SIGNALS = {"no signal": "none", "poor": "poor", "fair": "fair", "good": "good", "excellent": "excellent"}


def shown(result: str | None) -> dict[str, str]:
    """setting -> value that a phone tool's fixed result string shows (only what it shows plainly)."""
    text = result or ""
    out: dict[str, str] = {}
    for setting, pat in (("airplane_mode", r"Airplane Mode(?: is now|:| is) (ON|OFF)"),
                         ("roaming", r"Data Roaming (?:is now|Enabled:) (ON|OFF|Yes|No)"),
                         ("data_saver", r"Data Saver [Mm]ode is (?:now )?(ON|OFF)"),
                         ("wifi_calling", r"Wi-Fi Calling is (?:now |currently turned )?(ON|OFF)"),
                         ("wifi", r"Wi-Fi (?:Radio:|is turned|is) (ON|OFF)"),
                         ("mobile_data", r"Mobile Data (?:Enabled:|is now|is) (ON|OFF|Yes|No)"),
                         ("vpn", r"VPN is (?:turned )?(ON|OFF)")):
        m = re.search(pat, text, re.IGNORECASE)
        if m:
            out[setting] = "on" if m.group(1).lower() in ("on", "yes") else "off"
    if m := re.search(r"(?:Network Mode Preference|Preferred Network Mode set to|network mode[^:\n]*):\s*([\w/]+)",
                      text, re.IGNORECASE):
        out["network_mode"] = m.group(1).lower().replace("_", "").replace("only", "")
    if m := re.search(r"Cellular Signal:\s*(\w+)", text):
        out["signal"] = _SIGNALS.get(m.group(1).lower(), m.group(1).lower())
    if "cannot send MMS" in text:
        out["mms"] = "cannot"
    elif "can send MMS" in text:
        out["mms"] = "can"
    if "has no permissions granted" in text or re.search(r"does not have .*permission", text):
        out["app_permission"] = "missing"
    elif "has permission for" in text or "Permission granted" in text:
        out["app_permission"] = "granted"
    if re.search(r"Payment of .* has been made|payment .* successful", text, re.IGNORECASE):
        out["payment"] = "paid"
    elif "You have a payment request" in text:
        out["payment"] = "unpaid"
    if m := re.search(r"Speed Test Result:[^\n(]*\(([^)]*)\)", text):
        out["speed"] = "fast" if m.group(1).lower() in ("excellent", "good") else "slow"
    elif "Speed test failed" in text:
        out["speed"] = "slow"
    if "SIM card is active" in text:
        out["sim"] = "active"
    elif re.search(r"No SIM card detected|locked with a PU?[IK]N?|SIM .*(?:missing|locked)", text):
        out["sim"] = "problem"
    bar = re.search(r"Status Bar: (.*)", text)
    if bar:
        line = bar.group(1)
        out.setdefault("airplane_mode", "on" if "Airplane Mode" in line else "off")
        if "📵" in line or "No Signal" in line:
            out.setdefault("signal", "none")
        elif m := re.search(r"📶\S*\s*(Poor|Fair|Good|Excellent)", line):
            out.setdefault("signal", m.group(1).lower())
        if "Data Enabled" in line:
            out.setdefault("mobile_data", "on")
        elif "Data Disabled" in line:
            out.setdefault("mobile_data", "off")
        out.setdefault("vpn", "on" if "VPN" in line else "off")
        out.setdefault("data_saver", "on" if "Data Saver" in line else "off")
        if m := re.search(r"\|\s*(2G|3G|4G|5G|LTE)\s*\|", line):
            out.setdefault("network_type", m.group(1).lower())
    return out


_COMPARABLE = {"signal": {"none": "none", "poor": "some", "fair": "some", "good": "some", "excellent": "some",
                          "some": "some"}}


def _agree(setting: str, said: str, seen: str) -> bool:
    if setting == "network_mode":  # "4G/5G" against 5g_4g_3g_2g: the generations named must be allowed
        return all(g in seen for g in re.findall(r"[2345]g|lte", said)) or said in seen
    if setting == "signal":
        if said == seen:
            return True
        coarse = _COMPARABLE["signal"]
        return coarse.get(said) == coarse.get(seen) and "none" not in (said, seen) and (said == "some" or seen == "some"
                                                                                         or {said, seen} <= {"good", "excellent"}
                                                                                         or {said, seen} <= {"poor", "fair"})
    return said == seen


def contradictions(claimed: str | None, result: str | None) -> list[tuple[str, str, str]]:
    """(setting, claimed value, shown value) where a customer's text claims other than a tool result showed."""
    said, seen = claims(claimed), shown(result)
    return [(k, said[k], seen[k]) for k in said if k in seen and not _agree(k, said[k], seen[k])]


__all__ = ["SETTINGS", "claims", "contradictions", "shown"]
