"""The reference policies of a voice cell: the oracle agent and the scripted user speak
plain words and act on what they heard.

In a text cell the oracle tags each phone request with a machine-readable marker that
the scripted user parses (:mod:`tauray.actors.policies`). No phone line carries a
marker, so here the oracle only says the action in words ("could you please toggle
airplane mode on your phone"), with its settings spoken ("mode: 4g 5g preferred"), and
the scripted user recognises the action from the recognised text by matching the words
of its own phone tools (numbers said as words are read as digits). When nothing matches,
it asks the agent to say that again, as a person would; the oracle repeats a request at
most twice and then goes on, so a misheard request costs the task what it would cost it
with a real caller.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from tauray.actors.llm.replies import ModelReply, RawToolCall
from tauray.actors.policies import OracleAgent, ScriptedUser, _last, _reply
from tauray.scenarios.conventions import ORACLE, SCRIPTED, STOP
from tauray.scenarios.model import ReferenceAction, Scenario
from tauray.scenarios.voice import spell_identifiers

NOT_CAUGHT: Final = "Sorry, I did not catch what you want me to do on my phone. Could you say that again?"
MAX_REPEATS: Final = 2
_NUMBERS: Final = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine".split())} | {"oh": "0", "for": "4", "to": "2", "too": "2"}


def _tokens(text: str) -> list[str]:
    """Lower-case word tokens with number words as digits (how a recogniser's text is compared)."""
    return [_NUMBERS.get(t, t) for t in re.findall(r"[a-z0-9]+", text.lower())]


def _joined(text: str) -> str:
    return "".join(_tokens(text))


def spoken_request(action: ReferenceAction) -> str:
    """The oracle's phone request as words only: the action's name and its settings."""
    words = action.name.replace("_", " ")
    details = "; ".join(f"{k.replace('_', ' ')}: {str(v).replace('_', ' ')}" for k, v in action.arguments.items())
    return f"Could you please {words} on your phone" + (f", with {details}," if details else "") + \
        " and tell me what it shows?"


class VoiceOracleAgent(OracleAgent):
    """The oracle of a voice cell: its phone requests in plain words; a request the caller
    did not catch is said again (at most twice)."""

    label = "oracle (reference policy, voice)"

    def __init__(self, scenario: Scenario):
        super().__init__(scenario)
        self.last_request: str | None = None
        self.repeats = 0

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        heard = (_last(view, "user") or {}).get("content") or ""
        asks_again = self.last_request is not None and "again" in _tokens(heard)
        if asks_again and self.repeats < MAX_REPEATS and view and view[-1].get("role") == "user":
            self.repeats += 1
            return _reply(ORACLE, f"Of course. {self.last_request}")
        if self.cursor < len(self.actions) and self.actions[self.cursor].side == "user":
            action = self.actions[self.cursor]
            self.cursor += 1
            self.last_request, self.repeats = spoken_request(action), 0
            return _reply(ORACLE, self.last_request)
        self.last_request = None
        return await super().reply(view, tools, seed)


def _schema_values(params: dict[str, Any], prop: dict[str, Any]) -> list[str]:
    """The values a parameter's schema names (an enum, directly or through a $ref)."""
    values = list(prop.get("enum", []))
    for option in prop.get("anyOf", []):
        ref = option.get("$ref", "")
        if ref.startswith("#/$defs/"):
            values += params.get("$defs", {}).get(ref.split("/")[-1], {}).get("enum", [])
        values += option.get("enum", [])
    return [str(v) for v in values]


def recognise_action(heard: str, tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The phone action (tool, arguments) the agent asked for in ``heard``, or None when
    the words name no tool, or a setting the tool needs cannot be made out."""
    text = _joined(heard)
    named = [t["function"] for t in tools if _joined(t["function"]["name"].replace("_", " ")) in text]
    if not named:
        return None
    fn = max(named, key=lambda f: len(f["name"]))  # "toggle data saver mode" over "toggle data"
    params = fn.get("parameters") or {}
    args: dict[str, Any] = {}
    for key, prop in (params.get("properties") or {}).items():
        values = _schema_values(params, prop)
        found = [v for v in values if _joined(v.replace("_", " ")) in text]
        if found:
            args[key] = max(found, key=len)
            continue
        words = _tokens(key.replace("_", " "))
        tail = _tokens(heard)
        at = next((i for i in range(len(tail)) if tail[i:i + len(words)] == words), None)
        if at is not None and at + len(words) < len(tail) and prop.get("type") == "string":
            args[key] = tail[at + len(words)]
        elif key in params.get("required", []):
            return None
    return fn["name"], args


class VoiceScriptedUser(ScriptedUser):
    """The scripted user of a voice cell: it speaks first, spells identifiers, and does the
    phone action it recognises in what it heard, or asks to hear it again."""

    label = "scripted (reference policy, voice)"

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        if not self.opened:
            self.opened = True
            return _reply(SCRIPTED, spell_identifiers(self.opening.strip()))
        if view and view[-1].get("role") == "tool":
            return _reply(SCRIPTED, f"Done. My phone now shows: {view[-1].get('content')}")
        heard = (_last(view, "user") or {}).get("content") or ""
        if not _looks_like_request(heard):
            return _reply(SCRIPTED, f"Thanks, that is all I needed. {STOP}")
        action = recognise_action(heard, tools)
        if action is None:
            return _reply(SCRIPTED, NOT_CAUGHT)
        self.calls += 1
        name, args = action
        return _reply(SCRIPTED, calls=[RawToolCall(id=f"scripted-{self.calls}", name=name, arguments=json.dumps(args))])


def _looks_like_request(heard: str) -> bool:
    """Whether the agent asked the caller to do something on the phone (its words, as heard)."""
    tokens = _tokens(heard)
    return "phone" in tokens or ("could" in tokens and "please" in tokens)


def make_voice_policy(side: str, model: str, scenario: Scenario) -> Any:
    """The voice cell's reference policy of ``side``, or None when the side runs a model."""
    if side == "agent" and model == ORACLE:
        return VoiceOracleAgent(scenario)
    if side == "user" and model == SCRIPTED:
        return VoiceScriptedUser(scenario)
    return None
