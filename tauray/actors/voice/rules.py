"""Voice rules: what each side is told when its words travel over a phone line instead of
a chat window, in tauray's own words (the design follows the seed harness's voice mode).

A caller on the phone cannot paste an identifier, so the user simulator spells every
identifier one character at a time; it talks first (the agent picks up, the caller
speaks); it touches its phone only when the agent asks, one action per turn, since
nobody on a call chains taps while talking; it says what the phone shows in plain words,
never its icons or printed text; it never reads its instructions aloud; it ends the call
with the end tool, not a token read aloud; and when asked to repeat, it offers to spell. The agent is told it is
on a call: short sentences, no lists or markup, and to ask for identifiers letter by
letter and read them back.

Each rule set is versioned; its id, version and a hash of its text are what a voice
cell's identity and its conversation record name (:func:`prompt_label`), so a changed
sentence is a new prompt, never a silent edit.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class VoicePrompt(BaseModel):
    """One versioned set of voice rules for one side."""

    model_config = _FROZEN
    id: str = Field(description="Prompt id, e.g. 'voice-user'.")
    version: int = Field(ge=1, description="Version; a changed text gets a new version.")
    side: str = Field(description="The side it is appended to: 'agent' or 'user'.")
    text: str = Field(description="The rules, appended to the side's system prompt in voice cells.")

    @property
    def digest(self) -> str:
        """First 12 hex digits of the text's sha256: names the exact words."""
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        return f"{self.id}@{self.version}#{self.digest}"


VOICE_USER: Final = VoicePrompt(id="voice-user", version=2, side="user", text=(
    "## You are on a phone call\n"
    "Everything you write is turned into speech and played down a telephone line; you hear the "
    "agent the same way. Speak as a caller would:\n"
    "- You place the call, so you speak first: say who you are and why you are calling.\n"
    "- Say every identifier (phone number, account or customer id, line id, any code) one "
    "character at a time with commas between the characters, and say symbols as words: "
    "'5, 5, 5, 0, 1, 2, 3' or 'C, 1, 0, 0, 4' or 'j, o, e, at, example, dot, com'.\n"
    "- Use a phone tool only when the agent asks you to do something on your phone, one action "
    "per turn, then tell the agent in words what the phone shows.\n"
    "- Describe your screen the way you would to a friend: 'airplane mode is on, one bar of signal, "
    "battery at eighty percent'. Never read out icons, emoji, symbols or the screen's text as it is "
    "printed, but keep every setting, level and value it shows.\n"
    "- Your instructions are for you alone: never read them aloud or mention them. Say only what a "
    "caller would say, in the first person.\n"
    "- If the agent asks you to repeat something, repeat it and offer to spell it out.\n"
    "- Keep sentences short and plain: no lists, no markup, nothing a voice cannot say.\n"
    "- When the call is over, end it with the end-of-call tool if you have one; otherwise say "
    "goodbye and give the stop signal you were told about."))

VOICE_AGENT: Final = VoicePrompt(id="voice-agent", version=1, side="agent", text=(
    "## This conversation is a phone call\n"
    "The customer's words reach you through a speech recogniser, so they may be misheard, and "
    "your replies are read aloud to them. Therefore:\n"
    "- Speak in short, plain sentences; no lists, tables, links or markup.\n"
    "- Ask for every identifier (phone number, account id, line id) to be spelled one character "
    "at a time, and read it back to confirm before you use it.\n"
    "- If something you heard makes no sense, ask the customer to say it again rather than guess.\n"
    "- Ask for one phone action at a time and wait to hear what the phone shows."))

VOICE_PROMPTS: Final[dict[str, VoicePrompt]] = {"user": VOICE_USER, "agent": VOICE_AGENT}


def voice_prompt(side: str) -> VoicePrompt:
    """The voice rules of ``side``."""
    return VOICE_PROMPTS[side]


def prompt_labels() -> dict[str, str]:
    """side -> 'id@version#hash' of the voice rules in force (a voice cell's identity names them)."""
    return {side: p.label for side, p in VOICE_PROMPTS.items()}


# --- speaking identifiers ----------------------------------------------------------------

SYMBOLS: Final = {"@": "at", ".": "dot", "-": "dash", "_": "underscore", "/": "slash", "+": "plus", "#": "hash"}
# an identifier as the domains write them: a run of letters, digits and joining symbols with
# at least one digit (phone numbers, C1001, L1002, 555-123-4567, IMEIs), or an e-mail address
IDENTIFIER: Final = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?=[\w-]*\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*\b")


def spell(identifier: str) -> str:
    """``identifier`` one character at a time, comma-separated, symbols as words."""
    return ", ".join(SYMBOLS.get(ch, ch) for ch in identifier)


def spell_identifiers(text: str) -> str:
    """``text`` with every identifier spelled out, as a caller reads it down a phone line; a
    plain number of fewer than three digits (an amount, a count) is left as it is."""

    def one(m: re.Match[str]) -> str:
        token = m.group(0)
        return token if token.isdigit() and len(token) < 3 else spell(token)

    return IDENTIFIER.sub(one, text)


# A spelled run as :func:`spell` writes it: three or more single characters or symbol words, comma
# separated ("L, 1, 0, 0, 1", "5, 5, 5, dash, 1"): an utterance that holds one is said slower
# (:meth:`~tauray.actors.voice.profiles.DrawnVoice.rate_for`).
_ITEM: Final = r"(?:\b[A-Za-z0-9]\b|\b(?:" + "|".join(SYMBOLS.values()) + r")\b)"
SPELLED_RUN: Final = re.compile(rf"{_ITEM}(?:,\s*{_ITEM}){{2,}}")


# How the voice reference agent says it acted on an identifier it heard wrong (the reason of
# its end-of-call; tauray/actors/voice/analysis.py counts the failures that carry it).
MISHEARD_MARK: Final = "acted on a misheard identifier"

__all__ = ["IDENTIFIER", "MISHEARD_MARK", "SYMBOLS", "VOICE_AGENT", "VOICE_PROMPTS", "VOICE_USER", "VoicePrompt",
           "SPELLED_RUN", "prompt_labels", "spell", "spell_identifiers", "voice_prompt"]
