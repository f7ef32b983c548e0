"""A new problem read by the sentence's structure (issue 51, fourth pass): a part or app of the phone
(``COMPONENTS``) as the subject of a clause whose verb is not a report of the phone's screen ("the
loudspeaker keeps playing up", "the phone's microphone has become faint", "if the torch goes the way it's
going"), in a sentence in none of the telecom problem's words, the part not given by the task. A faithful
caller names such parts as the screen that reports ("the screen says data saver is off"), as objects ("the
top of the screen", "photos off the camera", "which button to press") or as what it uses ("maps, banking").

Used by ``user_reasons.new_problem``; the lists of broken-words there read the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_I = re.IGNORECASE
COMPONENTS = (r"camera|loud ?speaker|(?:proximity |light |motion )?sensor|volume (?:rocker|keys?)|rocker|video calls?|"
              r"text size|font(?: size)?|screen protector|touch(?: response)?(?! id)|flash(?:light)?|torch|bluetooth|head ?phones?|ear ?buds?|headset|earpiece|battery|charger|charging"
              r"(?: port)?|screen|display|touch ?screen|speakers?|microphone|mic|volume|buttons?|alarm|clock|gps|location|"
              r"maps?|navigation|voicemail|contacts?|calendar|fingerprint(?: (?:reader|sensor|scanner))?|face (?:id|unlock)|"
              r"keyboard|autocorrect|notifications?|ringtone|ringer|vibrat\w+|gallery|photos? app|music|email|e-mail|"
              r"smart ?watch|watch|nfc|sd card|memory card|lock screen|passcode|home button|power button|wallpaper|"
              r"time zone|calculator|weather app|games?|stylus|(?<!in )case|headphone jack|usb|car(?:'s)? (?:bluetooth|stereo|"
              r"radio|kit|system|play)|tablet|laptop|printer|tv|speakerphone|flip cover|compass|step counter|health app|"
              r"banking app|app store|updates?|brightness|rotation|storage(?! permission| access)|back glass|glass|"
              r"(?:camera|gallery|music|video|notes|clock|calendar|email|social media|shopping|news) app|icons?|home screen|"
              r"widgets?|pop-?ups?|ads|adverts?|(?:app|play) store|charging cable|cable|back of the phone|sound|audio|"
              r"caller id|dark mode|(?:emergency )?alerts?|voice assistant|assistant|(?:qr )?scanner|podcasts?|"
              r"(?!(?:messag\w*|sms|mms|texts?|phone|settings|the|my|this|that|an?|your|any|every|each|think|thinks|reckons?|"
              r"says|said|believe|suspect|noticed|mention|which|what|whose)\b)[a-z][\w-]* app(?!\s+permissions?\b)")
"""Parts and apps of a phone (and devices paired with it, and the caller's own data on it) outside the
telecom problem: a complaint about one is a new problem. Network, data, calls, messages, the SIM and the
settings are not here."""
_PART = re.compile(rf"\b(?:{COMPONENTS})\b", _I)
_CLAUSE = re.compile(r"[,;:—–()]|\s-\s|\b(?:that|which|who|where|when|whenever|because|since|and|but|so|if|unless|though|"
                     r"although|while|as|now|too|either|think|thinks|reckon|suspect|fear|guess|believe|says|said|noticed|"
                     r"mention)\b", _I)
"""Where a clause starts: a part after one of these is its clause's subject, not an earlier verb's object; after a
verb of thinking or saying too ("I think the charging port might be going", "my son says the ringtone's gone", v11)."""
_OBJECT = re.compile(r"(?:\b(?:of|off|on|at|in|into|with|to|from|for|by|through|via|using|use|uses|used|press\w*|tap\w*|"
                     r"check\w*|open\w*|look\w*|see|saw|have|has|had|got|get|need\w*|want\w*|hear|heard|about|like)\s+"
                     r"(?:(?:the|my|a|an|your|this|that|its|their|his|her|our|[\w-]+'s)\s+)*$|\b(?:i|we|you|me|i'm|i've|i'd)\b)", _I)
"""A word just before the part that makes it an object, or a person acting in its clause ("photos off the camera",
"I use maps")."""
_STORY = re.compile(r"\b(?:reminds? me|the time (?:we|i|when)|back (?:when|then|in)|years ago|used to|my old|"
                    r"if (?:i|we) (?:do|did|change|touch|turn|switch)\b|otherwise|or else|be quick|hurry|quickly|before it (?:dies|runs out|goes))",
                    _I)
"""A reminiscence or a consequence of the asked action: no problem raised now."""
_VERB = re.compile(r"^(?:'s|'re|'ve|is|are|was|were|has|have|had|keeps?|kept|goes|going|gone|went|gets|getting|got|"
                   r"starts?|started|become|becomes|became|won'?t|wont|doesn'?t|isn'?t|aren'?t|can'?t|hasn'?t|haven'?t|"
                   r"would|will|might|packs?|seems?|looks?|sounds?|feels?|makes?|making|stopped|stops|turns?|dies|died|"
                   r"freez\w*|hangs?|hanging|crash\w*|[a-z]+ed|[a-z]+ing|go|do|does|did|nuh|nah|never|barely|hardly|"
                   r"always|constantly|suddenly)$", _I)
"""A clause's verb (or its auxiliary) after its subject."""
_VERB_S = re.compile(r"^(?!(?:settings|options|apps|photos|messages|bars|texts|calls|icons|this|is|was|has|its|us)$)[a-z]+s$", _I)
"""A present-tense verb right after the part ("the torch flickers"), not a plural noun of the phone's."""
_REPORTING = re.compile(r"\b(?:says?|saying|said|reads?|reading|reckons?|shows?|showing|showed|tells?|telling|told|indicat\w*|"
                        r"display\w*|lists?|listed|reports?|gives?|giving|came up|comes up|stat\w*|inform\w*|warn\w*|flash\w* up)\b", _I)
"""A screen's report: what it shows, not how it behaves."""
_NEUTRAL = re.compile(r"\b(?:at (?:about |around |roughly )?(?:\d|half|full|a quarter)|\d+ ?%|\d+ per ?cent|percent|full|charged|"
                      r"fine|ok(?:ay)?|good|great|all right|alright|working (?:fine|well|perfectly)|works? (?:fine|well)|normal|"
                      r"perfect\w*|no problems?|nothing wrong|right here|here|there)|(?:n't|\bnot|\bnever|\bno)\b[\w' ]*\b(?:crash\w*|crack\w*|broken|broke|damaged|scratch\w*|"
                      r"wrong|bad|faulty|dead|problem\w*|issue\w*|trouble|fault\w*|freez\w*|play\w* up|acting up|smash\w*|bother\w*)",
                      _I)
_COPULA = re.compile(r"^(?:'s|'re|is|are|was|were)$", _I)
_NAMED_AS = re.compile(r"^(?:a|an|the|my|your|his|her|their|our|its|this|that|these|those|at|in|with|from|for|by|\d\S*|\S+@\S+)$", _I)
"""After a bare copula, what names or places the part ("my email is js@...", "the charger's at work"): no trouble."""
"""What a part is that no trouble is: charged, fine, at hand; a hurry ("my battery's dying, so be quick"); a trouble
denied ("the camera has never crashed")."""
_NEGATED_VERB = re.compile(r"(?:n't|\bnot|\bnuh|\bnah|\bnever)\s+$", _I)
"""A negation just before the part makes the part's word a verb ("I haven't touched", "mi nuh touch"): no subject."""
_QUOTED = re.compile(r"(?:^|\s)['\"‘“][A-Z]")
"""A quoted message in the part's clause ("the screen's been stuck on 'No Service'"): what it shows, a report."""
_OBJECT_AFTER = re.compile(r"\s+(?:nothing|anything|nuttin|nutten|everything|something)\b", _I)
"""The part's word with an object after it is a verb ("touch nothing"), not a subject."""
_TAKEN_UP = re.compile(r"^\s*,\s*(?:(?:when|if|whenever)\b[^,]{0,30},\s*)?(?:it|they)\s+", _I)
"""The part taken up by a pronoun after a comma ("the voice assistant, it doesn't answer"): its clause goes on there."""
_PERSON = re.compile(r"^(?:i|we|you|me|he|she|they|i'm|i've|i'd)$", _I)


def part_as_subject(sentence: str, given: Callable[[str], bool]) -> bool:
    """A part not given by the task (``given(part)`` false) as its clause's subject: no object-making word or
    person before it in its clause, a verb among the three words after it, the verb not a screen's report, and
    nothing neutral said of it ("at 80%", "fine", "on the table")."""
    if _STORY.search(sentence):
        return False
    bounds = [0, *(m.start() for m in _CLAUSE.finditer(sentence)), len(sentence)]
    for part in _PART.finditer(sentence):
        if given(part.group(0)):
            continue
        start = max(x for x in bounds if x <= part.start())
        end = min([x for x in bounds if x >= part.end()] + [len(sentence)])
        rest = sentence[part.end():end]
        took = None if rest.strip() else _TAKEN_UP.match(sentence[part.end():])  # "the voice assistant, it doesn't ..."
        if not took and (_OBJECT.search(sentence[start:part.start()]) or _NEGATED_VERB.search(sentence[start:part.start()])):
            continue
        if took:
            rest = sentence[part.end() + took.end():][:min([x - part.end() - took.end() for x in bounds
                                                           if x > part.end() + took.end()] + [len(sentence)])]
        words = re.findall(r"'s|'re|'ve|[\w'-]+", rest)
        owner = words[:1] == ["'"]  # "my earbuds' left side cuts out": the part's own side, its verb further on
        words = words[1:5] if owner else words[:3]
        at = next((i for i, x in enumerate(words) if _VERB.match(x) or (i == 0 or owner) and _VERB_S.match(x)), None)
        if at is None or any(_PERSON.match(x) for x in words[:at]) or len(words) < 2 and not rest.strip().startswith("'"):
            continue
        if "@" in rest or _COPULA.match(words[at]) and at + 1 < len(words) and _NAMED_AS.match(words[at + 1]):
            continue
        if _REPORTING.search(rest) or _NEUTRAL.search(rest) or _QUOTED.search(rest) or _OBJECT_AFTER.match(rest):
            continue
        return True
    return False


__all__ = ["COMPONENTS", "part_as_subject"]
