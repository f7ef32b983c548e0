"""Rule detectors of user-simulator faults: each a small versioned object (name, version,
fault class, blamed side, tier) with one rule over what a run recorded.

A rule reads the trajectory only (both sides' messages, tool calls and results, the
task's known information and family); it never calls a model. Bump a detector's
``version`` whenever its rule changes: findings carry it, so audits made with different
rules are never mixed up.

``effect`` says what a fault of the class can do to the verdict: ``outcome`` faults change
the phone's state or end the call early (a failure with one is the simulator's),
``talk`` faults only say something wrong (whether the agent was misled needs judgement).
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from tauray.actors.policies import parse_phone_request
from tauray.results.audit import phone
from tauray.results.audit.trajectory import Message, Trajectory
from tauray.scenarios.conventions import OUT_OF_SCOPE, STOP, TRANSFER, TRANSFER_TO_HUMAN

Blame = Literal["agent", "user", "harness"]
Tier = Literal["rule", "judge"]
Effect = Literal["outcome", "talk"]


class Finding(BaseModel):
    """One fault a detector found in one conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    detector: str = Field(description="Detector that found it.")
    detector_version: int = Field(ge=1, description="Version of the detector's rule.")
    fault_class: str = Field(description="Fault class found.")
    blamed_side: Blame = Field(description="Side at fault.")
    effect: Effect = Field(description="'outcome' (state changed or call ended) or 'talk' (only words).")
    tier: Tier = Field(description="'rule' (a rule over the record) or 'judge' (a model's judgement).")
    turn: int | None = Field(description="Conversation turn of the fault.")
    message_seq: int | None = Field(description="Message (seq) that shows it.")
    evidence: str = Field(description="What the rule saw, in one line.")
    flips_verdict: bool | None = Field(default=None, description="Whether correcting the fault and replaying the "
                                       "recorded calls changes the verdict (``counterfactual``); None: cannot say.")


class Detector(BaseModel):
    """A rule over one recorded conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: int = Field(ge=1)
    fault_class: str
    blamed_side: Blame = "user"
    effect: Effect = "talk"
    tier: Tier = "rule"
    description: ClassVar[str] = ""

    def finding(self, message: Message, evidence: str, fault_class: str | None = None,
                effect: Effect | None = None) -> Finding:
        return Finding(detector=self.name, detector_version=self.version, fault_class=fault_class or self.fault_class,
                       blamed_side=self.blamed_side, effect=effect or self.effect, tier=self.tier, turn=message.turn,
                       message_seq=message.seq, evidence=" ".join(evidence.split())[:300])

    def detect(self, t: Trajectory) -> list[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


def _strip_tokens(text: str) -> str:
    for token in (STOP, TRANSFER, OUT_OF_SCOPE):
        text = text.replace(token, " ")
    return text.strip()


class PrematureStop(Detector):
    """The customer ends the call while the agent's last request (a phone action) is still
    undone, and no result after the customer's last write showed the family's resolved
    condition."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if STOP not in (m.content or ""):
                continue
            asked = t.agent_text_before(m.seq)
            if asked is None:
                continue
            pending = phone.requested_tools(asked.content, t.task.user_tools) - {
                tool for _, tool in t.user_calls(asked.seq, m.seq)}
            if not pending:
                continue
            writes = [c for c, tool in t.user_calls(-1, m.seq) if tool in t.task.user_writes]
            since = writes[-1].seq if writes else -1
            if any(x.side == "user" and x.role == "tool" and since < x.seq < m.seq
                   and phone.shows_resolved(t.task.issue_type, x.content) for x in t.messages):
                continue
            out.append(self.finding(m, f"stopped with {', '.join(sorted(pending))} asked (seq {asked.seq}) and not "
                                       f"done; no resolved result seen: {m.content!r}"))
        return out


_ASKS = re.compile(r"\?|\b(?:can|could|would|will) you\b|\bplease\b|\bI (?:also )?(?:need|want|would like)\b", re.IGNORECASE)


class StopWithRequest(Detector):
    """The stop message also asks for something (a question or a request), which the agent
    can no longer answer."""

    def detect(self, t: Trajectory) -> list[Finding]:
        return [self.finding(m, f"stop message asks: {m.content!r}") for m in t.user_texts
                if STOP in (m.content or "") and _ASKS.search(_strip_tokens(m.content or ""))]


class TransferWithoutAgent(Detector):
    """The customer says it was handed to a human though the agent never transferred it."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if TRANSFER not in (m.content or ""):
                continue
            transferred = any(x.side == "agent" and x.seq < m.seq and any(c.get("name") == TRANSFER_TO_HUMAN
                                                                          for c in x.tool_calls) for x in t.messages)
            if not transferred:
                out.append(self.finding(m, f"transfer token without the agent's {TRANSFER_TO_HUMAN}: {m.content!r}"))
        return out


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


_CLAIM_DONE = re.compile(r"\b(?:done|did (?:it|that)|i'?ve (?:done|did|toggled|turned|switched|restarted|rebooted|"
                         r"reset|set|granted|made|connected|disconnected|re-?seated|run|ran)|it'?s done|all set|"
                         r"finished|completed|my phone now shows)\b", re.IGNORECASE)


class DoneWithoutCall(Detector):
    """The customer says it did the asked phone action, but made no phone call in that turn
    (v2: a message that ends the call is no such claim; v1 read "I'm done with the bot.
    ###TRANSFER###" as one, on the held-out half)."""

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
            if _CLAIM_DONE.search(m.content or ""):
                out.append(self.finding(m, f"claims done without a phone call: {m.content!r}"))
        return out


class ResultContradiction(Detector):
    """The customer's report states the opposite of the phone result it just got (the
    results are fixed templates, so their state words can be compared)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            shown = t.tool_result_before(m.seq)
            if shown is None or shown.turn != m.turn:
                continue
            bad = phone.contradictions(m.content, shown.content)
            if bad:
                said = "; ".join(f"{f}: said {a}, phone showed {b}" for f, a, b in bad)
                out.append(self.finding(m, said))
        return out


class KnownInfoContradicted(Detector):
    """The customer states a phone number, name or whereabouts other than its known information."""

    def detect(self, t: Trajectory) -> list[Finding]:
        known = phone.known_info(t.task.known_info)
        out = []
        for m in t.user_texts:
            text = m.content or ""
            earlier = " ".join(x.content or "" for x in t.messages if x.seq < m.seq and x.side == "agent")
            why = []
            for number in phone.PHONE_NUMBER.findall(text):
                if known.phone and number != known.phone and number not in earlier:
                    why.append(f"number {number} (known {known.phone})")
            for claim in phone.NAME_CLAIM.finditer(text):
                if known.name and claim["name"] not in known.name and known.name not in claim["name"]:
                    why.append(f"name {claim['name']} (known {known.name})")
            if known.where == "abroad" and phone.AT_HOME.search(text):
                why.append("says at home (known: abroad)")
            if known.where == "home" and phone.NOT_HOME.search(text):
                why.append("says abroad (known: at home)")
            if why:
                out.append(self.finding(m, "; ".join(why)))
        return out


class IdentityInvented(Detector):
    """The customer gives an identity detail its task never gave it (date of birth, email,
    account number, address...)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        known = t.task.known_info or ""
        out = []
        for m in t.user_texts:
            kinds = [k for k, p in phone.INVENTED_KINDS.items() if p.search(m.content or "") and not p.search(known)]
            if kinds:
                out.append(self.finding(m, f"gives {', '.join(kinds)} not in its known information: {m.content!r}"))
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


class StateWithoutTool(Detector):
    """The customer states a phone state in a turn where it ran no phone tool, and no earlier
    phone result showed it, unless the statement repeats its own task's words (v3: the task's
    exact words; v2 excused any state the task named, and missed "the speed test said (Poor)"
    on the held-out half; v1 flagged customers opening with their task's symptom)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if any(x.side == "user" and x.role == "tool" and x.turn == m.turn and x.seq < m.seq for x in t.messages):
                continue
            shown: set[tuple[str, str]] = set()
            for x in t.messages:
                if x.seq < m.seq and x.side == "user" and x.role == "tool":
                    shown |= set(phone.state_claims(x.content).items())
            task = (t.task.user_text or "").lower()
            unshown = sorted({f"{k}={v}" for k, v, words in phone.claim_spans(m.content)
                              if (k, v) not in shown and words.lower() not in task})  # not the task's own words
            if unshown:
                out.append(self.finding(m, f"states {', '.join(unshown)} that no phone result showed"))
        return out


_SUSPECTS = re.compile(r"\b(?:think|maybe|perhaps|probably|likely|suspect|(?:might|could|must|may) be|guess|feeling|"
                       r"because|caus\w*|problem is|blame)\b", re.IGNORECASE)


def _seen_by_user(m: Message) -> bool:
    """Whether the customer saw the message: the agent's words, its own messages and phone results
    (never the agent's tool calls or their results)."""
    return m.side == "user" or (m.role == "assistant" and not m.tool_calls)


class FaultNamedEarly(Detector):
    """The customer names a phone setting as the cause before anything it saw (the agent's
    words, a phone result) or its own task mentioned it (v3: only what the customer saw
    counts, v2 also counted the agent's tool results, and missed "roaming" after the agent's
    own roaming call on the held-out half; v2: only in a message that suspects a cause, v1
    also flagged a setting named for another reason, "roaming charges")."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        task = (t.task.user_text or "").lower()
        for m in t.user_texts:
            if not _SUSPECTS.search(_strip_tokens(m.content or "")):
                continue
            before = " ".join((x.content or "") for x in t.messages if x.seq < m.seq and _seen_by_user(x)).lower()
            claimed = " ".join(phone.state_claims(m.content))  # a stated state is state_without_tool's
            named = [name for name, pattern in phone.SETTING_TOPICS.items()
                     if re.search(pattern, (m.content or "").lower()) and not re.search(pattern, before)
                     and not re.search(pattern, task) and not re.search(pattern, claimed)]
            if named:
                out.append(self.finding(m, f"names {', '.join(named)} before anything showed it: {m.content!r}"))
        return out


def _pending(t: Trajectory, m: Message) -> set[str]:
    """Phone actions the agent's last words asked for that the customer has not done before ``m``."""
    asked = t.agent_text_before(m.seq)
    if asked is None:
        return set()
    return phone.requested_tools(asked.content, t.task.user_tools) - {tool for _, tool in t.user_calls(asked.seq, m.seq)}


def _since_last_write(t: Trajectory, m: Message) -> int:
    writes = [c for c, tool in t.user_calls(-1, m.seq) if tool in t.task.user_writes]
    return writes[-1].seq if writes else -1


class StopAfterFailure(Detector):
    """The customer ends the call right after a phone result of its own turn showed the problem
    still there (MMS cannot send; speed test below Excellent; no signal), with no further
    attempt and nothing the agent asked left undone (that stop is ``premature_stop``'s)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if STOP not in (m.content or ""):
                continue
            results = [x for x in t.messages if x.side == "user" and x.role == "tool" and x.turn == m.turn
                       and x.seq < m.seq]
            if not results or not phone.shows_failure(t.task.issue_type, results[-1].content) or _pending(t, m):
                continue
            shown = (results[-1].content or "").splitlines()
            out.append(self.finding(m, f"stopped right after {shown[-1] if shown else ''!r}: {m.content!r}"))
        return out


_CLOSING_QUESTION = re.compile(r"[^.?!]*\b(?:anything else|something else|any other (?:questions?|issues?|problems?)|"
                               r"else (?:I|we) can|help (?:you )?with (?:anything|something)|further (?:help|assistance))"
                               r"\b[^.?!]*\?", re.IGNORECASE)


def _asks_nothing(text: str | None) -> bool:
    """Whether an agent message leaves the customer nothing to do or answer: no phone request and
    no question but the closing kind ("Is there anything else I can do?")."""
    rest = _CLOSING_QUESTION.sub(" ", text or "")
    return parse_phone_request(text) is None and "?" not in rest and not phone.requested_tools(rest, _ALL_TOOLS)


_ALL_TOOLS = frozenset(phone.TOPICS)


class NoEndAfterResolved(Detector):
    """The customer saw the family's resolved result after its last write, the agent asked
    nothing more, and the customer went on instead of ending the call."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            if m.tool_calls or any(token in (m.content or "") for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue
            agent = t.agent_text_before(m.seq)
            if agent is None or not _asks_nothing(agent.content):
                continue
            since = _since_last_write(t, m)
            resolved = [x for x in t.messages if x.side == "user" and x.role == "tool" and since < x.seq < m.seq
                        and phone.shows_resolved(t.task.issue_type, x.content)]
            if resolved:
                out.append(self.finding(m, f"resolved result seen (seq {resolved[-1].seq}), the agent asked nothing "
                                           f"more, no end: {m.content!r}"))
        return out


def _negated(sentence: str, end: int) -> bool:
    """Whether the sentence negates what it says up to ``end`` (a negation after it, "4 GB, not
    less", qualifies something else)."""
    return bool(phone.NEGATION.search(sentence[:end]))


class ConstraintBroken(Detector):
    """The customer breaks what its task fixed: asks for (or agrees to) a plan change it does
    not want, more data than it is willing to refuel, says it has Wi-Fi it has no access to
    (words: ``talk``), or refuses the bill payment its task accepts (the payment is not made:
    ``outcome``). A negation counts only before what it negates (v1 as first written skipped
    any sentence with a negation, and missed "I want a top-up of 4 GB, not less." on the tune half)."""

    def detect(self, t: Trajectory) -> list[Finding]:
        rules = phone.constraints(t.task.user_text)
        if not rules.any:
            return []
        out = []
        for m in t.user_texts:
            why = []
            own = m.content or ""
            for x in t.messages:  # a phone result repeated in a report is not the customer's own words
                if x.side == "user" and x.role == "tool" and x.seq < m.seq and x.content:
                    own = own.replace(x.content, " ")
            for sentence in phone.sentences(own):
                plan = phone.PLAN_CHANGE.search(sentence)
                if rules.no_plan_change and plan and not _negated(sentence, plan.end()):
                    why.append(f"asks for a plan change: {sentence!r}")
                over = [g for g in phone.GIGABYTES.finditer(sentence) if rules.refuel_limit_gb is not None
                        and float(g[1]) > rules.refuel_limit_gb]
                if over and phone.REFUEL.search(sentence) and not _negated(sentence, over[-1].end()):
                    why.append(f"asks for more than {rules.refuel_limit_gb} GB: {sentence!r}")
                wifi = phone.WIFI_ACCESS.search(sentence)
                if rules.no_wifi and wifi and not _negated(sentence, wifi.end()):
                    why.append(f"says it has Wi-Fi: {sentence!r}")
            agent = t.agent_text_before(m.seq)
            said = phone.sentences(own)
            if (rules.no_plan_change and agent is not None and phone.PLAN_CHANGE.search(agent.content or "")
                    and said and phone.AGREES.search(said[0]) and not phone.NEGATION.search(said[0])):
                why.append(f"agrees to the plan change offered: {m.content!r}")
            if why:
                out.append(self.finding(m, "; ".join(why)))
                continue
            if (rules.accepts_payment and agent is not None and not m.tool_calls
                    and "make_payment" in phone.requested_tools(agent.content, t.task.user_tools)
                    and "make_payment" not in {tool for _, tool in t.user_calls(agent.seq, m.seq + 1)}
                    and phone.REFUSES.search(m.content or "")):
                out.append(self.finding(m, f"refuses the payment its task accepts: {m.content!r}", effect="outcome"))
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


_OFFER = re.compile(r"\b(?:would you like|do you want|shall I|should I|I can|I could|I will|I'll|let me)\b", re.IGNORECASE)


def _without_offers(text: str | None) -> str | None:
    """An agent message less its offers and announcements ("Would you like to change your data
    plan?", "Let me check your line"): a "yes" to those asks the customer for no phone action.
    A tagged request is kept whole."""
    if text is None or parse_phone_request(text) is not None:
        return text
    return " ".join(s for s in phone.sentences(text) if not _OFFER.search(s))


class IgnoredRequest(Detector):
    """The agent asked for a phone action and the customer's reply neither does it (no phone call
    in that turn) nor answers it: it does not refuse, say it cannot, ask how, name the action,
    or state what the phone shows; it acknowledges and talks about something else. The action is
    never done, as with a skipped write, so the effect is ``outcome``. A reply that ends or hands
    off the call is ``premature_stop``'s or ``transfer_without_agent``'s, a claim of having done it
    ``done_without_call``'s, another phone action instead ``unasked_write``'s (``different_action``),
    a phone state stated without a call ``state_without_tool``'s; none of those is counted here."""

    def detect(self, t: Trajectory) -> list[Finding]:
        out = []
        for m in t.user_texts:
            text = m.content or ""
            if m.tool_calls or any(token in text for token in (STOP, TRANSFER, OUT_OF_SCOPE)):
                continue
            asked = t.agent_text_before(m.seq)
            if asked is None:
                continue
            tools = phone.requested_tools(_without_offers(asked.content), t.task.user_tools)
            if not tools or t.user_calls(asked.seq, m.seq) or any(c.turn == m.turn for c, _ in t.user_calls(-1)):
                continue  # nothing asked, or something was done since (done, or another action instead)
            if (any(phone.mentions(text, tool) for tool in tools) or phone.DECLINES.search(text)
                    or phone.CANNOT.search(text) or phone.ASKS_HOW.search(text) or _CLAIM_DONE.search(text)
                    or phone.claim_spans(text)):
                continue  # an answer to the request: about it, refusing it, cannot, or claiming a result
            out.append(self.finding(m, f"{', '.join(sorted(tools))} asked (seq {asked.seq}); neither done nor "
                                       f"refused: {text!r}"))
        return out


DETECTORS: tuple[Detector, ...] = (
    PrematureStop(name="premature_stop", version=1, fault_class="premature_stop", effect="outcome"),
    StopWithRequest(name="stop_with_request", version=1, fault_class="stop_with_request"),
    TransferWithoutAgent(name="transfer_without_agent", version=1, fault_class="transfer_without_agent",
                         effect="outcome"),
    UnaskedWrite(name="unasked_write", version=1, fault_class="unrequested_write", effect="outcome"),
    DoneWithoutCall(name="done_without_call", version=2, fault_class="done_without_call", effect="outcome"),
    ResultContradiction(name="result_contradiction", version=1, fault_class="result_contradiction"),
    KnownInfoContradicted(name="known_info_contradicted", version=1, fault_class="known_info_contradicted"),
    IdentityInvented(name="identity_invented", version=1, fault_class="identity_invented"),
    RepeatedWrite(name="repeated_write", version=1, fault_class="repeated_write", effect="outcome"),
    StateWithoutTool(name="state_without_tool", version=3, fault_class="state_without_tool"),
    FaultNamedEarly(name="fault_named_early", version=3, fault_class="fault_named_early"),
    StopAfterFailure(name="stop_after_failure", version=1, fault_class="stop_after_failure", effect="outcome"),
    NoEndAfterResolved(name="no_end_after_resolved", version=1, fault_class="no_end_after_resolved"),
    ConstraintBroken(name="constraint_broken", version=1, fault_class="constraint_broken"),
    BundledTurn(name="bundled_turn", version=1, fault_class="bundled_turn"),
    IgnoredRequest(name="ignored_request", version=1, fault_class="ignored_request", effect="outcome"),
)
"""The rule detectors, in the order findings are listed."""

FAULT_CLASSES: tuple[str, ...] = (*(d.fault_class for d in DETECTORS), "different_action")


def detect_all(t: Trajectory, detectors: tuple[Detector, ...] = DETECTORS) -> list[Finding]:
    """Every finding of every detector on one conversation, in message order."""
    found = [f for d in detectors for f in d.detect(t)]
    return sorted(found, key=lambda f: (f.message_seq if f.message_seq is not None else -1, f.detector))


__all__ = ["DETECTORS", "FAULT_CLASSES", "Blame", "Detector", "Effect", "Finding", "Tier", "detect_all"]
