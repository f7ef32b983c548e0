"""The one normaliser: text as the parser hears it, and as the renderer marks it.

``Verdict``, ``ｖｅｒｄｉｃｔ``, ``vеrdict`` (Cyrillic е), ``ver\\u200bdict``,
``\\u0076erdict``, ``ᴠᴇʀᴅɪᴄᴛ`` (small capitals), ``v̲e̲r̲d̲i̲c̲t̲`` (combining
underlines) and ``VERDİCT`` all fold to ``verdict``. The parser folds the prose
of a reply with :func:`unescape` before looking for verdict text; the renderer
folds the record with :func:`fold_map`, the same function, which also says
where each folded character came from, so whatever the parser would hear in a
quote of the record is exactly what the renderer marks there.
"""

from __future__ import annotations

import re
import unicodedata

# Letters that NFKC keeps but a reader takes for Latin ones: Cyrillic, Greek, Latin small capitals,
# Lisu (Fraser) capitals, dotless i. The "е" in "vеrdict", the "ᴇ" in "ᴇɴᴅ", the "ꓰ" in "ꓰꓠꓓ" read as "e".
CONFUSABLES = str.maketrans(dict(zip(
    "аеосрхуіјѕԁһӏԛԝүкАВЕКМНОРСТХІЈЅҮαοριυνκτχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢı"
    "ꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ",
    "aeocpxyijsdhlqwykABEKMHOPCTXIJSYaopiuvktxeABEZHIKMNOPTYX"
    "abcdefghijklmnoprstuvwyzi"
    "BPDTGKJCZFMNLSRVHWXYAEIOU", strict=True)))
_SPECIAL = re.compile(r'[^\x00-\x7f]|\\u[0-9a-fA-F]{4}|\\"')
_DROPPED = frozenset(("Cf", "Mn", "Me"))  # format characters, combining marks (underlines, overlays)


def _fold_char(ch: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKC", ch):
        if unicodedata.category(c) not in _DROPPED:
            out.append(c.translate(CONFUSABLES).casefold())
    return "".join(out)


def fold_map(text: str, escapes: bool = True) -> tuple[str, list[int]]:
    """``text`` folded (JSON escapes ``\\uXXXX`` and ``\\"`` resolved when ``escapes``; NFKC per character;
    format characters and combining marks dropped; look-alikes mapped; casefolded), and for each folded
    character the index in ``text`` just after the piece it came from. Linear: plain ASCII runs are
    folded in bulk, only other characters and escapes one by one."""
    parts: list[str] = []
    ends: list[int] = []
    last = 0
    for m in _SPECIAL.finditer(text):
        piece = m.group(0)
        if len(piece) > 1 and not escapes:
            continue
        start, stop = m.span()
        if start > last:
            parts.append(text[last:start].lower())
            ends.extend(range(last + 1, start + 1))
        if piece.startswith("\\u"):
            folded = _fold_char(chr(int(piece[2:], 16)))
        elif piece == '\\"':
            folded = '"'
        else:
            folded = _fold_char(piece)
        parts.append(folded)
        ends.extend([stop] * len(folded))
        last = stop
    parts.append(text[last:].lower())
    ends.extend(range(last + 1, len(text) + 1))
    return "".join(parts), ends


def fold(text: str) -> str:
    """``text`` as compared for look-alikes (no escape decoding: for keys and values the JSON decoder read)."""
    return fold_map(text, escapes=False)[0]


def unescape(text: str) -> str:
    """JSON string escapes resolved, then folded: a span of prose or of a value that failed to decode as
    its reader would see it."""
    return fold_map(text)[0]


def plain_key(key: str) -> str:
    """A key as a look-alike compares: only its folded letters."""
    return re.sub(r"[^a-z]", "", fold(key))


__all__ = ["CONFUSABLES", "fold", "fold_map", "plain_key", "unescape"]
