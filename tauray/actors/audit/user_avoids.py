"""A refusal read by the turn's structure rather than by a list of refusing phrases (issue 51, fourth
pass): the agent asked for a phone action, the customer's reply makes no call, does not claim it done,
does not say it cannot find it or ask how, and a sentence of it turns away from the asked action (names
it, or points at it, with a word of avoidance: leaving it, skipping it, another way, rather not, fear of
it, a negation of doing it). A faithful caller asked for an action does it or says it cannot find it;
on every stored split its replies to an asked action carry a call.

Used by ``user_reasons.refusal_reason`` when its own refusal words find nothing.
"""

from __future__ import annotations

import re

from tauray.actors.audit import claim_words as w
from tauray.actors.audit import claims, phone

_I = re.IGNORECASE
CANNOT_FIND = re.compile(r"\b(?:can'?t|cannot|couldn'?t|unable to) (?:find|see|locate|get to)\b|"
                         r"\b(?:don'?t|doesn'?t|do not|does not) (?:seem to )?(?:see|have|find|know how)\b|\bno such\b|"
                         r"\bwhere\b|\bhow (?:exactly |else )?(?:do|can|would|should) i\b", _I)
"""Not finding the option or asking how to reach it: no refusal."""
AVOIDS = re.compile(
    r"\b(?:leav(?:e|ing)|left|let (?:it|that|this) (?:be|lie)|skip\w*|(?:a|the) miss|avoid\w*|rather|sooner|(?:i'?d|i would|we'?d|i|we) prefer|preferably|"
    r"instead|(?:an)?other (?:[\w-]+ )?than|anything but|another way|other way|(?:an)?other (?:route|option|approach|idea)|"
    r"(?:a )?wide berth|steer clear|(?:keep|stay) (?:away|clear)|hands off|not go near|some ?thing else|(?:a )?way (?:round|around)|alternative\w*|"
    r"hold off|pass on|alone|as (?:it|they) (?:is|are)|(?:just )?(?:the )?way it is|scared|afraid|frighten\w*|nervous|worried|"
    r"wary|reluctant|hesitant|unable|mustn'?t|forbid\w*|(?:not|never) to (?:\w+ )?(?:touch|change|modify|alter|mess|fiddle|"
    r"switch|turn|reset|do)\w*|swear|no puedo|no can do|off the (?:cards|table|menu)|out of the question|bother(?:ing)? with|"
    r"(?:cannot|can'?t|could not|couldn'?t) be (?:done|undertaken|carried out|attempted|touched|changed))\b", _I)
"""Words that turn away from an action in any form: leave it, skip it, another way, rather not, fear; the action
as the subject of a turning-away ("X is off the cards", "X cannot be undertaken"; fifth pass)."""
_NEGATES = re.compile(r"\b(?:not|never|no|nah|nope|dont|cant|wont|shouldnt|couldnt)\b|n['’]t\b", _I)
"""A negation: an avoidance only where the sentence states no phone value (not "airplane mode isn't on")."""
_WAIT = re.compile(r"\b(?:yet|hold on|hang on|one (?:sec|second|moment|minute)|just a (?:sec|second|moment|minute)|give me a|"
                   r"(?:don'?t|do not) (?:understand|follow|get it)|what do you mean|not sure (?:what|which|how)|"
                   r"no idea|not following|didn'?t (?:catch|get|hear))\b", _I)
"""A wait, or not understanding the request: no refusal."""
_POINTS = re.compile(r"\b(?:that|this|it|them|those|anything|everything|something|settings?|things?)\b", _I)
"""Words that point at the asked action when it is not named."""
_DONE = re.compile(r"\b(?:done|did it|finished|sorted|seen to|taken care|dealt with|all set|went ahead)\b", _I)
_NEGATED = re.compile(r"(?:\b(?:not|never|no)\b|n['’]t\b)(?:\s+[\w']+){0,2}\s*$", _I)
_ACT = re.compile(r"\b(?:do|doing|touch\w*|chang\w*|modif\w*|alter\w*|mess\w*|fiddl\w*|switch\w*|turn\w*|toggl\w*|"
                  r"reset\w*|restart\w*|reboot\w*|press\w*|tap\w*|grant\w*|allow\w*|enabl\w*|disabl\w*|go ahead|risk)\b", _I)
"""An action verb: a pointer ("that", "it") with one near it points at the asked action ("touch that")."""


def waits(text: str) -> bool:
    """A wait, or not understanding the request (``_WAIT``)."""
    return bool(_WAIT.search(text))


def _claims_done(text: str) -> bool:
    """A done-word not negated just before it ("all done", not "haven't done it")."""
    return any(not _NEGATED.search(text[:m.start()]) for m in _DONE.finditer(text))


def named(text: str, tools: set[str]) -> list[str]:
    """The asked action's words as the reply spells them: its tools' topics and the settings named."""
    out = [m.group(0) for tool in tools if phone.TOPICS.get(tool)
           for m in re.finditer(phone.TOPICS[tool], text, _I)]
    return out + [text[start:end] for start, end, _ in claims.mentions(text)]


def _asks(text: str) -> bool:
    """Whether the reply asks a question of its own ("How do I do that?"; not "Airplane mode? No, ...")."""
    return any(x.rstrip().endswith("?") and _QUESTION.search(x) for x in _sentences(text))


_QUESTION = re.compile(r"\b(?:how|what|where|which|when|why|will|would|do|does|did|is|are|can|could|should|shall)\b", _I)


def _sentences(text: str) -> list[str]:
    return [x for x in re.split(r"(?<=[.!?;])\s+|\n+", text) if x.strip()]


def avoiding_sentence(text: str, named: list[str]) -> str | None:
    """The sentence of a no-call reply that turns away from the asked action: it names the action (one of
    ``named``, the asked tools' words as they appear in the reply) or points at it, and holds a word of
    avoidance (``AVOIDS``), or a negation where it states no phone value and the reply asks nothing ("How do I
    do that? I've never tried it" asks); not a wait, not not finding it, not a claim of having done it. None
    otherwise."""
    if CANNOT_FIND.search(text) or _WAIT.search(text) or _claims_done(text):
        return None
    sentences = _sentences(text)
    for i, sentence in enumerate(sentences):
        near = " ".join(sentences[max(0, i - 1):i + 2])
        about = any(x and x.lower() in near.lower() for x in named) or bool(
            (pointer := _POINTS.search(sentence)) and _ACT.search(sentence, max(0, pointer.start() - 30)))
        if not about:
            continue
        if AVOIDS.search(sentence) or _NEGATES.search(sentence) and not claims.claims(sentence) and not _asks(text):
            return sentence.strip()
    return None


def avoidance_reason(text: str, sentence: str, named: list[str], asked: str) -> str | None:
    """What the reply says beyond turning the action down: its words less the avoidance and negation words,
    the action's and the request's words and ``claim_words.EMPTY``; a question asking for another way
    gives none by itself ("Could we skip it?" is a bare refusal). None when nothing is left."""
    rest = text
    for x in named:
        if x:
            rest = re.sub(re.escape(x), " ", rest, flags=_I)
    rest = AVOIDS.sub(" ", _NEGATES.sub(" ", rest))
    request = set(re.findall(r"[a-z][a-z']*", asked.lower()))
    kept = []
    for part in _sentences(rest):
        if part.strip().endswith("?") and not any(ch.isalpha() for ch in part.split("?")[-1]):
            words = [x for x in re.findall(r"[a-z][a-z']*", part.lower()) if x not in w.EMPTY and x not in request]
            if len(words) < 3:
                continue
        kept += [x for x in re.findall(r"[a-z][a-z']*", part.lower()) if x not in w.EMPTY and x not in request
                 and x not in _SMALL]
    return " ".join(kept) or None


_SMALL = frozenset("forgive excuse afraid regret mind terribly love help hmm honestly actually just see dear please able possible "
                   "handset mobile device mine "
                   "reckon right yeah yes could would should may might shall we us let is are was were been am "
                   "if as than but other another way what else instead".split())
"""Courtesy and request words that give no reason."""

__all__ = ["AVOIDS", "CANNOT_FIND", "avoidance_reason", "avoiding_sentence", "named", "waits"]
