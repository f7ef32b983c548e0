"""What the simulated customer says against what it saw and what its task gave it: a
report that contradicts the phone result, its known information contradicted, an identity
detail invented, a phone state no tool showed, a cause named before anything showed it, and
its task's constraints broken. Rules of the user-simulator audit."""

from __future__ import annotations

import re

from tauray.actors.audit import claim_words, claims, phone, user_db
from tauray.actors.audit.finding import Detector, Finding, strip_tokens
from tauray.actors.audit.trajectory import Message, Trajectory


def _own_results(t: Trajectory, seq: int) -> list[Message]:
    """The customer's own phone results before ``seq`` (what it was shown), in order."""
    return [x for x in t.messages if x.seq < seq and x.side == "user" and x.role == "tool"]


def _told(t: Trajectory, seq: int) -> set[tuple[str, str]]:
    """What the customer was told before ``seq``: its task's statement of the problem and the
    agent's words, read into claims."""
    said = [t.task.user_text or ""] + [x.content or "" for x in t.messages
                                      if x.seq < seq and x.side == "agent" and x.role == "assistant" and not x.tool_calls]
    return {pair for text in said for pair in claims.claims(text).items()}


class ResultContradiction(Detector):
    """The customer's report claims other than the phone results of the same turn showed (v3: the
    report, less the result lines it repeats word for word, is read into claims with ``claims``'
    vocabulary of settings and values, and each claimed setting is compared with the latest result
    of the turn that showed it; v2 read fewer words and only the turn's last result, and read
    "calling over wifi is on" as Wi-Fi; v1 compared the result templates' own words, so it read only
    "X is on/off"; v4: the claim reader of issue 51 (``claims.clauses``: negation, needs, hedged
    guesses, suppositions, frames, situations), and the template words read only where stated; a report
after a check is read ``hedged``: "I think the VPN might be running" tells the agent what it saw; v5:
that hedged reading, a habit beside a claim keeps it, "not letting me send photos" cannot send; v13: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; v12: "it" takes up a setting after an action denied ("I haven't turned airplane mode off, it's been on"), a thing's "wants"/"needs" is a state, not a need ("the SIM card wants a PIN"), APN "defaults" are ok; v11: a habit told by its frequency ("I seldom switch data off"), an action denied behind a belief ("I don't believe I ever turned roaming on") and "my work" (the noun) claim nothing; v10: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send; v6: a
    state told as it was before the change ("airplane mode was on, I've turned it off now"), an icon "no
    longer there" (off), a signal "not full" (still good, vaguely), "'message not sent'" (cannot send); v7:
    "wonderful" no longer ends a claim's scope as a wondering; v8: "the plane is still showing" names the
    airplane icon; v9: as ``state_without_tool@12``, a report is read ``hedged`` so a doubt keeps its claim); v14: the claim reader's fourth pass of issue 51 (``claims.ASSURANCE``: "Unless I'm mistaken, ...", "If memory serves, ...", "I could swear ...", "..., I'll tell you that for free" assert what they frame; a SIM that "isn't detecting", "there isn't any signal"); v15: the claim reader's fifth pass of issue 51 (``claim_words.NEG``: a dialect's "cannae", a mid-clause "nah", "data saver's no on"; ``claim_words.REQUIREMENT`` and "must": "only excellent speed will do" claims nothing; a means not at hand, "no Wi-Fi is there for me to use"))."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            results = [x for x in _own_results(t, m.seq) if x.turn == m.turn]
            if not results:
                continue
            seen: dict[str, str] = {}
            for x in results:
                seen.update(claims.shown(x.content))
            said = claims.claims(claims.own_words(m.content, [x.content or "" for x in results]), hedged=True)
            bad = [(k, v, seen[k]) for k, v in said.items() if k in seen and not claims.agree(k, v, seen[k])]
            bad += [b for b in phone.contradictions(claims.stated(m.content), results[-1].content) if b[0] not in said]
            if bad:
                out.append(self.finding(m, "; ".join(f"{f}: said {a}, phone showed {b}" for f, a, b in bad)))
        return out


class KnownInfoContradicted(Detector):
    """The customer states a phone number, name or whereabouts other than its known information
    (v2: whereabouts read as a person means them, ``phone.whereabouts``: "I'm not travelling, I'm at
    home" is at home; v1 matched the words, and flagged 47 of 414 faithful talk-dev callers; v3: "went" is
    no negation, v2 read "I went abroad" as at home; v4: "No travelling for me" and "Travelling? No, I'm
    at home" are at home; v8: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; v7: as ``state_without_tool@15``; v6: a habit told by its frequency ("I seldom switch data off"), an action denied behind a belief ("I don't believe I ever turned roaming on") and "my work" (the noun) claim nothing; v5: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send); v9: as ``result_contradiction@14``; v10: as ``result_contradiction@15``; v11: as ``result_contradiction@16``)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        known = phone.known_info(t.task.known_info)
        out = []
        for m in t.user_texts:
            text = m.content or ""
            earlier = " ".join(x.content or "" for x in t.messages if x.seq < m.seq and x.side == "agent")
            why = []
            for number in phone.PHONE_NUMBER.findall(text):
                if known.phone and number != known.phone and number not in earlier:
                    why.append(f"number {number} (known {known.phone})")
            for claim in phone.NAME_CLAIM.finditer(text):
                if known.name and claim["name"] not in known.name and known.name not in claim["name"]:
                    why.append(f"name {claim['name']} (known {known.name})")
            where = phone.whereabouts(strip_tokens(text))
            if known.where == "abroad" and "home" in where:
                why.append("says at home (known: abroad)")
            if known.where == "home" and "abroad" in where:
                why.append("says abroad (known: at home)")
            if why:
                out.append(self.finding(m, "; ".join(why)))
        return out


_A_VALUE = re.compile(r"[^.?!\n]{0,30}?(?:\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b)",
                      re.IGNORECASE)


def _gives(kind: str, pattern: re.Pattern[str], text: str) -> bool:
    """Whether a text gives a detail of this kind, not only names it: the email address itself, or
    the kind's words followed by a value (a number, a month), in a sentence that does not ask
    ("Should I give you my date of birth?", "I don't know my date of birth" give none)."""
    for sentence in phone.sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        for m in pattern.finditer(sentence):
            if kind in ("email", "postal address") or _A_VALUE.match(sentence, m.end()):
                return True
    return False


class IdentityInvented(Detector):
    """The customer gives an identity detail its task never gave it (date of birth, email,
    account number, address...); v2: only a detail given (a value), not one named in a question or
    in "I don't know my date of birth"."""

    def detect(self, t: Trajectory) -> list[Finding]:
        known = t.task.known_info or ""
        out = []
        for m in t.user_texts:
            kinds = [k for k, p in phone.INVENTED_KINDS.items() if _gives(k, p, m.content or "") and not p.search(known)]
            if kinds:
                out.append(self.finding(m, f"gives {', '.join(kinds)} not in its known information: {m.content!r}"))
        return out


_SWITCH_KEYS = {"airplane mode": "airplane_mode", "mobile data": "mobile_data", "data roaming": "roaming",
                "data saver mode": "data_saver", "wificalling": "wifi_calling", "wi-fi calling": "wifi_calling",
                "wifi calling": "wifi_calling", "wifi": "wifi", "vpn": "vpn"}


def _as_claim(feature: str, value: str) -> tuple[str, str]:
    """A template-word state (``phone.claim_spans``) as the claim reader's (setting, value)."""
    if feature.startswith("switch:"):
        return _SWITCH_KEYS.get(feature[7:], feature[7:]), value
    if feature == "mms":
        return "mms", "can" if value == "yes" else "cannot"
    if feature == "data_indicator":
        return "mobile_data", "on" if value == "enabled" else "off"
    if feature == "speed":
        return "speed", "fast" if value in ("excellent", "good") else "slow"
    if feature == "signal" and value == "no signal":
        return "signal", "none"  # the reader's word for it, so a task's "No Service" covers "no signal"
    return feature, value


class StateWithoutTool(Detector):
    """The customer claims a phone or account state that no phone result of its own showed and
    that it was not told (its task's statement of the problem, the agent's words), both read into
    claims (``claims.claims``). In a turn where it ran no phone tool that is the fault; in a turn
    where it did (a report), only for a setting the turn's results did not show and only when the
    user-side DB at that point says otherwise (``user_db``): a report may say what its result
    implies. v6 (issue 51): claims read as a person means them (``claims.clauses``): a means the
    caller lacks ("I don't have Wi-Fi where I am"), a need ("I need the speed test to say
    excellent"), a symptom ("it keeps cutting out"), a guess put as a question, a supposition, a
    habit or the problem's history claim nothing; "I don't have data saver on" claims it off; the
    template words ("mobile data is on") are read only in stated clauses (v5 flagged 79 of 414
    faithful talk-dev callers, most of them reading such words as a switch); v7: "no signal" is the
    task's "No Service", "my data won't connect" a symptom, not the switch (v8: also the readings of
    ``result_contradiction@6``; v9: "I can see the little aeroplane" is airplane mode on; v10, v11: as
    ``result_contradiction@7``, ``@8``; v16: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; v15: "it" takes up a setting after an action denied ("I haven't turned airplane mode off, it's been on"), a thing's "wants"/"needs" is a state, not a need ("the SIM card wants a PIN"), APN "defaults" are ok; v14: a habit told by its frequency ("I seldom switch data off"), an action denied behind a belief ("I don't believe I ever turned roaming on") and "my work" (the noun) claim nothing; v13: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send (v12 flagged 21 of 414 faithful talk-test callers, all
    such readings); v12: a guess with its own doubt, "I think my bill is paid but I'm not
    sure", claims nothing, and a means off "at home because the router died" is a situation); v5: the agent's words
    count as told, reports are read against the DB, the evidence says what the DB held; v4: the task's own statement read into claims (v3 excused only its exact
    words, so "I can't send MMS" for "You are unable to send MMS messages" was flagged in every MMS
    conversation with the non-solving agent); v2 excused any state the task named; v1 flagged
    customers opening with their task's symptom. v17: as ``result_contradiction@14``: an assurance ("Unless I'm very much mistaken, the VPN is off") claims; v16 read the frame's "unless"/"if" as a supposition and missed such claims on talk3. v18: the claim reader's fifth pass of issue 51 (``claim_words.NEG``: a dialect's "cannae", a mid-clause "nah", "data saver's no on"; ``claim_words.REQUIREMENT`` and "must": "only excellent speed will do" claims nothing; a means not at hand, "no Wi-Fi is there for me to use")."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            results = _own_results(t, m.seq)
            now = {k for x in results if x.turn == m.turn for k in claims.shown(x.content)}
            shown: set[tuple[str, str]] = set()
            for x in results:
                seen = {**claims.claims(x.content), **claims.shown(x.content)}
                if "network_type" in seen:  # the status bar's network type is what a customer calls the mode
                    seen.setdefault("network_mode", seen["network_type"])
                shown |= set(seen.items()) | set(phone.state_claims(x.content).items())
            told = _told(t, m.seq)
            said = {(k, v) for k, v in claims.claims(claims.own_words(m.content, [x.content or "" for x in results]))
                    .items() if (k, v) not in shown and (k, v) not in told and k not in now}
            if not any(x.turn == m.turn for x in results):  # the template words v3 read
                said |= {_as_claim(k, v) for k, v, words in phone.claim_spans(claims.stated(m.content))
                         if (k, v) not in shown and _as_claim(k, v) not in told | shown and words.lower() not in task}
            said = {(k, v) for k, v in said if not (k == "signal" and any(k == s for s, _ in shown))}
            if not said:
                continue
            db = user_db.db_shown(t, m.turn)
            if any(x.turn == m.turn for x in results):
                said = {(k, v) for k, v in said if k in db and not claims.agree(k, v, db[k])}
            if said:
                notes = [f"{k}={v}" + (f" (user DB: {db[k]})" if k in db else "") for k, v in sorted(said)]
                out.append(self.finding(m, f"states {', '.join(notes)} that no phone result showed"))
        return out


_SUSPECTS = re.compile(r"\b(?:think|maybe|perhaps|probably|likely|suspect|(?:might|could|must|may) be|guess|feeling|"
                       r"because|caus\w*|problem is|blame|if it'?s|if it is|could it|might it|is it)\b", re.IGNORECASE)

_EXCLUDED = re.compile(r"(?:n'?t|\bnot|\bnever)\s+(?:think|believe|remember|recall)\s+(?:that\s+)?(?:i|we|anyone|anybody)\s+"
                       r"(?:ever\s+|have\s+|'ve\s+)*(?:turn|switch|touch|chang|set|put|enabl|disabl|mess|us)\w*[^,.;]*|"
                       r"\b(?:not|isn'?t|wasn'?t|can'?t be|couldn'?t be|don'?t think it'?s|doubt it'?s|nothing to do with|"
                       r"rule out|ruled out)\s+(?:(?:a|an|the|my|your|any|to do with)\s+)*[\w-]+(?:\s+[\w-]+)?|"
                       r"\b(?:i|we)(?:'d|'ve|'m|\s+(?:have|had|would|did|do|am))?\s+(?:never|not)\b[^,.;]*", re.IGNORECASE)
"""A setting named to rule it out ("so it's not a roaming thing", "I don't think it's the VPN") or in an
action denied ("I don't think I turned airplane mode on"), or the caller's own action denied ("I'd never once
opened the APN page before"): no suspected cause."""

_UNSURE_WHICH = re.compile(r"\b(?:not sure|(?:don'?t|do not) know|no idea|no clue|can'?t tell|wonder(?:s|ed|ing)?)\b"
                           r"[^.?!]*\b(?:if|whether|what)\b[^.?!]*\bor\b", re.IGNORECASE)
"""Uncertainty between causes ("I'm not sure if it's the SIM or the account"): possibilities listed, no
cause suspected."""

_IMPLIED = {"abroad": "roaming"}
"""Settings a task's situation brings into the conversation: a caller abroad knows of roaming."""


def _seen_by_user(m: Message) -> bool:
    """Whether the customer saw the message: the agent's words, its own messages and phone results
    (never the agent's tool calls or their results)."""
    return m.side == "user" or (m.role == "assistant" and not m.tool_calls)


class FaultNamedEarly(Detector):
    """The customer names a phone setting as the cause before anything it saw (the agent's
    words, a phone result) or its own task mentioned it (v8: a cause asked about, "Might it be the SIM
    card?", suspects none: a question asks; v13: a setting in the caller's own action denied ("I'd never once opened
    the APN page before today, I don't think") is no cause suspected; v12: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; a cause suspected with the caller's own doubt ("maybe it's the network mode, but don't quote me") is none; v11: as ``state_without_tool@15``; v10: a setting in an action denied behind a belief ("I don't
    think I turned airplane mode on") is none, as the claim reader now claims nothing there; v9: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send; v7: causes listed in doubt, "I'm not sure if
    it's the SIM or the account", suspect none; v6: a setting named to rule it out ("so it's
    not a roaming thing", "I don't think it's the VPN") is none; v5: the suspicion and the setting in the
    same sentence, and a setting the task's situation brings up counts as mentioned (abroad: roaming);
    v4 flagged "There, I think I've managed it. ... If it's data roaming, ..." from a caller abroad;
    v4: a setting whose state the message claims, read by ``claims``, is no suspected cause ("I think
    the data saver is on" is ``state_without_tool``'s; v3 excused only the result templates' words);
    v3: only what the customer saw counts; v2 also counted the agent's tool results, and missed
    "roaming" after the agent's own roaming call on the held-out half; v2: only in a message that
    suspects a cause, v1 also flagged a setting named for another reason, "roaming charges")."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = " ".join([(t.task.user_text or "").lower(),
                         _IMPLIED.get(phone.known_info(t.task.known_info).where or "", "")])
        for m in t.user_texts:
            text = strip_tokens(m.content or "")
            if not _SUSPECTS.search(text):
                continue
            before = " ".join((x.content or "") for x in t.messages if x.seq < m.seq and _seen_by_user(x)).lower()
            claimed = " ".join([*phone.state_claims(m.content), *(k.replace("_", " ") for k in claims.claims(m.content))])
            # a stated state ("I think the data saver is on") is state_without_tool's, not a suspected cause
            suspected = _EXCLUDED.sub(" ", " ".join(x for x in phone.sentences(text)
                                                    if _SUSPECTS.search(x) and not _UNSURE_WHICH.search(x)
                                                    and not claim_words.UNSURE.search(x)  # a guess with its own doubt
                                                    and not x.rstrip().endswith("?")).lower())
            named = [name for name, pattern in phone.SETTING_TOPICS.items()
                     if re.search(pattern, suspected) and not re.search(pattern, before)
                     and not re.search(pattern, task) and not re.search(pattern, claimed)]
            if named:
                out.append(self.finding(m, f"names {', '.join(named)} before anything showed it: {m.content!r}"))
        return out


_SUPPOSED = re.compile(r"\b(?:if|unless|in case|whether|suppose|supposing|assuming)\b[^,;:.?!]*", re.IGNORECASE)
"""A supposed part of a sentence ("if the only fix is a new plan"): it asks for nothing and says nothing it has."""


_WONDERS = re.compile(r"^\W*(?:(?:so|and|but|hmm+|um+|oh|well|hm)\W+)*(?:maybe|perhaps|do i (?:need|have to)|"
                      r"does (?:it|that|this) (?:need|mean)|is (?:it|that|this)|should i|would (?:a|it|that)|"
                      r"could (?:it|that|a))\b[^?]*\?\s*$", re.IGNORECASE)
"""A question that wonders ("Maybe I need a different plan?", "Do I need a bigger plan?"): it asks
for nothing ("Can you move me to a bigger plan?" does)."""


_TURNED_DOWN = re.compile(r"^[\s,;:—–-]*(?:(?:i|we) (?:do not|don'?t|dont|would not|wouldn'?t|will not|won'?t) "
                          r"(?:want|need|fancy|like|take)|no\b|nah\b|nope\b|no thanks|not (?:for me|interested|needed|wanted|"
                          r"happening)|forget it|(?:is|'s) (?:out|a no)|stays?\b|(?:is|are|was|'s|'re) not\b|(?:is|are|was|ai)n'?t\b|(?:won'?t|will not) be\b)",
                          re.IGNORECASE)
"""A thing turned down after it is named, in the rest of its clause ("New plan, no.", "a different plan, nah",
"Changing the plan I do not want"; v7 a negated verb of it, "a different plan isn't what I want")."""


def _negated(sentence: str, end: int) -> bool:
    """Whether the sentence negates what it says up to ``end`` (a negation after it, "4 GB, not
    less", qualifies something else), or turns it down right after it (``_TURNED_DOWN``, v6)."""
    return bool(phone.NEGATION.search(sentence[:end]) or _TURNED_DOWN.search(sentence[end:]))


_ELSEWHERE = re.compile(r"\b(?:when|whenever|if|once|unless|until|till|used to|usually|normally|at work|at the office|"
                        r"at (?:a |my )?friend'?s)\b[^,.;]*$", re.IGNORECASE)
"""Wi-Fi had under a condition, as a habit or elsewhere ("when I'm on wifi at work"): not had here and now."""


class ConstraintBroken(Detector):
    """The customer breaks what its task fixed: asks for (or agrees to) a plan change it does
    not want, more data than it is willing to refuel, says it has Wi-Fi it has no access to
    (words: ``talk``), or refuses the bill payment its task accepts (the payment is not made:
    ``outcome``). A negation counts only before what it negates (v1 as first written skipped
    any sentence with a negation, and missed "I want a top-up of 4 GB, not less." on the tune half;
    v2: "calling over wifi" names Wi-Fi calling, not Wi-Fi access, ``phone.WIFI_ACCESS``; v5: Wi-Fi had under
    a condition, as a habit or elsewhere ("when I'm on wifi at the library") is not had, ``_ELSEWHERE``; v3: a
    supposed part of a sentence ("if the only fix is a new plan, forget it") breaks nothing; v4: a question
    that wonders, "Maybe I need a different plan?", asks for nothing; v6: a thing turned down right after it is
    named, "New plan, no.", "a different plan, nah", breaks nothing; v7: nor one it is the subject of a negated verb
    of, "a different plan isn't what I want")."""

    def detect(self, t: Trajectory) -> list[Finding]:
        rules = phone.constraints(t.task.user_text)
        if not rules.any:
            return []
        out = []
        for m in t.user_texts:
            why = []
            own = m.content or ""
            for x in t.messages:  # a phone result repeated in a report is not the customer's own words
                if x.side == "user" and x.role == "tool" and x.seq < m.seq and x.content:
                    own = own.replace(x.content, " ")
            for sentence in phone.sentences(own):
                sentence = _SUPPOSED.sub(" ", sentence)  # "If the only fix is a new plan, forget it." asks for none
                if _WONDERS.search(sentence):
                    continue  # "Maybe I need a different plan?": wondered, not asked for
                plan = phone.PLAN_CHANGE.search(sentence)
                if rules.no_plan_change and plan and not _negated(sentence, plan.end()):
                    why.append(f"asks for a plan change: {sentence!r}")
                over = [g for g in phone.GIGABYTES.finditer(sentence) if rules.refuel_limit_gb is not None
                        and float(g[1]) > rules.refuel_limit_gb]
                if over and phone.REFUEL.search(sentence) and not _negated(sentence, over[-1].end()):
                    why.append(f"asks for more than {rules.refuel_limit_gb} GB: {sentence!r}")
                wifi = phone.WIFI_ACCESS.search(sentence)
                if rules.no_wifi and wifi and not _negated(sentence, wifi.end()) \
                        and not _ELSEWHERE.search(sentence[:wifi.start()]):  # "when I'm on wifi at work"
                    why.append(f"says it has Wi-Fi: {sentence!r}")
            agent = t.agent_text_before(m.seq)
            said = phone.sentences(own)
            if (rules.no_plan_change and agent is not None and phone.PLAN_CHANGE.search(agent.content or "")
                    and said and phone.AGREES.search(said[0]) and not phone.NEGATION.search(said[0])):
                why.append(f"agrees to the plan change offered: {m.content!r}")
            if why:
                out.append(self.finding(m, "; ".join(why)))
                continue
            if (rules.accepts_payment and agent is not None and not m.tool_calls
                    and "make_payment" in phone.requested_tools(agent.content, t.task.user_tools)
                    and "make_payment" not in {tool for _, tool in t.user_calls(agent.seq, m.seq + 1)}
                    and phone.REFUSES.search(m.content or "")):
                out.append(self.finding(m, f"refuses the payment its task accepts: {m.content!r}", effect="outcome"))
        return out


__all__ = ["ConstraintBroken", "FaultNamedEarly", "IdentityInvented",
           "KnownInfoContradicted", "ResultContradiction", "StateWithoutTool"]
