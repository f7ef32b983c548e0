"""What was lost between mouth and ear: word error rate (jiwer) and identifiers spoken vs heard.

Both texts go through one normalisation first: lower case, punctuation dropped, ``dash`` and
``hyphen`` kept as words, and every digit written as its word, one per digit ("555" and "5, 5,
5" and "five five five" all become ``five five five``), so a recogniser is not charged for
writing digits as numerals. Identifiers are read from the normalised words: a run of spelled
characters (digit words, single letters next to digits, dashes) joined into one string, then
classified: 10 digits a phone number, ``L`` + digits a line id, ``C``/``A`` + digits an account
(customer) id, another letter + digits an id, 4 or more bare digits a digit string. A spoken
identifier is lost when its exact form is not among the heard ones.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

IdKind = Literal["phone", "line_id", "account_id", "id", "digits"]
DIGIT_WORDS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_WORD_DIGIT: Final = {w: str(i) for i, w in enumerate(DIGIT_WORDS)} | {"oh": "0", "o": "0"}
# How a recogniser may write a spelled letter ("see" for C, "el" for L).
_LETTER_WORDS: Final = {"see": "c", "sea": "c", "el": "l", "ell": "l", "ay": "a", "bee": "b", "dee": "d"}
_DASHES: Final = frozenset({"dash", "hyphen", "minus"})


def normalise(text: str) -> list[str]:
    """Words for WER and identifier reading (see the module docstring)."""
    text = text.lower().replace("-", " dash ")
    text = re.sub(r"(\d)", r" \1 ", text)
    words = re.sub(r"[^a-z0-9' ]+", " ", text).split()
    return [DIGIT_WORDS[int(w)] if w.isdigit() else w.strip("'") for w in words if w.strip("'")]


def wer(spoken: str, heard: str) -> float:
    """Word error rate (jiwer) of heard against spoken after :func:`normalise`; 0 when both are
    empty, 1 per inserted word when only the spoken side is empty."""
    import jiwer  # lazy: optional extra tauray[voice]

    ref, hyp = " ".join(normalise(spoken)), " ".join(normalise(heard))
    if not ref:
        return float(len(hyp.split()))
    return float(jiwer.wer(ref, hyp or "<empty>")) if hyp else 1.0


class Identifier(BaseModel):
    """One identifier read from a text."""

    model_config = ConfigDict(frozen=True)
    kind: IdKind = Field(description="phone, line_id, account_id, id or digits.")
    value: str = Field(description="Normalised: upper-case letter prefix, then digits, no dashes.")


def _classify(chars: str) -> Identifier | None:
    letters = re.match(r"^[a-z]*", chars).group(0)
    digits = chars[len(letters):]
    if not digits.isdigit() or len(letters) > 2:
        return None
    if not letters:
        if len(digits) == 10:
            return Identifier(kind="phone", value=digits)
        return Identifier(kind="digits", value=digits) if len(digits) >= 4 else None
    if len(digits) < 3:
        return None
    kind: IdKind = "line_id" if letters == "l" else "account_id" if letters in ("c", "a") else "id"
    return Identifier(kind=kind, value=letters.upper() + digits)


def identifiers(text: str) -> list[Identifier]:
    """Identifiers in a text, in order of appearance."""
    words = normalise(text)
    found: list[Identifier] = []
    run: list[str] = []

    def close() -> None:
        # Letters lead an identifier; trailing or interior letters end it.
        chars = "".join(run)
        while chars and not chars[-1].isdigit():
            chars = chars[:-1]
        if chars and (ident := _classify(chars)):
            found.append(ident)
        run.clear()

    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word in _WORD_DIGIT and (word not in ("oh", "o") or run):
            run.append(_WORD_DIGIT[word])
        elif word in _DASHES and run:
            continue
        elif (len(word) == 1 or word in _LETTER_WORDS) and word.isalpha() and (nxt in _WORD_DIGIT) and not (
                run and run[-1].isdigit()):
            if run:
                close()
            run.append(_LETTER_WORDS.get(word, word))
        else:
            close()
    close()
    return found


class IdentifierErrors(BaseModel):
    """Spoken against heard identifiers of one utterance."""

    model_config = ConfigDict(frozen=True)
    spoken: tuple[Identifier, ...] = Field(description="Identifiers in the spoken text.")
    heard: tuple[Identifier, ...] = Field(description="Identifiers in the heard text.")
    lost: tuple[Identifier, ...] = Field(description="Spoken identifiers not heard exactly.")
    digits_spoken: int = Field(ge=0, description="Digits in the spoken identifiers.")
    digit_errors: int = Field(ge=0, description="Edit distance of the heard identifiers' digits to the spoken ones.")

    def count(self, kind: IdKind, *, lost: bool = False) -> int:
        return sum(1 for i in (self.lost if lost else self.spoken) if i.kind == kind)


def identifier_errors(spoken: str, heard: str) -> IdentifierErrors:
    """Which identifiers of the spoken text the heard text lost, and the digit edit distance."""
    from rapidfuzz.distance import Levenshtein  # lazy: installed with jiwer (optional extra tauray[voice])

    said, got = identifiers(spoken), identifiers(heard)
    heard_values = {i.value for i in got}
    lost = tuple(i for i in said if i.value not in heard_values)
    said_digits = "".join(re.sub(r"\D", "", i.value) for i in said)
    got_digits = "".join(re.sub(r"\D", "", i.value) for i in got)
    # Digits heard outside any identifier (a number cut short by a drop) still count as heard.
    if said_digits and not got_digits:
        got_digits = "".join(_WORD_DIGIT[w] for w in normalise(heard) if w in DIGIT_WORDS)
    return IdentifierErrors(spoken=tuple(said), heard=tuple(got), lost=lost, digits_spoken=len(said_digits),
                            digit_errors=int(Levenshtein.distance(said_digits, got_digits)) if said_digits else 0)
