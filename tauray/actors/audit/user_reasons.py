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

from tauray.actors.audit import claim_words as w
from tauray.actors.audit import claims, phone, user_avoids, user_parts
from tauray.actors.audit.finding import Detector, Finding, strip_tokens
from tauray.actors.audit.trajectory import Trajectory
from tauray.scenarios.conventions import OUT_OF_SCOPE, STOP, TRANSFER

_I = re.IGNORECASE
REFUSES = w.REFUSES
"""Words that refuse an asked action (``claim_words.REFUSES``)."""
CANNOT_FIND = user_avoids.CANNOT_FIND
RULE = re.compile(r"\b(?:allow(?:ed)?|permit(?:ted)?|supposed to|forbid\w*|prohibit\w*|requires?|required|policy|rules?|"
                  r"managed|locked|contract|warranty|insurance|told me|promis\w*|would have my head|not let me|"
                  r"won'?t let me|been told|told by|instructions?|(?:said|says|told me|warned me|tells me) (?:not|never) to)\b|\b(?:the|my|our|his|her|their) \w+(?: \w+)? (?:said|says|told|warned|insist\w*)\b|"
                  r"\bnever do(?:es)?\b|"
                  r"\bmy (?:employer|company|firm|office|manager|boss|work|job|it department|doctor|son|daughter|husband|wife|"
                  r"partner|mum|mom|mother|dad|father|brother|sister|carer|landlady|"
                  r"parents?|kids?|children|grandson|granddaughter|family|landlord|school|bank|insurer|lawyer|"
                  r"technician|carrier|church)\b|\bwe (?:don'?t|do not|never)\b|\b(?:in|where) (?:my|our) "
                  r"(?:country|house|home|family|culture|religion)\b", _I)
"""A rule or an owner of the phone named as the reason ("my employer manages it", "the contract")."""
_CONNECTIVE = re.compile(r"\s*(?:[.!;:,—–]|\s-\s|\bbecause\b|\bsince\b|\bas\b|\bso\b|\botherwise\b|\bor else\b|\bcause\b|"
                         r"\b(?:'?cos|coz|while|whilst|when|till|until)\b)\s*", _I)
"""Where a reason starts: a sentence or clause break, or a word that gives a cause or a circumstance ("..., as
I'm driving", "... while I'm on the phone to you")."""


_BY_CALLER = frozenset("i we i'd i'll i'm im just really honestly simply um uh eh well no nope nah sorry oh so but and then "
                       "thanks ok okay that this it the setting settings one option thing mode".split())
"""Words that may stand before a refusal the caller says of the asked action ("I'll pass", "that setting has to
stay"), with the settings and the request's words (not "my car won't connect": a part failing)."""


def _by_caller(before: str, asked: str) -> bool:
    for start, end, _ in reversed(claims.mentions(before)):
        before = before[:start] + " " + before[end:]
    request = set(re.findall(r"[a-z][a-z']*", asked.lower()))
    return all(x in _BY_CALLER or x in request for x in re.findall(r"[a-z][a-z']*", before.lower()))


def _beyond_refusal(part: str, asked: str = "") -> str | None:
    """What a refusing clause says beyond refusing the action (its words less the refusal's words, the
    settings named, the words of the agent's request ``asked`` and the words in ``claim_words.EMPTY``): "I never change
    things on a Friday" keeps "friday", "Not touching the SIM card" keeps nothing. None when nothing is left."""
    rest = REFUSES.sub(" ", part)
    for start, end, _ in reversed(claims.mentions(rest)):
        rest = rest[:start] + " " + rest[end:]
    request = set(re.findall(r"[a-z][a-z']*", asked.lower()))
    words = [x for x in re.findall(r"[a-z][a-z']*", rest.lower()) if x not in w.EMPTY and x not in request]
    return " ".join(words) or None
_PLEASANTRY = re.compile(r"^(?:sorry|thanks?|thank you|please|ok(?:ay)?|hmm+|no|nope|yes|well|right|oh|dear|alright|"
                         r"to be (?:honest|fair)|tbh|in all honesty|truth be told|if (?:that'?s|it'?s) (?:ok|okay|alright|all right)|"
                         r"if you don'?t mind)\b", _I)


_OPENER = re.compile(r"^\W*(?:(?:oh|ah|eh|hmm+|um+|uh+|mm+|well|sorry|honestly|look|listen|okay|ok|no(?!\s+(?:can do|way|chance))|nope|nah)\b[,!.]?\s*)*", _I)
_DECLINE_CUE = re.compile(r"\b(?:not|never|decline|refuse|say no|no can do|no chance|no way|cannot|dont|cant|wont|couldnt|"
                          r"shouldnt|isnt)\b|n['’]t\b", _I)
"""A negation that can turn an action down (a bare "No," answers a question as often as it refuses)."""
_ABOUT_ACTION = re.compile(r"\b(?:do|doing|that|this|it|touch\w*|chang\w*|press\w*|restart\w*|reboot\w*|turn\w*|switch\w*|"
                           r"reset\w*|toggl\w*|risk|possibly|happen\w*|make me|decline|refuse|say no|go ahead|no can do)\b", _I)
"""The first clause is about the asked action ("I couldn't possibly", "That isn't going to happen")."""
_NOT_DECLINING = re.compile(r"\b(?:not sure|(?:don'?t|do not) know|no idea|no problem|no worries|not a problem|not yet|yet|"
                            r"still|wait|hold on|hang on|(?<!the )moment|second|minute|sec|(?:don'?t|do not) mind|not bad|"
                            r"(?:haven'?t|have not|hasn'?t) got|(?:don'?t|doesn'?t) have|there'?s no|isn'?t there|no such|"
                            r"not (?:there|showing|listed)|didn'?t (?:catch|get|hear|understand)|(?:don'?t|do not) understand|"
                            r"not following|not with you|see|seeing|seen|spot\w*|find\w*|luck|locat\w*|called|ha(?:s|ve) (?:that|this|a|an|no|any|such)|"
                            r"know|think so|sure|else|really|all|anything|tried|seem\w*|exist\w*|there)\b", _I)
"""Not declining: a doubt, a wait, not finding, seeing or having it, nothing more to say."""


def _declines_first(text: str) -> str | None:
    """The reply's first clause when it turns the asked action down in words no list holds ("Oh I
    couldn't possibly, ...", "I'm going to say no to that one, ...", "Please don't make me do that, ..."):
    a negation in the first clause of the first sentence, which does not ask, is not the caller not
    knowing, not finding or not understanding, and not a wait ("not yet", "hang on")."""
    sentence = re.split(r"(?<=[.!?])\s+", text.strip())[0]
    if sentence.rstrip().endswith("?"):
        return None
    first = re.split(r"[,;:—–]|\s-\s|\bbut\b|\bbecause\b|\bas\b|\bsince\b|\b(?:'?cos|coz|cause|while|whilst|when|till|until)\b",
                     _OPENER.sub("", sentence), maxsplit=1)[0]
    if _DECLINE_CUE.search(first) and _ABOUT_ACTION.search(first) and not _NOT_DECLINING.search(first) \
            and not CANNOT_FIND.search(first):
        return first.strip()
    return None


def refuses(text: str | None) -> bool:
    """Whether a reply refuses an asked action: ``REFUSES``' words, or a first clause that turns it down
    (``_declines_first``)."""
    text = strip_tokens(text or "")
    return bool(REFUSES.search(text) or _declines_first(text))


def refusal_reason(text: str | None, asked: str | None = None) -> str | None:
    """The reason a refusal gives, when the text refuses an action (``refuses``, and not "I can't
    find it") and gives one: a rule or owner named (``RULE``), or a statement beyond the refusal
    itself (a clause that neither refuses, asks nor only thanks or apologises; clauses also open at "while",
    "when", "cos"), or, read by structure rather than by lists of reasons, a refusing clause that says more than
    the refusal and the asked action (``_beyond_refusal``, with ``asked`` the agent's request: "I never change
    things at the weekend" keeps "weekend", "cant do it rn im at work" keeps "work") or whose refusal is its own
    motive ("Don't trust it"). None otherwise."""
    text = strip_tokens(text or "")
    declined = _declines_first(text)
    if not (REFUSES.search(text) or declined) or CANNOT_FIND.search(text):
        return None
    if m := RULE.search(text):  # the clause that names the rule, so a reason is compared whole with the task's words
        return next((p.strip() for p in _CONNECTIVE.split(text) if p and m.group(0) in p), m.group(0))
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if sentence.strip().endswith("?"):
            continue
        for part in _CONNECTIVE.split(sentence):
            part = part.strip()
            if len(part.split()) >= 2 and not REFUSES.search(part) and not _PLEASANTRY.search(part) \
                    and not (declined and part in declined):
                return part
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if sentence.strip().endswith("?"):
            continue
        for part in _CONNECTIVE.split(sentence):
            said = REFUSES.search(part)
            if w.MOTIVE.search(part) or (said and _by_caller(part[:said.start()], asked or "") and _beyond_refusal(part, asked or "")):
                return part.strip()  # "Don't trust it", "I never change things on a Friday", "cant do it rn im at the gym"
    return None


def _avoided(text: str, tools: set[str], asked: object) -> str | None:
    """The reason of a refusal read by the turn's structure (``user_avoids``), with its avoiding sentence."""
    said = user_avoids.avoiding_sentence(text, named := user_avoids.named(text, tools))
    return said if said and user_avoids.avoidance_reason(text, said, named, getattr(asked, "content", "") or "") else None


class InventedConstraint(Detector):
    """The agent asked for a phone action; the customer makes no call in that turn and refuses it
    (v10: the asked action as the subject of a turning-away, "X is off the cards", "X cannot be undertaken",
    ``user_avoids.AVOIDS``, and the claim reader's fifth pass of issue 51) for a reason (``refusal_reason``) its task does not give (the task's text does not hold the
    reason's words). The asked action is not done, so the effect is ``outcome`` when it is a write
    (``counterfactual`` corrects it by doing the asked action in that turn); a refused check is
    ``talk``. A refused bill payment the task accepts is also ``constraint_broken``'s when its words
    are that rule's. v2 (issue 51): refusals in other words (``REFUSES``: the setting "off-limits",
    "a no-go for me", "I'll pass on that", "I'm not able to do that", "Can't do that right now")
    and a two-word reason ("I'm driving"); v1 found 75 of 159 on talk-dev, and a refusal it missed
    left the failure with no finding, put on the agent. v3: a first clause that turns the action down in
    words no list holds (``_declines_first``: "Oh I couldn't possibly, ...", "I'm going to say no to that
    one, ...", "Hmm, no. ..."), not a wait, a doubt or not finding it; v2 found 1 of 10 refusals written
    for this change after its tuning, and "I can't risk it, ..." was excused as "cannot"; v4: v3 read a bare
    "No," and any negated first clause as a refusal, and flagged 7 of 13 faithful "can't see it" / "nothing
    more to say" replies written afterwards ("Nope, not seeing it anywhere", "No, nothing else comes to
    mind"): the first clause must now be about the action and not about seeing, finding, having or
    knowing; more refusal idioms ("Absolutely not", "under strict instructions not to", "can we skip
    that?"), a reported prohibition ("my husband always said not to") is a rule, and a rule's reason is
    its whole clause, so one word of it in the task ("rules") no longer excuses it; v5: the reason read by
    structure (``refusal_reason``: a refusing clause with words beyond the refusal and the asked action's,
    a circumstance opened by "while" or "when", distrust or fear, a deferral "Not right now, ..."); v4 found
    126 of 160 on talk-test, missing four phrasings whose reason sat in a refusing clause or after "while"; v6:
    a refusal only where the caller or the asked action is its subject (``_by_caller``: "my car won't connect" refuses
    nothing), "leave airplane mode alone", "not about to", a pleasantry ("to be honest") is no reason; v8: refusals in the forms issue 51's third pass found on talk2: a refusal that concludes its sentence ("If I touch it, I lose my passwords, so no.", "so I'll leave it"), a prohibition on the caller ("forbids me from", "not in a position to"), another's anger at the action ("my dad would go mad if I ..."), an inability to face the action now ("I can't be doing that right now", "can't risk"), a deferral ("will just have to wait"), "Not again.", a bare "Can't." before its reason, and a habit of refusing ("Never do.") or a parent or office as a rule; v7: "not a
    chance", "I'm not rebooting anything", "I don't give apps access"); v9: a refusal read by the turn's structure
    (``user_avoids``: a no-call reply to the asked action that names or points at it with a word of avoidance or a
    negation, not claiming it done, not finding it or waiting, and says more than that); v8 found 89 of 159 on talk3,
    missing every refusal phrased in words its lists lacked ("I'd sooner leave the VPN, you see, ...")."""

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
            reason = refusal_reason(text, asked.content if asked else None) or _avoided(strip_tokens(text), tools, asked)
            if reason is None or reason.lower() in task:
                continue
            effect = "outcome" if tools & t.task.user_writes else "talk"
            out.append(self.finding(m, f"refuses {', '.join(sorted(tools))} because {reason!r}: {text!r}",
                                    effect=effect))
        return out


COMPONENTS = user_parts.COMPONENTS
_COMPONENT = re.compile(rf"\b(?:{COMPONENTS})\b", _I)
_BROKEN = re.compile(
    r"\b(?:crash\w*|freez\w*|frozen|broken|broke|flicker\w*|overheat\w*|drain\w*|dies|died|glitch\w*|lag\w*|"
    r"unresponsive|crackl\w*|buzz\w*|distort\w*|blurry|cracked|cracks?|smashed|shattered|scratch\w*|dented|"
    r"water damage|stuck|disappeared|vanished|went missing|duplicat\w*|corrupt\w*|scrambled|jumbled|mixed up|"
    r"(?:black|blank|white|grey|gray) (?:screen|page|picture)|is full|(?:out of|no) (?:space|storage|memory)|"
    r"(?:gets|getting|is|runs|running|got) (?:really |very |super |so |too )?(?:hot|warm)|"
    r"(?<!\bi )(?<!\bwe )(?<!\byou )keeps? (?:\w+ing|turning off|shutting down|restarting)|"
    r"(?:restarts|reboots|shuts down|turns off) (?:by )?itself|(?<=s |d |g )itself|by itself|on its own|for no reason|randomly|"
    r"(?<!leave it )(?<!let it )(?<!be )alone|(?:stopped|quit) \w+ing|(?:has |have |just )?started (?!working|behaving)\w+ing|"
    r"haywire|all over the place|(?:jumps?|jumping|jumped) (?:around|about)|miss(?:es|ing) (?:half|most|some|loads)|"
    r"(?:gone|going|goes|got|gotten|is|are|went|so|too) (?:very |really |so |too |a bit |quite )?(?:quiet|silent|faint|dim)|"
    r"can (?:hardly|barely|only just) (?:hear|see|read)|"
    r"at random|out of nowhere|logs? me out|logging me out|changed (?:its |the )?(?:language|colou?rs?|settings|"
    r"layout|by itself|on its own)|(?:an hour|\d+ (?:minutes?|hours?)|hours?|minutes?) (?:late|early|behind|ahead)|"
    r"(?:wrong|bad|terrible|awful) (?:time|date|sound|colou?rs?)|shows? the wrong|(?:is|are|was|looks?) (?:all )?wrong|"
    r"loose|wobbl\w*|peeling|muffled|no sound|(?:goes|keeps going|turns) (?:black|blank|dark|white)|"
    r"(?:everything |all )?twice|by themselves|on their own|slow to \w+|won'?t (?:turn|switch|go) off|"
    r"(?:has been|have been|is|are) (?:\w+ )?(?:terrible|awful|rubbish|horrible|useless)|"
    r"(?:goes|go|going|went|runs?|running|drops?|dropping) (?:down|out|flat|dead|empty)\b[^.!?]*\b(?:fast|quick\w*|"
    r"soon)|empt(?:ies|y) (?:fast|quickly))\b", _I)
"""Words that say something is broken or behaves on its own ("keeps crashing", "gets really hot",
"got duplicated", "switches itself on", "a black screen")."""
_NOT_WORKING = re.compile(
    r"\b(?:won'?t|will not|wouldn'?t|would not|doesn'?t|does not|didn'?t|did not|can'?t|cannot|isn'?t|is not|aren'?t|"
    r"stopped|no longer|never|not|"
    r"refuses to|fails? to|won'?t even|don'?t)\s+(?:\w+\s+)?(?:work\w*|pair\w*|connect\w*|charg\w*|ring\w*|"
    r"turn(?:ing)? on|load\w*|open\w*|respond\w*|sync\w*|go(?:ing)? off|show\w*|focus\w*|updat\w*|unlock\w*|"
    r"recogni[sz]\w*|read\w*|sound\w*|vibrat\w*|last\w*|play\w*|do anything|do a thing|react\w*|record\w*|save\w*|"
    r"stay\w*|hold\w*|light\w* up|rotat\w*|dim\w*|register\w*|detect\w*|scan\w*|pop\w*|appear\w*|come up|"
    r"alert\w*|remind\w*|beep\w*|download\w*|install\w*|back(?:ing)? up)", _I)
"""A part that does not do its job ("the volume buttons don't do anything"): said of the part, as
its subject (``new_problem``)."""
_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|we|you|me)\b", _I)
_WHY = re.compile(r"\b(?:why|how come|what'?s wrong with|what is wrong with|what'?s up with|what'?s going on with|"
                  r"is it normal (?:that|for)|any idea why|y does|y is|y has)\b", _I)
"""A question about why a part does what it does ("why has my keyboard changed language?")."""
_PHONE_DOES = re.compile(
    r"\b(?:my |the |this )?(?:phone|handset|mobile|device)\b(?:'s|\s+has|\s+is|\s+just|\s+also|\s+now)*\s+"
    r"(?!itself\b)(?:\w+\s+){0,3}?(?:itself\b|by itself|on its own|for no reason|randomly|at random|(?:stopped|quit) \w+ing|"
    r"keeps? \w+ing|won'?t stop \w+ing|(?:doesn'?t|won'?t|will not|does not) (?:ring|vibrate|charge|turn on|unlock|"
    r"rotate|play|make a sound|hold a charge))", _I)
"""The phone itself behaving wrongly, no part named ("my phone dims itself for no reason", "my phone
has stopped ringing")."""
_REPORTS = re.compile(r"\b(?:shows?|showing|showed|says?|saying|said|reads?|reading|displays?|displaying|tells? me|telling me|"
                      r"flash\w*|put up|puts up|came up with|comes up with)\b", _I)
_TELECOM = re.compile(
    r"\b(?:no service|signal|bars?|reception|coverage|mobile data|cellular|data|internet|network|connection|online|"
    r"roaming|wi-?fi|apn|sim|puk|vpn|mms|speed|airplane|aeroplane|(?:little |tiny )?plane|flight mode|[2345]g|lte|"
    r"status bar|(?:picture|photo|multimedia|image) "
    r"messag\w*|texts?|text messages?|sms|messaging app|(?:send|sending|sent|go through)\w*\s+(?:\w+\s+)?"
    r"(?:pictures?|photos?|pics?|images?)|asking for (?:a |my |the )?pin|(?:enter|type) (?:a |my |the )?pin)\b", _I)
"""The telecom problem's own words: a complaint in them is the task's problem, not a new one."""


_NEGATED = re.compile(r"(?:\bnot\b|n['’]t\b|\bnever\b|\bno\b|\bnor\b)(?:\s+[\w']+){0,2}\s*$", _I)
"""A negation just before a word ("hasn't crashed", "never gets hot", "didn't crack")."""
_TOLERATED = re.compile(r"\b(?:always (?:been|done|had)|for (?:years|ages|a long time)|(?:years|ages|months|a year) ago|"
                        r"since (?:i|we) (?:got|bought|had) it|that'?s (?:old|nothing new)|(?:it'?s|that'?s|it has|it'?s always) been like that|(?:i'?m|i am) used to it|doesn'?t bother me|"
                        r"(?:but|and) (?:i|it) (?:can )?still (?:see|use|work|read)\w*)\b", _I)
"""A part's old or tolerated state mentioned in passing ("a small crack from years ago", "drains fast but
that has always been the case"): small talk, not a problem raised."""


def _task_gives(words: str, task: str) -> bool:
    """Whether the task's text gives a trouble with these words: a sentence of it that names them (as
    words, not inside others) with a broken-word, a not-working or a trouble word. A persona that "contacts
    a support agent" or takes "photos of the grandchildren" gives no problem with contacts or photos."""
    named = re.compile(rf"(?<![\w-]){re.escape(words.lower())}(?![\w-])")
    return any(named.search(x) and (_BROKEN.search(x) or _NOT_WORKING.search(x) or w.TROUBLE.search(x))
               for x in re.split(r"(?<=[.!?;])\s+|\n+", task))


def _said_of(sentence: str, word: re.Match[str], part: re.Match[str]) -> bool:
    """Whether a broken-word is said of this part: the nearest part or telecom thing named before it (or,
    with none before it, the first after it) is the part ("Bluetooth works, only mobile data is
    broken" says nothing broken of Bluetooth)."""
    named = sorted([(m.start(), m.end()) for m in _COMPONENT.finditer(sentence)] +
                   [(m.start(), m.end()) for m in _TELECOM.finditer(sentence)])
    before = [x for x in named if x[1] <= word.start()]
    subject = before[-1] if before else next((x for x in named if x[0] >= word.end()), None)
    return subject is not None and subject[0] <= part.start() < subject[1] or subject == (part.start(), part.end())


def _part_broken(sentence: str, task: str, telecom: bool) -> bool:
    """A part the task never names said to be broken or to act on its own (the broken-word said of it,
    not negated: "the camera has never crashed" is none), or not to do its job with the part as the
    subject ("the camera won't focus"; not "I can't charge it till tonight", whose subject is the
    caller), or asked why it does what it does (not when the sentence is in the telecom problem's
    words: "why is there a little plane at the top of my screen?"). An old or tolerated state
    (``_TOLERATED``) is none."""
    if _TOLERATED.search(sentence):
        return False
    for part in _COMPONENT.finditer(sentence):
        if _task_gives(part.group(0), task):
            continue
        if any(_said_of(sentence, b, part) and not _NEGATED.search(sentence[:b.start()])
               and not _REPORTS.search(sentence[part.end():b.start()])  # "the screen says broken": what it shows
               for b in _BROKEN.finditer(sentence)) or (_WHY.search(sentence) and not telecom):
            return True
        failing = _NOT_WORKING.search(sentence, part.end())
        if failing and not _PERSON.search(sentence[part.end():failing.start()]) and _said_of(sentence, failing, part):
            return True  # "the volume buttons don't do anything"
        failing = _NOT_WORKING.search(sentence[:part.start()])
        if failing and not _PERSON.search(sentence[:failing.start()]):
            return True  # "my phone won't pair with my watch"
    return False


_ACTOR = re.compile(r"\b(?:i|we|i'?ve|i'?m|i'?d|we'?ve)\b(?!\s+(?:think|guess|feel|noticed?|reckon|find|found|believe|swear|"
                    r"mean|know|realised|realized|saw|see)\b)", _I)
_FINE = re.compile(r"\b(?:fine|ok(?:ay)?|all good|works? (?:well|perfectly|great)|no (?:problems?|issues?|trouble)|"
                   r"nothing wrong|perfect(?:ly)?|great)\b", _I)


def _aside_complaint(sentence: str, task: str) -> bool:
    """An aside or a second matter ("Also", "By the way", "One more thing") that names a part (or the
    phone) the task never names with a trouble word said of it, after it or just before it, and
    nothing said to be fine."""
    if not w.ASIDE.search(sentence) or _FINE.search(sentence):
        return False
    for part in _THING.finditer(sentence):
        if _task_gives(part.group(0), task) or _ACTOR.search(re.split(r"[,;:]", sentence[:part.start()])[-1]):
            continue  # "I did restart the phone", "I don't have a charger": the caller acts, the part is no subject
        start = max(0, sentence.rfind(" ", 0, max(0, part.start() - 12)))
        if (trouble := w.TROUBLE.search(sentence, start)) and not _PERSON.search(sentence[part.end():trouble.start()]):
            return True
        if _BROKEN.search(sentence, part.end()) or w.REQUEST_FIX.search(sentence, part.end()):
            return True  # "Also my photos app closes alone, you can fix it?"
    return False


def _part_complaint(sentence: str, task: str) -> bool:
    """A part (or the phone) the task gives no trouble with, as the subject of a malfunction word after it
    (``claim_words.MALFUNCTION`` or ``_BROKEN``, no person between), and nothing said to be fine: a complaint with no
    aside ("My Bluetooth speaker disconnects after two minutes")."""
    if _FINE.search(sentence):
        return False
    for part in _THING.finditer(sentence):
        if _task_gives(part.group(0), task) or _ACTOR.search(re.split(r"[,;:]", sentence[:part.start()])[-1]):
            continue
        bad = w.MALFUNCTION.search(sentence, part.end())
        if bad and not _PERSON.search(sentence[part.end():bad.start()]) \
                and not _THING.search(sentence, part.end(), bad.start()) and not _TELECOM.search(sentence, part.end(), bad.start()) \
                and not _NEGATED.search(sentence[:bad.start()]) and not _REPORTS.search(sentence[part.end():bad.start()]):
            return True
    return False


def _second_matter(sentences: list[str], i: int) -> bool:
    """A sentence that opens a second matter ("Sorry, one more: ...", ``claim_words.NEW_MATTER``) with a trouble word or
    a request to mend something in it or the sentence after it, none of it in the telecom problem's words
    and nothing said to be fine ("One more: I keep getting spam calls. Can you block them?")."""
    if not w.SECOND_MATTER.search(sentences[i]):
        return False
    said = " ".join(sentences[i:i + 2])
    trouble = [x.group(0).lower() for x in w.TROUBLE.finditer(said)] + [x.group(0) for x in _BROKEN.finditer(said)]
    return bool(([x for x in trouble if x not in ("twice", "late", "slow")] or w.REQUEST_FIX.search(said))
                and not _TELECOM.search(said) and not _FINE.search(said))


_THING = re.compile(rf"\b(?:{COMPONENTS}|phone|handset|device)\b", _I)


def _refusal_first(sentence: str) -> bool:
    """A refusal with its reason, the refusal before any part or the phone is named ("I'd rather leave
    it, last time I touched it the phone stopped ringing"): invented_constraint's, not a new problem;
    "my phone won't stop beeping" refuses nothing."""
    refusal, thing = REFUSES.search(sentence), _THING.search(sentence)
    return bool(refusal and refusal_reason(sentence) and (thing is None or refusal.start() < thing.start()))


_CRASHES = re.compile(r"\b(?!(?:it|that|this|internet|data|connection|signal|messag\w*|texts?|mms|phone)\b)[\w-]+\s+(?:keeps?|kept)\s+"
                      r"(?:crash\w*|freez\w*|force[- ]clos\w*)", re.I)  # "also spotify keeps crashing": an app of any name
_QUOTE_OPEN = re.compile(r"(?:^|\s)['\"‘“][^'\"’”]*$")
_CAUSED = re.compile(r"\b(?:because|since|cos|'cause|cuz|as|due to|thanks to|whenever|every time)\b[^,;.]{0,30}$", re.I)


def new_problem(text: str | None, task: str) -> str | None:
    """The sentence of a text that complains of something outside the telecom problem (v2): a part or
    app (``COMPONENTS``) the task's text never names, broken, acting on its own, not doing its job or
    asked about ("why does my alarm go off late?"); the phone itself misbehaving with no part named
    ("my phone dims itself for no reason"); or the phone's hardware failing (``claim_words.PHYSICAL``), apps
    crashing, the caller's data lost. A sentence in the telecom problem's own words (``_TELECOM``: no
    service, data, MMS, the network...) is the task's problem. None otherwise."""
    sentences = [x for x in re.split(r"(?<=[.!?;])\s+|\n+", w.RUN_ON.sub(". ", strip_tokens(text or ""))) if x.strip()]
    for i, sentence in enumerate(sentences):
        if _refusal_first(sentence):
            continue  # "I'd rather leave it, last time I touched it the phone stopped ringing": a reason to refuse
        telecom = _TELECOM.search(sentence)
        shows_telecom = telecom and ((said := _REPORTS.search(sentence)) and said.start() < telecom.start()
                                     or _QUOTE_OPEN.search(sentence[:telecom.start()]))  # "stuck on 'No Service'"
        caused = telecom and _CAUSED.search(sentence[:telecom.start()])  # "maps froze because the internet cut out"
        if not shows_telecom and not caused and _part_broken(sentence, task, bool(telecom)):
            return sentence.strip()  # not "the screen keeps showing No Service": that is the task's problem
        if telecom:
            continue
        if (_aside_complaint(sentence, task) or _second_matter(sentences, i) or _part_complaint(sentence, task)
                or user_parts.part_as_subject(sentence, lambda part: _task_gives(part, task)) or _CRASHES.search(sentence)) \
                and not _TOLERATED.search(sentence):
            return sentence.strip()
        if (m := _PHONE_DOES.search(sentence) or w.PHYSICAL.search(sentence) or w.APPS_OR_DATA.search(sentence)) \
                and not _task_gives(m.group(0), task):
            return sentence.strip()
    return None


class NewProblem(Detector):
    """The customer raises a new problem its task never gave it: a malfunction of a part or app of
    the phone outside the telecom problem (``new_problem``), named nowhere in its task, and not a
    phone result it repeats. Other new problems (a second telecom fault, an unrelated complaint in
    words this does not read) are the judge tier's (``sim-audit@3`` A6). v2 (issue 51): also a part
    asked about ("why has my keyboard changed language?"), acting on its own, damaged, the caller's
    data duplicated, the phone itself misbehaving with no part named, a part not doing its job only
    as its subject (not "I can't work out why"); a sentence that shows the telecom problem ("the
    screen keeps showing No Service") is none (v1 flagged it on 19 of 414 faithful talk-dev callers
    and found 193 of 382 new problems there). v3: a broken-word counts only said of the part (the
    nearest thing named before it), not negated ("has never crashed"), not for an old or tolerated state
    ("a crack from years ago"); an aside ("Also, ...", "One more thing: ...") naming a part or the phone
    with a trouble word is one ("Also, my phone's clock is wrong every morning"); "won't" in "my phone
    won't stop beeping" is no refusal (v2 found 16 of 30 new problems written for the issue's tests);
    v4: a negation needs its apostrophe ("went", "want" negate nothing); v5: a part not doing its job only
    when that is said of it, "I can't use maps or anything, the internet isn't loading" is the telecom
    problem; v6: a part counts as the task's only where the task's text gives a trouble with it (``_task_gives``:
    a persona who "contacts a support agent" or takes "photos" gives none; v5 excused any word the task held, and
    missed 28 of 382 new problems on talk-test so); a second matter opened by its own words ("One more: ...",
    "While I have you, ...", ``claim_words.NEW_MATTER``) with a trouble or a request to mend something; a run-on second
    matter ("... signal excellent Random question, ...") is its own sentence; "closes alone", "gone very quiet",
    "stopped popping up"; a broken-word after the screen "says" is what it shows; v7: "itself" after a noun only
    stresses it ("the phone itself is fine"), "has started typing in German", "jumps around", "misses half my taps";
    v8: more words that open a second matter, ``claim_words.NEW_MATTER``: "Before I forget", "That reminds me",
    "Not related", "Off topic", "PS", "Different question"; v9: with no aside too, a part the task gives no
    trouble with as the subject of a malfunction word (``_part_complaint``: "My Bluetooth speaker disconnects
    after two minutes", "a green line down the middle"); v8 missed 14 of 20 such sentences written for it); v10: a part as its clause's subject with a verb other than a screen's report (``user_parts.part_as_subject``: "the loudspeaker keeps playing up", "if the torch goes the way it's going"), more parts (loudspeaker, sensors, text size); v9 missed 120 of 382 new problems on talk3, most in sentences with no broken-word of its lists); v11: a trouble the telecom problem causes ("maps kept freezing because the internet cut out"), a screen quoting what it shows, a part's word as a negated verb ("mi nuh touch nothing") raise none)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            results = [x.content or "" for x in t.messages if x.seq < m.seq and x.side == "user" and x.role == "tool"]
            sentence = new_problem(claims.own_words(m.content, results), task)
            if sentence:
                out.append(self.finding(m, f"raises a problem its task never gave: {sentence!r}"))
        return out


__all__ = ["COMPONENTS", "REFUSES", "RULE", "InventedConstraint", "NewProblem", "new_problem", "refusal_reason", "refuses"]
