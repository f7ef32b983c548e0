"""What the simulated customer says against what it saw and what its task gave it: a
report that contradicts the phone result, its known information contradicted, an identity
detail invented, a phone state no tool showed, a cause named before anything showed it, and
its task's constraints broken. Rules of the user-simulator audit."""

from __future__ import annotations

import re

from tauray.results.audit import claims, phone
from tauray.results.audit.finding import Detector, Finding, strip_tokens
from tauray.results.audit.trajectory import Message, Trajectory


class ResultContradiction(Detector):
    """The customer's report claims other than the phone result it just got (v2: the report is
    read into claims, ``claims.claims``, and compared with what the result showed,
    ``claims.shown``; v1 compared the result templates' own words, so it read only "X is on/off"
    and missed "it's showing X on", network mode, signal, permissions and payment)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            shown = t.tool_result_before(m.seq)
            if shown is None or shown.turn != m.turn:
                continue
            bad = claims.contradictions(m.content, shown.content) or phone.contradictions(m.content, shown.content)
            if bad:
                said = "; ".join(f"{f}: said {a}, phone showed {b}" for f, a, b in bad)
                out.append(self.finding(m, said))
        return out


class KnownInfoContradicted(Detector):
    """The customer states a phone number, name or whereabouts other than its known information."""

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
            if known.where == "abroad" and phone.AT_HOME.search(text):
                why.append("says at home (known: abroad)")
            if known.where == "home" and phone.NOT_HOME.search(text):
                why.append("says abroad (known: at home)")
            if why:
                out.append(self.finding(m, "; ".join(why)))
        return out


class IdentityInvented(Detector):
    """The customer gives an identity detail its task never gave it (date of birth, email,
    account number, address...)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        known = t.task.known_info or ""
        out = []
        for m in t.user_texts:
            kinds = [k for k, p in phone.INVENTED_KINDS.items() if p.search(m.content or "") and not p.search(known)]
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
    return feature, value


class StateWithoutTool(Detector):
    """The customer claims a phone or account state in a turn where it ran no phone tool, that
    no earlier phone result showed and its task did not state (v4: statements are read into
    claims, ``claims.claims``, and the task's own statement of its problem counts as a claim:
    v3 excused only the task's exact words, so a customer saying "I can't send MMS" for a task
    that says "You are unable to send MMS messages" was flagged whenever no tool had run yet,
    which is every MMS conversation with the non-solving agent; v3: the task's exact words;
    v2 excused any state the task named; v1 flagged customers opening with their task's symptom)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task_text = t.task.user_text or ""
        told = set(claims.claims(task_text).items()) | set(phone.state_claims(task_text).items())
        task = task_text.lower()
        for m in t.user_texts:
            if any(x.side == "user" and x.role == "tool" and x.turn == m.turn and x.seq < m.seq for x in t.messages):
                continue
            shown: set[tuple[str, str]] = set()
            for x in t.messages:
                if x.seq < m.seq and x.side == "user" and x.role == "tool":
                    seen = {**claims.claims(x.content), **claims.shown(x.content)}
                    if "network_type" in seen:  # the status bar's network type is what a customer calls the mode
                        seen.setdefault("network_mode", seen["network_type"])
                    shown |= set(seen.items()) | set(phone.state_claims(x.content).items())
            shown_keys = {k for k, _ in shown}
            said = {(k, v) for k, v in claims.claims(m.content).items()
                    if (k, v) not in shown and (k, v) not in told and not (k == "signal" and k in shown_keys)}
            said |= {(k, v) for k, v, words in phone.claim_spans(m.content)  # the template words v3 read
                     if (k, v) not in shown and _as_claim(k, v) not in told | shown and words.lower() not in task}
            unshown = sorted(f"{k}={v}" for k, v in said)
            if unshown:
                out.append(self.finding(m, f"states {', '.join(unshown)} that no phone result showed"))
        return out


_SUSPECTS = re.compile(r"\b(?:think|maybe|perhaps|probably|likely|suspect|(?:might|could|must|may) be|guess|feeling|"
                       r"because|caus\w*|problem is|blame)\b", re.IGNORECASE)


def _seen_by_user(m: Message) -> bool:
    """Whether the customer saw the message: the agent's words, its own messages and phone results
    (never the agent's tool calls or their results)."""
    return m.side == "user" or (m.role == "assistant" and not m.tool_calls)


class FaultNamedEarly(Detector):
    """The customer names a phone setting as the cause before anything it saw (the agent's
    words, a phone result) or its own task mentioned it (v3: only what the customer saw
    counts, v2 also counted the agent's tool results, and missed "roaming" after the agent's
    own roaming call on the held-out half; v2: only in a message that suspects a cause, v1
    also flagged a setting named for another reason, "roaming charges")."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            if not _SUSPECTS.search(strip_tokens(m.content or "")):
                continue
            before = " ".join((x.content or "") for x in t.messages if x.seq < m.seq and _seen_by_user(x)).lower()
            claimed = " ".join(phone.state_claims(m.content))  # a stated state is state_without_tool's
            named = [name for name, pattern in phone.SETTING_TOPICS.items()
                     if re.search(pattern, (m.content or "").lower()) and not re.search(pattern, before)
                     and not re.search(pattern, task) and not re.search(pattern, claimed)]
            if named:
                out.append(self.finding(m, f"names {', '.join(named)} before anything showed it: {m.content!r}"))
        return out


def _negated(sentence: str, end: int) -> bool:
    """Whether the sentence negates what it says up to ``end`` (a negation after it, "4 GB, not
    less", qualifies something else)."""
    return bool(phone.NEGATION.search(sentence[:end]))


class ConstraintBroken(Detector):
    """The customer breaks what its task fixed: asks for (or agrees to) a plan change it does
    not want, more data than it is willing to refuel, says it has Wi-Fi it has no access to
    (words: ``talk``), or refuses the bill payment its task accepts (the payment is not made:
    ``outcome``). A negation counts only before what it negates (v1 as first written skipped
    any sentence with a negation, and missed "I want a top-up of 4 GB, not less." on the tune half)."""

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
                plan = phone.PLAN_CHANGE.search(sentence)
                if rules.no_plan_change and plan and not _negated(sentence, plan.end()):
                    why.append(f"asks for a plan change: {sentence!r}")
                over = [g for g in phone.GIGABYTES.finditer(sentence) if rules.refuel_limit_gb is not None
                        and float(g[1]) > rules.refuel_limit_gb]
                if over and phone.REFUEL.search(sentence) and not _negated(sentence, over[-1].end()):
                    why.append(f"asks for more than {rules.refuel_limit_gb} GB: {sentence!r}")
                wifi = phone.WIFI_ACCESS.search(sentence)
                if rules.no_wifi and wifi and not _negated(sentence, wifi.end()):
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
