"""The words of claims: what a customer calls each phone setting or reading (its synonyms), the
words of each kind of value (on/off, a signal level, a network mode, a SIM or APN state, a
permission, whether picture messages send, a payment, the line, the speed), and the words that
turn a sentence into something other than a claim (a question, a plan, a condition, a hedge
that negates nothing); and, for ``user_reasons``, the words of talk beyond claims: a refusal's motive and
the words that say nothing beyond a refusal, and the words that open a second matter.

Why a vocabulary and not phrasings: the audit's first word rules matched the phone result
templates' own words ("X is now ON"); a customer who names a setting in its own words ("the plane
mode", "calling over wifi", "my VPN shows not running") was not read (issue 38). The lists here
are the settings of the τ² telecom phone and the plain words for them, written from the phone's
tools and everyday English; ``claims`` reads a sentence with them.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

SETTINGS: dict[str, str] = {
    "airplane_mode": r"\b(?:air|aero)?plane (?:mode|icon|symbol|sign|picture|setting|thing)\b|\b(?:air|aero)plane\b|"
                     r"\bflight mode\b|\bflying (?:mode|setting|thing)\b|\b(?:little|tiny|small) (?:air|aero)?plane\b|"
                     r"\bthe plane(?=\s+(?:is|'s|was|has)\s+(?:still\s+|now\s+|no longer\s+|not\s+)*(?:showing|there|on|off|"
                     r"gone|visible|lit|up)\b)",
    "wifi_calling": r"\b(?:wi-?fi|wireless|internet)[ -]call(?:s|ing)?\b|"
                    r"\bcall(?:s|ing)?[ -](?:over|via|by|through|on|using)[ -](?:the[ -])?(?:wi-?fi|wireless|internet)\b",
    "roaming": r"\b(?:data )?roaming\b",
    "data_saver": r"\bdata[ -]sav(?:er|ing)(?: mode)?\b|\bsaver mode\b|\blow data mode\b|\bdata restriction\b",
    "mobile_data": r"\b(?:mobile|cellular|cell) data\b|\bdata connection\b|\bmobile internet\b|"
                   r"\bdata\b(?![ -](?:saver|saving|roaming|plan|usage|limit|allowance|top|refuel|cap))",
    "wifi": r"\bwi-?fi\b|\bwireless\b|\bwlan\b",
    "vpn": r"\bvpn\b|\bvirtual private network\b",
    "network_mode": r"\bnetwork (?:mode|type|setting|preference)s?\b|\bpreferred network\b|"
                    r"\b(?:[2345]g|lte)(?:\s*(?:/|and|or|,)\s*(?:[2345]g|lte))*\s*(?:only|preferred)\b|"
                    r"\b(?:only|just)\s+(?:[2345]g|lte)\b|"
                    r"\bprefer(?:s|red|ring)?\s+(?:[2345]g|lte)(?:\s*(?:/|and|or|,)\s*(?:[2345]g|lte))*\b",
    "signal": r"\bsignal\b|(?<!status )\bbars?\b|\breception\b|\bcoverage\b|\bno (?:cell(?:ular)? )?service\b",
    "sim": r"\bsim(?: card)?\b",
    "apn": r"\bapn\b|\baccess point\b|\bmmsc\b|\bmms (?:url|address)\b|\bpicture message (?:address|url)\b",
    "permission": r"\bpermissions?\b|\b(?:messaging|messages|message|texting|text|sms) app\b",
    "mms": r"\bmms\b|\b(?:picture|photo|multimedia|image|pic)s?(?: messages?| texts?| msgs?)?\b",
    "payment": r"\bpayment\b|\bbill\b|\bpay\b|\bpaid\b",
    "line": r"\b(?:my|phone|the|account|mobile)\s+line\b|\bline(?:'s| is| was| has| got| seems)\b",
    "speed": r"\bspeed(?: ?test)?\b|\bmbps\b|\bmegabits?\b|\bdownloads?\b|"
             r"\b(?:internet |web )?connection(?=\s+(?:is|was|'s|seems|feels|has been|looks)\s+(?:\w+\s+)?"
             r"(?:slow|fast|quick|sluggish|terrible|awful|poor|excellent|crawling|dreadful|speedy)\b)",
}
"""Each readable setting or reading and the words a customer uses for it (the longest match of
overlapping names wins: "wi-fi calling" over "wi-fi", "data saver" over "data")."""

SWITCHES = ("airplane_mode", "mobile_data", "roaming", "wifi_calling", "wifi", "data_saver", "vpn")
"""Settings that are on or off."""

NEG = r"(?:\bnot\b|\b(?:is|are|was|were|does|do|did|has|have|had|can|could|wo|would|should|ai)n'?t\b|\bnever\b|\bno longer\b|" \
      r"\b(?:is|are|was|does|do|did|has|have|can|could|would|wid|should|will)nae?\b|(?<=\w )(?:nah|nuh)\b|" \
      r"(?:\b(?:is|are|was|am)|'s|'re|'m)\s+no\b(?=\s+(?:on|off|enabled|disabled|working|running|sending|going|connected|active)\b))(?!\s+(?:just|only|merely|simply)\b)"
"""A word that negates the value after it ("isn't on", "not running", "never enabled"; never "not just", v6; v5 also a dialect's "cannae",
"isnae", a mid-clause "nah"/"nuh" and a copula's "no" before a value, "data saver's no on")."""

_LOCATIVE = r"(?!\s+(?:my|the|your|this|that|a|an|top|it|hold|its|his|her)\b)"
ON = rf"\bon\b{_LOCATIVE}|\benabled?\b|\bactiv(?:e|ated?)\b|\b(?:switched|turned|toggled|flipped) on\b|\bconnected\b|" \
     r"\bconnect\b|\brunning\b|\ballowed\b|\bpermitted\b|\blit(?: up)?\b|\b(?:is|'s) there\b|" \
     r"\bshowing\b(?!\s+(?:as\s+)?(?:off\b|on\b(?!\s+(?:my|the|your|this|that|a|an|top|it|its|his|her)\b)))|\bvisible\b|" \
     r"\bdisplayed\b|\bopen\b|\bticked\b|\bup and running\b"
OFF = r"\boff\b(?!\s+the\s+(?:cards|table|menu)\b)|\bdisabled?\b|\binactive\b|\bdeactivated?\b|\b(?:switched|turned|toggled|flipped|shut) off\b|" \
      r"\bdisconnected\b|\bdisconnect\b|\bstopped\b|\bgr[ae]y(?:ed)?(?: out)?\b|\bclosed\b|\bgone\b|\bdisappeared\b|" \
      r"\bvanished\b|\bhidden\b|\bunticked\b|\bunchecked\b"
ANAPHOR = re.compile(r"^[^.;]*?[,;—–]\s*(?:but |and |so )?(?:it|that)(?:'s| is| was| has| had)?(?:\s+(?:been|still|always|"
                     r"definitely|stayed|stays|remained|just))*\s+(?=\S)", _I)
"""A setting taken up again by "it" after a clause that read no state of it ("I haven't turned airplane mode off,
it's been on the whole time"): what "it" is said to be is the setting's state."""
PURPOSE = re.compile(r"\bto\s+(?!be\b|been\b|on\b|off\b)\w+", _I)
"""An infinitive between a setting's name and an on/off word ("no Wi-Fi to fall back on", "nothing for me to
turn on"): the word ends a purpose clause, it reads no state (not "seems to be on")."""
VALUE = re.compile(rf"(?P<neg>{NEG}\s+(?:\w+\s+){{0,2}})?(?:(?P<on>{ON})|(?P<off>{OFF}))", _I)
"""The first on/off word of a window, with a negation up to two words before it."""

ABSENT = re.compile(r"(?:\b(?:no|without|not any|not a single|not one)\b(?:\s+[\w-]+){0,2}|"
                    r"\b(?:don'?t|do not|doesn'?t|does not|can'?t|cannot|didn'?t|haven'?t|hasn'?t|have not|has not)\s+"
                    r"(?:\w+\s+)?(?:see|seen|have|had|show|find|get|got)\b(?:\s+[\w-]+){0,2})\s*$", _I)
"""A setting named as absent just before its name ("no VPN", "I don't see any little aeroplane")."""
ANOTHER = re.compile(r"\b(?:another|spare|second|other|extra|different|new|backup|replacement)\b", _I)
"""Absence of another one ("I don't have another SIM to test with") says nothing of the phone's own."""
ALTERNATIVES = re.compile(r"\b(?:on or off|off or on|enabled or disabled|disabled or enabled|one way or the other)\b", _I)
"""Both values named as alternatives ("on or off, which one?"): no claim."""

SITUATION_ON = re.compile(r"\b(?:rel(?:y|ies|ying|ied)|depend(?:s|ing|ed)?|count(?:s|ing)?|running|runs?|stuck|based|get(?:ting)? by|"
                          r"manag(?:e|es|ing)|living|live|surviving|(?:i'?m|i am|we'?re|we are|i'?ve been|i was)\s+(?:just |only |"
                          r"still |now )?)\s+on\b", _I)
"""The caller's situation with "on" ("I'm relying on mobile data", "I'm on my data"): the "on" says
what it uses, not that a switch is on."""

INTERMITTENT = re.compile(r"\bon and off\b|\boff and on\b|\bon/off\b|\bcomes? and goes?\b|\bin and out\b|"
                          r"\bcut(?:s|ting)? (?:in and )?out\b|\bdrop(?:s|ping|ped)? (?:out|off)\b|\bkeeps? \w+ing\b|"
                          r"\bevery (?:few|couple|now|so often)\b|\bby itself\b|\bon its own\b", _I)
"""How the problem comes and goes ("on and off all day", "keeps cutting out"): a symptom, not a switch read."""

SYMPTOM_OFF = re.compile(r"\b(?:stopped|stops|gone|disappeared|vanished|dead|dropped|drops|disconnect(?:ed|s)?)\b", _I)
"""Off words that say a service fails, not that its switch is off ("my data just stopped"), for
mobile data and Wi-Fi."""

DENIED_ACTION = re.compile(rf"{NEG}\s+(?:(?:think|believe|remember|recall)\s+(?:that\s+)?(?:i|we|anyone|anybody)\s+"
                           r"(?:ever\s+|have\s+|'ve\s+|had\s+)*)?(?:\w+\s+)?(?:turn|switch|toggl|touch|chang|set|put|enabl|disabl|activat|deactivat|"
                           r"mess|flip|play|use|using|used)\w*(?:\s+(?:on|off|with|about))?\s+(?:the\s+|my\s+|any\s+)?(?:\w+\s+)?$", _I)
"""An action the caller denies or a habit it has not, said before the setting ("I never turned
roaming on", "I don't use a VPN"): what it does not do, not what the phone shows."""

BEFORE_CHANGE = re.compile(r"^[^.;]*?\b(?:was|were|had been)\b[^.;]*?[,;]?\s*(?:but |and |so )?(?:i'?ve |i have |i )?"
                           r"(?:now|just )?(?:turned|switched|toggled|flipped|changed|put|set|fixed)\s+(?:it|that|them)\b", _I)
"""A state told as it was before the caller changed it ("airplane mode was on, I've turned it off now"): the
past, not what the phone shows."""

IN_MODE = re.compile(r"\b(?:in|(?P<out>(?:is|'s|was|are|now|still)\s+(?:\w+\s+)?out of))\s+(?:the\s+)?$", _I)
"""The phone "in" a mode ("in airplane mode"): the mode is on (off when negated)."""

SIM_UNREAD = re.compile(r"\b(?:can'?t|cannot|can not|won'?t|doesn'?t|does not|didn'?t|isn'?t able to|unable to|fails? to|isn'?t|is not)\s+"
                        r"(?:even\s+)?(?:detect(?:ing)?|reading|read|find|see|recogni[sz]e|pick up|register)\s+(?:the\s+|my\s+|a\s+)?$", _I)
"""The phone not reading the SIM, said before it ("It doesn't detect the SIM"): missing."""

VERB_BEFORE = re.compile(r"\b(?:(?:turned|switched|toggled|flipped|shut)\s+(?P<v>on|off)|(?P<w>enabled|disabled|activated|"
                         r"deactivated))\s+(?:the\s+|my\s+|your\s+)?(?:\S+\s+)?$", _I)
"""A past action before the setting's name ("I switched off the mobile data")."""

QUESTION_START = re.compile(r"^(?:(?:so|and|but|ok(?:ay)?|um+|uh+|well|right|hmm+|oh|wait|sorry)\b[,\s]*)*"
                            r"(?:is|are|was|were|do|does|did|can|could|would|will|should|shall|have|has|had|what|which|"
                            r"why|how|where|when|who|whose|am)\b", _I)
"""A sentence ending in "?" that starts like this asks; one that does not ("I guess it's off?") still claims,
unless it only guesses (``GUESS``)."""

INVERTED = re.compile(r"^(?:(?:so|and|but|ok(?:ay)?|um+|uh+|well|right|hmm+|oh|wait|sorry|also|just)\b[,\s]*)*"
                      r"(?:is|are|am|does|do|can|could|would|will|should|shall|must|isn'?t|aren'?t|doesn'?t)\s+"
                      r"(?:it|its|it's|this|that|there|i|you|we|they|he|she|my|your|the|a|an|any|anything|something|"
                      r"everything|mobile|data|roaming|wi-?fi|airplane|flight|vpn|sim|apn)\b", _I)
"""A sentence that starts with its verb before its subject asks, with or without a "?" (texting
style: "is roaming meant to be on for this"); not "did the VPN, done" (a report with its "I" left out)."""

GUESS = re.compile(r"\b(?:maybe|perhaps|possibly|might|could|wonder(?:s|ed|ing)?|guessing)\b", _I)
"""A "?" sentence with these words is a guess put to the agent ("Maybe the SIM is locked? Not sure."), no claim."""

NOT_A_CLAIM = re.compile(r"\b(?:will(?!\s+not)|'ll|shall|going to|gonna|(?<!n't )(?<!not )let me|only when|only if|as soon as|until|"
                         r"should i|shall i|do you want|want me to|could you|can you|would you|will you|how do i|"
                         r"how can i|try to|trying to|i'?d like to|i need to|please(?!\s+(?:note|be aware|know))|tell me|"
                         r"let me know|whether|want(?:s|ed)? to|would(?:n'?t)? like|rather|prefer(?!s|red|ring|\s+(?:[2345]g|lte)\b)|willing|accept|"
                         # what the caller needs, wants, hopes for or expects
                         r"(?<!card )(?<!sim )(?<!phone )(?<!it )(?:need(?:s|ed)?|want(?:s|ed)?)|wish\w*|hope|hopes|hoped|hopefully|hoping|expect\w*|require\w*|"
                         r"looking for|would love|'d love|"
                         # a supposition or a wonder
                         r"if|unless|in case|suppos\w*|imagine|wonder(?:s|ed|ing)?|any idea|do you (?:know|think|reckon)|"
                         # what would be, not what is
                         r"would(?!\s+not)|'d(?!\s+(?:say|guess|think|bet|reckon|wager|swear|put (?:money|my money|good money)))|"
                         r"meant to|ought to|"
                         # what would have been (a counterfactual), a thought about a topic, a demand
                         r"would(?:n'?t|\s+not)\s+have|'d\s+(?:not\s+|never\s+)?have\s+(?:thought|guessed|known|expected|"
                         r"imagined|realised|realized|noticed)|(?:thought|think|thinking)\s+(?:of|about)|settle for|"
                         r"put(?:ting)? up with|make do with|must|(?:has|have|'ve|'s) got to|got to be|ha(?:s|ve) to be)\b", _I)
REQUIREMENT = re.compile(r"\b(?:will|'ll|would|'d|won'?t|wouldn'?t|will not|is going to)\s+(?:\w+\s+)?do\b(?!\s+(?:it|that|this|the|a|an|my))", _I)
"""What would suffice ("only excellent speed will do", "nothing less won't do"): an expectation, no state."""
"""Where a claim's scope ends: what follows is a plan, a request, a wish or need, a supposition, or
what would be, not what the phone shows now ("I need the speed test to say excellent",
"I'd feel silly if airplane mode was on"). The words before it can still claim ("Roaming's on, I'll
leave it")."""

CORRECTION = re.compile(r"\bno\s*,?\s*wait\b|\bwait\s*,?\s*no\b|\bscratch that\b|\bor rather\b|"
                        r"\b(?:no|sorry)\s*,?\s*i mean\b|\bactually\s*,?\s*no\b|\bi mean\s*,?\s*no\b", _I)
"""A caller correcting itself mid-sentence ("data's on - no wait, it's the roaming", "off, scratch that"): what it
said before the correction is taken back."""
RELATIVE_ABILITY = re.compile(r"^\s*(?:that\s+|which\s+)?(?:i|we|you)\s+(?:can|could|would|'d|am able to|'m able to)\b", _I)
"""A relative clause of what the caller can do after a setting's name ("no Wi-Fi I can get on"): the word after it is
the caller's ability, not the setting's state."""
NEGATIVE_SUBJECT = re.compile(r"\b(?:nothing|none(?: of)?|not (?:one|a single|any)|no)\b(?:\s+[\w']+){0,5}\s*$", _I)
"""A negative quantifier as the subject before what is said of it ("Nothing I attach a photo to gets sent", "No
picture message I send goes out"): what follows is denied of every one."""

UNSURE = re.compile(r"(?:\bbut\b|\bthough\b|,|-)\s*(?:i'?m |i am )?not (?:(?:totally|completely|100%|a hundred percent) )?"
                    r"(?:sure|certain|positive)\b(?!\s+(?:if|whether|that|what|why|how|it|this|about))|"
                    r"\b(?:i )?(?:might|could) be wrong\b|\bif i remember (?:right|rightly|correctly)\b|\bdon'?t quote me\b|"
                    r"\bwho knows\b|\bwho can say\b", _I)
"""The caller's own doubt in a sentence ("I think my bill is paid but I'm not sure"): what it says there is a
guess where nothing was checked (``claims.clauses``; a report after a check still counts, ``hedged``)."""

POSSIBLE = re.compile(r"\b(?:might|may|could(?!\s+not))\b", _I)
"""What could be ("the VPN might be running"): a guess where nothing was checked, so no claim of a state
shown by no result; in a report after a check it is what the caller tells the agent it saw, and counts
(``claims.claims(..., hedged=True)``)."""

HABIT = re.compile(r"\b(?:usually|normally|typically|generally|always|never|used to|most of the time|until|till|rarely|seldom|"
                   r"hardly ever|often|sometimes|occasionally|every so often|now and then|from time to time|"
                   r"these days|(?:the )?last time|the time before|the other day)\b", _I)
"""What is usual, or the problem's history ("signal is usually great here", "pictures went through
fine until last week"): the whole clause says nothing of what the phone shows now."""

ABILITY = re.compile(r"\bi (?:really |just |simply )?(?:can'?t|cannot|can not|won'?t|mustn'?t|shouldn'?t|"
                     r"am not (?:allowed|able) to|'?m not (?:allowed|able) to|don'?t (?:want|dare) to) (?:\w+ )?"
                     r"(?:change|touch|turn|switch|toggle|do|reset|grant|pay|mess|enable|disable|connect|disconnect|"
                     r"restart|reboot)\b", _I)
"""What the customer can or may do ("I can't change the app permissions"): no state of the phone."""

NOT_TRIED = re.compile(rf"{NEG}\s+(?:\w+\s+)?(?:tried|attempted|checked|tested|looked|run|ran|measured|had a (?:go|look|chance))\b"
                       r"(?:(?:\s+[\w'-]+){0,6}?\s+(?:yet|since|so far|today|at all|again)\b(?:\s+(?:then|that \w+|the \w+))?|"
                       r"(?:\s+(?!(?:whether|if)\b)[\w'-]+){0,3})", _I)
"""A check the caller has not made ("I haven't tried sending a picture since", "havent tried anything
yet"): no reading; the words are taken out, what follows them can still claim."""

REPORTED = re.compile(r"(?:^|\b(?:my|his|her|our|their|someone|somebody|people|they|he|she|everyone|everybody|apparently)\b)"
                      r"(?P<subject>[\w\s'’-]{0,40}?)\s*\b(?:said|says|say|reckons?|reckoned|thinks?|thought|told me|tells me|"
                      r"suggested|mentioned|claims?|claimed|believes?|swears?|insists?|reckoning)\b", _I)
ANOTHERS_PHONE = re.compile(r"^[^.;]{0,60}?\b(?:her|his|their|its)\b(?!\s+(?:own\s+)?(?:word|opinion|view))", _I)
"""What another reports of their own phone ("my friend said her data saver was on"), not of the caller's: a report
with no such owner ("my son told me roaming is disabled") is the caller's claim, relayed."""
"""What someone else said or thinks: of their own phone ("My friend said her data saver was on", ``ANOTHERS_PHONE``)
their word, not the caller's reading of its phone; of the caller's ("my son told me roaming is disabled") the caller's
claim, relayed (issue 51's third pass). The phone's own words ("the screen says ...", "it says ...") and the caller's
("I think ...") are kept (``claims.clauses``)."""
SPEAKER_IS_PHONE = re.compile(r"\b(?:i|phone|screen|display|it|this|that|bar|app|settings?|result|test|check|menu|icon|"
                              r"notification|message|pop-?up|readout|thing|mobile|handset|device|toggle|switch|option|speed|line|account|bill|"
                              r"internet|network|connection|status|top|corner|light)\b|^\s*$", _I)
"""A speaker that is the phone or the caller itself (its words are a reading or a hedged claim)."""
CONTROL = re.compile(r"^\s*(?:option|setting|settings|app|button|toggle|menu|switch|section|page|tab)\b", _I)
"""A control named after a setting ("no data saver option"): not finding it says nothing of the setting."""

SIGNAL_NOT = re.compile(rf"{NEG}\s+(?:\w+\s+)?(?:(?P<top>excellent|amazing|brilliant|perfect|full|max(?:imum)?)|"
                        r"(?P<good>great|good|strong)|(?P<bad>bad|weak|poor|terrible|awful))\b", _I)
"""A signal word negated ("not great", "isn't bad"): about the other end of the scale, vaguely; short of
the top ("not full", "not perfect") is still good, vaguely."""

CONDITION = re.compile(r"^\s*(?:if|whether|unless|in case|once|when|whenever|after|before)\b", _I)
"""A clause that supposes something claims nothing."""

FRAME = re.compile(r"^\s*(?:when|after|before|once|the last time|last time)\s+(?:i|we|my \w+|the \w+|it)\s+"
                   r"(?:\w+\s+)?(?:looked|checked|saw|opened|went|restarted|rebooted|glanced|tried|peeked|had|did|"
                   r"got|turned|switched|toggled)\b[^,]*,\s*", _I)
"""A past frame before a report ("When I looked earlier, airplane mode was on"): the words after it
are what the caller says it saw."""

HEDGE_NEGATIONS = re.compile(r"\b(?:i'?m|i am) not (?:sure|certain|positive)\b|\bnot sure\b|\bi (?:don'?t|do not) know\b|"
                             r"\bno idea\b|\bno problems?\b(?!\s+(?:any ?more|any longer|now))|\bnot a problem\b|^\s*(?:no|nope|yes|yeah|yep)\s*[,.!]|"
                             r"\bno clue\b|\bnot that i know of\b", _I)
"""Negations that negate no setting ("I'm not sure, but...", "no problem with it", a leading "No,")."""

FILLER = re.compile(r"^\s*(?:(?:ok(?:ay)?|right|well|um+|uh+|so|oh|alright|hmm+|anyway|yes|yeah|yep)\b[,.!]?\s*|"
                    r"(?:no|nope|fine)\s*[,.!]\s*)+", _I)
"""Words that open a clause and say nothing about the phone ("Okay so", "Right,", "No,")."""

CLAUSE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+|\s*,?\s+\b(?:but|though|although|however|whereas|while)\b\s+", _I)
"""Where a claim's scope ends: a sentence, or a contrast ("X is off but Y is on")."""

SIGNAL_LEVELS = ("none", "poor", "fair", "good", "excellent")
BARS = {"one": 1, "a single": 1, "single": 1, "1": 1, "two": 2, "2": 2, "a couple of": 2, "couple of": 2, "three": 3,
        "3": 3, "four": 4, "4": 4, "five": 4, "5": 4}
"""Bars in the status bar and their level (the phone's own: 📶¹ Poor, 📶² Fair, 📶³ Good, 📶⁴ Excellent)."""
SIGNAL_NONE = re.compile(r"\b(?:no|zero|0|not a single|not one|without|(?:is|was)n'?t any|not any)\s+(?:\w+\s+)?(?:signal|bars?|service|reception|"
                         r"coverage)\b|\bzero\b|\bnothing\b(?!\s+(?:\w+\s+)?wrong)|\bnone\b|\bempty\b|crossed[- ]out|\bsos\b|"
                         r"emergency(?: calls?)? only|\bdead\b|\bno_service\b|\bnon-?existent\b|(?:don'?t|doesn'?t|do not|does not|can'?t|cannot|haven'?t|hasn'?t)\s+"
                         r"(?:have|get|got|see|find)\s+(?:any\s+|a single\s+|one\s+|even one\s+)?(?:\w+\s+)?"
                         r"(?:signal|bars?|service|reception)", _I)
SIGNAL_GONE = re.compile(r"^[^.,;]*?\b(?:is|was|'s|has|had|seems|looks)\s+(?:\w+\s+){0,2}(?:gone|vanished|disappeared)\b", _I)
"""The signal said to be gone, after its name ("the signal had completely vanished")."""
SIGNAL_BARS = re.compile(rf"\b({'|'.join(sorted(BARS, key=len, reverse=True))})\s+(?:\w+\s+)?bars?\b", _I)
SIGNAL_FULL = re.compile(r"\bcould(?:n'?t| not) be better\b|\bnever been better\b|\bfull\b|\ball (?:the |four |of the |\w+ )?bars\b|\bmax(?:imum)?\b|\bperfect\b|\bflawless\b", _I)
SIGNAL_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bexcellent\b", "excellent"), (r"\bgood\b", "good"), (r"\bfair\b", "fair"), (r"\bpoor\b", "poor"),
    (r"\b(?:strong|decent|solid|great)\b", "~good"), (r"\b(?:ok(?:ay)?|moderate|medium|average|so-so)\b", "~fair"),
    (r"\b(?:weak|bad|lousy|terrible|low|barely|patchy|spotty|awful)\b", "~poor"))
"""Signal words: an exact level, or an approximate one ("~good": within a level of it)."""

GENERATION = re.compile(r"\b([2345])\s?g\b|\b(lte)\b", _I)

SIM_STATES: tuple[tuple[str, str], ...] = (
    (r"\bpuk\b", "locked_puk"), (r"\bpin\b", "locked_pin"), (r"\blocked\b", "locked"),
    (r"\bno sim\b|\bnot (?:detected|inserted|recogni[sz]ed|found|there|in)\b|\bmissing\b|\bisn'?t (?:there|detected|in)\b|"
     r"\b(?:can'?t|cannot|doesn'?t|does not) (?:find|detect|read|see)\b|\babsent\b", "missing"),
    (rf"{NEG}\s+(?:\w+\s+)?(?:active|working|work)\b", "problem"),
    (r"\bactive\b|\bworking\b|\bworks\b|\bfine\b|\bok(?:ay)?\b|\bdetected\b|\brecogni[sz]ed\b|\bgood\b", "active"),
    (r"\bproblem\b|\berror\b|\bdead\b|\bbroken\b|\bfaulty\b|\binvalid\b", "problem"))

APN_STATES: tuple[tuple[str, str], ...] = (
    (rf"{NEG}\s+(?:\w+\s+)?(?:right|correct|fine|normal|ok(?:ay)?|set|filled)\b", "broken"),
    (rf"{NEG}\s+(?:\w+\s+)?(?:wrong|broken|empty|blank)\b", "ok"),
    (r"\bwrong\b|\bmessed up\b|\bblank\b|\bempty\b|\bbroken\b|\bmissing\b|\bincorrect\b|\binvalid\b|\bcorrupt\w*\b|"
     r"\bweird\b|\bstrange\b|\bnot set\b", "broken"),
    (r"\bfine\b|\bnormal\b|\bcorrect\b|\bright\b(?!\s+(?:now|away|there|here|after|before))|\bstandard\b|"
     r"\bok(?:ay)?\b|\bgood\b|\bfilled in\b|\bdefaults?\b|\bas (?:it|they) came\b|\buntouched\b|\bfactory\b", "ok"))

PERMISSION_NAMES = {"sms": r"\bsms\b(?! app)|\btext(?:ing)? permission\b", "storage": r"\bstorage\b"}
_GRANT = (r"(?:(?:has|have|having|got)(?!\s+(?:\w+ed|been|done|gone|made|set|put|to|tired|change|switch|turn|toggle|do|make|"
          r"grant|reset|press|give)\b)|allowed|granted|enabled|permitted|given|access)")
PERMISSION_MISSING = re.compile(rf"{NEG}\s+(?:\w+\s+){{0,2}}{_GRANT}\b|\b(?:no|without)\s+(?:\w+\s+){{0,2}}(?:permissions?|"
                                r"access|sms|storage)\b|\bmissing\b|\bdenied\b|\blacks?\b|\blacking\b|\bnothing is\b|"
                                r"\brevoked\b|\bremoved\b|\bblocked\b|(?<!n't )(?<!not )\bshort of\b", _I)
PERMISSION_GRANTED = re.compile(rf"\b{_GRANT}\b", _I)
"""A permission named as missing (a grant word negated, "no storage permission", "denied"), or granted."""

MMS_CANNOT = re.compile(rf"(?:\b(?:can'?t|cannot|can not|unable to)|{NEG})\s+(?:[\w']+\s+){{0,3}}(?:send|go|goes|work|deliver|get|"
                        r"come|be sent|going|sending|working|sent|delivered|through)\b|\bfail\w*\b|\bstuck\b|\bsits? there\b|\berror\b|"
                        r"\bbounc\w*\b|\bundeliver\w*\b|\brefus\w*\b|\b(?:won'?t|will not|doesn'?t|does not|not) let(?:ting)?\b", _I)
MMS_BROKEN = re.compile(rf"(?P<neg>{NEG}\s+(?:\w+\s+)?)?\b(?:broken|bust|out of action|kaput|down)\b", _I)
"""Picture messaging said broken, or not ("MMS isn't broken": it can send)."""
MMS_CAN = re.compile(r"\bcan send\b|\b(?:is|are|'s) able to send\b|(?<!\bto )\bsends?\b|\bsent\b|\bwent (?:through|out)\b|\bgo(?:es)? (?:through|out)\b|"
                     r"\bgoing through\b|(?<!\bto )(?<!\bmy )(?<!\bat )(?<!\bfor )(?<!\bof )(?<!\bfrom )(?<!\bthe )\bworks?\b|\bworking\b|\bdelivered\b|\bsuccess\w*\b|\bfine\b", _I)
"""Picture messaging said to work; an infinitive ("I need to send pictures", "it refuses to send") or the
noun ("for my work") is no report that it can."""

PAYMENT_NONE = re.compile(r"\b(?:no|not any|not a|never (?:got|had|received|seen)|(?:is|was)n'?t (?:a|any)|is not (?:a|any)|"
                          r"(?:don'?t|do not|haven'?t|have not|didn'?t) (?:\w+ )?(?:have|got|get|receive|see|seen)\s+(?:a|any))\s+"
                          r"(?:\w+\s+){0,2}(?:request|bill)s?\b|\bnothing(?:'s| has| is)? (?:been )?(?:came|arrived|there|to pay|owed|due|"
                          r"outstanding|requested|asked for|billed)\b|"
                          r"\b(?:don'?t|do not) owe\b", _I)
"""No payment request, said as one ("there's no payment request", "I don't owe anything"); not "I don't
have the bill in front of me"."""
PAYMENT_PAID = re.compile(r"\bpaid\b|\bpayment (?:went through|was made|has been made|is done|succeeded|completed|"
                          r"is complete|made)\b|\bsettled\b|\bcleared\b|\bmade the payment\b", _I)
PAYMENT_REQUEST = re.compile(r"\brequest\b|\basking me to pay\b|\bamount due\b|"
                             r"\bbill\b[^.!?]{0,12}\b(?:waiting|to pay|due|outstanding|pending)\b", _I)

LINE_STATES: tuple[tuple[str, str], ...] = (
    (rf"{NEG}\s+(?:\w+\s+)?(?:suspended|cut off|blocked|barred)\b", "active"),
    (rf"{NEG}\s+(?:\w+\s+)?(?:active|working|open)\b", "suspended"),
    (r"\bsuspend\w*\b|\bcut off\b|\bblocked\b|\bbarred\b|\bdeactivated\b|\bdisconnected\b|\bterminated\b|"
     r"\bshut off\b|\bclosed\b", "suspended"),
    (r"\bactive\b|\bworking\b|\bfine\b|\bok(?:ay)?\b|\bopen\b", "active"))

SPEED_STATES: tuple[tuple[str, str], ...] = (
    (rf"{NEG}\s+(?:\w+\s+)?(?:fast|quick|good|great|excellent)\b", "slow"),
    (rf"{NEG}\s+(?:\w+\s+)?(?:slow|bad)\b", "fast"),
    (r"\bslow\w*\b|\bpoor\b|\bterrible\b|\bawful\b|\bbad\b|\bcrawl\w*\b|\bsluggish\b|\bfair\b|\bdreadful\b|"
     r"\bhorrible\b|\bbarely\b|\buseless\b|\bsnail\b", "slow"),
    (r"\bfast\w*\b|\bexcellent\b|\bgreat\b|\bquick\w*\b|\bgood\b|\bspeedy\b|\bamazing\b|\bmuch better\b|"
     r"\bblazing\b|\bsuper\b", "fast"))


_ACTION = (r"(?:change|touch|do|doing|be doing|turn|switch|toggle|mess|reset|restart|reboot|grant|give|disable|enable|connect|"
           r"disconnect|pay|let|allow|fiddle|tamper|play|go near|go into|adjust|alter|modify|try|run|fool|manage|risk|"
           r"deal with|face|handle|authori[sz]e)")
_ME = r"(?:\b(?:i|we)(?:'m|'d|'ll|'ve| am| would| will| just| really| simply| honestly| truly| definitely| must| have)*\s+|^|[.!?,;:]\s*)"
"""The caller as the one who refuses (or a refusal with its "I" left out: "Can't do that, I'm driving"),
not a part that fails to do its job ("the volume buttons don't do anything")."""
REFUSES = re.compile(r"\b(?:won'?t|will not|don'?t want|do not want|not going to|refuse|rather not|prefer not|better not|"
                     r"not (?:allow(?:ed)?|permit(?:ted)?|supposed|meant|able to change))\b|" + _ME +
                     r"(?:can'?t|cannot|can not|mustn'?t|shouldn'?t|couldn'?t|won'?t|don'?t|do not|never|"
                     r"not (?:able|allowed|permitted|meant|supposed) to|not going to) (?:\w+ )?" + _ACTION + r"\b|"
                     r"\b(?:never (?:to )?(?:touch|change|mess|switch|turn)|"
                     r"(?:has|have|needs?) to stay|stays? (?:as it is|as is|the way|like (?:that|this))|off the table|"
                     r"\b(?:leav(?:e|ing)|let) (?:it|that|this|the [\w-]+(?: [\w-]+)?|[\w-]+ mode|[\w-]+ [\w-]+) (?:as it is|as is|alone|be|for now|for later|till later)|"
                     r"not about to|no way|not a chance|no chance|not on your life|not (?:changing|touching|doing|switching|turning|resetting|"
                     r"restarting|rebooting|granting|giving|allowing|enabling|disabling|toggling|paying|installing|connecting|"
                     r"disconnecting|fiddling|messing|adjusting)|"
                     r"not (?:comfortable|willing)|not something i (?:can|could|will|would|want to)|"
                     r"(?:prefer|rather|like) to (?:leave|keep) it|(?:leave|keep) it (?:as it is|as is|the way it is|"
                     r"like (?:that|this))|off[- ]limits|out of bounds|(?:a )?no[- ]go|not an option|forbidden|banned|"
                     r"hands off|(?:i'?ll|i will|i'?d|i would|let me) (?:have to )?(?:pass|skip)|pass on|skip (?:that|this|it)|"
                     r"give (?:that|this|it) a miss|count me out|not for me|(?:i'?d|i would) love to(?: help)?,? but|"
                     r"i wish i could|^(?:\W*(?:no|nope|nah|sorry|um+|hmm+|oh)[,!.]?\s+)*not (?:right )?(?:now|today|tonight|at the moment)\b|"
                     r"\bmaybe later\b|\b(?:can|could) (?:we|i) (?:do|leave) (?:that|it|this) (?:for )?later\b|"
                     r"(?:i'?d|i would) rather (?:you )?(?:didn'?t|not|leave)|let'?s not|not keen|(?:leave|let) (?:that|it|this) "
                     r"(?:alone|be)|a no from me|(?:that'?s|it'?s|that is|it is) not (?:possible|happening|an option)|"
                     r"don'?t trust (?:\w+ing|that|it|doing)|no thanks|no thank you|"
                     r"(?:i'?d|i would) sooner not|(?:absolutely|certainly|definitely|of course|really) not|"
                     r"(?:prefer|rather) (?:we |to )?(?:try|do) something else|can we (?:skip|try something else)|"
                     r"(?:don'?t|do not) like (?:\w+ing|to \w+)|instructions? (?:not|never) to|"
                     r"(?:said|says|told me|warned me|tells me) (?:not|never) to|"
                     # a refusal that concludes the sentence ("If I touch it, I lose my passwords, so no.")
                     r"\bso,?\s+(?:no|not(?:\s+[\w-]+){1,3}|i (?:can'?t|cannot|won'?t|will not|shan'?t)|"
                     r"i'?ll (?:leave|keep|skip|pass)[^.!?]{0,30}|that'?s a no)\s*(?=[.!?]|$)|"
                     r"(?:will|'ll) (?:just )?have to wait\b|(?:^|[.!?]\s+)not again\b|"
                     # a prohibition on the caller, or another's anger at the action as the refusal
                     r"\b(?:forbids?|forbade|forbidden|prohibits?|prohibited|bars?|barred|bans?|banned) (?:me|us) (?:from|to)\b|"
                     r"\bnot in a position to\b|"
                     r"\b(?:would|'d) (?:be (?:\w+ )?(?:livid|furious|angry|cross|upset|mad|annoyed|horrified)|go spare|kill me|"
                     r"have a fit|hit the roof|go mad|go mental)\b[^.!?]*\bif (?:i|we)\b|"
                     r"^\W*(?:can'?t|cannot|won'?t)\s*[.!]|"
                     r"^(?:(?:sorry|no|nope|oh|um+|well|honestly|afraid)[,!.]?\s+)*i (?:can'?t|cannot|won'?t|couldn'?t)"
                     r"(?:,|\.|!|;| sorry| right now| at the moment| today| now))", _I)
"""Words that refuse an asked action (not "can't find it": that is not being able to): an action
refused or not allowed ("I don't touch those settings", "I'm not able to do that"), the setting
declared out of bounds ("off-limits", "a no-go for me"), a pass ("I'll skip that one"), or a bare
"I can't, sorry"."""

# --- words of talk beyond claims: a refusal's motive, a second matter (``user_reasons``) ---------------

MOTIVE = re.compile(r"\b(?:(?:don'?t|do not|never) (?:really )?(?:trust|like)|scared|nervous|worried|frightened|wary|"
                     r"paranoid|terrified)\b", _I)
"""A refusal that is its own reason: distrust, dislike or fear ("Don't trust it")."""
EMPTY = frozenset(
    "i i'd i'm im i've ive me my we us our you your it its it's that this those these there the a an to of on in at "
    "for with about and or but so do doing does did just really honestly simply quite very now today rn right moment "
    "at the minute thing things stuff one bit any anything something phone settings setting option options one "
    "sorry thanks thank please no nope yes well oh um hmm okay ok dear actually though think guess go ahead "
    "change changing touch touching turn turning switch switching toggle toggling reset resetting restart restarting "
    "reboot rebooting grant granting disable disabling enable enabling mess messing try trying run running fiddle "
    "fiddling adjust adjusting let letting play playing pay paying connect connecting disconnect disconnecting "
    "have to want would will be can could app apps device mode handset mobile mine".split())
"""Words that say nothing beyond the refusal: pronouns, articles, fillers, the action's own verbs."""

LEAD = r"^\W*(?:(?:oh|ah|and|also|plus|um+|uh+|actually|oh and|so|sorry|dear|love|mate|ok(?:ay)?|right|well)[,!.]?\s+)*"
NEW_MATTER = (r"one (?:more|other|last)(?: thing| question| problem| issue)?|(?:another|other|second) (?:thing|problem|issue|"
               r"question|matter)|(?:random|quick|unrelated|different) (?:question|thing)|(?:something|one thing) else|"
               r"side note|separate(?:ly| issue| thing| matter)?|unrelated|on another note|whil(?:e|st) (?:i have you|"
               r"we'?re at it|i'?m here|i'?ve got you|we'?re talking|i remember)|i also have (?:an? )?(?:issue|problem)|"
               r"before i forget|that reminds me|not related|(?:slightly |a bit )?off[- ]topic|on (?:a|another) (?:different|separate) "
               r"note|(?:a |one )?(?:different|separate|new) (?:question|thing|matter|problem|issue)|p\.?s\.?|incidentally|"
               r"speaking of which|while i think of it|totally different")
"""Words that open a second matter ("One more: ...", "While I have you, ...", "Random question, but ...")."""
ASIDE = re.compile(LEAD + r"(?:also|plus|by the way|btw|" + NEW_MATTER + r"|and (?:my|the|dear|love))\b"
                    r"|\b(?:by the way|btw|as well|too)\W*$|\bsomething else (?:is|has been) bugging me\b|"
                    r"^\W*(?:oh|ah|um+|well)?[,!.]?\s*and\b[^,]{0,12},", _I)
"""A sentence put as an aside or a second matter ("Also, ...", "One more thing: ...", "..., by the way.")."""
SECOND_MATTER = re.compile(LEAD + r"(?:" + NEW_MATTER + r")\b", _I)
REQUEST_FIX = re.compile(r"\b(?:fix|repair|sort|block|stop|sort out|look at|help (?:me )?with)\b", _I)
"""A request that the agent mend something ("you can fix it?", "Can you block them for me?")."""
RUN_ON = re.compile(r"(?<=[a-z0-9])\s+(?=(?:Also|Actually|Random|Another|One more|By the way|Btw|BTW|While I have you|"
                     r"Whilst I have you|Oh,? and|Sorry,? one more|Plus|Separately|Unrelated|On another note|Side note|Before I forget|"
                     r"That reminds me|Not related|Off topic|Incidentally|Different question|PS)\b)")
"""A second matter opened with a capital after words with no stop ("... signal excellent Actually, another
thing: ..."): a new sentence."""

MALFUNCTION = re.compile(
    r"\b(?:weird|strange|funny|noise|noises|buzz\w*|jammed|stuck|shuts? (?:down|off)|disconnect\w*|dark|black|blank|"
    r"nothing (?:comes|came) out|logg?\w* me out|rearrang\w*|nonsense|gibberish|takes (?:ages|forever)|only works if|"
    r"(?:green|pink|white|black) lines?|closes|crash\w*|dead|broken|wrong|flicker\w*|themselves|by themselves)\b", _I)
"""What a part does when it fails, said outside an aside ("the phone shuts down at 30 percent", "a green line")."""

TROUBLE = re.compile(r"\b(?:wrong|terrible|awful|rubbish|horrible|weird|strange|odd|slow|loose|peeling|twice|late|dead|lost|"
                      r"black|blank|muffled|quiet|won'?t|doesn'?t|don'?t|can'?t|cannot|isn'?t|aren'?t|didn'?t|stopped|"
                      r"keeps?|bugg\w*|issues?|problems?|trouble|fix|broken|not working|by itself|on (?:its|their) own|"
                      r"missing|gone|useless|annoying|(?:goes|went) (?:off|up|down|dark))\b", _I)
"""Trouble words: said of a part in an aside, a complaint ("Also, my phone's clock is wrong every morning")."""

PHYSICAL = re.compile(r"\b(?:(?:gets|getting|is|runs|running|got) (?:really |very |super |so |too )?(?:hot|warm)|"
                       r"can'?t hear (?:\w+ ){0,2}(?:on|during) (?:the |my |phone |video )*calls?|"
                       r"(?:people|they|callers?) (?:can'?t|cannot|couldn'?t) hear me|"
                       r"overheat\w*|(?:restarts|reboots|shuts down|turns off) (?:by )?itself|"
                       r"keeps? (?:restarting|rebooting|shutting down|turning off)|"
                       r"(?:won'?t|doesn'?t|does not|will not) (?:even |really |properly )?(?:charge|turn on))\b", _I)
"""What the phone itself does when its hardware fails ("gets really hot", "restarts by itself")."""

APPS_OR_DATA = re.compile(
    r"\b(?:apps|games|phone)\b[^.!?]{0,30}\b(?:crash\w*|freez\w*|keeps? closing|force[- ]clos\w*)\b|"
    r"\b(?:photos|pictures|contacts|notes|files|music|songs|videos|apps|calendar entries|alarms)\b[^.!?]{0,20}"
    r"\b(?:disappeared|vanished|deleted|gone|missing|lost|wiped|duplicat\w*|corrupt\w*)\b", _I)
"""Apps in general crashing, or the customer's own data lost ("all my contacts are gone")."""


__all__ = ["REFUSES", "MALFUNCTION", "TROUBLE", "PHYSICAL", "APPS_OR_DATA", "ASIDE", "EMPTY", "LEAD", "MOTIVE", "NEW_MATTER", "REQUEST_FIX", "RUN_ON", "SECOND_MATTER", "ABILITY", "ABSENT", "ANAPHOR", "PURPOSE", "REPORTED", "SPEAKER_IS_PHONE", "ANOTHERS_PHONE", "ALTERNATIVES", "ANOTHER", "APN_STATES", "CONTROL", "NOT_TRIED", "SIGNAL_NOT", "BEFORE_CHANGE", "BARS", "CLAUSE_BREAK", "CONDITION", "FILLER", "FRAME", "GENERATION", "GUESS", "HABIT",
           "HEDGE_NEGATIONS", "INVERTED", "INTERMITTENT", "IN_MODE", "LINE_STATES", "DENIED_ACTION",
           "POSSIBLE", "UNSURE", "CORRECTION", "RELATIVE_ABILITY", "NEGATIVE_SUBJECT", "SIM_UNREAD", "SITUATION_ON", "SYMPTOM_OFF",
           "MMS_BROKEN", "MMS_CAN", "MMS_CANNOT", "NEG", "NOT_A_CLAIM", "OFF", "ON", "PAYMENT_NONE", "PAYMENT_PAID", "PAYMENT_REQUEST",
           "PERMISSION_GRANTED", "PERMISSION_MISSING", "PERMISSION_NAMES", "QUESTION_START", "SETTINGS", "SIGNAL_BARS",
           "SIGNAL_FULL", "SIGNAL_GONE", "SIGNAL_LEVELS", "SIGNAL_NONE", "SIGNAL_WORDS", "SIM_STATES", "SPEED_STATES", "SWITCHES",
           "VALUE", "VERB_BEFORE"]
