"""What a caller says aloud: its phone's screen in words, its first words on the call, and a
last pass that leaves only what a voice can say.

The telecom phone tools answer with a screen's literal text (``Status Bar: 📶⁴ Excellent | 5G
| 📱 Data Enabled | 🔋 80%``, ``Label: value`` lines, Python reprs of records), and a task's
reason for call is written to the simulator ("You want to ...", "If the agent asks ..., do
...") or to the agent ("Then, compliment the user."). A person on the phone says neither. The
scripted voice caller (:mod:`tauray.actors.voice.policies`) speaks through three pure functions,
and :data:`~tauray.actors.voice.rules.VOICE_USER` tells a model caller the same in words:

* :func:`spoken_screen`: a phone tool's output as a caller reads it out. Icons are said as what
  they mean (the signal icon's superscript is its bars, the battery icon a percentage), ``|``
  and line breaks become a spoken list and sentences, ``Label: value`` lines "the label is
  value"; ``ON``/``OFF``, ``snake_case`` settings, URLs, percentages, units and record reprs
  become words. Every state and identifier stays (airplane mode, signal and bars, network,
  data, Wi-Fi, battery, VPN, APN values, errors); only glyphs and layout go. The rules come from
  every user tool of the installed τ² telecom domain run on real task states
  (tests/voice/test_spoken.py runs them all).
* :func:`spoken_opening`: the caller's first words, in the first person: a greeting with its
  name (when its known info gives one) and the sentences of the task's reason for call (else
  ticket, else instructions) that state its situation and request. Sentences that script the
  simulator go, by rule and never by task id: conditionals ("If the agent asks ..."),
  imperatives of conduct (mention, insist, do not, continue, compliment, ...), sentences that
  name the call's roles ("the agent", "the user") or stage it ("make up a story", "do not reveal
  it"). An imperative of a service (a verb the scenario's tools start with: create, cancel, ...)
  becomes a request ("Please create ..."); the rest turns from second (or a ticket's third)
  person to first ("You want to ..." -> "I want to ...").
* :func:`speakable`: a last line of defence for any text before synthesis: emoji, pictographs,
  modifier and format characters, markup (``**``, ``#`` headings, backticks, links, tables) and
  bullet glyphs are dropped or said in words; punctuation, identifiers and stop tokens stay.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from typing import Any, Final

from tauray.scenarios.conventions import STOP_TOKENS
from tauray.scenarios.model import Scenario

_ONES: Final = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen").split()
_TENS: Final = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    """``n`` (0 to 999) as a person says it ("eighty", "one hundred"); other numbers as digits."""
    if not 0 <= n <= 999:
        return str(n)
    if n >= 100:
        return f"{_ONES[n // 100]} hundred" + (f" {number_words(n % 100)}" if n % 100 else "")
    return _ONES[n] if n < 20 else _TENS[n // 10 - 2] + (f"-{_ONES[n % 10]}" if n % 10 else "")


def _listed(items: list[str]) -> str:
    """Items as said in a sentence: "a", "a and b", "a, b and c"."""
    items = [i for i in items if i]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _fold_bullets(lines: list[str], need_colon: bool) -> list[str]:
    """Bulleted lines folded into the line above them as a spoken list ("Permissions Granted:"
    + "- sms", "- storage" -> "Permissions Granted: sms and storage"); with ``need_colon``, only
    into a line that ends with a colon."""
    out: list[str] = []
    items: list[str] = []
    for line in [*lines, ""]:
        bullet = re.match(r"^\s*[-*•]\s+(.*)$", line)
        if bullet and out and (items or not need_colon or out[-1].rstrip().endswith(":")):
            items.append(bullet.group(1).strip().rstrip(".;,"))
            continue
        if items:
            out[-1], items = out[-1].rstrip() + " " + _listed(items) + ("" if need_colon else "."), []
        out.append(bullet.group(1) if bullet else line)
    return out[:-1]


# --- speakable: what no voice can say ------------------------------------------------------

# Characters no synthesiser says, by Unicode category: pictures (So: emoji, icons, box drawing),
# modifiers (Sk: skin tones, ^, `), format controls (Cf: zero-width joiner), private use,
# surrogates, unassigned; and the emoji variation selectors and keycap frame among the marks.
_UNSAYABLE: Final = frozenset({"So", "Sk", "Cf", "Co", "Cs", "Cn"})
_VARIATION: Final = re.compile("[\ufe00-\ufe0f\u20e3\U000e0100-\U000e01ef]")
_MARKUP: Final = (  # (pattern, what is said instead), in order
    (re.compile(r"```"), "\n"),
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # a link: its text
    (re.compile(r"</?[A-Za-z][^>]*>"), " "),  # HTML tags
    (re.compile(r"^\s*(?:[-*_=]\s*){3,}$|^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$", re.M), ""),  # rules
    (re.compile(r"^\s{0,3}#{1,6}\s+|^\s*>\s?", re.M), ""),  # headings, quotes
    (re.compile(r"^\s*[-*+•◦▪▫‣∙·●○■□►▶➤–—]\s+", re.M), ""),  # bullets
    (re.compile(r"(\*{1,3}|(?<!\w)_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # emphasis
    (re.compile(r"(\*{1,3}|(?<!\w)_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # nested emphasis
    (re.compile(r"`"), ""),
    (re.compile(r"\s*(?:->|=>|→|⇒|⟶)\s*"), " to "),
    (re.compile(r"#(?=[A-Za-z0-9])"), "number "),  # "order #W2378156"
)


def _say_char(ch: str) -> str:
    """One character as a voice has it: itself, a digit (a superscript), or a space."""
    category = unicodedata.category(ch)
    if category == "No":  # superscripts, circled and vulgar-fraction digits
        digit = unicodedata.digit(ch, None)
        return str(digit) if digit is not None else unicodedata.normalize("NFKC", ch).replace("\u2044", "/")
    if category in _UNSAYABLE or _VARIATION.match(ch) or (category == "Cc" and ch not in "\n\t\x00"):
        return " "
    return ch


def speakable(text: str) -> str:
    """``text`` with what no voice can say taken out: emoji and other pictographs, modifier and
    format characters, markdown and HTML markup, table pipes and bullet glyphs. Arrows become
    "to", ``#`` before an identifier "number"; line breaks become sentence pauses. Punctuation,
    identifiers (``user_1``, ``555-123-2002``, an e-mail address) and the user simulator's stop
    tokens are kept as they are."""
    kept = {f"\x00{i}\x00": token for i, token in enumerate(STOP_TOKENS)}
    for key, token in kept.items():
        text = (text or "").replace(token, key)
    for pattern, said in _MARKUP:
        text = pattern.sub(said, text)
    text = "".join(_say_char(ch) for ch in text)
    text = re.sub(r"\s*\|\s*", ", ", re.sub(r"[*#~^\\{}\[\]]", " ", text))
    text = re.sub(r"\.{2,}|…", ".", text)
    lines = [line.strip() for line in text.splitlines()]  # a line break: a pause, closed with a stop
    text = " ".join(line if re.search(r"[.!?:;,\x00]$", line) else line + "." for line in lines if line)
    for pattern, said in ((r"\(\s*\)", " "), (r"\s+", " "), (r"\s+([,.;:!?)])", r"\1"),
                          (r"([,;:])(?:\s*[,;:])+", r"\1"), (r"([.!?])\s*[,;:]+", r"\1"), (r"^[\s,;:.]+", "")):
        text = re.sub(pattern, said, text)
    for key, token in kept.items():
        text = text.replace(key, token)
    return text.strip()


# --- spoken_screen: a phone's output as a caller says it ----------------------------------

_ACRONYMS: Final = frozenset({"sms", "mms", "mmsc", "sim", "apn", "vpn", "pin", "puk", "url", "gps", "lte", "ssid"})
_NETWORK: Final = re.compile(r"^(?:\d\s?G|LTE)$", re.IGNORECASE)
_RECORD_ITEM: Final = re.compile(r"'([^']+)':\s*('[^']*'|[^,}]+)")
_STATE_WORDS: Final = frozenset({"on", "off", "no", "not", "enabled", "disabled", "connected", "disconnected"})
# icons of a status bar whose words do not say what they stand for ("📡 Enabled" is Wi-Fi)
_ICON_WORDS: Final = {"📡": "Wi-Fi", "🛜": "Wi-Fi", "📶": "signal", "🔋": "battery", "🪫": "battery"}


def _setting_words(token: str) -> str:
    """A ``snake_case`` setting value as words ("4g_5g_preferred" -> "4G 5G preferred"); an
    identifier with a bare number in it ("user_1") is left as written."""
    parts = token.split("_")
    if any(p.isdigit() for p in parts):
        return token
    return " ".join(p.upper() if p in _ACRONYMS or re.fullmatch(r"\d+g", p) else p for p in parts)


def _record_words(text: str, bracket: bool = False) -> str:
    """Python reprs of records, enums and lists as words: ``{'protocol': 'OpenVPN'}`` ->
    "protocol OpenVPN" (in brackets with ``bracket``), ``['sms', 'storage']`` -> "sms and storage"."""

    def record(m: re.Match[str]) -> str:
        said = ", ".join(f"{_setting_words(k)} {v.strip().strip(chr(39))}" for k, v in _RECORD_ITEM.findall(m[0]))
        return (f"({said})" if bracket else said) if said else " "

    def listing(m: re.Match[str]) -> str:
        try:
            values = ast.literal_eval(m[0])
        except (ValueError, SyntaxError):
            return m[0]
        return _listed([str(v) for v in values]) if isinstance(values, list) else m[0]

    text = re.sub(r"<[A-Za-z_][\w.]*:\s*'([^']*)'>", r"\1", text)  # <PerformanceLevel.POOR: 'poor'>
    return re.sub(r"\[[^\[\]]*\]", listing, re.sub(r"\{[^{}]*\}", record, text))


def _percent(m: re.Match[str]) -> str:
    value = float(m[1])
    return (number_words(int(value)) if value.is_integer() else m[1]) + " percent"


_WORDS: Final = (  # (pattern, what a caller says), in order, after records are words
    (re.compile(r"\bhttps?://([^\s,;)]+)"),  # a URL: its address, dots and slashes said
     lambda m: re.sub(r"\s+", " ", m[1].rstrip("/.").replace(".", " dot ").replace("/", " slash ")
                      .replace(":", " colon "))),
    (re.compile(r"(?<![A-Za-z0-9])'([^'\n]+?)'(?![A-Za-z0-9])"), r"\1"),  # quoted names
    (re.compile(r"(\d+(?:\.\d+)?)\s?%"), _percent),
    (re.compile(r"(?<![\d.])(\d+)\.(\d+)(?!\d|\.\d)"),  # 275.00 -> 275, 27.50 -> 27.5
     lambda m: m[1] + ("." + m[2].rstrip("0") if m[2].rstrip("0") else "")),
    (re.compile(r"\bMbps\b"), "megabits per second"),
    (re.compile(r"\bKbps\b"), "kilobits per second"),
    (re.compile(r"(\d)\s*USD\b"), r"\1 dollars"),
    (re.compile(r"\bON\b"), "on"),
    (re.compile(r"\bOFF\b"), "off"),
    (re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b"), lambda m: _setting_words(m[0])),
    (re.compile(r"\b(" + "|".join(sorted(_ACRONYMS)) + r")\b"), lambda m: m[1].upper()),
    (re.compile(r"(\w*)\(\)"), r"\1"),  # reset_apn_settings() -> its words
    (re.compile(r"\.{2,}|…"), "."),
)


def _phrase(text: str) -> str:
    """One line of a screen in words (lines, lists and labels are laid out by the caller)."""
    text = _record_words(text)
    for pattern, said in _WORDS:
        text = pattern.sub(said, text)
    return text.strip()


def _plain(label: str) -> str:
    """A screen label in running speech: lower case but for acronyms and names with inner
    capitals ("SIM Card Status" -> "SIM card status"; "Wi-Fi" stays)."""
    return " ".join(w if sum(c.isupper() for c in w.strip("()")) > 1 or (w.strip("()").isupper() and len(w) > 1)
                    else w.lower() for w in label.split())


def _sentence(text: str) -> str:
    """``text`` with a capital first letter and a closing full stop."""
    text = re.sub(r"^[\s.,;:]+|[\s,;:]+$", "", text)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if re.search(r"[.!?][)'\"]?$", text) else text + "."


def _label_value(label: str, value: str) -> str:
    """A ``Label: value`` line as a sentence."""
    said, plain = _phrase(value).rstrip("."), _plain(label)
    lower = said.lower()
    titled = all(w[0].isupper() or w[0].isdigit() for w in re.sub(r"\([^)]*\)", " ", label).split())
    if label.lower().endswith(" for app"):  # "Status for App: messaging"
        return _sentence(f"{plain[: -len(' for app')]} for the {said} app")
    if label.endswith(" to"):  # "APN settings set to: internet"
        return _sentence(f"{plain} {said}")
    if lower in ("on", "off") and titled:
        return _sentence(f"{plain} is {lower}")
    head, _, last = plain.rpartition(" ")
    if lower in ("yes", "no") and head and last in ("enabled", "connected", "active", "allowed", "available"):
        return _sentence(f"{head} is {'' if lower == 'yes' else 'not '}{last}")
    if lower == "not set" and titled:
        return _sentence(f"the {plain} is not set")
    if not titled or plain.endswith("ed") or len(said.split()) > 3 or re.search(r"[,.]|^(?:none|no|yes)\b", lower):
        return _sentence(f"{plain}: {said}")
    plural = plain.endswith("s") and not plain.endswith(("ss", "status", "us"))
    return _sentence(f"the {plain} {'are' if plural else 'is'} {said}")


def _indicator(item: str) -> tuple[str, str]:
    """One status-bar indicator as (kind, words): kind is 'signal', 'network' or 'other'."""
    glyphs = "".join(ch for ch in item if not (ch.isascii() and (ch.isalnum() or ch in " %.-'")))
    words = speakable("".join(ch for ch in item if ch not in glyphs)).strip(" .")
    icon = next((w for g, w in _ICON_WORDS.items() if g in glyphs), "")
    bars = next((unicodedata.digit(ch) for ch in glyphs if unicodedata.category(ch) == "No"
                 and unicodedata.digit(ch, None) is not None), None)
    plain = _plain(_phrase(words))
    if _NETWORK.match(words):
        return "network", words.upper().replace(" ", "")
    if icon == "battery" or re.fullmatch(r"\d+%", words):
        return "other", f"the battery at {_phrase(words)}"
    if bars is not None:
        return "signal", f"{words.lower()} signal with {number_words(bars)} bar{'' if bars == 1 else 's'}"
    if icon == "Wi-Fi":
        return "other", f"Wi-Fi {plain}"
    if not set(plain.lower().split()) & _STATE_WORDS:  # a mode shown only while it is on
        return ("signal", f"{plain} signal") if icon == "signal" else ("other", f"{plain} on")
    return ("signal" if "signal" in plain.lower() else "other"), plain


def _status_bar(text: str) -> str:
    """A status bar (indicators between ``|``) as one sentence a caller says."""
    said: list[str] = []
    last = ""
    for kind, words in (_indicator(i) for i in text.split("|") if i.strip()):
        if kind == "network" and last == "signal":
            said[-1] += f" on {words}"
        elif words:
            said.append(words if kind != "network" else f"a {words} network")
        last = kind
    return f"At the top of my screen I see {_listed(said)}." if said else "The top of my screen shows nothing."


def _screen_line(line: str) -> str:
    """One line of a phone tool's output as what a caller says."""
    line = line.strip()
    label, colon, value = line.partition(":")
    if colon and label.strip().lower() == "status bar":
        return _status_bar(value)
    error = re.match(r"^(?:Error|ERROR)\s*[:.]\s*(.*)$", line)
    if error:
        said = _sentence(_phrase(error[1]))
        return f"It shows an error: {said[:1].lower()}{said[1:]}"
    field = re.match(r"^([A-Z][\w\-/ ]*(?:\([^)]*\))?[\w\- ]*?):\s+(\S.*)$", line)
    if field and len(field[1].split()) <= 7:
        return _label_value(field[1].strip(), field[2])
    return " ".join(_sentence(_first_person(s)) for s in re.split(r"(?<=[.!?])\s+", _phrase(line)) if s.strip())


def spoken_screen(text: str) -> str:
    """A phone tool's output as a caller says it down the line: the same facts (states, levels,
    values, identifiers, errors), in words, with no glyph, pipe or line break left."""
    text = str(text or "").strip()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):  # a JSON record: its fields as words
        text = ", ".join(f"{_setting_words(str(k))} {v}" for k, v in parsed.items())
    elif isinstance(parsed, list):
        text = _record_words(repr(parsed))
    said = " ".join(s for s in (_screen_line(line) for line in _fold_bullets(text.splitlines(), True)) if s)
    return speakable(said) or "The phone shows nothing."


# --- spoken_opening: the caller's first words -------------------------------------------------

# Openers that make a sentence a contingency for the simulator to follow, not what a caller
# says when it picks up (in the tasks each one opens a script step).
_CONDITIONAL: Final = re.compile(
    r"^(?:if|when|whenever|unless|once|even if|in case|only if|only after|before|after|halfway|"
    r"in the middle|under no circumstances|at the end of the)\b", re.IGNORECASE)
# Imperatives of conduct: how to behave on the call, never what the caller wants done.
_CONDUCT: Final = frozenset(
    "mention tell say ask insist make be do don't dont never always continue provide complain compliment "
    "thank greet praise end accept refuse agree admit deny reveal repeat respond reply answer wait remember "
    "follow stay express pretend act consider avoid start begin stop hang volunteer note".split())
# Words that, anywhere in a sentence (or a bracketed aside), stage the call rather than state it.
_STAGING: Final = re.compile(
    r"\bthe (?:service |customer service |human |live )?(?:agent|user|customer|assistant|simulator)s?\b|"
    r"\b(?:agent|assistant) (?:message|says|asks|tells)\b|\bconversation\b|\bmake up\b|\bpretend\b|"
    r"\breveal\b|\bmeant to test\b|\bthis is incorrect\b|\btool calls?\b|\binstructions?\b|"
    r"\bmention\b|\binsist\w*\b|\bmake sure\b|\bbe sure\b|\binteracting with\b", re.IGNORECASE)
# Services callers ask for (with the first words of the scenario's own tools, but for these
# that are no verb: "can_send_mms", "think").
_SERVICE_VERBS: Final = frozenset(
    "add buy cancel change check create delete downgrade exchange fix get keep mark modify move push refund "
    "remove reset return send set switch transfer turn update upgrade use".split())
_NOT_VERBS: Final = frozenset({"can", "is", "has", "think", "assert"})
_CONNECTOR: Final = re.compile(r"^(?:(?:first|then|also|and|so|now|finally|lastly|additionally|next)\b,?\s*)+",
                               re.IGNORECASE)
_LEADING_PHRASE: Final = re.compile(r"^(?:for|from|in|on|with)\b[^,]{1,80},\s*", re.IGNORECASE)
# a sentence that stops on a word no sentence ends with was cut off in the task's text
_UNFINISHED: Final = re.compile(r"\b(?:the|a|an|to|and|or|of|for|with|my|your)\W*$", re.IGNORECASE)
_CALLER_NAME: Final = re.compile(r"\b(?:You are|Your name is|You name is|My name is|I am)\s+"
                                 r"([A-Z][a-z]+(?:[ -][A-Z][a-z]+)+)")
# the second person as the caller says it of itself, longest first
_FIRST_PERSON: Final = (("you're", "I'm"), ("you've", "I've"), ("you'd", "I'd"), ("you'll", "I'll"),
                        ("you are not", "I am not"), ("you aren't", "I'm not"), ("you are", "I am"),
                        ("you were", "I was"), ("you weren't", "I wasn't"), ("are you", "am I"),
                        ("yourselves", "ourselves"), ("yourself", "myself"), ("yours", "mine"), ("your", "my"))
# the words before "you" that make it an object ("told you", "for you"): "me", not "I"
_OBJECT_BEFORE: Final = frozenset(
    "to for with from of at about by on in into onto upon toward towards without against behind like "
    "help helps helped tell tells told give gives gave allow allows allowed let lets ask asks asked "
    "upgrade upgrades cost costs caused causes cause compensate compensates refund refunds save saves "
    "offer offers offered send sends sent provide provides charge charges charged call calls called "
    "transfer connect contact contacted thank remind show shows showed assist assists book get make made "
    "bring take keep see hear find reach pay paid owe owes".split())


def _sentences(text: str) -> list[str]:
    """``text`` split into sentences: at a full stop, question or exclamation mark or semicolon
    that a capital (or a digit, quote, bracket or symbol) follows, at a run of spaces before a
    capital, and at every line break; abbreviations ("i.e.") end none."""
    text = re.sub(r"\b(i\.e|e\.g|etc|vs|Mr|Mrs|Ms|Dr|St)\.", lambda m: m[1].replace(".", "\x01") + "\x01", text,
                  flags=re.IGNORECASE)
    parts = (p.replace("\x01", ".").strip() for line in text.splitlines()
             for p in re.split(r"(?<=[.!?;])\s+(?=[A-Z0-9'\"(#$-])|\s{2,}(?=[A-Z])", line.strip()))
    return [p for p in parts if p.strip(" .;")]


def _first_person(sentence: str) -> str:
    """A sentence addressed to the simulator ("You want ...", "your order") or written about the
    caller by an operator ("User needs to ...") in the caller's own first person."""
    verbs = {"needs": "need", "wants": "want", "wishes": "wish", "is": "am", "has": "have", "asks": "ask"}
    s = re.sub(r"^(?:The )?(?:User|Customer)\s+(needs|wants|would like|wishes|is|has|asks)\b",
               lambda m: "I " + verbs.get(m[1], m[1]), sentence)
    if s != sentence:  # an operator's note: its "their" is the caller's
        s = re.sub(r"\bthemselves\b", "myself", re.sub(r"\btheir\b", "my", s))
    s = re.sub(r"^The previous (?:discussion|conversation|call) was about\b", "Earlier we talked about", s)
    s = re.sub(r"^You((?: (?!(?:when|what|where|how|why|if|whether|that|which|who)\b)[a-z]+){1,2}) (is|was|has)\b",
               r"My\1 \2", s)  # "You mobile data is": a typo for "Your"
    s = re.sub(r"\s+>\s+", " over ", s)  # a preference order, "battery > USB"
    for second, first in _FIRST_PERSON:
        s = re.sub(rf"\b{second}\b", lambda m, first=first: first if m[0][0].islower() or first[0] == "I"
                   else first[0].upper() + first[1:], s, flags=re.IGNORECASE)

    def you(m: re.Match[str]) -> str:  # "me" right after a verb or preposition that takes it, else "I"
        before = re.search(r"([A-Za-z']+)\s+$", m.string[: m.start()])
        return "me" if before and before[1].lower() in _OBJECT_BEFORE else "I"

    return re.sub(r"^my\b", "My", re.sub(r"\byou\b", you, s, flags=re.IGNORECASE))


def _said(sentence: str, services: frozenset[str]) -> str:
    """One sentence of the task as the caller says it, or "" when it scripts the simulator."""
    sentence = re.sub(r"\s*\(([^()]*)\)", lambda m: "" if _STAGING.search(m[1]) else m[0],  # staging asides
                      _record_words(sentence, bracket=True)).strip()
    body = _CONNECTOR.sub("", sentence).strip()
    lead = _LEADING_PHRASE.match(body)
    head = body[lead.end():] if lead else body
    before = sentence[: len(sentence) - len(head)]
    first = (re.match(r"[A-Za-z']+", head) or [""])[0].lower()
    if not head.strip(" .;") or _UNFINISHED.search(head) or _STAGING.search(sentence) or \
            _CONDITIONAL.match(body) or _CONDITIONAL.match(head):
        return ""
    if re.match(r"try to\s+", head, re.IGNORECASE):
        return _first_person(before + "I'd like to " + re.sub(r"^try to\s+", "", head, flags=re.IGNORECASE))
    if first == "request":
        return _first_person(before + "I'd like " + head[len("request "):])
    if first in _CONDUCT:
        return ""
    if first in services:  # an imperative of a service: the caller asks for it
        return _first_person(before + "please " + head[0].lower() + head[1:])
    return _first_person(sentence)


def opening_source(scenario: Scenario) -> str:
    """The words the caller's opening is made of: the task's reason for call, else its ticket,
    else its instructions (the text the text-mode scripted user reads out)."""
    return scenario.user.reason_for_call or scenario.ticket or scenario.user.instructions or ""


def caller_name(scenario: Scenario) -> str | None:
    """The caller's name, when its known info gives one ("You are John Smith ...")."""
    match = _CALLER_NAME.search(scenario.user.known_info or "")
    return match[1] if match else None


def spoken_opening(scenario: Scenario) -> str:
    """The caller's first words: a greeting with its name (when known) and, in the first person,
    the sentences of its task that say what happened and what it wants; none that scripts the
    simulator. Identifiers are kept as written (the policy spells them)."""
    tools = {t.name.split("_")[0] for t in (*scenario.agent_tools, *scenario.user_tools)}
    services = frozenset(_SERVICE_VERBS | (tools - _NOT_VERBS - _CONDUCT))
    said = ""
    for source in (scenario.user.reason_for_call, scenario.ticket, scenario.user.instructions):
        kept = (_said(s, services) for s in _sentences("\n".join(_fold_bullets((source or "").splitlines(), False))))
        said = " ".join(_sentence(s) for s in kept if s.strip(" .;"))
        if said:
            break
    name = caller_name(scenario)
    return speakable(f"Hi{f', this is {name}' if name else ''}. {said or 'I need some help, please.'}")


__all__ = ["caller_name", "number_words", "opening_source", "speakable", "spoken_opening", "spoken_screen"]
