"""The reference policies of a voice cell: the oracle agent and the scripted user speak
plain words and act on what they heard.

In a text cell the oracle tags each phone request with a machine-readable marker that
the scripted user parses (:mod:`tauray.actors.policies`). No phone line carries a
marker, so here the oracle only says the action in words ("could you please toggle
airplane mode on your phone"), with its settings spoken ("mode: 4g 5g preferred"), and
the scripted user recognises the action from the recognised text by matching the words
of its own phone tools (numbers said as words are read as digits). When nothing matches,
it asks the agent to say that again, as a person would; the oracle puts the request another
way at most twice and then goes on, so a misheard request costs the task what it would cost
it with a real caller. The scripted user speaks as a caller: it opens with its task in the
first person and reports a phone action's result in plain words, never the screen's glyphs
(:mod:`tauray.actors.voice.spoken`).

The oracle also acts on the identifiers it heard, never on the task's gold values, where
the task's actions take one the caller says:

* a task whose agent actions take a ``customer_id``, and whose caller knows a phone number,
  starts by identifying the caller: the oracle asks for the number, the scripted user spells
  it, and the oracle looks the customer up by the number it heard (a lookup tool of its side
  that takes ``phone_number``). A lookup that does not find the task's customer is read back
  and the number asked for again, at most twice (each answer crosses the line anew); after
  that the call ends, as it would for a real agent that cannot find the account;
* an argument whose value the caller says in its opening (a user id in the mock domain) is
  taken from what the oracle heard (the spelled run nearest to it); a wrong one is used as
  heard, and the call ends after it. The caller's own "I" opening a clause is no part of
  the identifier spelled before it.

Such an end's reason names :data:`~tauray.actors.voice.rules.MISHEARD_MARK` with what was heard,
so the record says which failures a misheard identifier caused. All of it is deterministic:
the same heard text gives the same actions.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from tauray.actors.llm.replies import ModelReply, RawToolCall
from tauray.actors.policies import OracleAgent, ScriptedUser, _last, _reply
from tauray.actors.voice.identifiers import (
    as_written,
    caller_identifiers,
    closest,
    heard_phones,
    heard_runs,
    phone_of,
    written_like,
)
from tauray.actors.voice.rules import MISHEARD_MARK, spell, spell_identifiers
from tauray.actors.voice.spoken import speakable, spoken_opening, spoken_screen
from tauray.scenarios.conventions import END_CONVERSATION, ORACLE, SCRIPTED, STOP
from tauray.scenarios.model import ReferenceAction, Scenario

GO_ON: Final = "Sorry, go on."
NOT_CAUGHT: Final = "Sorry, I did not catch what you want me to do on my phone. Could you say that again?"
ASK_PHONE: Final = "Before we go on, could you tell me the phone number on your account, one digit at a time?"
ASK_PHONE_AGAIN: Final = "Sorry, I did not catch your phone number. Could you say it again, one digit at a time?"
MAX_REPEATS: Final = 2
# A reply cut this far in or later was heard: only its tail is lost (a request's last words,
# "... and tell me what it shows"), and a caller who acts on it must not be asked again, or
# it does the action twice (toggling airplane mode back off).
HEARD_SHARE: Final = 0.75


# A caller who asks the agent to wait ("hold on a second", "sorry, one moment"): in duplex such an
# aside is a turn of its own, and the oracle waits instead of taking it for an answer.
_WAIT: Final = re.compile(r"^(?:sorry,? )?(?:hold on|one moment|just a sec|excuse me|wait)(?: a (?:sec|second|moment)"
                          r"|,? please)?[.!]?$")
TAKE_YOUR_TIME: Final = "Sure, take your time."
# The verbs of the phone actions' names: what is left names what a report of the action mentions.
_ACTION_VERBS: Final = frozenset({"toggle", "set", "make", "reboot", "reseat", "reset", "disconnect", "grant",
                                  "turn", "enable", "disable", "check", "run", "change", "install", "remove"})


def _asks_to_wait(heard: str) -> bool:
    return bool(_WAIT.match(" ".join(heard.lower().split())))


def _reports(heard: str, action: ReferenceAction) -> bool:
    """Whether the caller's words report on ``action`` (they name every word of what it acts on,
    a word matched by its first four letters: "preferred network mode" for
    set_network_mode_preference), so it did the action whatever it heard of the request."""
    subject = [w for w in action.name.split("_") if w not in _ACTION_VERBS]
    said = {t[:4] for t in _tokens(heard.replace("-", ""))}
    return bool(subject) and all(w[:4] in said for w in subject)


def _heard_enough(said: str, meant: str) -> bool:
    """Whether ``said`` (what the caller heard of a reply, the view's truncated message) is
    enough of ``meant``: all of it, or its first :data:`HEARD_SHARE` of the words."""
    if said == meant:
        return True
    words, meant_words = said.split(), meant.split()
    return meant.startswith(said) and len(words) >= HEARD_SHARE * len(meant_words)


_NUMBERS: Final = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine".split())} | {"oh": "0", "for": "4", "to": "2", "too": "2"}


def _tokens(text: str) -> list[str]:
    """Lower-case word tokens with number words as digits (how a recogniser's text is compared)."""
    return [_NUMBERS.get(t, t) for t in re.findall(r"[a-z0-9]+", text.lower())]


def _joined(text: str) -> str:
    return "".join(_tokens(text))


def spoken_request(action: ReferenceAction, attempt: int = 0) -> str:
    """The oracle's phone request as words only: the action's name and its settings. Asked again,
    it is put another way (``attempt`` 1, 2, ...), as a person rephrases what was not understood:
    the same words over a clean line would only be misheard the same way again."""
    words = action.name.replace("_", " ")
    details = "; ".join(f"{k.replace('_', ' ')}: {str(v).replace('_', ' ')}" for k, v in action.arguments.items())
    if attempt == 0:
        return f"Could you please {words} on your phone" + (f", with {details}," if details else "") + \
            " and tell me what it shows?"
    if attempt == 1:
        return f"Let me put it another way. On your phone, please {words}" + (f". Use {details}" if details else "") + \
            ". Then tell me what the phone shows."
    return f"Once more, slowly. The step on your phone is: {words}" + (f", {details}" if details else "") + "."


def _asked_again(request: str, attempt: int) -> str:
    """What the oracle says when the caller asks to hear ``request`` again (see :func:`spoken_request`)."""
    if request == ASK_PHONE:
        return ASK_PHONE_AGAIN if attempt == 1 else "What is the phone number on your account? Say it one digit at a time."
    return f"Of course. {request}"


class VoiceOracleAgent(OracleAgent):
    """The oracle of a voice cell: its phone requests in plain words; a request the caller
    did not catch is said again (at most twice); identifiers taken from what it heard."""

    label = "oracle (reference policy, voice)"

    def __init__(self, scenario: Scenario):
        super().__init__(scenario)
        self.last_request: str | None = None
        self.last_action: ReferenceAction | None = None  # the phone action last asked for, if the request was one
        self.repeats = 0
        self.spoken = caller_identifiers(scenario)
        phone = phone_of(self.spoken)
        customers = {a.arguments["customer_id"] for a in self.actions
                     if a.side == "agent" and "customer_id" in a.arguments}
        # identify the caller by the number it says when the agent's actions need its customer id
        self.customer = next(iter(sorted(customers)), None) if phone else None
        self.phone = phone
        self.stage = "ask" if self.customer else "done"
        self.misheard: str | None = None  # what was heard wrong, once the oracle acted on it
        self.tried: list[str] = []  # the phone numbers it looked up and found no account under
        self.said: str | None = None  # the words of its last reply without tool calls

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        # In duplex the caller may speak over a reply before it is heard: the view then keeps only
        # what was said of it (or none of it). What was not heard (less than HEARD_SHARE of it) is
        # said again, and nothing moves on, as a person repeats a question talked over, unless the
        # caller's words report on the phone action asked for: then it was done. A caller who only
        # asks to wait is told to take their time, and nothing moves on either.
        last, caller = _last(view, "assistant"), _last(view, "user")
        heard = (caller or {}).get("content") or ""
        if view and view[-1].get("role") == "user" and _asks_to_wait(heard):  # a turn of its own: wait
            self.said = None  # what it said before was heard, or will be asked for again
            return _reply(ORACLE, TAKE_YOUR_TIME)
        reported = self.last_action is not None and _reports(heard, self.last_action)
        if self.said is not None and not reported and not _heard_enough((last or {}).get("content") or "", self.said):
            return _reply(ORACLE, self.said)
        out = await self._reply(view, tools, seed)
        self.said = out.content if out.content and not out.tool_calls else None
        return out

    async def _reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        heard = (_last(view, "user") or {}).get("content") or ""
        if self.misheard is not None:  # it acted on a wrong identifier: the call cannot go on
            return _end(f"{MISHEARD_MARK}: {self.misheard}")
        asks_again = self.last_request is not None and "again" in _tokens(heard)
        if asks_again and self.repeats < MAX_REPEATS and view and view[-1].get("role") == "user":
            self.repeats += 1
            if self.last_action is not None:  # a phone request: put another way
                return _reply(ORACLE, spoken_request(self.last_action, self.repeats))
            return _reply(ORACLE, _asked_again(self.last_request or "", self.repeats))
        if self.stage != "done":
            step = self._identify(view, tools, heard)
            if step is not None:
                return step
        if self.cursor < len(self.actions) and self.actions[self.cursor].side == "user":
            action = self.actions[self.cursor]
            self.cursor += 1
            self.last_request, self.last_action, self.repeats = spoken_request(action), action, 0
            return _reply(ORACLE, self.last_request)
        self.last_request, self.last_action = None, None
        if self.cursor < len(self.actions) and self.actions[self.cursor].side == "agent":
            action = self.actions[self.cursor]
            arguments, unheard = self._as_heard(action, view)
            if unheard is not None and self.repeats < MAX_REPEATS:  # not made out at all: ask for it
                self.repeats += 1
                return _reply(ORACLE, f"Could you spell the {unheard.replace('_', ' ')} for me, one character "
                                      "at a time?")
            self.repeats = 0
            if arguments != action.arguments:
                self.cursor += 1
                return _reply(ORACLE, calls=[RawToolCall(id=f"oracle-{self.cursor - 1}", name=action.name,
                                                         arguments=json.dumps(arguments))])
        return await super().reply(view, tools, seed)

    def _identify(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], heard: str) -> ModelReply | None:
        """Ask for the caller's number, look up the number heard, and go on (None: the next
        action) only if it found the task's customer."""
        if self.stage == "ask":
            self.stage, self.last_request, self.last_action, self.repeats = "asked", ASK_PHONE, None, 0
            return _reply(ORACLE, ASK_PHONE)
        if self.stage == "asked":
            numbers = heard_phones(heard)
            lookup = _lookup_tool(tools)
            if numbers and lookup is not None:
                self.stage, self.last_request = "looked_up", None
                self.heard_phone = written_like(numbers[0], self.phone or "")
                return _reply(ORACLE, calls=[RawToolCall(id="oracle-identify", name=lookup,
                                                         arguments=json.dumps({"phone_number": self.heard_phone}))])
            if self.repeats < MAX_REPEATS and lookup is not None:
                self.repeats += 1
                return _reply(ORACLE, ASK_PHONE_AGAIN)
            return _end(f"{MISHEARD_MARK}: no phone number made out in {heard[:200]!r}")
        found = str((view[-1] if view else {}).get("content") or "")
        if view and view[-1].get("role") == "tool" and self.customer in found:
            self.stage = "done"
            return None
        self.tried.append(self.heard_phone)
        if self.repeats < MAX_REPEATS:  # no account under what it heard: read it back and ask again
            self.repeats += 1
            self.stage = "asked"
            return _reply(ORACLE, f"I could not find an account under {spell(self.heard_phone)}. Could you say "
                                  "your phone number again, one digit at a time?")
        return _end(f"{MISHEARD_MARK}: phone number heard as {', '.join(self.tried)}; no account of this caller")

    def _as_heard(self, action: ReferenceAction, view: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
        """``action``'s arguments, each value the caller says replaced by what the oracle heard
        (the nearest spelled run in the caller's words, all of them so far), and the first
        argument it made out nothing for (None when it heard something for each; that value is
        then left empty). The first wrong value is remembered, so the call ends after the action."""
        arguments, unheard = dict(action.arguments), None
        said = _without_pronoun(" ".join(str(m.get("content") or "") for m in view if m.get("role") == "user"))
        for key, value in action.arguments.items():
            if not isinstance(value, str) or value not in self.spoken:
                continue
            got = closest(heard_runs(said), value)
            arguments[key] = as_written(got, value) if got is not None else ""
            unheard = unheard or (key if got is None else None)
        wrong = next((k for k in arguments if arguments[k] != action.arguments[k]), None)
        if wrong is not None and (unheard is None or self.repeats >= MAX_REPEATS):
            self.misheard = f"{wrong} heard as {arguments[wrong]!r}"
        return arguments, unheard


# The caller's "I" (and "I'm", "I'd", ...) opening a clause, after a stop or comma and before a
# word: a one-letter word that would otherwise join the spelled identifier just before it
# ("... D, R. I want" read as "YAX4DRI"). A spelled letter I is followed by a comma or a
# character, never by a word, so it stays.
_PRONOUN_I: Final = re.compile(r"(?<=[.!?,;:])\s+I(?:'[a-z]+)?(?=\s+[A-Za-z]{2,})")


def _without_pronoun(text: str) -> str:
    """The caller's words with its pronoun "I" taken out where it starts a clause (see
    :data:`_PRONOUN_I`), for reading spelled identifiers out of them."""
    return _PRONOUN_I.sub(" ", text)


def _end(reason: str) -> ModelReply:
    """The oracle ends the call, saying why (the reason is recorded with the call)."""
    return _reply(ORACLE, calls=[RawToolCall(id="oracle-end", name=END_CONVERSATION,
                                             arguments=json.dumps({"reason": reason}))])


def _lookup_tool(tools: list[dict[str, Any]]) -> str | None:
    """The agent's tool that finds a customer by phone number (telecom: get_customer_by_phone)."""
    for tool in tools:
        fn = tool.get("function") or {}
        params = (fn.get("parameters") or {}).get("properties") or {}
        if "phone_number" in params and "customer" in fn.get("name", ""):
            return fn["name"]
    return None


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
    tail, name = _tokens(heard), _tokens(fn["name"].replace("_", " "))
    after = next((i + len(name) for i in range(len(tail)) if tail[i:i + len(name)] == name), 0)
    args: dict[str, Any] = {}
    for key, prop in (params.get("properties") or {}).items():
        values = _schema_values(params, prop)
        found = [v for v in values if _joined(v.replace("_", " ")) in text]
        if found:
            args[key] = max(found, key=len)
            continue
        words = _tokens(key.replace("_", " "))
        # a setting is said after the action's name, which may hold the same word ("grant app
        # permission ..., permission: storage"): look for it past the name where the name is heard
        at = next((i for i in range(after, len(tail)) if tail[i:i + len(words)] == words), None)
        if at is not None and at + len(words) < len(tail) and prop.get("type") == "string":
            args[key] = tail[at + len(words)]
        elif key in params.get("required", []):
            return None
    return fn["name"], args


class VoiceScriptedUser(ScriptedUser):
    """The scripted user of a voice cell: it speaks first, as a caller does (its name and its
    task's reason for call in the first person, never the task's directions to the simulator:
    :func:`~tauray.actors.voice.spoken.spoken_opening`), spells identifiers (and its phone number
    or ids when asked for them), does the phone action it recognises in what it heard, or asks
    to hear it again, and says what the phone then shows in words
    (:func:`~tauray.actors.voice.spoken.spoken_screen`), never the screen's glyphs."""

    label = "scripted (reference policy, voice)"

    def __init__(self, scenario: Scenario):
        super().__init__(scenario)
        self.opening = spoken_opening(scenario)
        self.known = caller_identifiers(scenario)

    def _identifier(self, asked: str) -> str:
        """The answer to a question for its phone number (``phone``) or its ids (``id``), spelled."""
        phone = phone_of(self.known)
        if asked == "phone" and phone:
            return f"Sure, it is {spell(phone)}."
        ids = [i for i in self.known if i != phone] or self.known
        return f"Sure: {'; '.join(spell(i) for i in ids)}." if ids else "Sorry, I do not have that at hand."

    async def reply(self, view: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None) -> ModelReply:
        if not self.opened:
            self.opened = True
            return _reply(SCRIPTED, speakable(spell_identifiers(self.opening.strip())))
        if view and view[-1].get("role") == "tool":
            return _reply(SCRIPTED, f"Done. {spoken_screen(str(view[-1].get('content') or ''))}")
        heard = (_last(view, "user") or {}).get("content") or ""
        asked = _asked_for(heard)
        if asked is not None:
            return _reply(SCRIPTED, self._identifier(asked))
        if not _looks_like_request(heard):
            if _cut_short(heard):  # in duplex: words the agent is still saying, not its last ones
                return _reply(SCRIPTED, GO_ON)
            return _reply(SCRIPTED, f"Thanks, that is all I needed. {STOP}")
        action = recognise_action(heard, tools)
        if action is None:
            return _reply(SCRIPTED, NOT_CAUGHT)
        self.calls += 1
        name, args = action
        return _reply(SCRIPTED, calls=[RawToolCall(id=f"scripted-{self.calls}", name=name, arguments=json.dumps(args))])


# Words that, beside "phone", make a question one for the caller's number: a recogniser often
# garbles "number" itself on the line ("the phone and we're on your account"), and a person
# still understands from the rest of the sentence what is asked.
_IDENTITY_CUES: Final = frozenset({"number", "digit", "digits", "account"})


def _asked_for(heard: str) -> str | None:
    """Whether the agent asked for the caller's phone number (``phone``) or for an id to be
    spelled (``id``); None for anything else."""
    tokens = _tokens(heard)
    if "phone" in tokens and _IDENTITY_CUES.intersection(tokens):
        return "phone"
    if "spell" in tokens:
        return "id"
    return None


def _cut_short(heard: str) -> bool:
    """Whether the agent's words stop mid-sentence: what a duplex caller who speaks up while the
    agent talks has heard of it so far ("Before we go on, could you"), never a whole reply, which
    ends in a stop."""
    return bool(heard.strip()) and not heard.rstrip().rstrip("\"')").endswith((".", "?", "!"))


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
