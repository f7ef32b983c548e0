"""What telecom makes cheap to check: the phone tools' topics in an agent's words, the
state words of the phone tools' fixed result templates, each problem family's
"resolved" result, and the customer's known information (one of three fixed strings).

Every detector that reads telecom text asks this module, so a wording rule lives in
one place and carries the version of the detectors that use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tauray.actors.audit.claims import clauses
from tauray.scenarios.conventions import parse_phone_request

# Topic of each phone tool in plain words: an agent that mentions the topic asked for it
# (or at least did not forbid it); a tool whose topic it never mentioned was not asked for.
TOPICS: dict[str, str] = {
    "toggle_airplane_mode": r"airplane|flight mode",
    "toggle_data": r"\b(?:mobile |cellular )?data\b(?! saver)",
    "toggle_roaming": r"roaming",
    "toggle_wifi": r"wi-?fi(?! calling)",
    "toggle_wifi_calling": r"wi-?fi calling",
    "toggle_data_saver_mode": r"data saver",
    "reboot_device": r"reboot|restart|turn (?:it|the phone|your phone) off and on",
    "reseat_sim_card": r"\bsim\b|re-?seat",
    "set_apn_settings": r"\bapn\b|access point",
    "reset_apn_settings": r"\bapn\b|access point",
    "set_network_mode_preference": r"network mode|\b[2345]g\b|\blte\b",
    "connect_vpn": r"\bvpn\b",
    "disconnect_vpn": r"\bvpn\b",
    "grant_app_permission": r"permission",
    "make_payment": r"\bpay",
    "run_speed_test": r"speed test|speed",
    "can_send_mms": r"\bmms\b|picture message",
    "check_status_bar": r"status bar|signal|bars",
}
# Words that make a sentence a request for the customer to act.
_CUE = re.compile(r"\b(?:could|can|would|will) you\b|\bplease\b|\btry\b|\bgo ahead\b|\blet'?s\b|\?", re.IGNORECASE)


def requested_tools(text: str | None, tools: frozenset[str] | set[str], *, need_cue: bool = True) -> set[str]:
    """Phone tools an agent's message asks the customer to use: the tagged request of the
    reference policies exactly, else every tool whose topic the message mentions (when
    ``need_cue``, only in a message that asks for something)."""
    if not text:
        return set()
    tagged = parse_phone_request(text)
    if tagged is not None:
        return {tagged[0]}
    if need_cue and not _CUE.search(text):
        return set()
    return {t for t in tools if t in TOPICS and re.search(TOPICS[t], text, re.IGNORECASE)}


def mentions(text: str | None, tool: str) -> bool:
    """Whether the text mentions the tool's topic (or names the tool)."""
    if not text:
        return False
    named = re.search(rf"\b{re.escape(tool)}\b", text)
    return bool(named) or bool(TOPICS.get(tool) and re.search(TOPICS[tool], text, re.IGNORECASE))


# --- state words of the phone's fixed result templates ---------------------------------------

_CLAIMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("switch", re.compile(r"\b(airplane mode|mobile data|data roaming|data saver mode|wi-?fi calling|wi-?fi|vpn)\s+is\s+"
                          r"(?:now\s+|currently\s+)?(?:turned\s+)?(on|off)\b(?!\s+the\s+(?:cards|table|menu)\b)", re.IGNORECASE)),
    ("data_indicator", re.compile(r"\bdata (enabled|disabled)\b", re.IGNORECASE)),
    ("mms", re.compile(r"\b(cannot|can't|can not|can)\s+send\s+mms\b", re.IGNORECASE)),
    ("speed", re.compile(r"\((very poor|poor|fair|good|excellent)\)", re.IGNORECASE)),
    ("speed", re.compile(r"\bspeed\b[^.\n]{0,40}?\b(very poor|poor|fair|good|excellent)\b", re.IGNORECASE)),
    ("signal", re.compile(r"📶\S*\s*(poor|fair|good|excellent)|(no signal)", re.IGNORECASE)),
)


def claim_spans(text: str | None) -> list[tuple[str, str, str]]:
    """(feature, value, the words that state it) of every phone-state fact a text states, from
    the fixed result templates' words (``Airplane Mode is now OFF``, ``Data Enabled``, ``(Excellent)``...)."""
    out = []
    for kind, pattern in _CLAIMS:
        for m in pattern.finditer(text or ""):
            groups = [g for g in m.groups() if g]
            if kind == "switch":
                feature, value = f"switch:{groups[0].lower().replace('-', '')}", groups[1].lower()
            else:
                feature, value = kind, groups[-1].lower()
            if kind == "mms":
                value = "yes" if value == "can" else "no"
            out.append((feature, value, m.group(0)))
    return out


def state_claims(text: str | None) -> dict[str, str]:
    """The phone-state facts a text states (``feature -> value``; the first statement of each)."""
    out: dict[str, str] = {}
    for feature, value, _ in claim_spans(text):
        out.setdefault(feature, value)
    return out


def contradictions(claimed: str | None, shown: str | None) -> list[tuple[str, str, str]]:
    """(feature, claimed value, shown value) where a text states the opposite of a tool result."""
    said, seen = state_claims(claimed), state_claims(shown)
    return [(f, said[f], seen[f]) for f in said if f in seen and said[f] != seen[f]]


_RESOLVED = {
    "mms_issue": re.compile(r"\bcan send MMS\b"),
    "mobile_data_issue": re.compile(r"Speed Test Result:[^\n]*\(Excellent\)"),
    "service_issue": re.compile(r"Status Bar: 📶"),
}


def shows_resolved(issue_type: str | None, tool_result: str | None) -> bool:
    """Whether a phone result shows the family's stated "resolved" condition (MMS sends;
    speed test Excellent; signal in the status bar)."""
    pattern = _RESOLVED.get(issue_type or "")
    return bool(pattern and tool_result and pattern.search(tool_result))


# The family's check shows the problem still there: MMS fails; a speed test below Excellent
# (or none at all); no signal in the status bar (any result's status bar line: toggles print it).
_FAILED = {
    "mms_issue": re.compile(r"\bcannot send MMS\b"),
    "mobile_data_issue": re.compile(r"Speed Test Result:[^\n]*\((?:Very Poor|Poor|Fair|Good)\)|Speed test failed"),
    "service_issue": re.compile(r"Status Bar: (?!📶)"),
}


def shows_failure(issue_type: str | None, tool_result: str | None) -> bool:
    """Whether a phone result shows the family's problem unresolved (the opposite of
    :func:`shows_resolved`: MMS cannot send; speed test below Excellent or failed; no signal)."""
    pattern = _FAILED.get(issue_type or "")
    return bool(pattern and tool_result and pattern.search(tool_result)) and not shows_resolved(issue_type, tool_result)


# Phone settings a customer could name as the cause; naming one that nothing showed and its
# task never mentioned gives away what only the agent's tools (or the task's author) know.
SETTING_TOPICS: dict[str, str] = {
    "APN settings": r"\bapn\b", "SIM card": r"\bsim\b", "network mode": r"network mode", "VPN": r"\bvpn\b",
    "data saver": r"data saver", "Wi-Fi calling": r"wi-?fi calling", "roaming": r"roaming",
    "airplane mode": r"airplane|flight mode",
}


# --- the customer's known information --------------------------------------------------------


@dataclass(frozen=True)
class KnownInfo:
    """The telecom customer's known information, read from its fixed wording."""

    name: str | None
    phone: str | None
    where: str | None  # "abroad", "home" or None when the task says nothing


_KNOWN = re.compile(r"You are (?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)+) with phone number (?P<phone>\d{3}-\d{3}-\d{4})")


def known_info(text: str | None) -> KnownInfo:
    m = _KNOWN.search(text or "")
    where = ("abroad" if re.search(r"currently abroad", text or "") else
             "home" if re.search(r"currently at home", text or "") else None)
    return KnownInfo(name=m["name"] if m else None, phone=m["phone"] if m else None, where=where)


PHONE_NUMBER = re.compile(r"\b\d{3}-\d{3}-\d{4}\b")
NAME_CLAIM = re.compile(r"\b(?:[Mm]y name is|[Tt]his is|I am|I'm)\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)")
NOT_HOME = re.compile(r"\b(?:abroad|travell?ing|overseas|out of the country|in another country|away from home|"
                      r"on (?:holiday|vacation|a trip))\b", re.IGNORECASE)
"""Words that put the caller away from home."""
HOME_COUNTRY = re.compile(r"\b(?:in the (?:united states|states|us|usa|u\.s\.)|in america|stateside)\b", re.IGNORECASE)
"""Words that put the caller in its home country (the United States, every telecom task's home)."""
AT_HOME = re.compile(rf"\b(?:at home|back home|home in)\b|{HOME_COUNTRY.pattern}", re.IGNORECASE)
"""Words that put the caller at home."""
_NEGATED = re.compile(r"(?:\bnot\b|n['’]t\b|\bnever\b|\bno\b|\bno longer\b|\bnowhere near\b)(?:\s+[\w']+){0,3}\s*$", re.IGNORECASE)
_PRESENT = re.compile(r"\b(?:i'?m|im|i am|we'?re|we are|i'?ve been|we'?ve been|i have been|currently|right now|"
                      r"at the moment|atm|staying|stuck|living|i live|we live|here|back|now|travell?ing|away)\b", re.IGNORECASE)
"""The caller's own presence somewhere ("I'm ...", "right now", "staying"): whereabouts are said of it."""
_PAST = re.compile(r"\b(?:was|were|had been|used to|last (?:week|month|year|time)|ago|before|earlier this year)\b",
                   re.IGNORECASE)


def whereabouts(text: str | None) -> set[str]:
    """Where a caller's text says it is ("home", "abroad"), read as a person means it: only in
    clauses that state something (``claims.clauses``: no question, supposition or wish), and a
    negation before the place turns it ("I'm not travelling": at home; "in France, not at home":
    abroad; but "not at home" alone only says the caller is out, perhaps in town); where it was
    ("I was travelling last month") is not where it is. v1 of ``known_info_contradicted`` matched
    the words alone, so "I'm not travelling, I'm at home" read as abroad (issue 51)."""
    out: set[str] = set()
    for clause in clauses(text):
        if clause.rstrip().endswith("?"):
            continue  # "Travelling? No, I'm at home.": a word asked back
        if not _PRESENT.search(clause):
            continue  # "I've got no wifi at home": where the wifi is not, not where the caller is
        for part in re.split(r"[,;:]|\b(?:but|and|just|so|only|though)\b", clause, flags=re.IGNORECASE):
            if _PAST.search(part):
                continue
            for m in AT_HOME.finditer(part):
                if not _NEGATED.search(part[:m.start()]):
                    out.add("home")
                elif HOME_COUNTRY.fullmatch(m.group(0)):
                    out.add("abroad")  # "not in the States"
            for m in NOT_HOME.finditer(part):
                out.add("home" if _NEGATED.search(part[:m.start()]) else "abroad")
    return out


# --- the task's constraints and the customer's rules ------------------------------------------


@dataclass(frozen=True)
class Constraints:
    """What the telecom customer's task forbids or requires, read from its fixed wording."""

    no_plan_change: bool  # "you do not want to change your mobile data plan"
    refuel_limit_gb: float | None  # "You are willing to refuel 2.0 GB of data"
    no_wifi: bool  # "You do not have access to wifi"
    accepts_payment: bool  # "If the agent asks you to pay a bill, you accept"

    @property
    def any(self) -> bool:
        return self.no_plan_change or self.refuel_limit_gb is not None or self.no_wifi or self.accepts_payment


def constraints(text: str | None) -> Constraints:
    text = text or ""
    limit = re.search(r"willing to refuel (\d+(?:\.\d+)?) ?GB", text, re.IGNORECASE)
    return Constraints(
        no_plan_change=bool(re.search(r"do not want to change your (?:mobile )?data plan", text, re.IGNORECASE)),
        refuel_limit_gb=float(limit[1]) if limit else None,
        no_wifi=bool(re.search(r"do not have access to wi-?fi", text, re.IGNORECASE)),
        accepts_payment=bool(re.search(r"asks you to pay a bill, you accept", text, re.IGNORECASE)))


# A sentence that wants the plan changed, more data than the task allows, or says the customer has Wi-Fi.
PLAN_CHANGE = re.compile(r"\b(?:change|switch|upgrade|downgrade|move|put)\b[^.?!\n]{0,30}\bplan\b|"
                         r"\b(?:bigger|larger|new|unlimited|different|another|better|cheaper) (?:data |mobile |phone )?"
                         r"plan\b", re.IGNORECASE)
REFUEL = re.compile(r"\b(?:refuel|top[- ]?up|add|buy|extra|more data)\b", re.IGNORECASE)
GIGABYTES = re.compile(r"\b(\d+(?:\.\d+)?)\s?GB\b", re.IGNORECASE)
WIFI_ACCESS = re.compile(r"\bI(?:'m| am) (?:on|connected to|using)\b[^.?!\n]{0,20}\bwi-?fi\b(?! calling)|"
                         r"\bI (?:have|'ve got|got|can use)\b[^.?!\n]{0,20}\bwi-?fi\b(?! calling)|"
                         r"(?<!calling )(?<!calls )(?<!call )\b(?:over|via|through|by) (?:my |the )?(?:home )?wi-?fi\b"
                         r"(?! calling)", re.IGNORECASE)
"""Saying the customer has Wi-Fi (v2 of constraint_broken: not "calling over wifi", which names Wi-Fi calling)."""
NEGATION = re.compile(r"\b(?:don'?t|do not|doesn'?t|not|never|no|won'?t|without|rather not|refuse)\b", re.IGNORECASE)
AGREES = re.compile(r"^\s*(?:yes|yeah|yep|sure|ok(?:ay)?|go ahead|please do|fine|alright|sounds good)\b", re.IGNORECASE)
REFUSES = re.compile(r"\b(?:won'?t|will not|don'?t want to|do not want to|not going to|refuse|rather not|prefer not|"
                     r"not paying|not pay|no way)\b", re.IGNORECASE)

# What answers a request for a phone action without doing it: a refusal ("I'd rather not", "I'm not
# comfortable changing that", "No, I won't"), a "cannot" ("I can't find a way to...", "my phone doesn't
# have that option", "I don't see anything like that"), or a question back about how to do it.
DECLINES = re.compile(r"\b(?:won'?t|will not|don'?t want|do not want|not going to|refuse|rather not|prefer not|"
                      r"not comfortable|not willing|no way|no thanks|not now|not right now)\b|^\s*(?:no|nope|nah)\b",
                      re.IGNORECASE)
CANNOT = re.compile(r"\b(?:can'?t|cannot|can not|couldn'?t|could not|unable|not able|not possible|no such|"
                    r"(?:doesn'?t|does not|don'?t|do not) (?:seem to )?(?:have|see|find|know how|work|let me)|"
                    r"not sure how|there is no|there'?s no|isn'?t there|is not there)\b", re.IGNORECASE)
ASKS_HOW = re.compile(r"\b(?:how|where|why|what)\b[^.?!]*\b(?:do|does|did|find|turn|get|mean|reach)\b[^.?!]*"
                      r"\b(?:that|it|this|them)\b[^.?!]*\?|\bwhat do you mean\b", re.IGNORECASE)


def sentences(text: str | None) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+|\n+", text or "") if s.strip()]


_OFFER = re.compile(r"\b(?:would you like|do you want|shall I|should I|I can|I could|I will|I'll|let me)\b", re.IGNORECASE)


def without_offers(text: str | None) -> str | None:
    """An agent message less its offers and announcements ("Would you like to change your data
    plan?", "Let me check your line"): a "yes" to those asks the customer for no phone action.
    A tagged request is kept whole."""
    if text is None or parse_phone_request(text) is not None:
        return text
    return " ".join(s for s in sentences(text) if not _OFFER.search(s))


# The customer's rules that forbid bundling: tauray's telecom script ("one step at a time",
# "After each step, tell the agent what the phone now shows": the telling comes after the
# result) and τ²'s guidelines ("You cannot do both at the same time", "multiple actions at once").
_ONE_STEP = re.compile(r"one step at a time|cannot perform multiple actions at once|one action at a time", re.IGNORECASE)
_TEXT_AFTER = re.compile(r"cannot do both at the same time|After each step, tell the agent", re.IGNORECASE)


def bundling_forbidden(user_text: str | None) -> frozenset[str]:
    """What the customer's own rules forbid: ``several_writes`` (more than one phone action in
    one turn) and ``text_with_call`` (words sent with a phone call)."""
    out = set()
    if _ONE_STEP.search(user_text or ""):
        out.add("several_writes")
    if _TEXT_AFTER.search(user_text or ""):
        out.add("text_with_call")
    return frozenset(out)


# Identity details the telecom customer is never given: saying one is inventing it.
INVENTED_KINDS: dict[str, re.Pattern[str]] = {
    "date of birth": re.compile(r"\b(?:date of birth|born on|birth ?date|birthday)\b", re.IGNORECASE),
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "account number": re.compile(r"\baccount (?:number|no\.?|id)\b[^.\n]*\d", re.IGNORECASE),
    "postal address": re.compile(r"\b\d+\s+[A-Z][a-z]+\s+(?:Street|St\.|Avenue|Ave\.|Road|Rd\.|Lane|Drive|Boulevard)\b"),
    "social security number": re.compile(r"\b(?:ssn|social security)\b", re.IGNORECASE),
}

__all__ = ["AGREES", "ASKS_HOW", "AT_HOME", "CANNOT", "DECLINES", "GIGABYTES", "HOME_COUNTRY", "INVENTED_KINDS", "NAME_CLAIM", "NEGATION", "NOT_HOME", "PHONE_NUMBER",
           "PLAN_CHANGE", "REFUEL", "REFUSES", "SETTING_TOPICS", "TOPICS", "WIFI_ACCESS", "Constraints", "KnownInfo",
           "bundling_forbidden", "claim_spans", "without_offers", "constraints", "contradictions", "known_info", "mentions",
           "requested_tools", "sentences", "shows_failure", "shows_resolved", "state_claims", "whereabouts"]
