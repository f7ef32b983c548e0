"""Identifiers on a phone call, for the reference policies of a voice cell: which ones the
caller can say (its task's words), and what a listener made of them in recognised text.

A caller spells an identifier one character at a time ("u, s, e, r, underscore, 1"); a
recogniser writes that back in many ways ("U, S, E, R, underscore, 1.", "555-123-2002",
"five five five ..."). :func:`heard_runs` joins spelled characters back into candidate
identifiers; :func:`heard_phones` reads phone numbers with the channel's own identifier
reader (:mod:`tauray.actors.voice.metrics`). Nothing here knows what the caller meant: a
policy that acts on these acts on what it heard.
"""

from __future__ import annotations

import re
from typing import Final

from tauray.actors.voice.metrics import identifiers
from tauray.actors.voice.rules import IDENTIFIER, SYMBOLS
from tauray.scenarios.model import Scenario

_NUMBER_WORDS: Final = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine".split())} | {"oh": "0"}
_WORD_SYMBOLS: Final = {word: symbol for symbol, word in SYMBOLS.items()} | {"hyphen": "-", "minus": "-"}
# A letter's name as a recogniser writes it ("you, s, e, r" for "u, s, e, r"): the letter, where it
# stands beside another spelled character; the same word in a sentence stays a word.
_LETTER_NAMES: Final = {
    "ay": "a", "bee": "b", "be": "b", "see": "c", "sea": "c", "cee": "c", "dee": "d", "ee": "e", "eff": "f",
    "gee": "g", "jee": "g", "aitch": "h", "eye": "i", "jay": "j", "kay": "k", "el": "l", "ell": "l", "em": "m",
    "en": "n", "pee": "p", "pea": "p", "cue": "q", "queue": "q", "are": "r", "ar": "r", "ess": "s", "es": "s",
    "tee": "t", "tea": "t", "you": "u", "vee": "v", "ex": "x", "why": "y", "zed": "z", "zee": "z"}
# Words, single digits, and the symbols a recogniser writes inside an identifier ("555-123",
# "user_1"); a contraction is one word ("It's" is no spelled "s"); other punctuation ("U.S.E.R.", a
# sentence's full stop) only separates.
_SPELLED_HYPHEN: Final = re.compile(r"(?<=[A-Za-z])-|-(?=[A-Za-z])")
_TOKEN: Final = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d|[@_-]")


def caller_identifiers(scenario: Scenario) -> list[str]:
    """The identifiers the caller of ``scenario`` can say, in order: those in what it opens with
    and those it knows (its phone number, an account or user id)."""
    words = " ".join(t for t in (scenario.user.reason_for_call or scenario.ticket or scenario.user.instructions,
                                 scenario.user.known_info) if t)
    return list(dict.fromkeys(m.group(0) for m in IDENTIFIER.finditer(words)))


def phone_of(ids: list[str]) -> str | None:
    """The first phone number (ten digits, written with or without separators) among ``ids``."""
    return next((i for i in ids if len(re.sub(r"\D", "", i)) == 10 and not re.search(r"[A-Za-z]", i)), None)


def written_like(digits: str, model: str) -> str:
    """``digits`` (a phone number heard) written with the separators of ``model`` (the form the
    task's data uses, e.g. 555-123-2002); as they are when the lengths differ."""
    if len(re.sub(r"\D", "", model)) != len(digits):
        return digits
    it = iter(digits)
    return "".join(next(it) if ch.isdigit() else ch for ch in model)


def heard_phones(text: str) -> list[str]:
    """The phone numbers (ten digits) in recognised text, as digit strings."""
    return [i.value for i in identifiers(text) if i.kind == "phone"]


def heard_runs(text: str) -> list[str]:
    """Candidate identifiers in recognised text: runs of spelled characters (single letters,
    digits, number words, symbol words, a letter's name beside another spelled character:
    "you, s, e, r") joined, with at least one digit; a word next to a symbol word joins too
    ("user underscore one" -> "user_1")."""
    raw = _TOKEN.findall(text)
    tokens = [_NUMBER_WORDS.get(t.lower(), _WORD_SYMBOLS.get(t.lower(), t)) for t in raw]
    spelled = [len(t) == 1 for t in tokens]
    tokens = [_LETTER_NAMES[t.lower()] if t.lower() in _LETTER_NAMES
              and ((i and spelled[i - 1]) or (i + 1 < len(tokens) and spelled[i + 1])) else t
              for i, t in enumerate(tokens)]
    symbols = set(SYMBOLS) | set(_WORD_SYMBOLS.values())
    runs: list[str] = []
    current: list[str] = []

    def close() -> None:
        joined = "".join(current).strip("".join(symbols))
        if len(joined) >= 2 and any(ch.isdigit() for ch in joined):
            runs.append(joined)
            # a recogniser writes spelled letters with hyphens ("S-E-R", "Y-A-X-4"), as it writes a
            # spoken dash: both readings are what was heard (a dash between digits stays one)
            if (letters := _SPELLED_HYPHEN.sub("", joined)) != joined:
                runs.append(letters)
        current.clear()

    for i, token in enumerate(tokens):
        beside_symbol = (i + 1 < len(tokens) and tokens[i + 1] in symbols) or (i and tokens[i - 1] in symbols)
        if len(token) == 1 or token in symbols or (token.isalpha() and beside_symbol):
            current.append(token)
        else:
            close()
    close()
    return runs


def as_written(heard: str, like: str) -> str:
    """A heard identifier in the letter case of the value it stands for (speech has no case)."""
    if like.islower():
        return heard.lower()
    if like.isupper():
        return heard.upper()
    return heard


def closest(candidates: list[str], value: str) -> str | None:
    """The heard candidate nearest to ``value`` (edit distance, case aside), or None without any:
    the one a listener would take for it, right or wrong."""
    if not candidates:
        return None
    from rapidfuzz.distance import Levenshtein  # lazy: installed with jiwer (optional extra tauray[voice])

    return min(candidates, key=lambda c: (Levenshtein.distance(c.lower(), value.lower()), candidates.index(c)))


__all__ = ["as_written", "caller_identifiers", "closest", "heard_phones", "heard_runs", "phone_of", "written_like"]
