"""Claims, not phrasings: a customer's statement about its phone or account read into
(setting or reading, value) pairs, the same pairs read from the phone tools' results, and the
two compared, so the audit compares what was claimed with what the customer's own tools showed
(and, with ``user_db``, with the user-side DB).

Why: the audit's first word rules matched the result templates' own words ("X is on"), so a
customer who said "it's showing X on", "X is still on though" or named the network mode, the
signal, an app permission or a payment was never read (issue 38: misreport recall 0.106, state
claimed without a tool 0.081 on independently written customers). v2 of this reader (one regex
per setting, a value word near it) still read "calling over wifi is on" as Wi-Fi, and nothing
from "the plane mode is on", "my VPN shows not running" or "the messaging app isn't allowed SMS".

How a sentence is read (the words are ``claim_words``):

* **Scope.** Text splits into clauses at sentence ends and contrasts ("but", "though"). A clause
  that asks (a "?" sentence starting like a question), plans or requests ("I'll", "can you"), or
  supposes ("if ...") claims nothing; a hedged statement ("I think X is off", "maybe X is on?") claims;
  someone else's word ("my friend said ...", ``claim_words.REPORTED``) is not the caller's reading, the
  phone's ("the screen says ...") is.
* **Settings.** Every setting name of the clause is found (synonyms; overlapping names keep the
  longest, so "wi-fi calling" is not Wi-Fi); each name's value is read in its own window: from the
  name to the next name, else the words just before it ("no VPN", "switched off the data").
* **Values.** Per kind of setting: on/off with negation ("not running" is off, "isn't allowed" off),
  absence ("no aeroplane icon" is off; a means lacked, "no Wi-Fi to fall back on", is a situation: an
  infinitive between a name and an on/off word makes the word a purpose's, ``claim_words.PURPOSE``), signal levels (bars as the phone's status bar counts them),
  the network mode as the phone's own mode names, SIM, APN, per-permission, MMS, payment, line, speed.

Tool results are read from the τ² telecom user tools' fixed result strings (``shown``).
What the rules here cannot read is left to the audit's judge tier (``tauray/actors/audit/judge_tier``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tauray.actors.audit import claim_words as w

SETTINGS = w.SETTINGS
_NAMES = {k: re.compile(v, re.IGNORECASE) for k, v in w.SETTINGS.items()}
_WINDOW = 80


def _asks(sentence: str) -> bool:
    """Whether a sentence asks rather than states: a "?" sentence that starts like a question or
    only guesses ("Maybe the SIM is locked?"), or one whose verb comes before its subject, with or
    without its "?" ("is roaming meant to be on for this")."""
    if sentence.endswith("?") and (w.QUESTION_START.search(sentence) or w.GUESS.search(sentence)):
        return True
    return bool(w.INVERTED.search(sentence))


def _habit_dropped(clause: str) -> str:
    """A clause less what it says is usual or was so ("I never touch those things", "until last
    week"): the comma-separated parts with such words go; one that leads ("Until last week, ...",
    "Usually, ...") frames the whole clause, which then goes too."""
    if not w.HABIT.search(clause):
        return clause
    parts = clause.split(",")
    if w.HABIT.search(parts[0]):
        return ""
    return ",".join(x for x in parts if not w.HABIT.search(x))


ASSURANCE = re.compile(r"\b(?:unless i(?:'m| am) (?:\w+ ){0,3}?mistaken|if (?:my )?memory serves(?: me)?(?: right| correctly| well)?|"
                       r"i (?:could|would|can)? ?swear(?: to it| that)?|i'd swear(?: that)?|i'?ll tell you that for free|"
                       r"i can tell you that(?: much)?|i(?:'m| am) (?:certain|sure|positive) of (?:it|that)|take it from me|"
                       r"i checked(?: that| it)?(?: myself)?(?=\s*[,.;:])|mark my words|believe me|trust me)\b[,:]?", re.IGNORECASE)
"""The caller's assurance framing a claim ("Unless I'm very much mistaken, ...", "If memory serves, ...", "I could
swear ...", "..., I'll tell you that for free"): it asserts what it frames (issue 51, fourth pass; before, the frame's
"unless" or "if" made the claim a supposition, its "could" a possibility, its "'ll" a plan)."""


def clauses(text: str | None, hedged: bool = False) -> list[str]:
    """The clauses of a text that can claim something (see the module doc): each sentence and
    contrast; a question, a supposition, an ability, a habit and what follows a plan, a wish, a need
    or (unless ``hedged``) a possibility dropped; a past frame ("When I looked earlier, ...") kept as
    the report it frames. ``hedged``: what could be ("the VPN might be running") is read as claimed,
    as a report after a check means it."""
    out, topic = [], ""
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n+", text or ""):
        sentence = ASSURANCE.sub(" ", f"{topic}{sentence.strip()}").strip(" ,")
        topic = ""
        if fixes := list(w.CORRECTION.finditer(sentence)):
            sentence = sentence[fixes[-1].end():].lstrip(" ,-—–")  # what it said before correcting itself is taken back
        if sentence[-1:] in "?:" and len(w.FILLER.sub("", sentence).split()) <= 4 and mentions(sentence) \
                and not w.QUESTION_START.search(sentence) and not w.GUESS.search(sentence):
            topic = sentence[:-1] + ": "  # "Roaming? It's off.", "VPN: off": a topic named, then answered
            continue
        sentence = sentence.removesuffix(":")  # a lead-in ("Just so you're aware: ...") ends a sentence
        if not sentence or _asks(w.FILLER.sub("", sentence)) or (not hedged and w.UNSURE.search(sentence)):
            continue  # a question; a guess with its doubt ("I think the bill is paid but I'm not sure")
        for clause in w.CLAUSE_BREAK.split(sentence):
            clause = w.FILLER.sub("", (clause or "").strip())
            if frame := w.FRAME.search(clause):
                clause = clause[frame.end():]
            clause = w.NOT_TRIED.sub(" ", clause)
            if (said := w.REPORTED.search(clause)) and said.group("subject").strip() \
                    and not w.SPEAKER_IS_PHONE.search(said.group(0)) and not mentions(said.group(0)) \
                    and w.ANOTHERS_PHONE.search(clause[said.end():]):
                clause = clause[:said.start()]  # "my friend said her data saver was on": another's word of their phone
            if not clause or w.CONDITION.search(clause) or w.ABILITY.search(clause) or w.REQUIREMENT.search(clause):
                continue
            clause = _habit_dropped(clause)
            if stop := w.NOT_A_CLAIM.search(clause):
                clause = clause[:stop.start()]
            if not hedged and (stop := w.POSSIBLE.search(clause)):
                clause = clause[:stop.start()]
            if clause.strip():
                out.append(w.HEDGE_NEGATIONS.sub(" ", clause))
    return out


def stated(text: str | None) -> str:
    """The clauses of a text that state something (``clauses``), as one text: what a rule reading the
    phone's template words ("mobile data is on") may read, so "If mobile data is on, ..." states nothing."""
    return " . ".join(clauses(text))


def mentions(clause: str) -> list[tuple[int, int, str]]:
    """(start, end, setting) of every setting named in a clause, overlaps resolved longest-first."""
    found = sorted(((m.start(), m.end(), k) for k, p in _NAMES.items() for m in p.finditer(clause)),
                   key=lambda x: (x[0], -(x[1] - x[0])))
    out: list[tuple[int, int, str]] = []
    for start, end, setting in found:
        if out and start < out[-1][1]:
            continue
        out.append((start, end, setting))
    return out


_MEANS = ("mobile_data", "wifi")
"""Switches that are also a means the caller has or lacks ("I don't have Wi-Fi here", "no data"):
named as absent, they describe its situation or symptom, not a switch it read."""


def _switch(setting: str, before: str, name: str, after: str) -> str | None:
    if w.DENIED_ACTION.search(before):
        said = re.sub(r"\b(?:the whole time|all the time|all along|the entire time)\b", "", after[(it.end() if (it := w.ANAPHOR.match(after)) else 0):])
        if it and (m := w.VALUE.match(said)):
            return "on" if bool(m.group("on")) != bool(m.group("neg")) else "off"  # "..., it's been on the whole time"
        return None  # "I never turned roaming on": an action denied, no reading
    after = w.SITUATION_ON.sub(" using", after)  # "relying on mobile data": what it uses
    absent = w.ABSENT.search(before)
    if (absent and w.ANOTHER.search(absent.group(0))) or w.ALTERNATIVES.search(after):
        return None  # "I don't have another ...", "on or off, which one?"
    if w.BEFORE_CHANGE.search(after):
        return None  # "airplane mode was on, I've turned it off now": the state before the change
    m = w.VALUE.search(after)
    if m and (w.PURPOSE.search(after[:m.end()]) or w.RELATIVE_ABILITY.search(after[:m.start()])):
        return None  # "no Wi-Fi to fall back on", "no wireless to connect to", "no Wi-Fi I can get on": a purpose or ability
    if setting in _MEANS and (absent or re.search(r"\b(?:nothing|none|no)\b", after, re.I)) \
            and re.search(r"\bfor (?:me|us) to\b|\b(?:i|we) (?:can|could)\b", after, re.I):
        return None  # "No Wi-Fi is there for me to use", "Wi-Fi-wise, nothing I can get on": a means not at hand
    if m and w.INTERMITTENT.search(after[:m.end() + 12]):
        return None  # "keeps cutting out", "on and off all day": a symptom
    if m:
        if setting in _MEANS and re.search(r"\b(?:router|broadband|modem|hotspot|provider|at home|here|where i)\b",
                                           after, re.IGNORECASE):
            return None  # "my wifi's off at home because the router died": the caller's situation
        if setting in _MEANS and m.group("on") and m.group("neg") and re.fullmatch(r"connect", m.group("on"), re.I):
            return None  # "my data won't connect": the service failing, not its switch read
        if setting in _MEANS and m.group("off") and w.SYMPTOM_OFF.search(m.group("off")) and \
                not re.search(r"\b(?:icon|symbol|toggle|switch|setting)\b", name + after[:m.start()], re.IGNORECASE):
            return None  # "my data just stopped": the service failing, not its switch
        on = bool(m.group("on")) != bool(m.group("neg"))
        if absent:
            on = not on  # "I don't have data saver on"
        return "on" if on else "off"
    if absent and (setting in _MEANS or w.CONTROL.match(after) or w.PURPOSE.match(after.lstrip())):
        return None  # "no wifi here" is a situation; "no data saver option" is a control not found
    if absent:
        return "off"  # "no VPN", "no plane icon"
    if setting == "airplane_mode" and (mode := w.IN_MODE.search(before)):
        return "off" if re.search(w.NEG, before, re.IGNORECASE) or mode.group("out") else "on"  # "(not) in flight mode"
    v = w.VERB_BEFORE.search(before)
    if v:
        word = (v.group("v") or v.group("w")).lower()
        return "on" if word in ("on", "enabled", "activated") else "off"
    if setting in ("airplane_mode", "vpn") and not re.search(r"\b(?:mode|setting)\b", name, re.IGNORECASE) \
            and not w.CONTROL.match(after) and re.search(r"\b(?:see|seeing|saw|spot|there'?s|there is|shows?|showing)\s+"
                                                        r"(?:a |an |the |that )?(?:\w+\s+)?$", before, re.IGNORECASE):
        return "on"  # "I can see the little aeroplane at the top": its icon seen
    if re.search(r"\b(?:icon|symbol|sign|picture)\b", name, re.IGNORECASE):
        # "there's the little plane icon"; "the plane icon is no longer there"
        return "off" if re.search(w.NEG, after[:30], re.IGNORECASE) else "on"
    return None


def _signal(text: str) -> str | None:
    if m := w.SIGNAL_NOT.search(text):
        return "~poor" if m.group("good") else "~good"  # "not great", "isn't bad", "not full"
    if w.SIGNAL_NONE.search(text):
        return "none"
    if m := w.SIGNAL_BARS.search(text):
        return w.SIGNAL_LEVELS[w.BARS[m.group(1).lower()]]
    if w.SIGNAL_FULL.search(text):
        return "excellent"
    for pattern, level in w.SIGNAL_WORDS:
        if re.search(pattern, text, re.IGNORECASE):
            return level
    return None


def _network(window: str) -> dict[str, str]:
    """The preferred network mode when the words name a mode ("3G only", "4G/5G preferred", "the
    network mode is 2G"); else the generation it is on ("network type 5G"), as the status bar shows it."""
    gens = list(dict.fromkeys("4" if lte else g for g, lte in w.GENERATION.findall(window)))
    if not gens:
        return {}
    if re.search(r"\bprefer|\bonly\b|\bjust\b|network (?:mode|setting|preference)|preferred network", window, re.I):
        preferred = re.search(r"(?:[2345]\s?g|lte)\W{0,3}prefer|prefer\w*\s+(?:[2345]\s?g|lte)", window, re.IGNORECASE)
        if preferred or "5" in gens or len(gens) > 1:
            return {"network_mode": "4g_5g_preferred"} if set(gens) <= {"4", "5"} else {}
        return {"network_mode": f"{gens[0]}g_only"}
    return {"network_type": f"{gens[0]}g"} if len(gens) == 1 else {}


def _first(states: tuple[tuple[str, str], ...], text: str) -> str | None:
    """The value of the earliest state words in the text (a negated form starts at its negation)."""
    found = [(m.start(), i, value) for i, (pattern, value) in enumerate(states)
             if (m := re.search(pattern, text, re.IGNORECASE))]
    return min(found)[2] if found else None


def _permissions(clause: str) -> dict[str, str]:
    named = [k for k, p in w.PERMISSION_NAMES.items() if re.search(p, clause, re.IGNORECASE)] or ["sms", "storage"]
    if w.PERMISSION_MISSING.search(clause):
        value = "missing"
    elif w.PERMISSION_GRANTED.search(clause) or re.search(r"(?:n't|\bnot) short of\b", clause, re.IGNORECASE):
        value = "granted"
    else:
        return {}
    return {f"{k}_permission": value for k in named}


def _payment(text: str) -> str | None:
    if w.PAYMENT_NONE.search(text):
        return "none"
    if w.PAYMENT_PAID.search(text):
        return "paid"
    if w.PAYMENT_REQUEST.search(text):
        return "request"
    return None


def _read(setting: str, clause: str, before: str, name: str, after: str) -> dict[str, str]:
    window = f"{before}{name}{after}"
    if setting in w.SWITCHES:
        value = _switch(setting, before, name, after)
    elif setting == "network_mode":
        return _network(window)
    elif setting == "signal":
        value = "none" if w.SIGNAL_GONE.search(after) else _signal(window)
    elif setting == "sim":
        lock = _first(w.SIM_STATES[:2], name + after)  # "locked ... the PUK": the lock named wins
        absent = w.ABSENT.search(before)
        if absent and w.ANOTHER.search(absent.group(0)):
            return {}  # "I don't have another SIM to test with"
        unread = absent or w.SIM_UNREAD.search(before)  # "no SIM", "it doesn't detect the SIM"
        value = "missing" if unread else lock or _first(w.SIM_STATES[2:], name + after)
    elif setting == "apn":
        value = _first(w.APN_STATES, name + after)
    elif setting == "permission":
        return _permissions(window)
    elif setting == "mms":
        broken = w.MMS_BROKEN.search(name + after)
        said_not = w.MMS_CANNOT.search(window)
        value = ("can" if broken.group("neg") else "cannot") if broken else \
            "cannot" if said_not else "can" if w.MMS_CAN.search(window) else None
        counted = value == "cannot" and said_not is not None and said_not.start() < len(before)  # its own "not", read
        if value and not counted and w.NEGATIVE_SUBJECT.search(before):
            value = "cannot" if value == "can" else "can"  # "Nothing I attach a photo to gets sent"
    elif setting == "payment":
        value = "paid" if w.PAYMENT_PAID.search(name + after) else _payment(window)  # "..., the bill's been paid"
    elif setting == "line":
        value = _first(w.LINE_STATES, name + after) or ("suspended" if re.search(
            r"\b(?:suspended|cut off|blocked|barred|deactivated|terminated)\s+(?:(?:my|the)\s+)?$", before, re.IGNORECASE)
            and not re.search(rf"{w.NEG}|\b(?:nobody|no one|never)\b", before, re.IGNORECASE) else None)  # "they've suspended my line"
    else:  # speed
        value = _first(w.SPEED_STATES, name + after) or _first(w.SPEED_STATES, window)
    return {setting: value} if value else {}


def claims(text: str | None, hedged: bool = False) -> dict[str, str]:
    """setting -> value that a customer's text claims (the first claim of each setting; app
    permissions as ``sms_permission`` / ``storage_permission``). A question, a plan, a request or
    a supposition claims nothing; what could be ("X might be on") claims only when ``hedged`` (a
    report after a check: ``user_words.ResultContradiction``)."""
    return dict(_claims(text or "", hedged))


@lru_cache(maxsize=16384)
def _claims(text: str, hedged: bool = False) -> tuple[tuple[str, str], ...]:
    """``claims`` of one text, kept: a task's prompt and the agent's words are read for every
    customer message after them."""
    out: dict[str, str] = {}
    for clause in clauses(text, hedged):
        found = mentions(clause)
        for i, (start, end, setting) in enumerate(found):
            stop = next((x[0] for x in found[i + 1:] if x[2] != setting), len(clause))  # the next other setting
            begin = max(found[i - 1][1] if i else 0, start - 40)
            before = re.split(r"[,;:—–]", clause[begin:start])[-1]  # "Calls work fine, it's only the pictures"
            read = _read(setting, clause, before, clause[start:end], clause[end:min(stop, end + _WINDOW)])
            for key, value in read.items():
                if key not in out or (out[key].startswith("~") and not value.startswith("~")):
                    out[key] = value  # the first claim of a setting; an exact signal level over a vague word
    return tuple(out.items())


def own_words(text: str | None, results: list[str]) -> str:
    """A customer's message less the lines of phone results it repeats word for word (those are
    the phone's words, not a claim of the customer's)."""
    out = text or ""
    for result in results:
        for line in sorted((x.strip() for x in (result or "").splitlines()), key=len, reverse=True):
            if len(line) > 8 and line in out:
                out = out.replace(line, " . ")
    return out


_SIGNALS = {"no signal": "none", "none": "none", "poor": "poor", "fair": "fair", "good": "good", "excellent": "excellent"}
_SWITCH_RESULTS = (("airplane_mode", r"Airplane Mode(?: is now|:| is) (ON|OFF)"),
                   ("roaming", r"Data Roaming (?:is now|Enabled:) (ON|OFF|Yes|No)"),
                   ("data_saver", r"Data Saver [Mm]ode is (?:now )?(ON|OFF)"),
                   ("wifi_calling", r"Wi-Fi Calling is (?:now |currently turned )?(ON|OFF)"),
                   ("wifi", r"Wi-Fi (?:Radio:|is turned|is now|is) (ON|OFF)"),
                   ("mobile_data", r"Mobile Data (?:Enabled:|is now|is) (ON|OFF|Yes|No)"),
                   ("vpn", r"VPN is (?:turned )?(ON|OFF)(?! in settings)"))


def _shown_status_bar(line: str, out: dict[str, str]) -> None:
    out.setdefault("airplane_mode", "on" if "Airplane Mode" in line else "off")
    if "📵 No Signal" in line:
        out.setdefault("signal", "none")
    elif m := re.search(r"📶\S*\s*(Poor|Fair|Good|Excellent)", line):
        out.setdefault("signal", m.group(1).lower())
    if "Data Enabled" in line:
        out.setdefault("mobile_data", "on")
        out.setdefault("data_saver", "on" if "Data Saver" in line else "off")
    elif "Data Disabled" in line and "Airplane Mode" not in line:
        out.setdefault("mobile_data", "off")
    out.setdefault("vpn", "on" if "VPN" in line else "off")
    if m := re.search(r"\|\s*(2G|3G|4G|5G|LTE)\s*\|", line):
        out.setdefault("network_type", m.group(1).lower())


def shown(result: str | None) -> dict[str, str]:
    """setting -> value that a phone tool's fixed result string shows (only what it shows plainly)."""
    text = result or ""
    out: dict[str, str] = {}
    for setting, pat in _SWITCH_RESULTS:
        if m := re.search(pat, text, re.IGNORECASE):
            out[setting] = "on" if m.group(1).lower() in ("on", "yes") else "off"
    if m := re.search(r"(?:Network Mode Preference|Preferred Network Mode set to):\s*(\w+)", text):
        out["network_mode"] = m.group(1).lower()
    if m := re.search(r"Cellular Signal:\s*(\w+)", text):
        out["signal"] = _SIGNALS.get(m.group(1).lower(), m.group(1).lower())
    if m := re.search(r"Cellular Network Type:\s*(\w+)", text):
        out["network_type"] = m.group(1).lower()
    if "cannot send MMS" in text:
        out["mms"] = "cannot"
    elif "can send MMS" in text:
        out["mms"] = "can"
    if re.search(r"App '?messaging'? currently has no permissions granted", text):
        out.update(sms_permission="missing", storage_permission="missing")
    elif m := re.search(r"App '?messaging'? has permission for: ([^.\n]*)", text):
        granted = {p.strip().lower() for p in m.group(1).split(",")}
        out.update({f"{p}_permission": "granted" if p in granted else "missing" for p in ("sms", "storage")})
    for m in re.finditer(r"Permission '(sms|storage)' granted to app 'messaging'", text):
        out[f"{m.group(1)}_permission"] = "granted"
    if re.search(r"Payment of .* has been made", text):
        out["payment"] = "paid"
    elif "You have a payment request" in text:
        out["payment"] = "request"
    elif "No payment request has been made" in text or "You do not have a payment request" in text:
        out["payment"] = "none"
    if m := re.search(r"Speed Test Result:[^\n(]*\(([^)]*)\)", text):
        out["speed"] = "fast" if m.group(1).lower() in ("excellent", "good") else "slow"
    elif "Speed test failed" in text:
        out["speed"] = "slow"
    sim = next((v for p, v in (("SIM card is active", "active"), ("No SIM card detected", "missing"),
                                ("locked with a PIN", "locked_pin"), ("locked with a PUK", "locked_puk")) if p in text), None)
    if sim:
        out["sim"] = sim
    if m := re.search(r"Current APN Name: (.*)\nMMSC URL[^:]*: (.*)", text):
        out["apn"] = "broken" if m.group(1).strip() in ("broken", "Not Set") or m.group(2).strip() == "Not Set" else "ok"
    if bar := re.search(r"Status Bar: (.*)", text):
        _shown_status_bar(bar.group(1), out)
    return out


def _level(value: str) -> int | None:
    value = value.lstrip("~")
    return w.SIGNAL_LEVELS.index(value) if value in w.SIGNAL_LEVELS else None


def agree(setting: str, said: str, seen: str) -> bool:
    """Whether a claimed value says what a shown value says (a vague signal word is within one
    level of the level shown; a SIM "locked" or "problem" agrees with any lock or fault)."""
    if said == seen:
        return True
    if setting == "signal":
        a, b = _level(said), _level(seen)
        if a is None or b is None or 0 in (a, b):
            return False
        return said.startswith("~") and abs(a - b) <= 1
    if setting == "sim":
        return (said == "locked" and seen.startswith("locked")) or (said == "problem" and seen != "active")
    return False


def contradictions(claimed: str | None, result: str | None) -> list[tuple[str, str, str]]:
    """(setting, claimed value, shown value) where a customer's text (less the result's own words
    it repeats) claims other than a tool result showed."""
    said, seen = claims(own_words(claimed, [result or ""])), shown(result)
    return [(k, said[k], seen[k]) for k in said if k in seen and not agree(k, said[k], seen[k])]


__all__ = ["SETTINGS", "agree", "claims", "clauses", "contradictions", "mentions", "own_words", "shown", "stated"]
