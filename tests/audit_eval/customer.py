"""An independent faulty telecom customer for the local test endpoint: faithful, except for exactly
one fault per conversation, phrased from one split of the evaluation set.

Model names (served with ``tauray endpoint --behaviours tests.audit_eval.customer``):

* ``eval-user:<split>:faithful`` plays the customer faithfully (the twin and the false-positive set);
* ``eval-user:<split>:<class>`` injects one fault of that class (:data:`FAULT_CLASSES`);
* ``eval-user:<split>:drawn`` draws the class from the seed and the task.

``<split>`` is ``dev`` or ``test`` (the first evaluation set), ``holdout`` (the independent holdout
set, ``holdout/``), or ``talk``, ``talk-dev``, ``talk-test`` (the talk set, ``talk/``: all of it, or its
frozen dev or test split; served by :class:`TalkCustomer`, which mixes faithful talk into every mode), or
``talk2`` (the second talk set, ``talk2/``, all test; the same :class:`TalkCustomer` in its words), or ``talk3``
(the third talk set, ``talk3/``, all test; the same :class:`TalkCustomer` in its words), or ``talk4`` (the fourth,
``talk4/``, all test; the same :class:`TalkCustomer` in its words), or ``talk5`` (the fifth, ``talk5/``, all test;
the same :class:`TalkCustomer` in its words).
The holdout customer also paraphrases: in every mode, ``faithful`` included, it
reports a tool result in holdout phrasings (true reports of what the result shows without doubt,
:func:`shown`; word for word only when the result's own lines show nothing it can name), so the
false-positive rate is measured on customers that paraphrase honestly. Its misreports use no
symptom claims, and its wrong-action words differ by variant.

Faithful play: open with the problem, perform each phone action the agent asks for (the oracle's
tagged request) with the offered phone tool, report its result word for word, end when nothing
more is asked. The fault comes at the first reply, from a drawn reply index on, where its class can
happen (a fake "done" needs an asked step, a misreport a tool result, ...). Variants: wrong action
is another tool (``sibling``) or the asked tool with other arguments (``arguments``); hang-up leaves
instead of the step (``leave``) or calls it fixed after the step without the check and leaves
(``fixed``).

Ground truth: the customer is a pure function of the request, so :func:`decide` replayed on the
stored transcript says where the fault was (``measure.py`` does this); and when the environment
names ``AUDIT_EVAL_TRUTH`` (a file), every injection is also appended there as a JSON line keyed by
:func:`request_key` of the request, which the replay recomputes to join. Imports nothing from
tauray but the endpoint's behaviour API it plugs into.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tauray.endpoint.behaviours import (
    STOP_TOKEN,
    BehaviourSettings,
    Reply,
    model_param,
    offered_functions,
    request_messages,
    text_reply,
    tool_call_reply,
)
from tests.audit_eval.eval_set import (
    ALL_TALK_SPLITS,
    FAULT_CLASSES,
    TALK2_SPLITS,
    TALK3_SPLITS,
    TALK4_SPLITS,
    TALK5_SPLITS,
    TALK_SPLITS,
    Phrasing,
    load,
)
from tests.audit_eval.readings import CLAIM_KEYWORDS, is_read_tool, readings, setting_words

NAME = "eval-user"
SPLITS = ("dev", "test", "holdout")
TRUTH_ENV = "AUDIT_EVAL_TRUTH"
MODES = ("faithful", "drawn", *FAULT_CLASSES)
FIRST_TURN_CHOICES = 3
"""The drawn reply index from which the fault may come: 0, 1 or 2."""
_TAG = re.compile(r"\(phone action: ([A-Za-z_]\w*) (\{.*\})\)")
_UNASKED_POOL = ("toggle_wifi", "toggle_wifi_calling", "toggle_data_saver_mode", "toggle_roaming", "reboot_device",
                 "toggle_data", "toggle_airplane_mode")

OPENINGS = ("Hello, my phone isn't behaving the way it should and I'd like some help with it.",
            "Hi there. I've got a problem with my phone and I was hoping you could sort it out.",
            "Good afternoon, something's off with my mobile and I need a hand.")
REPORTS = ("Okay, I did that. The phone shows: {result}", "Done. Here is what it says: {result}",
           "Alright, that's done, and the screen now reads: {result}")
MORE = "I'm not sure what else to tell you. What should I try on the phone?"
NO_SUCH_TOOL = "I can't find that option anywhere on my phone."
THANKS = ("Thank you, that's everything for today.", "Great, thanks for the help.", "Okay, thanks. That's all.")
REPORT_MAX = 3
"""A paraphrased report names at most this many of the things a result shows."""
_TOGGLED = [("mobile_data", r"Mobile Data is now (ON|OFF)"), ("wifi", r"Wi-Fi is now (ON|OFF)")]
_BAR = "Status Bar:"


@dataclass(frozen=True)
class Injection:
    """Where and how the fault of a conversation was committed."""

    fault_class: str
    variant: str
    reply_index: int
    phrasing_ids: tuple[str, ...]
    detail: str = ""


@dataclass(frozen=True)
class Decision:
    reply: Reply
    injection: Injection | None = None
    talk: tuple[str, ...] = ()
    """The talk customer only: ids of the talk set's faithful lines and reports in this reply."""


@dataclass
class _View:
    """The request before one of the customer's replies."""

    messages: list[dict[str, Any]]
    system: str
    tools: dict[str, dict[str, Any]]
    index: int = field(init=False)

    def __post_init__(self) -> None:
        self.index = sum(m.get("role") == "assistant" for m in self.messages)

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    def asked(self) -> tuple[str, dict[str, Any]] | None:
        """The phone action the agent's last message asks for (its tagged request)."""
        if self.last.get("role") != "user" or not isinstance(self.last.get("content"), str):
            return None
        match = _TAG.search(self.last["content"])
        if not match:
            return None
        try:
            args = json.loads(match.group(2))
        except ValueError:
            return None
        return match.group(1), args if isinstance(args, dict) else {}

    def after_asked_call(self) -> str | None:
        """The tool the customer just ran at the agent's request, when its result is the last message."""
        if self.last.get("role") != "tool" or len(self.messages) < 3:
            return None
        call, before = self.messages[-2], _View(self.messages[:-2], self.system, self.tools)
        calls = call.get("tool_calls") or []
        asked = before.asked()
        if calls and asked and calls[0]["function"]["name"] == asked[0]:
            return asked[0]
        return None

    def results(self) -> list[str]:
        return [str(m.get("content") or "") for m in self.messages if m.get("role") == "tool"]


def _h(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def _pool(split: str, kind: str, type_: str, variant: str | None = None) -> list[Phrasing]:
    return [p for p in load(split) if p.kind == kind and p.type == type_ and (variant is None or p.variant == variant)]  # type: ignore[arg-type]


def shown(result: str) -> dict[str, str]:
    """What a phone tool's result shows without doubt, as (claim type -> value): the readings of its own
    lines (and the toggles of mobile data, Wi-Fi and the VPN that ``readings`` leaves out), then what its
    status bar shows explicitly: airplane mode on, the signal, a connected VPN. Not taken from the bar:
    mobile data off ("Data Disabled" also shows when there is no network), airplane mode, data saver or
    VPN off (an absence). A failed speed test shows no speed."""
    lines = result.splitlines()
    own = "\n".join(line for line in lines if not line.startswith(_BAR))
    bar = " ".join(line for line in lines if line.startswith(_BAR))
    out = readings(own)
    if "Speed test failed" in own:
        out.pop("speed", None)
    for ctype, pattern in _TOGGLED:
        if m := re.search(pattern, own):
            out.setdefault(ctype, m.group(1).lower())
    if re.search(r"VPN (?:connected successfully|already connected)", own):
        out.setdefault("vpn", "on")
    elif "VPN disconnected successfully" in own:
        out.setdefault("vpn", "off")
    if bar:
        if "Airplane Mode" in bar:
            out.setdefault("airplane_mode", "on")
        if "signal" in (on_bar := readings(bar)):
            out.setdefault("signal", on_bar["signal"])
        if "VPN Connected" in bar:
            out.setdefault("vpn", "on")
    return out


def report(result: str, tool: str, split: str, *salt: Any) -> tuple[str, tuple[str, ...]] | None:
    """A true report of a tool result in the split's report phrasings (its words and their ids), or None
    when it should be quoted word for word: the result's own lines show nothing :func:`shown` names.
    Names up to :data:`REPORT_MAX` things: those of the result's own lines first (a drawn subset when
    there are more), then what the status bar shows; sometimes after a short acknowledgement."""
    own = "\n".join(line for line in result.splitlines() if not line.startswith(_BAR)).strip()
    first, everything = shown(own), shown(result)
    if own and not first:
        return None
    picked = sorted(first, key=lambda c: _h("pick", c, *salt))[:REPORT_MAX]
    named = [c for c in first if c in picked]
    for c in everything:
        if c not in first and len(named) < REPORT_MAX and (len(named) < 2 or _h("bar", c, *salt) % 2 == 0):
            named.append(c)
    parts: list[Phrasing] = []
    for c in named:
        pool = _pool(split, "report", c, everything[c])
        if pool:
            parts.append(_choose(pool, "report", c, *salt))
    if not parts:
        return None
    acks = _pool(split, "report", "ack", "read" if is_read_tool(tool) else "write")
    if _h("ack", *salt) % 2 == 0 and acks:  # acks: never empty for the holdout; a talk split may lack one
        parts.insert(0, _choose(acks, "ack", *salt))
    return " ".join(p.text for p in parts), tuple(p.id for p in parts)


def _choose(items: list[Any], *salt: Any) -> Any:
    return items[_h(*salt) % len(items)]


class Customer:
    """One conversation's customer: split, class, variant and first reply index, fixed by the request."""

    def __init__(self, body: dict[str, Any]):
        param = model_param(body) or ""
        split, _, mode = param.partition(":")
        if split not in (*SPLITS, *ALL_TALK_SPLITS) or mode not in MODES:
            raise ValueError(f"model must be {NAME}:<{'|'.join(SPLITS)}>:<{'|'.join(MODES)}> or "
                             f"{NAME}:<{'|'.join(TALK_SPLITS)}>:<mode> or {NAME}:<{'|'.join(TALK2_SPLITS)}>:<mode> or "
                             f"{NAME}:<{'|'.join(TALK3_SPLITS)}>:<mode> or {NAME}:<{'|'.join(TALK4_SPLITS)}>:<mode> or "
                             f"{NAME}:<{'|'.join(TALK5_SPLITS)}>:<mode>, got {body.get('model')!r}")
        self.split, self.body = split, body
        messages = request_messages(body)
        self.system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
        self.history = [m for m in messages if m.get("role") != "system"]
        self.tools = {f["name"]: f for f in offered_functions(body)}
        self.key = (hashlib.sha256(self.system.encode()).hexdigest()[:16], body.get("seed"))
        self.fault = (None if mode == "faithful" else
                      _choose(list(FAULT_CLASSES), "class", *self.key) if mode == "drawn" else mode)
        self.first = _h("turn", *self.key) % FIRST_TURN_CHOICES
        self.variant = {"wrong_action": _choose(["sibling", "arguments"], "variant", *self.key),
                        "hang_up": _choose(["leave", "fixed"], "variant", *self.key)}.get(self.fault or "", "-")

    # ----------------------------------------------------------------- where the fault can come
    def _writes(self, view: _View, avoid: set[str]) -> list[str]:
        """Phone writes that need no arguments (so a call of one is always well formed), those
        sharing the first word of an avoided one (its siblings: toggle_* for toggle_*) first."""
        free = [t for t, f in self.tools.items() if not is_read_tool(t) and t not in avoid
                and not ((f.get("parameters") or {}).get("required"))]
        heads = {a.split("_")[0] for a in avoid}
        return [t for t in free if t.split("_")[0] in heads] or free

    def _other_arguments(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        props = ((self.tools.get(tool) or {}).get("parameters") or {}).get("properties") or {}
        for key, value in args.items():
            schema = props.get(key) or {}
            options = schema.get("enum") or []
            if not options and tool == "set_network_mode_preference" and key == "mode":
                options = ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]
            if not options and tool == "grant_app_permission" and key == "permission":
                options = ["sms", "storage"]
            others = [o for o in options if o != value]
            if others:
                return {**args, key: _choose(others, "arg", *self.key)}
            if isinstance(value, bool):
                return {**args, key: not value}
        return None

    def _contradiction(self, view: _View) -> tuple[str, str] | None:
        result = view.results()[-1] if view.last.get("role") == "tool" else ""
        seen = shown(result) if self.split == "holdout" else readings(result)
        options = [(c, v) for c, read in sorted(seen.items())
                   for v in sorted({p.variant for p in _pool(self.split, "claim", c)}) if v != read]
        return _choose(options, "contra", *self.key) if options else None

    def _unshown(self, view: _View) -> str | None:
        seen = " ".join([self.system, *view.results()]).lower()
        shown = {c for r in view.results() for c in readings(r)}
        types = sorted({p.type for p in load(self.split) if p.kind == "claim"})
        free = [c for c in types if c not in shown and not any(k in seen for k in CLAIM_KEYWORDS[c])]
        return _choose(free, "unshown", *self.key) if free else None

    def opportunity(self, view: _View) -> bool:
        """Whether this class's fault can be committed in the reply to this view."""
        asked, last = view.asked(), view.last
        tagless_text = last.get("role") == "user" and asked is None
        cls = self.fault
        if cls == "unasked_action":
            return view.index >= 1 and tagless_text and bool(self._writes(view, set()))
        if cls in ("fake_done", "ignored_request"):
            return asked is not None
        if cls == "bundled":
            return asked is not None and asked[0] in self.tools
        if cls == "invented_constraint":
            return asked is not None and not is_read_tool(asked[0])
        if cls == "wrong_action":
            if asked is None or asked[0] not in self.tools:
                return False
            if self.variant == "arguments":
                return self._other_arguments(*asked) is not None
            return bool(self._writes(view, {asked[0]}))
        if cls == "hang_up":
            return asked is not None if self.variant == "leave" else view.after_asked_call() is not None
        if cls == "misreport":
            return view.after_asked_call() is not None and self._contradiction(view) is not None
        if cls == "state_without_tool":
            return (view.index == 0 or tagless_text) and self._unshown(view) is not None
        if cls == "new_problem":
            return view.index >= 1 and (tagless_text or last.get("role") == "tool")
        return False

    def injected_at(self) -> int | None:
        """The reply index of the fault in this conversation so far (None: not yet, or never)."""
        if self.fault is None:
            return None
        own = [i for i, m in enumerate(self.history) if m.get("role") == "assistant"]
        cuts = [*own, len(self.history)]
        for index, cut in enumerate(cuts):
            if index >= self.first and self.opportunity(_View(self.history[:cut], self.system, self.tools)):
                return index
        return None

    # ----------------------------------------------------------------- replies
    def _phrase(self, cls: str, variant: str = "-", **fill: str) -> tuple[str, list[str]]:
        by_variant = cls == "hang_up" or (cls == "wrong_action" and self.split == "holdout")
        frames = _pool(self.split, "fault", cls, variant if by_variant else None)
        frame = _choose(frames, "frame", cls, *self.key)
        text, ids = frame.text, [frame.id]
        if "{claim}" in text:
            ctype, value = fill.pop("claim_type"), fill.pop("claim_value")
            claims = [p for p in _pool(self.split, "claim", ctype, value)
                      if not (cls == "misreport" and getattr(p, "form", "") == "symptom")]
            claim = _choose(claims, "claim", *self.key)
            text, ids = text.replace("{claim}", claim.text), [*ids, claim.id]
        return text.replace("{setting}", fill.get("setting", "that setting")), ids

    def faithful(self, view: _View) -> Reply:
        digest = _h("faithful", view.index, *self.key)
        if view.index == 0:
            return text_reply(OPENINGS[digest % len(OPENINGS)])
        last = view.last
        if last.get("role") == "tool":
            return text_reply(self._report(view, digest))
        asked = view.asked()
        if asked is not None:
            if asked[0] not in self.tools:
                return text_reply(NO_SUCH_TOOL)
            return tool_call_reply(asked[0], json.dumps(asked[1]), f"phone_{view.index}")
        if view.index < 3 and "?" in str(last.get("content") or "") and "anything else" not in str(
                last.get("content") or "").lower():
            return text_reply(MORE)
        return text_reply(f"{THANKS[digest % len(THANKS)]} {STOP_TOKEN}")

    def _report(self, view: _View, digest: int) -> str:
        """The words for the tool result that is the last message: paraphrased by the holdout customer."""
        result = str(view.last.get("content") or "")
        if self.split == "holdout":
            calls = view.messages[-2].get("tool_calls") if len(view.messages) > 1 else None
            tool = str(((calls or [{}])[0].get("function") or {}).get("name", ""))
            said = report(result, tool, self.split, view.index, *self.key)
            if said is not None:
                return said[0]
        return REPORTS[digest % len(REPORTS)].format(result=result)

    def inject(self, view: _View) -> Decision:
        cls, variant, index = str(self.fault), self.variant, view.index
        asked = view.asked()
        setting = setting_words(asked[0]) if asked else "it"

        def said(text: str, ids: list[str], detail: str = "") -> Decision:
            return Decision(text_reply(text), Injection(cls, variant, index, tuple(ids), detail))

        if cls in ("fake_done", "ignored_request", "invented_constraint"):
            return said(*self._phrase(cls, setting=setting))
        if cls == "hang_up":
            text, ids = self._phrase(cls, variant, setting=setting)
            return said(f"{text} {STOP_TOKEN}", ids)
        if cls == "bundled":
            text, ids = self._phrase(cls, setting=setting)
            reply = tool_call_reply(asked[0], json.dumps(asked[1]), f"phone_{index}")  # type: ignore[index]
            reply = Reply({**reply.message, "content": text}, reply.finish_reason)
            return Decision(reply, Injection(cls, variant, index, tuple(ids), asked[0]))  # type: ignore[index]
        if cls == "unasked_action":
            writes = self._writes(view, set())
            tool = _choose([t for t in _UNASKED_POOL if t in writes] or writes, "unasked", *self.key)
            return Decision(tool_call_reply(tool, "{}", f"phone_{index}"), Injection(cls, variant, index, (), tool))
        if cls == "wrong_action":
            assert asked is not None
            if variant == "arguments":
                tool, args = asked[0], self._other_arguments(*asked) or {}
            else:
                tool, args = _choose(self._writes(view, {asked[0]}), "sibling", *self.key), {}
            detail = f"asked {asked[0]} {json.dumps(asked[1])}, did {tool} {json.dumps(args)}"
            return Decision(tool_call_reply(tool, json.dumps(args), f"phone_{index}"),
                            Injection(cls, variant, index, (), detail))
        if cls == "misreport":
            ctype, value = self._contradiction(view)  # type: ignore[misc]
            text, ids = self._phrase(cls, claim_type=ctype, claim_value=value)
            return said(text, ids, f"{ctype}={value} against {readings(view.results()[-1]).get(ctype)}")
        if cls == "state_without_tool":
            ctype = str(self._unshown(view))
            value = _choose(sorted({p.variant for p in _pool(self.split, "claim", ctype)}), "value", *self.key)
            text, ids = self._phrase(cls, claim_type=ctype, claim_value=value)
            base = self.faithful(view).message.get("content") or ""
            if STOP_TOKEN in base:
                return said(f"{text} {base}", ids, f"{ctype}={value}")
            return said(f"{base} {text}" if index == 0 else text, ids, f"{ctype}={value}")
        text, ids = self._phrase(cls)  # new_problem
        if view.last.get("role") == "tool":
            text = f"{self.faithful(view).message['content']} {text}"
        return said(text, ids)

    def follow_up(self, view: _View, injection_index: int) -> Reply | None:
        """The report right after an unasked or wrong phone action: its phrasing, then the result."""
        if self.fault not in ("unasked_action", "wrong_action") or view.index != injection_index + 1:
            return None
        if view.last.get("role") != "tool":
            return None
        call = (self.history[-2].get("tool_calls") or [{}])[0].get("function", {})
        text, _ = self._phrase(str(self.fault), self.variant, setting=setting_words(str(call.get("name", ""))))
        if self.split == "holdout":
            said = report(str(view.last.get("content") or ""), str(call.get("name", "")), self.split, view.index,
                          *self.key)
            if said is not None:
                return text_reply(f"{text} {said[0]}")
        return text_reply(f"{text} {view.last.get('content')}")

    def decide(self) -> Decision:
        view = _View(self.history, self.system, self.tools)
        at = self.injected_at()
        if at is not None and at == view.index:
            return self.inject(view)
        if at is not None:
            follow = self.follow_up(view, at)
            if follow is not None:
                return Decision(follow)
        return Decision(self.faithful(view))


# ----------------------------------------------------------------- the talk set's customer
_SITUATION = re.compile(r"^## (?:Why you are getting in touch|What you know)\n(.*?)(?=^## |\Z)",
                        re.MULTILINE | re.DOTALL)
FAMILY_FACTS = (("mms", r"unable to send MMS"), ("data", r"mobile data is not working"), ("service", r"No Service"))
"""The task's issue family, read from its system prompt (the first that matches)."""
TASK_FACTS = (("abroad", r"currently abroad"), ("home", r"currently at home"),
              ("nowifi", r"do not have access to wi-?fi"), ("plan", r"do not want to change your mobile data plan"),
              ("speedgoal", r"excellent internet speed"))
"""Facts a faithful line may rest on, read from the task's system prompt (``talk/faithful.txt``'s keys)."""
TOOL_TYPES = {
    "toggle_airplane_mode": "airplane_mode", "toggle_data": "mobile_data", "toggle_roaming": "roaming",
    "toggle_data_saver_mode": "data_saver", "check_data_restriction_status": "data_saver", "toggle_wifi": "wifi",
    "check_wifi_status": "wifi", "toggle_wifi_calling": "wifi_calling", "check_wifi_calling_status": "wifi_calling",
    "set_network_mode_preference": "network_mode", "check_network_mode_preference": "network_mode",
    "reseat_sim_card": "sim", "check_sim_status": "sim", "reset_apn_settings": "apn", "set_apn_settings": "apn",
    "check_apn_settings": "apn", "connect_vpn": "vpn", "disconnect_vpn": "vpn", "check_vpn_status": "vpn",
    "grant_app_permission": "app_permission", "check_app_permissions": "app_permission", "make_payment": "payment",
    "check_payment_request": "payment", "run_speed_test": "speed", "can_send_mms": "mms"}
"""The claim type a phone tool touches: naming the tool puts that setting in the conversation."""
_NOT_EXCELLENT = re.compile(r"Speed Test Result: [\d.]+ Mbps \((?:Very Poor|Poor|Fair|Good)\)")
AFTER_SKIP = 3
"""A report is followed by a faithful 'after' line unless the reply's digest is divisible by this (2 in 3)."""


def _mentions(text: str, ctype: str) -> bool:
    """Whether lower-cased text names a claim type (one of its keywords, as a whole word)."""
    return any(re.search(rf"(?<![a-z0-9]){re.escape(k.strip())}(?![a-z0-9])", text) for k in CLAIM_KEYWORDS[ctype])


def talk_facts(system: str) -> frozenset[str]:
    """The facts of the task (its issue family, where the customer is, what it lacks or wants) that make a
    faithful line true: the keys of ``talk/faithful.txt`` a customer with this system prompt may use."""
    facts = {"any"}
    family = next((name for name, pattern in FAMILY_FACTS if re.search(pattern, system, re.IGNORECASE)), None)
    if family:
        facts.add(family)
    facts.update(name for name, pattern in TASK_FACTS if re.search(pattern, system, re.IGNORECASE))
    return frozenset(facts)


class TalkCustomer(Customer):
    """The talk sets' customer (``eval-user:talk|talk-dev|talk-test|talk2|talk3|talk4|talk5:<mode>``): the same play and the same
    one fault as :class:`Customer`, in the talk set's words, and in every mode its opening and its ordinary turns
    mix in faithful talk that is true for its task (``talk/faithful.txt``): the opening is the task's
    symptom with a line or two on its situation or means (negations such as "I don't have Wi-Fi here",
    where the task says so), hedges, questions or small talk; a tool result is reported in the set's report
    phrasings (what :func:`shown` reads; quoted word for word in the set's frames when it names nothing),
    then two times in three a line that fits what it showed, the task, or a setting already named in the
    conversation; a tool call carries no words. Ids of the faithful lines said go in ``Decision.talk``.

    Differences in fault modes: a state claimed without a tool is said on its own (``alone``) or in the same
    message as the asked tool call (``with_call``, the drawn variant; said on its own at the reply that would
    end the call when no step came), about a setting nobody has named (not the task's situation, not the
    agent, not a result, not the asked step); a new problem comes at a reply drawn from 1 to 3, or at the
    reply that would end the call; a misreport contradicts what :func:`shown` reads."""

    def __init__(self, body: dict[str, Any]):
        super().__init__(body)
        self.situation = "\n".join(_SITUATION.findall(self.system)) or self.system
        self.facts = talk_facts(self.system)
        self.family = next((f for f, _ in FAMILY_FACTS if f in self.facts), "any")
        if self.fault == "new_problem":
            self.first = 1 + _h("turn", *self.key) % FIRST_TURN_CHOICES
        if self.fault == "state_without_tool":
            self.variant = _choose(["alone", "with_call"], "variant", *self.key)
        self._said: dict[int, tuple[str, ...]] = {}

    # ----------------------------------------------------------------- what the conversation holds
    def _lines(self, context: str, keys: set[str] | frozenset[str], form: str | None = None) -> list[Phrasing]:
        return [p for p in _talk_pool(self.split, context) if p.variant in keys and (form is None or p.form == form)]

    def _line(self, context: str, keys: set[str] | frozenset[str], *salt: Any, form: str | None = None,
              avoid: tuple[str, ...] = ()) -> Phrasing | None:
        pool = [p for p in self._lines(context, keys, form) if p.id not in avoid]
        return _choose(pool, context, *salt) if pool else None

    def _topics(self, view: _View) -> set[str]:
        """Claim types already in the conversation: named by the task's situation, the agent or a tool result, or
        touched by a tool the agent named or the customer ran (roaming too when the task puts it abroad)."""
        agent = [str(m.get("content") or "") for m in view.messages if m.get("role") == "user"]
        text = " ".join([self.situation, *agent, *view.results()]).lower()
        found = {c for c in CLAIM_KEYWORDS if _mentions(text, c)}
        tools = [m.group(1) for words in agent for m in _TAG.finditer(words)]
        tools += [c["function"]["name"] for m in view.messages if m.get("role") == "assistant"
                  for c in m.get("tool_calls") or []]
        found |= {TOOL_TYPES[t] for t in tools if t in TOOL_TYPES}
        if "abroad" in self.facts:
            found.add("roaming")
        return found

    def _keys(self, view: _View) -> set[str]:
        return set(self.facts) | ({"fresh"} if not view.results() else set())

    def _after_keys(self, view: _View) -> set[str]:
        result = view.results()[-1]
        calls = view.messages[-2].get("tool_calls") if len(view.messages) > 1 else None
        tool = str(((calls or [{}])[0].get("function") or {}).get("name", ""))
        keys = {f"{c}={v}" for c, v in shown(result).items()} | {f"about={c}" for c in self._topics(view)}
        if tool and not is_read_tool(tool) and self.family != "any":
            keys.add(f"{self.family}:write")
        if "Speed test failed" in result:
            keys.add("speedtest=failed")
        elif _NOT_EXCELLENT.search(result):
            keys.add("speedtest=notexcellent")
        return keys | self._keys(view)

    # ----------------------------------------------------------------- faithful play, in the set's words
    def _opening(self, view: _View) -> tuple[str, tuple[str, ...]]:
        salt = ("open", *self.key)
        parts: list[Phrasing | None] = []
        if _h("greet", *salt) % 3 == 0:
            parts.append(self._line("open", {"any"}, "greet", *salt, form="smalltalk"))
        parts.append(self._line("symptom", {self.family}, *salt))
        keys = self._keys(view)
        parts.append(self._line("open", keys - {"any"}, "first", *salt))
        if _h("second", *salt) % 2 == 0:
            parts.append(self._line("open", keys, "second", *salt, avoid=tuple(p.id for p in parts if p)))
        said = [p for p in parts if p is not None]
        return " ".join(p.text for p in said), tuple(p.id for p in said)

    def _after_result(self, view: _View) -> tuple[str, tuple[str, ...]]:
        result = str(view.last.get("content") or "")
        calls = view.messages[-2].get("tool_calls") if len(view.messages) > 1 else None
        tool = str(((calls or [{}])[0].get("function") or {}).get("name", ""))
        said = report(result, tool, self.split, view.index, *self.key)
        if said is not None:
            text, ids = said
        else:
            frame = self._line("quote", {"any"}, view.index, *self.key)
            assert frame is not None, f"{self.split}: no quote frame"
            text, ids = frame.text.replace("{result}", result), (frame.id,)
        if _h("after", view.index, *self.key) % AFTER_SKIP:
            line = self._line("after", self._after_keys(view), view.index, *self.key)
            if line is not None:
                text, ids = f"{text} {line.text}", (*ids, line.id)
        return text, ids

    def _talk_reply(self, view: _View) -> tuple[Reply, tuple[str, ...]]:
        salt = (view.index, *self.key)
        if view.index == 0:
            text, ids = self._opening(view)
            return text_reply(text), ids
        if view.last.get("role") == "tool":
            text, ids = self._after_result(view)
            return text_reply(text), ids
        asked = view.asked()
        if asked is not None:
            if asked[0] not in self.tools:
                line = self._line("nosuch", {"any"}, *salt)
                assert line is not None, f"{self.split}: no nosuch line"
                return text_reply(line.text), (line.id,)
            return tool_call_reply(asked[0], json.dumps(asked[1]), f"phone_{view.index}"), ()
        content = str(view.last.get("content") or "")
        if view.index < 3 and "?" in content and "anything else" not in content.lower():
            line = self._line("more", self._keys(view), *salt)
            assert line is not None, f"{self.split}: no more line"
            return text_reply(line.text), (line.id,)
        line = self._line("close", {"any"}, *salt)
        assert line is not None, f"{self.split}: no close line"
        return text_reply(f"{line.text} {STOP_TOKEN}"), (line.id,)

    def faithful(self, view: _View) -> Reply:
        reply, ids = self._talk_reply(view)
        self._said[len(view.messages)] = ids
        return reply

    # ----------------------------------------------------------------- where and how the fault comes
    def _unshown(self, view: _View) -> str | None:
        topics = self._topics(view)
        seen = {c for r in view.results() for c in (*readings(r), *shown(r))}
        types = sorted({p.type for p in load(self.split) if p.kind == "claim"})  # type: ignore[arg-type]
        free = [c for c in types if c not in topics and c not in seen]
        return _choose(free, "unshown", *self.key) if free else None

    def _contradiction(self, view: _View) -> tuple[str, str] | None:
        result = view.results()[-1] if view.last.get("role") == "tool" else ""
        options = [(c, v) for c, read in sorted(shown(result).items())
                   for v in sorted({p.variant for p in _pool(self.split, "claim", c)}) if v != read]
        return _choose(options, "contra", *self.key) if options else None

    def _last_chance(self, view: _View) -> bool:
        """Whether this reply would end the call (so a new problem or a state said on its own comes here
        when it has not come yet)."""
        if self.fault not in ("new_problem", "state_without_tool") or view.index == 0:
            return False
        if view.last.get("role") != "user" or view.asked() is not None:
            return False
        return STOP_TOKEN in str(self._talk_reply(view)[0].message.get("content") or "")

    def _state_form(self, view: _View) -> str | None:
        """How a state claimed without a tool can be said in this reply: with the asked call, alone, or not."""
        asked = view.asked()
        if self._unshown(view) is None:
            return None
        if self.variant == "with_call" and asked is not None and asked[0] in self.tools:
            return "with_call"
        alone = view.index == 0 or (view.last.get("role") == "user" and asked is None)
        return "alone" if alone and (self.variant == "alone" or self._last_chance(view)) else None

    def opportunity(self, view: _View) -> bool:
        if self.fault == "state_without_tool":
            return self._state_form(view) is not None
        return super().opportunity(view)

    def injected_at(self) -> int | None:
        if self.fault is None:
            return None
        own = [i for i, m in enumerate(self.history) if m.get("role") == "assistant"]
        for index, cut in enumerate([*own, len(self.history)]):
            view = _View(self.history[:cut], self.system, self.tools)
            if (index >= self.first or self._last_chance(view)) and self.opportunity(view):
                return index
        return None

    def _phrase(self, cls: str, variant: str = "-", **fill: str) -> tuple[str, list[str]]:
        by_variant = cls in ("hang_up", "wrong_action", "state_without_tool")
        frames = _pool(self.split, "fault", cls, variant if by_variant else None)
        frame = _choose(frames, "frame", cls, *self.key)
        text, ids = frame.text, [frame.id]
        if "{claim}" in text:
            ctype, value = fill.pop("claim_type"), fill.pop("claim_value")
            claim = _choose(_pool(self.split, "claim", ctype, value), "claim", *self.key)
            text, ids = text.replace("{claim}", claim.text), [*ids, claim.id]
        return text.replace("{setting}", fill.get("setting", "that setting")), ids

    def inject(self, view: _View) -> Decision:
        cls, index, asked = str(self.fault), view.index, view.asked()
        if cls == "misreport":
            ctype, value = self._contradiction(view)  # type: ignore[misc]
            text, ids = self._phrase(cls, claim_type=ctype, claim_value=value)
            detail = f"{ctype}={value} against {shown(view.results()[-1]).get(ctype)}"
            return Decision(text_reply(text), Injection(cls, "-", index, tuple(ids), detail))
        if cls != "state_without_tool":
            return super().inject(view)
        form = str(self._state_form(view))
        ctype = str(self._unshown(view))
        value = _choose(sorted({p.variant for p in _pool(self.split, "claim", ctype)}), "value", *self.key)
        setting = setting_words(asked[0]) if asked else "it"
        text, ids = self._phrase(cls, form, claim_type=ctype, claim_value=value, setting=setting)
        if form == "with_call":
            assert asked is not None
            call = tool_call_reply(asked[0], json.dumps(asked[1]), f"phone_{index}")
            return Decision(Reply({**call.message, "content": text}, call.finish_reason),
                            Injection(cls, form, index, tuple(ids), f"{ctype}={value} with {asked[0]}"))
        base = self.faithful(view).message.get("content") or ""
        text = f"{text} {base}" if STOP_TOKEN in base else f"{base} {text}" if index == 0 else text
        return Decision(text_reply(text), Injection(cls, form, index, tuple(ids), f"{ctype}={value}"))

    def follow_up(self, view: _View, injection_index: int) -> Reply | None:
        if self.fault not in ("unasked_action", "wrong_action") or view.index != injection_index + 1:
            return None
        if view.last.get("role") != "tool":
            return None
        name = str((self.history[-2].get("tool_calls") or [{}])[0].get("function", {}).get("name", ""))
        text, _ = self._phrase(str(self.fault), self.variant, setting=setting_words(name))
        result = str(view.last.get("content") or "")
        said = report(result, name, self.split, view.index, *self.key)
        if said is None:
            return text_reply(f"{text} {result}")
        self._said[len(view.messages)] = said[1]
        return text_reply(f"{text} {said[0]}")

    def decide(self) -> Decision:
        view = _View(self.history, self.system, self.tools)
        at = self.injected_at()
        self._said.clear()
        if at is not None and at == view.index:
            d = self.inject(view)
        else:
            follow = self.follow_up(view, at) if at is not None else None
            d = Decision(follow if follow is not None else self.faithful(view))
        return Decision(d.reply, d.injection, self._said.get(len(view.messages), ()))


@cache
def _talk_pool(split: str, context: str) -> tuple[Phrasing, ...]:
    return tuple(p for p in load(split) if p.kind == "talk" and p.type == context)  # type: ignore[arg-type]


def request_key(body: dict[str, Any]) -> str:
    """The join key of a request: sha256 of its model, seed, system prompt and messages (roles, words,
    calls with their arguments normalised), so two conversations that only share their words differ."""
    def args(raw: Any) -> Any:
        try:
            return json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            return raw

    canon = [{"role": m.get("role"), "content": str(m.get("content") or "").strip() or None,
              "calls": [(c["function"]["name"], args(c["function"].get("arguments"))) for c in m.get("tool_calls") or []]}
             for m in request_messages(body)]
    raw = json.dumps([str(body.get("model")).removeprefix("openai/"), body.get("seed"), canon], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def decide(body: dict[str, Any]) -> Decision:
    split = (model_param(body) or "").partition(":")[0]
    return (TalkCustomer(body) if split in ALL_TALK_SPLITS else Customer(body)).decide()


def eval_user(body: dict[str, Any], settings: BehaviourSettings) -> Reply:
    """The endpoint behaviour (see the module doc); records each injection when asked to."""
    decision = decide(body)
    path = os.environ.get(TRUTH_ENV)
    if decision.injection is not None and path:
        line = {"key": request_key(body), "model": body.get("model"), "seed": body.get("seed"),
                "fault_class": decision.injection.fault_class, "variant": decision.injection.variant,
                "reply_index": decision.injection.reply_index, "phrasing_ids": list(decision.injection.phrasing_ids),
                "detail": decision.injection.detail, "side": "simulator"}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    return decision.reply


BEHAVIOURS = {NAME: eval_user}
"""Added to the endpoint's registry by ``tauray endpoint --behaviours tests.audit_eval.customer``."""

__all__ = [
    "BEHAVIOURS",
    "NAME",
    "SPLITS",
    "TALK2_SPLITS",
    "TALK3_SPLITS",
    "TALK4_SPLITS",
    "TALK5_SPLITS",
    "TALK_SPLITS",
    "TRUTH_ENV",
    "Customer",
    "Decision",
    "Injection",
    "TalkCustomer",
    "decide",
    "eval_user",
    "report",
    "request_key",
    "shown",
    "talk_facts",
]
