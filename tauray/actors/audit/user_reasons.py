"""What the simulated customer brings that its task never gave it: a reason to refuse what the
agent asked (a rule, an owner, a fear, a circumstance), and a new problem unrelated to why it
called. Rules of the user-simulator audit for what words alone show; whether a reason or a
problem is *grounded* in the task beyond its words is the judge tier's (``sim-audit@3`` A6, A7).

Why rules at all: with none, every refusal that failed the task was put on the agent (issue 38:
invented constraint 0/37 found, all attributed "agent"), and no new problem was ever found (0/74).
A refusal is read structurally (the agent asked for a phone action; the reply makes no call,
refuses, and gives a reason: a clause beyond the refusal, or a rule or owner named in it); a bare
refusal ("I'd rather not, what else could we try?") or not finding the option stays excused, as
before. A new problem is a malfunction ("stopped working", "keeps crashing", "gets hot") said of a
part of the phone or an app outside the telecom problem (camera, battery, Bluetooth, alarm...)
that the task's text never mentions.
"""

from __future__ import annotations

import re

from tauray.actors.audit import claims, phone
from tauray.actors.audit.finding import Detector, Finding, strip_tokens
from tauray.actors.audit.trajectory import Trajectory
from tauray.scenarios.conventions import OUT_OF_SCOPE, STOP, TRANSFER

_I = re.IGNORECASE
REFUSES = re.compile(r"\b(?:won'?t|will not|don'?t want|do not want|not going to|refuse|rather not|prefer not|better not|"
                     r"not (?:allow(?:ed)?|permit(?:ted)?|supposed|able to change)|(?:can'?t|cannot|can not|mustn'?t|shouldn'?t|"
                     r"couldn'?t) (?:\w+ )?(?:change|touch|do|turn|switch|toggle|mess|reset|restart|reboot|grant|disable|"
                     r"enable|connect|disconnect|pay|let|allow)|never (?:to )?(?:touch|change|mess|switch|turn)|"
                     r"(?:has|have|needs?) to stay|stays? (?:as it is|as is|the way|like (?:that|this))|off the table|"
                     r"leave it (?:as it is|as is|alone|be)|no way|not (?:changing|touching|doing|switching|turning)|"
                     r"not (?:comfortable|willing)|not something i (?:can|could|will|would|want to)|"
                     r"(?:prefer|rather|like) to (?:leave|keep) it|(?:leave|keep) it (?:as it is|as is|the way it is|"
                     r"like (?:that|this)))\b", _I)
"""Words that refuse an asked action (not "can't find it": that is not being able to)."""
CANNOT_FIND = re.compile(r"\b(?:can'?t|cannot|couldn'?t|unable to) (?:find|see|locate|get to)\b|"
                         r"\b(?:don'?t|doesn'?t|do not|does not) (?:seem to )?(?:see|have|find|know how)\b|\bno such\b|"
                         r"\bwhere\b|\bhow (?:do|can|would) i\b", _I)
RULE = re.compile(r"\b(?:allow(?:ed)?|permit(?:ted)?|supposed to|forbid\w*|prohibit\w*|requires?|required|policy|rules?|"
                  r"managed|locked|contract|warranty|insurance|told me|promis\w*|would have my head|not let me|"
                  r"won'?t let me)\b|\b(?:the|my|our|his|her|their) \w+(?: \w+)? (?:said|says|told|warned|insist\w*)\b|"
                  r"\bmy (?:employer|company|boss|work|job|it department|doctor|son|daughter|husband|wife|partner|"
                  r"parents?|kids?|children|grandson|granddaughter|family|landlord|school|bank|insurer|lawyer|"
                  r"technician|carrier|church)\b", _I)
"""A rule or an owner of the phone named as the reason ("my employer manages it", "the contract")."""
_CONNECTIVE = re.compile(r"\s*(?:[.!;:,—–]|\s-\s|\bbecause\b|\bsince\b|\bas\b|\bso\b|\botherwise\b|\bor else\b|\bcause\b)\s*",
                         _I)
_PLEASANTRY = re.compile(r"^(?:sorry|thanks?|thank you|please|ok(?:ay)?|hmm+|no|nope|yes|well|right|oh|dear|alright)\b", _I)


def refusal_reason(text: str | None) -> str | None:
    """The reason a refusal gives, when the text refuses an action (``REFUSES``, and not "I can't
    find it") and gives one: a rule or owner named (``RULE``), or a statement beyond the refusal
    itself (a clause that neither refuses, asks nor only thanks or apologises). None otherwise."""
    text = strip_tokens(text or "")
    if not REFUSES.search(text) or CANNOT_FIND.search(text):
        return None
    if m := RULE.search(text):
        return m.group(0)
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if sentence.strip().endswith("?"):
            continue
        for part in _CONNECTIVE.split(sentence):
            part = part.strip()
            if len(part.split()) >= 3 and not REFUSES.search(part) and not _PLEASANTRY.search(part):
                return part
    return None


class InventedConstraint(Detector):
    """The agent asked for a phone action; the customer makes no call in that turn and refuses it
    for a reason (``refusal_reason``) its task does not give (the task's text does not hold the
    reason's words). The asked action is not done, so the effect is ``outcome`` when it is a write
    (``counterfactual`` corrects it by doing the asked action in that turn); a refused check is
    ``talk``. A refused bill payment the task accepts is also ``constraint_broken``'s when its words
    are that rule's."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            text = m.content or ""
            if m.tool_calls or any(token in text for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue
            asked = t.agent_text_before(m.seq)
            tools = phone.requested_tools(phone.without_offers(asked.content), t.task.user_tools) if asked else set()
            if not tools or any(c.turn == m.turn for c, _ in t.user_calls(asked.seq if asked else -1)):
                continue
            reason = refusal_reason(text)
            if reason is None or reason.lower() in task:
                continue
            effect = "outcome" if tools & t.task.user_writes else "talk"
            out.append(self.finding(m, f"refuses {', '.join(sorted(tools))} because {reason!r}: {text!r}",
                                    effect=effect))
        return out


COMPONENTS = (r"camera|flash(?:light)?|torch|bluetooth|head ?phones?|ear ?buds?|headset|earpiece|battery|charger|charging"
              r"(?: port)?|screen|display|touch ?screen|speakers?|microphone|mic|volume|buttons?|alarm|clock|gps|location|"
              r"maps?|navigation|voicemail|contacts?|calendar|fingerprint(?: (?:reader|sensor|scanner))?|face (?:id|unlock)|"
              r"keyboard|autocorrect|notifications?|ringtone|ringer|vibrat\w+|gallery|photos? app|music|email|e-mail|"
              r"smart ?watch|watch|nfc|sd card|memory card|lock screen|passcode|home button|power button|wallpaper|"
              r"time zone|calculator|weather app|games?|stylus|case|headphone jack|usb|car|tablet|laptop|printer|tv|"
              r"speakerphone|flip cover|compass|step counter|health app|banking app|app store|updates?")
"""Parts and apps of a phone (and devices paired with it) outside the telecom problem: a complaint
about one is a new problem. Network, data, calls, messages, the SIM and the settings are not here."""
_COMPONENT = re.compile(rf"\b(?:{COMPONENTS})\b", _I)
_MALFUNCTION = re.compile(
    r"\b(?:crash\w*|freez\w*|frozen|broken|broke|flicker\w*|overheat\w*|drain\w*|dies|dying|died|glitch\w*|lag\w*|"
    r"unresponsive|crackl\w*|buzz\w*|distort\w*|blurry|cracked|stuck|disappeared|vanished|went missing|"
    r"(?:gets|getting|is|runs|running|got) (?:really |very |super |so |too )?(?:hot|warm)|"
    r"keeps? (?:\w+ing|turning off|shutting down|restarting)|(?:restarts|reboots|shuts down|turns off) (?:by )?itself|"
    r"(?:won'?t|doesn'?t|does not|didn'?t|did not|can'?t|cannot|isn'?t|is not|stopped|no longer|never|not)\s+"
    r"(?:\w+\s+)?(?:work\w*|pair\w*|connect\w*|charg\w*|ring\w*|turn(?:ing)? on|load\w*|open\w*|respond\w*|sync\w*|"
    r"go(?:ing)? off|show\w*|focus\w*|updat\w*|unlock\w*|recogni[sz]\w*|read\w*|sound\w*|vibrat\w*|last\w*)|"
    r"(?:wrong|bad|terrible|awful) (?:time|date|sound|colou?rs?)|shows? the wrong|"
    r"(?:goes|go|going|went|runs?|running|drops?|dropping) (?:down|out|flat|dead|empty)\b[^.!?]*\b(?:fast|quick\w*|"
    r"soon)|empt(?:ies|y) (?:fast|quickly))\b", _I)
"""Words that say something is broken ("stopped working", "keeps crashing", "gets really hot")."""


_PHYSICAL = re.compile(r"\b(?:(?:gets|getting|is|runs|running|got) (?:really |very |super |so |too )?(?:hot|warm)|"
                       r"overheat\w*|(?:restarts|reboots|shuts down|turns off) (?:by )?itself|"
                       r"keeps? (?:restarting|rebooting|shutting down|turning off)|"
                       r"(?:won'?t|doesn'?t|does not|will not) (?:even |really |properly )?(?:charge|turn on))\b", _I)
"""What the phone itself does when its hardware fails ("gets really hot", "restarts by itself")."""


_APPS_OR_DATA = re.compile(
    r"\b(?:apps|games|phone)\b[^.!?]{0,30}\b(?:crash\w*|freez\w*|keeps? closing|force[- ]clos\w*)\b|"
    r"\b(?:photos|pictures|contacts|notes|files|music|songs|videos|apps|calendar entries|alarms)\b[^.!?]{0,20}"
    r"\b(?:disappeared|vanished|deleted|gone|missing|lost|wiped)\b", _I)
"""Apps in general crashing, or the customer's own data lost ("all my contacts are gone")."""


def new_problem(text: str | None, task: str) -> str | None:
    """The sentence of a text that complains of a part or app (``COMPONENTS``) the task's text never
    names, when it says that part is broken (``_MALFUNCTION``), or of the phone's hardware failing
    (``_PHYSICAL``); None otherwise."""
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", strip_tokens(text or "")):
        part = _COMPONENT.search(sentence)
        if part and _MALFUNCTION.search(sentence) and part.group(0).lower() not in task:
            return sentence.strip()
        if (m := _PHYSICAL.search(sentence) or _APPS_OR_DATA.search(sentence)) and m.group(0).lower() not in task:
            return sentence.strip()
    return None


class NewProblem(Detector):
    """The customer raises a new problem its task never gave it: a malfunction of a part or app of
    the phone outside the telecom problem (``new_problem``), named nowhere in its task, and not a
    phone result it repeats. Other new problems (a second telecom fault, an unrelated complaint in
    words this does not read) are the judge tier's (``sim-audit@3`` A6)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            results = [x.content or "" for x in t.messages if x.seq < m.seq and x.side == "user" and x.role == "tool"]
            sentence = new_problem(claims.own_words(m.content, results), task)
            if sentence:
                out.append(self.finding(m, f"raises a problem its task never gave: {sentence!r}"))
        return out


__all__ = ["COMPONENTS", "REFUSES", "RULE", "InventedConstraint", "NewProblem", "new_problem", "refusal_reason"]
