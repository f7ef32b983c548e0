"""Text as compared for look-alikes: ``Verdict``, ``ｖｅｒｄｉｃｔ``, ``vеrdict`` (Cyrillic е)
and ``ver\u200bdict`` all read as ``verdict``, so a look-alike can neither hide a
voice from the parser nor slip past the renderer's marking.
"""

from __future__ import annotations

import re
import unicodedata

_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")

# Cyrillic and Greek letters that NFKC keeps but a reader takes for Latin ones (one to one, so
# positions survive): the "е" in "vеrdict" or "ЕND" is read as "e".
CONFUSABLES = str.maketrans(dict(zip(
    "аеосрхуіјѕԁһӏԛԝүкАВЕКМНОРСТХІЈЅҮαοριυνκτχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeocpxyijsdhlqwykABEKMHOPCTXIJSYaopiuvktxeABEZHIKMNOPTYX", strict=True)))


def fold(text: str) -> str:
    """``text`` as compared for look-alikes: NFKC, format characters removed, confusables mapped, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf").translate(CONFUSABLES).casefold()


def unescape(text: str) -> str:
    """JSON string escapes (``\\u0065``, ``\\"``) resolved, then :func:`fold`: a span that failed
    to decode as its reader would see it."""
    return fold(_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text).replace('\\"', '"'))


def plain_key(key: str) -> str:
    """A key as a look-alike compares: only its folded letters."""
    return re.sub(r"[^a-z]", "", fold(key))


__all__ = ["CONFUSABLES", "fold", "plain_key", "unescape"]
