"""How the simulated customer ends (or fails to end) the call: a stop with the agent's
request still undone, a stop that asks for more, a stop right after a failing check, a
handoff nobody made, and going on after the problem was shown solved. Rules of the
user-simulator audit (:mod:`~tauray.actors.audit.finding` says what a rule is)."""

from __future__ import annotations

import re

from tauray.actors.audit import claims, phone
from tauray.actors.audit.finding import Detector, Finding, strip_tokens
from tauray.actors.audit.trajectory import Message, Trajectory
from tauray.scenarios.conventions import (
    OUT_OF_SCOPE,
    STOP,
    TRANSFER,
    TRANSFER_TO_HUMAN,
    parse_phone_request,
)

_CLAIMS_FIXED = re.compile(r"\b(?:fixed|works?|working|resolved|solved|sorted|back to normal|went through|"
                           r"goes through|all good|problem is gone|that did it|(?:did|done|does) the trick|"
                           r"(?:got|gotten|get|gets) (?:it|things|everything|the \w+) (?:going|working|back|sorted|right)|"
                           r"(?:everything|it|all|things)(?:'s| is| are|'re)\s+(?:all\s+|now\s+|properly\s+|just\s+)*(?:back|proper|right|"
                           r"normal|perfect|grand|sweet)\b(?!\s+(?:to(?! how| the way| what| normal)|where|there|then|before|as)\b)|"
                           r"(?:all right|alright|fine|ok(?:ay)?|good|normal|better|great) now|"
                           r"(?:seems?|looks?) (?:to be )?(?:all right|alright|fine|ok(?:ay)?|good|normal|better)|"
                           r"no (?:more|longer)(?: any)? (?:problems?|issues?|trouble)|nothing wrong any ?more|"
                           r"(?:no|not an?|not any) (?:problems?|issues?|trouble) any ?(?:more|longer)|"
                           r"(?:problem|issue|trouble)s? (?:is |are |'s |has |have )?(?:been )?(?:gone|over|fixed|sorted|solved))\b",
                           re.IGNORECASE)
"""Words that say the problem is gone (v3 of premature_stop: also "seems okay now", "looks fine now";
v4: "no more problems", "the issue's gone"; v10: the state said to be back or right in any form, "it's all
back", "everything is proper", something that got it going again, "done the trick")."""
_NOT_FIXED = re.compile(r"\b(?:not|still not|isn'?t|doesn'?t|didn'?t|won'?t|never|no longer)\s+(?:\w+\s+)?"
                        r"(?:fixed|work\w*|resolved|solved|go\w* through)\b|\bstill (?:broken|can'?t|cannot)\b",
                        re.IGNORECASE)


class PrematureStop(Detector):
    """The customer ends the call while the agent's last request (a phone action) is still
    undone, or says the problem is fixed after a write with no check since it showing the
    family's resolved condition (v11: the claim reader's fifth pass of issue 51, an expectation, "only a working line
    will do", says nothing fixed; v10: the fix said as a state back or right, ``_CLAIMS_FIXED``; v9: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; v8: "no problem any more" says it fixed, and the claim reader as
    ``state_without_tool@15``; v7: a habit told by its frequency ("I seldom switch data off"), an action denied behind a belief ("I don't believe I ever turned roaming on") and "my work" (the noun) claim nothing; v6: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send; v5: "wonderful" is no wondering, v4 dropped "Oh wonderful, all back to
    normal"; v4: the fix read only where the caller states it, ``claims.stated``:
    "Hopefully that works now" or "if that's fixed it" claims nothing, and also in "no more problems";
    v3: the fix also in words such as "it seems to be all right now", "looks fine now"; v2; v1 read
    only the undone request, and missed "that fixed it, bye" right after the write on independently
    written customers, 0/101); either way no result after the customer's last write showed the
    resolved condition."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if STOP not in (m.content or ""):
                continue
            asked = t.agent_text_before(m.seq)
            if asked is None:
                continue
            writes = [c for c, tool in t.user_calls(-1, m.seq) if tool in t.task.user_writes]
            since = writes[-1].seq if writes else -1
            if any(x.side == "user" and x.role == "tool" and since < x.seq < m.seq
                   and phone.shows_resolved(t.task.issue_type, x.content) for x in t.messages):
                continue
            pending = phone.requested_tools(asked.content, t.task.user_tools) - {
                tool for _, tool in t.user_calls(asked.seq, m.seq)}
            words = claims.stated(strip_tokens(m.content or ""))  # "Hopefully that works now" says nothing fixed
            if not pending and writes and _CLAIMS_FIXED.search(words) and not _NOT_FIXED.search(words):
                out.append(self.finding(m, f"says it is fixed after {writes[-1].tool_calls[0].get('name')} with no "
                                           f"check showing it resolved, and ends: {m.content!r}"))
                continue
            if not pending:
                continue
            out.append(self.finding(m, f"stopped with {', '.join(sorted(pending))} asked (seq {asked.seq}) and not "
                                       f"done; no resolved result seen: {m.content!r}"))
        return out


_ASKS = re.compile(r"\?|\b(?:can|could|would|will) you\b|\bplease\b|\bI (?:also )?(?:need|want|would like)\b"
                   r"(?!\s+to\s+(?:go|leave|run|head|get going|hang up|dash|sign off|be off|get off|stop|rest))", re.IGNORECASE)
"""What asks for something in a goodbye (v2: not "I need to go" or "I need to head off", which only leave)."""


class StopWithRequest(Detector):
    """The stop message also asks for something (a question or a request), which the agent
    can no longer answer (v2: saying it has to go asks for nothing; v1 read "I need to head off" as
    a request)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        return [self.finding(m, f"stop message asks: {m.content!r}") for m in t.user_texts
                if STOP in (m.content or "") and _ASKS.search(strip_tokens(m.content or ""))]


class TransferWithoutAgent(Detector):
    """The customer says it was handed to a human though the agent never transferred it."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if TRANSFER not in (m.content or ""):
                continue
            transferred = any(x.side == "agent" and x.seq < m.seq and any(c.get("name") == TRANSFER_TO_HUMAN
                                                                          for c in x.tool_calls) for x in t.messages)
            if not transferred:
                out.append(self.finding(m, f"transfer token without the agent's {TRANSFER_TO_HUMAN}: {m.content!r}"))
        return out


def _pending(t: Trajectory, m: Message) -> set[str]:
    """Phone actions the agent's last words asked for that the customer has not done before ``m``."""
    asked = t.agent_text_before(m.seq)
    if asked is None:
        return set()
    return phone.requested_tools(asked.content, t.task.user_tools) - {tool for _, tool in t.user_calls(asked.seq, m.seq)}


def _since_last_write(t: Trajectory, m: Message) -> int:
    writes = [c for c, tool in t.user_calls(-1, m.seq) if tool in t.task.user_writes]
    return writes[-1].seq if writes else -1


class StopAfterFailure(Detector):
    """The customer ends the call right after a phone result of its own turn showed the problem
    still there (MMS cannot send; speed test below Excellent; no signal), with no further
    attempt and nothing the agent asked left undone (that stop is ``premature_stop``'s)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if STOP not in (m.content or ""):
                continue
            results = [x for x in t.messages if x.side == "user" and x.role == "tool" and x.turn == m.turn
                       and x.seq < m.seq]
            if not results or not phone.shows_failure(t.task.issue_type, results[-1].content) or _pending(t, m):
                continue
            shown = (results[-1].content or "").splitlines()
            out.append(self.finding(m, f"stopped right after {shown[-1] if shown else ''!r}: {m.content!r}"))
        return out


_CLOSING_QUESTION = re.compile(r"[^.?!]*\b(?:anything else|something else|any other (?:questions?|issues?|problems?)|"
                               r"else (?:I|we) can|help (?:you )?with (?:anything|something)|further (?:help|assistance))"
                               r"\b[^.?!]*\?", re.IGNORECASE)


def _asks_nothing(text: str | None) -> bool:
    """Whether an agent message leaves the customer nothing to do or answer: no phone request and
    no question but the closing kind ("Is there anything else I can do?")."""
    rest = _CLOSING_QUESTION.sub(" ", text or "")
    return parse_phone_request(text) is None and "?" not in rest and not phone.requested_tools(rest, _ALL_TOOLS)


_ALL_TOOLS = frozenset(phone.TOPICS)


class NoEndAfterResolved(Detector):
    """The customer saw the family's resolved result after its last write, the agent asked
    nothing more, and the customer went on instead of ending the call."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if m.tool_calls or any(token in (m.content or "") for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue
            agent = t.agent_text_before(m.seq)
            if agent is None or not _asks_nothing(agent.content):
                continue
            since = _since_last_write(t, m)
            resolved = [x for x in t.messages if x.side == "user" and x.role == "tool" and since < x.seq < m.seq
                        and phone.shows_resolved(t.task.issue_type, x.content)]
            if resolved:
                out.append(self.finding(m, f"resolved result seen (seq {resolved[-1].seq}), the agent asked nothing "
                                           f"more, no end: {m.content!r}"))
        return out


__all__ = ["NoEndAfterResolved", "PrematureStop", "StopAfterFailure", "StopWithRequest", "TransferWithoutAgent"]
