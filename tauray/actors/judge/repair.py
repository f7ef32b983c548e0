"""The repair turn: one follow-up, in the same judge conversation, asking for only the answer.

A judge that answered in its own words (prose, another key, a think block, a
table) is asked once, with its reply kept as the assistant turn, for only the
answer in the declared format; the second reply is read by the same rule
(:mod:`.parse`). The prompt is data like every judge prompt: an id, a version
and a hash stored on every row that used it, and a test pins the hash so an
edited text needs a new version.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from tauray.actors.judge.parse import NotConforming, ParsedVerdict, read_nl, read_overall, reply_schema
from tauray.actors.judge.render import text_hash

REPAIR_ID = "repair-format"
REPAIR_VERSION = "1"
REPAIR_OPENING = "Your reply could not be read:"
_TEXT = (REPAIR_OPENING + " {why}.\n"
         "Reply again with only your answer, as one JSON value matching this schema and nothing else "
         "(no prose, no code other than the JSON, no reasoning outside the \"reasoning\" field):\n{schema}")


def repair_ref() -> str:
    """``id@version`` of the repair prompt."""
    return f"{REPAIR_ID}@{REPAIR_VERSION}"


def repair_hash(kind: Literal["overall", "nl"]) -> str:
    """Hash of the repair prompt for ``kind`` with its per-reply slot left as ``{why}``."""
    return text_hash(f"{repair_ref()}\n{kind}\n{_TEXT}\n{json.dumps(reply_schema(kind), sort_keys=True)}")


def repair_turn(chat: list[dict[str, Any]], reply: str | None, why: str,
                kind: Literal["overall", "nl"]) -> list[dict[str, Any]]:
    """``chat`` continued with the judge's reply and the request for only the answer."""
    ask = _TEXT.format(why=why, schema=json.dumps(reply_schema(kind)))
    return [*chat, {"role": "assistant", "content": reply or ""}, {"role": "user", "content": ask}]


class Exchange:
    """A sample's judge reply, the repair reply when one was asked for, and what they read as."""

    def __init__(self, reply: Any, parsed: list[ParsedVerdict], why: str | None, repair: Any = None,
                 first_why: str | None = None) -> None:
        self.reply, self.parsed, self.why, self.repair, self.first_why = reply, parsed, why, repair, first_why


def read(kind: Literal["overall", "nl"], count: int, text: str | None) -> tuple[list[ParsedVerdict], str | None]:
    """The readings of ``text`` and None, or unscored readings and why the reply does not conform."""
    n = count if kind == "nl" else 1
    try:
        return ([read_overall(text)] if kind == "overall" else read_nl(text, n)), None
    except NotConforming as exc:
        why = str(exc)
        return [ParsedVerdict(verdict=None, unscored_reason=why)] * n, why


async def converse(complete: Callable[[list[dict[str, Any]]], Awaitable[Any]], chat: list[dict[str, Any]],
                   kind: Literal["overall", "nl"], count: int) -> Exchange:
    """One judge sample: ask, read the reply; if it does not conform, ask once more in the same
    conversation (:func:`repair_turn`) and read that reply by the same rule. ``complete`` sends a chat
    and returns a reply with ``content`` (the judge client's ``complete``; a scripted judge in tests)."""
    reply = await complete(chat)
    parsed, why = read(kind, count, reply.content)
    if why is None:
        return Exchange(reply, parsed, None)
    repair = await complete(repair_turn(chat, reply.content, why, kind))
    parsed, again = read(kind, count, repair.content)
    if again is not None:
        parsed = [p.model_copy(update={"unscored_reason": f"not one value of the format after the repair turn "
                                       f"either: first {why}; then {again}"[:1000]}) for p in parsed]
    return Exchange(reply, parsed, again, repair=repair, first_why=why)


__all__ = ["REPAIR_OPENING", "Exchange", "converse", "read", "REPAIR_ID", "REPAIR_VERSION", "repair_hash", "repair_ref", "repair_turn"]
