"""What the simulated customer does with its phone against what the agent asked: an
unasked write, a claim without the call, the same write twice, several actions bundled in
one turn, and a request neither done nor answered. Rules of the user-simulator audit."""

from __future__ import annotations

import json
import re

from tauray.actors.audit import claim_words, claims, phone, user_avoids
from tauray.actors.audit.finding import Detector, Finding, strip_tokens
from tauray.actors.audit.trajectory import Message, Trajectory
from tauray.actors.audit.user_reasons import refuses
from tauray.scenarios.conventions import (
    OUT_OF_SCOPE,
    STOP,
    TRANSFER,
    parse_phone_request,
)


class UnaskedWrite(Detector):
    """A phone write the agent's last message did not ask for: ``different_action`` when
    the customer did not do what was asked in that turn, ``unrequested_write`` otherwise."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.messages:
            if not (m.side == "user" and m.role == "user" and m.tool_calls):
                continue
            asked_msg = t.agent_text_before(m.seq)
            asked_text = asked_msg.content if asked_msg else None
            asked = phone.requested_tools(asked_text, t.task.user_tools, need_cue=False)
            for call in m.tool_calls:
                tool = str(call.get("name"))
                if tool not in t.task.user_writes or tool in asked or phone.mentions(asked_text, tool):
                    continue
                done_in_turn = {x for c, x in t.user_calls(asked_msg.seq if asked_msg else -1) if c.turn == m.turn}
                kind = "different_action" if asked and not (asked & done_in_turn) else "unrequested_write"
                out.append(self.finding(m, f"{tool} not asked; agent asked {sorted(asked) or 'nothing'}", kind))
        return out


class WrongArguments(Detector):
    """The customer runs the phone write the agent's tagged request asked for, with other
    arguments than the request gave (``different_action``: the same tool, another action;
    ``unasked_write`` sees only another tool). An untagged request's arguments are words, left
    to the judge tier."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.messages:
            if not (m.side == "user" and m.role == "user" and m.tool_calls):
                continue
            asked = t.agent_text_before(m.seq)
            tagged = parse_phone_request(asked.content if asked else None)
            if tagged is None or tagged[0] not in t.task.user_writes:
                continue
            try:
                want = json.loads(tagged[1] or "{}")
            except ValueError:
                continue
            for call in m.tool_calls:
                if str(call.get("name")) != tagged[0]:
                    continue
                raw = call.get("arguments")
                try:
                    got = json.loads(raw) if isinstance(raw, str) and raw else (raw or {})
                except ValueError:
                    got = None
                if got != want:
                    out.append(self.finding(m, f"{tagged[0]} with {got} (asked with {want})"))
        return out


_CLAIM_DONE = re.compile(r"\b(?:done|did (?:it|that)|i'?ve (?:done|did|toggled|turned|switched|restarted|rebooted|"
                         r"reset|set|granted|made|connected|disconnected|re-?seated|run|ran)|it'?s done|all set|"
                         r"finished|completed|my phone now shows)\b", re.IGNORECASE)
_ACTED = (r"did|done|changed|switched|toggled|turned|flipped|pressed|tapped|clicked|restarted|rebooted|reset|set|granted|"
          r"enabled|disabled|connected|disconnected|re-?seated|made|paid|ran|run|tried|updated|checked|sorted|fixed|handled")
_BASE = r"change|switch|toggle|turn|flip|press|tap|do|make|grant|enable|disable|connect|disconnect|restart|reboot|reset|set"
_DONE_WORDS = re.compile(rf"\b(?:done|finish(?:ed)?|complete(?:d)?|all set|sorted|taken care of|took care of|handled|"
                         rf"there you go|it'?s done|did (?:it|that|this|so|what you (?:said|asked))|"
                         rf"i(?:'ve| have)?\s+(?:just |already |now |also |finally )?(?:{_ACTED})|"
                         rf"i(?:'ve| have)\s+(?:\w+\s+)?(?:{_BASE})|(?:went|gone) ahead|"
                         rf"\bi\b[^.,;?!]{{0,40}}?\band\s+(?:{_ACTED})\s+(?:it|that|this|them)|"
                         rf"(?:that|it|this)(?:'s| is| has)\s+(?:been\s+|now\s+|all\s+|just\s+)*(?:{_ACTED})\b(?!\s+(?:by|to)\b)|"
                         rf"(?:that|it)'?s\s+(?:\w+\s+)?(?:{_ACTED})\s+now|"
                         rf"\b(?:has|have|'s)\s+been\s+(?:seen to|dealt with|looked after|attended to|taken care of)|"
                         rf"^(?:{_ACTED})(?:\s+(?:on|off|over|up))?\s+(?:it|that|this|them|the|my))\b", re.IGNORECASE)


_ACTION_LATER = re.compile(r"\b(?:will|'ll|going to|gonna|about to|let me|shall|in a (?:sec|second|minute|moment))\b|"
                           r"\b(?:doing|trying|opening|looking|checking|toggling|turning|switching)\b", re.IGNORECASE)
"""The action announced or under way, not claimed done ("I'll do airplane mode", "doing it now")."""
_COMPLETED = re.compile(r"\b(?:i'?ve|i have|we'?ve|has been|have been|'s been|is now|are now|did|done|[a-z]{3,}ed)\b", re.IGNORECASE)
"""A completed form (the perfect, the past, a participle): what claims a step done, not an answer ("Yes, I use a VPN")."""


def claims_done(text: str | None) -> bool:
    """Whether the text claims a phone step done, in any words ("Sorted", "took care of it", "I've
    flipped that switch", "I have change it"): a clause that states it (``claims.clauses``: no
    question, plan or condition) with no negation in it ("I haven't done it yet", "not done yet")."""
    return any(_DONE_WORDS.search(c) and not re.search(claim_words.NEG, c, re.IGNORECASE)
               for c in claims.clauses(strip_tokens(text or "")))


class DoneWithoutCall(Detector):
    """The customer says it did the asked phone action, but made no phone call in that turn
    (v12: the claim reader's fifth pass of issue 51, a dialect's negation, "I didnae do it", claims nothing done; v11: by the turn's structure too: a reply with no call that names the asked action, neither refuses it
    (``user_avoids``), asks, waits, says it cannot find it, announces it ("I'll do airplane mode now") nor states a
    phone value, and has a completed form (``_COMPLETED``), says it done in whatever words ("I've gone through airplane mode like you said"); a step said to have "been seen to" or "dealt with" in any subject's words claims it done; a reply that
    refuses the step (``user_reasons.refuses``, ``user_avoids``: "the one time I tried it I lost my texts, so let's
    not") claims nothing done; v10: the claim reader's third pass of issue 51 (``claims.clauses``, ``claims._switch``, ``claims._read``): a self-correction takes back what came before it ("data's on - no wait, it's roaming"), a counterfactual or a thought about a topic ("I wouldn't have thought of the app permissions") and a demand ("won't settle for") claim nothing, "showing off" is off, a purpose or an ability between a setting and its value word ("no wireless to connect to", "no Wi-Fi I can get on") is no state, a negative subject denies picture messaging ("Nothing I attach a photo to gets sent"), a confident bet claims ("I'd put money on it that Wi-Fi is off"), another's word of the caller's own phone is its claim, relayed ("my son told me roaming is disabled"; of their own phone it is still not), a signal that "couldn't be better" is excellent; v9: as ``state_without_tool@15``; v8: a habit told by its frequency ("I seldom switch data off"), an action denied behind a belief ("I don't believe I ever turned roaming on") and "my work" (the noun) claim nothing; v7: the claim reader's second pass of issue 51 (``claims.clauses``, ``claims._switch``): an infinitive between a setting and an on/off word is a purpose, no state ("no Wi-Fi to fall back on"), someone else's word is not the caller's ("my friend said her roaming was off"), a check not made keeps its "whether", "refuses to send" cannot send; v6: also said of the step, "that's been toggled", "that's switched now", "I went into settings and
    turned it off"; v5: "The last time I restarted it, ..." is the past, no claim; v4: read in the clauses of issue 51's reader, ``claims.clauses``: a sentence whose verb comes
    first asks, "did the VPN, done" claims; v3: the claim is read in any words, ``claims_done``, and a negated one ("I haven't done it
    yet") is none: v2 read "done", "did it", "I've toggled..." only, found 0.41 of fake "done"s on
    independently written customers, and flagged "I haven't done it yet"; v2: a message that ends
    the call is no such claim; v1 read "I'm done with the bot. ###TRANSFER###" as one)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if m.tool_calls or any(token in (m.content or "") for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue  # a message that ends the call claims nothing done ("I'm done with the bot")
            asked = t.agent_text_before(m.seq)
            if asked is None or not phone.requested_tools(asked.content, t.task.user_tools):
                continue
            if any(c.turn == m.turn for c, _ in t.user_calls(asked.seq, m.seq + 1)):
                continue
            text = strip_tokens(m.content or "")
            named = user_avoids.named(text, phone.requested_tools(asked.content, t.task.user_tools))
            if refuses(text) or user_avoids.avoiding_sentence(text, named):
                continue  # a refusal claims nothing done
            if claims_done(text) or (named and "?" not in text and not user_avoids.CANNOT_FIND.search(text)
                                     and not user_avoids.waits(text) and not _ACTION_LATER.search(text)
                                     and _COMPLETED.search(text) and not claims.claims(text) and not phone.claim_spans(text)):
                out.append(self.finding(m, f"claims done without a phone call: {m.content!r}"))
        return out


class RepeatedWrite(Detector):
    """The customer does the same phone write twice in one turn, the first not having failed
    (a second toggle undoes the first): more than the agent asked."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out, seen = [], {}
        calls = [a for a in t.actions if a.get("kind") == "tool_call" and a.get("side") == "user"]
        for a in calls:
            key = (int(a["turn"]), str(a["tool"]))
            if a.get("is_write") and key in seen and not seen[key].get("error"):
                msg = next((m for m in t.messages if m.side == "user" and m.turn == key[0]
                            and any(c.get("name") == key[1] for c in m.tool_calls)), None)
                where = msg or Message(seq=-1, turn=key[0], side="user", role="user", content=None)
                out.append(self.finding(where, f"{key[1]} done twice in turn {key[0]}"))
            seen[key] = a
        return out


class BundledTurn(Detector):
    """What the customer's own rules forbid in one turn: words sent with a phone call (shown to
    nobody: the agent sees only a reply without calls), or several different phone actions the
    agent asked for at once, done without reporting between them. The same write twice is
    ``repeated_write``'s, a write nobody asked for ``unasked_write``'s; neither changes the state
    the agent asked for, so the effect is ``talk``."""

    def detect(self, t: Trajectory) -> list[Finding]:
        forbidden = phone.bundling_forbidden(t.task.user_text)
        if not forbidden:
            return []
        out, flagged = [], set()
        for m in t.messages:
            if not (m.side == "user" and m.role == "user" and m.tool_calls):
                continue
            if "text_with_call" in forbidden and (m.content or "").strip():
                out.append(self.finding(m, f"text sent with a phone call ({m.tool_calls[0].get('name')}): "
                                           f"{m.content!r}"))
                flagged.add(m.turn)
        if "several_writes" in forbidden:
            for turn in sorted({m.turn for m in t.messages if m.side == "user" and m.tool_calls} - flagged):
                done: list[tuple[Message, str]] = []
                for m in t.messages:
                    if m.side == "user" and m.role == "user" and m.turn == turn:
                        done += [(m, str(c.get("name"))) for c in m.tool_calls]
                if not done:
                    continue
                asked_msg = t.agent_text_before(done[0][0].seq)
                text = asked_msg.content if asked_msg else None
                asked = phone.requested_tools(text, t.task.user_tools, need_cue=False)
                writes: list[tuple[Message, str]] = []
                for m, tool in done:
                    if (tool in t.task.user_writes and (tool in asked or phone.mentions(text, tool))
                            and tool not in {x for _, x in writes}):
                        writes.append((m, tool))
                if len(writes) > 1:
                    out.append(self.finding(writes[1][0], f"{', '.join(x for _, x in writes)} done in one turn, "
                                                          f"without reporting between them"))
        return out


class IgnoredRequest(Detector):
    """The agent asked for a phone action and the customer's reply neither does it (no phone call
    in that turn) nor answers it: it does not refuse, say it cannot, ask how, name the action,
    or state what the phone shows; it acknowledges and talks about something else. The action is
    never done, as with a skipped write, so the effect is ``outcome``. A reply that ends or hands
    off the call is ``premature_stop``'s or ``transfer_without_agent``'s, a claim of having done it
    ``done_without_call``'s, another phone action instead ``unasked_write``'s (``different_action``),
    a phone state stated without a call ``state_without_tool``'s, a refusal (any words of
    ``user_reasons.REFUSES``: v2; v1 knew fewer and counted "That has to stay as it is" here; v3:
    also "that's off-limits for me", "I'll pass on that", "I'm not able to do that"; v4: a first clause
    that turns it down, ``user_reasons.refuses``; v6: a deferral, "Not right now, ..."; v7: "leave airplane mode alone",
    "I'm not about to", "leave that for now"; v9: refusals in the forms issue 51's third pass found on talk2: a refusal that concludes its sentence ("If I touch it, I lose my passwords, so no.", "so I'll leave it"), a prohibition on the caller ("forbids me from", "not in a position to"), another's anger at the action ("my dad would go mad if I ..."), an inability to face the action now ("I can't be doing that right now", "can't risk"), a deferral ("will just have to wait"), "Not again.", a bare "Can't." before its reason, and a habit of refusing ("Never do.") or a parent or office as a rule; v8: "not a chance", "I'm not rebooting anything", "I don't give ...")
    ``invented_constraint``'s or no fault; none of those is counted here."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            text = m.content or ""
            if m.tool_calls or any(token in text for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue
            asked = t.agent_text_before(m.seq)
            if asked is None:
                continue
            tools = phone.requested_tools(phone.without_offers(asked.content), t.task.user_tools)
            if not tools or t.user_calls(asked.seq, m.seq) or any(c.turn == m.turn for c, _ in t.user_calls(-1)):
                continue  # nothing asked, or something was done since (done, or another action instead)
            if (any(phone.mentions(text, tool) for tool in tools) or phone.DECLINES.search(text)
                    or phone.CANNOT.search(text) or phone.ASKS_HOW.search(text) or refuses(text) or _CLAIM_DONE.search(text)
                    or claims_done(text)
                    or phone.claim_spans(text)):
                continue  # an answer to the request: about it, refusing it, cannot, or claiming a result
            out.append(self.finding(m, f"{', '.join(sorted(tools))} asked (seq {asked.seq}); neither done nor "
                                       f"refused: {text!r}"))
        return out


__all__ = ["BundledTurn", "DoneWithoutCall", "claims_done", "IgnoredRequest", "RepeatedWrite", "UnaskedWrite", "WrongArguments"]
