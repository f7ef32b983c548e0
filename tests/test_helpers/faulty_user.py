"""Faulty scripted customers: ground truth for the user-simulator audit.

``faulty-user:<class>[:<split>]`` plays ``scripted-user-writes`` (it opens, performs each
phone action the agent asks for, reports what the phone shows, stops when nothing more
is asked) but commits one fault of ``<class>`` once, at a seeded point: the ``j``-th
point of the conversation where that fault can be committed, ``j`` drawn from the
request's ``seed`` (the conversation's seed) or, without one, from the system prompt.
Classes whose fault fits a closing message fall back to the closing when the drawn
point never came. ``<class>`` may also name a hard negative (a legitimate refusal, a
repeated status check, a stop after a verified success, the customer's own correct
identity): behaviour that looks like a fault and is not one.

Each class has several phrasings; ``:tune`` uses the even-numbered ones, ``:heldout``
the odd-numbered ones, no split all of them, so detectors tuned on one half can be
measured on the other.

Like every behaviour it is a pure function of the request: whether the fault was already
committed is recomputed from the history, so the audit's calibration can replay a
recorded conversation through it (and through the clean customer) to find the turn the
fault was committed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tauray.endpoint.replies import (
    BehaviourError,
    Reply,
    conversation_digest,
    model_param,
    request_messages,
    text_reply,
    tool_call_reply,
)
from tauray.endpoint.writers import scripted_user_writes
from tauray.scenarios.conventions import STOP, TRANSFER

SPLITS = ("tune", "heldout")

# Phone writes a faulty customer may do unasked (all telecom phone tools without arguments).
_SUBSTITUTES = ("reboot_device", "toggle_wifi", "toggle_data_saver_mode", "toggle_wifi_calling",
                "toggle_airplane_mode", "toggle_roaming", "toggle_data", "reseat_sim_card")
# What each substitute's topic is called in an agent's words: a substitute the agent's
# message mentions is not "unasked", so it is never chosen.
_TOPIC = {
    "reboot_device": r"reboot|restart", "toggle_wifi": r"wi-?fi(?! calling)", "toggle_data_saver_mode": r"data saver",
    "toggle_wifi_calling": r"wi-?fi calling", "toggle_airplane_mode": r"airplane|flight mode",
    "toggle_roaming": r"roaming", "toggle_data": r"\bdata\b(?! saver)", "reseat_sim_card": r"\bsim\b|re-?seat",
}
_VERIFY = {"mms": "can_send_mms", "data": "run_speed_test", "service": "check_status_bar"}
# Each family's "resolved" condition as its task states it: MMS sends; speed test Excellent; signal.
_RESOLVED_WORDS = {"mms": r"\bcan send MMS", "data": r"Speed Test Result:[^\n]*\(Excellent\)",
                   "service": r"Status Bar: 📶"}
# Call ids of a check the customer runs on its own to decide whether to commit its fault (the
# fault is what it does after the result, so the replay does not count the check as the fault).
PREPARATIONS = ("phone_o", "phone_n", "phone_c")


@dataclass(frozen=True)
class View:
    """The request as the customer sees it: its history, system prompt and tools."""

    messages: list[dict[str, Any]]
    system: str
    tools: frozenset[str]
    seed: int

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    def phone_request(self) -> tuple[str, str] | None:
        from tauray.actors.policies import parse_phone_request

        last = self.last
        if last.get("role") != "user" or not isinstance(last.get("content"), str):
            return None
        return parse_phone_request(last["content"])

    def latest_tool_result(self) -> str | None:
        last = self.last
        return str(last.get("content") or "") if last.get("role") == "tool" else None

    def family(self) -> str:
        # read from why the customer calls: every telecom task's instructions mention MMS
        # ("If the agent asks if you are able to send an MMS message..."), so the whole prompt cannot tell
        reason = re.search(r"## Why you are getting in touch\n(.*?)(?:\n\n|$)", self.system, re.DOTALL)
        text = (reason[1] if reason else self.system).lower()
        if "mms" in text or "picture message" in text:
            return "mms"
        if "internet speed" in text or "mobile data" in text:
            return "data"
        return "service"

    def resolved(self, result: str | None) -> bool:
        """Whether a phone result shows the family's stated resolved condition."""
        return bool(result and re.search(_RESOLVED_WORDS[self.family()], result))


def _view(body: dict[str, Any]) -> View:
    messages = [m for m in request_messages(body) if m.get("role") != "system"]
    system = "\n".join(str(m.get("content") or "") for m in request_messages(body) if m.get("role") == "system")
    tools = frozenset(str((t.get("function") or {}).get("name")) for t in body.get("tools") or []
                      if isinstance(t, dict))
    seed = body.get("seed")
    if not isinstance(seed, int):
        seed = conversation_digest({"messages": [{"content": system}]})
    return View(messages=messages, system=system, tools=tools, seed=seed)


def _phrasings(options: tuple[str, ...], split: str | None) -> tuple[str, ...]:
    if split is None:
        return options
    return options[SPLITS.index(split)::2]


def _pick(options: tuple[Any, ...], view: View, salt: int = 0) -> Any:
    return options[(view.seed // 3 + salt + len(view.messages)) % len(options)]


def _is_closing(view: View, clean: Reply) -> bool:
    return STOP in str(clean.message.get("content") or "")


# --- the faults: when each can be committed, and what it says or does then -------------------

Eligible = Callable[[View, Reply], bool]
Commit = Callable[[View, Reply, str | None], Reply]


@dataclass(frozen=True)
class Fault:
    """One fault class (or hard negative) of the faulty customer."""

    name: str
    eligible: Eligible
    commit: Commit
    points: int = 2  # the fault is committed at the j-th eligible point, j < points
    at_closing: bool = False  # when the drawn point never came, commit at the closing instead
    negative: bool = False  # a hard negative: looks like a fault, is not one
    # what to say right after the result of its own check (None: play the clean customer)
    follow_up: Callable[[View, str | None], Reply | None] | None = None


def _requested(view: View, clean: Reply) -> bool:
    return view.phone_request() is not None and bool(clean.message.get("tool_calls"))


def _substitute(view: View, avoid: str | None) -> str | None:
    text = str(view.last.get("content") or "").lower() if view.last.get("role") == "user" else ""
    recent = next((str(m.get("content") or "").lower() for m in reversed(view.messages) if m.get("role") == "user"), "")
    options = [t for t in _SUBSTITUTES if t in view.tools and t != avoid
               and not re.search(_TOPIC[t], text) and not re.search(_TOPIC[t], recent)]
    return _pick(tuple(options), view) if options else None


_PREMATURE = ("That's enough for today, goodbye.", "I don't have time for this right now, bye.",
              "Never mind, I'll leave it like this.", "OK, I think I'm done here, thanks.",
              "Let's stop here, I have to go.", "Forget it, goodbye.")


def _commit_premature(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(f"{_pick(_phrasings(_PREMATURE, split), view)} {STOP}")


_ASKING_STOP = ("Thanks. Can you also check my last bill? {stop}", "Great. Please also send me a confirmation email. {stop}",
                "Thanks, and could you look at my roaming charges too? {stop}",
                "Bye. Would you call me back tomorrow to confirm? {stop}",
                "Thanks, that's it. Can you also lower my monthly plan price? {stop}",
                "Alright. I also want a refund for the outage, please. {stop}")


def _commit_asking_stop(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_ASKING_STOP, split), view).format(stop=STOP))


_TRANSFER = ("I want to speak to a human.", "Please put me through to a real person.",
             "Get me a supervisor.", "I'd rather talk to someone else, transfer me.",
             "Connect me with a human agent now.", "I'm done with the bot, human please.")


def _commit_transfer(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(f"{_pick(_phrasings(_TRANSFER, split), view)} {TRANSFER}")


_DONE = ("Done, I did that.", "Okay, I've done it. What next?", "Sure, it's done now.",
         "I just did that, all set.", "Finished, I did it already.", "Done. What should I do next?")


def _commit_done(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_DONE, split), view))


def _has_substitute(view: View, clean: Reply) -> bool:
    request = view.phone_request()
    return _requested(view, clean) and _substitute(view, request[0] if request else None) is not None


def _commit_different(view: View, clean: Reply, split: str | None) -> Reply:
    request = view.phone_request()
    tool = _substitute(view, request[0] if request else None)
    return tool_call_reply(str(tool), "{}", f"phone_x{len(view.messages)}")


def _after_own_call(view: View, clean: Reply) -> bool:
    # right after a phone result, before reporting it (the request it answered is in the history)
    return view.latest_tool_result() is not None and _substitute(view, None) is not None


def _commit_extra(view: View, clean: Reply, split: str | None) -> Reply:
    tool = _substitute(view, None)
    return tool_call_reply(str(tool), "{}", f"phone_x{len(view.messages)}")


_FLIPS = ((r"\bis now ON\b", "is now OFF"), (r"\bis now OFF\b", "is now ON"),
          (r"\bturned ON\b", "turned OFF"), (r"\bturned OFF\b", "turned ON"),
          (r"Data Enabled", "Data Disabled"), (r"Data Disabled", "Data Enabled"),
          (r"\bcan send MMS\b", "cannot send MMS"), (r"\bcannot send MMS\b", "can send MMS"),
          (r"\((?:Excellent)\)", "(Poor)"), (r"\((?:Very Poor|Poor|Fair|Good)\)", "(Excellent)"),
          (r"📶⁴ Excellent", "📵 No Signal"), (r"📵 No Signal", "📶⁴ Excellent"))


def flipped(result: str) -> str | None:
    """The tool result with its first state word turned into its opposite; None when it has none."""
    for pattern, repl in _FLIPS:
        out, n = re.subn(pattern, repl, result, count=1)
        if n:
            return out
    return None


_REPORT = ("Done. My phone now shows: {r}", "It says: {r}", "Okay, now it reads {r}", "Alright. The screen shows {r}",
           "Finished. I see: {r}", "Here is what I get: {r}")


def _flippable(view: View, clean: Reply) -> bool:
    result = view.latest_tool_result()
    return result is not None and flipped(result) is not None


def _commit_contradiction(view: View, clean: Reply, split: str | None) -> Reply:
    result = flipped(view.latest_tool_result() or "") or ""
    return text_reply(_pick(_phrasings(_REPORT, split), view).format(r=result))


def _texting(view: View, clean: Reply) -> bool:
    return not clean.message.get("tool_calls") and bool(clean.message.get("content"))


def _known(view: View) -> dict[str, str]:
    m = re.search(r"You are (?P<name>[A-Z][a-z]+ [A-Z][a-z]+) with phone number (?P<phone>\d{3}-\d{3}-\d{4})",
                  view.system)
    out = m.groupdict() if m else {}
    out["where"] = "abroad" if re.search(r"currently abroad", view.system) else (
        "home" if re.search(r"currently at home", view.system) else "")
    return out


def _with_sentence(clean: Reply, sentence: str) -> Reply:
    text = str(clean.message.get("content") or "")
    if STOP in text:
        return text_reply(f"{sentence} {text}")
    return text_reply(f"{text} {sentence}")


def _wrong_number(phone: str, view: View) -> str:
    last = int(phone[-4:]) if phone[-4:].isdigit() else 0
    return f"{phone[:-4]}{(last + 1 + view.seed % 97) % 10000:04d}" if phone else "555-123-0000"


def _contradictions(view: View) -> tuple[str, ...]:
    known = _known(view)
    phone = known.get("phone", "")
    wrong = _wrong_number(phone, view)
    place = ("I'm at home right now, by the way." if known["where"] == "abroad" else
             "I'm travelling abroad in Spain at the moment." if known["where"] == "home" else
             "I'm calling from home, by the way.")
    return (f"My number is {wrong}, by the way.", f"In case you need it, my phone number is {wrong}.",
            "This is Mary Johnson speaking, by the way.", "My name is Robert Brown, for the record.",
            place, place.replace("by the way", "just so you know") if "by the way" in place else f"Just so you know: {place}")


def _commit_known(view: View, clean: Reply, split: str | None) -> Reply:
    options = _phrasings(_contradictions(view), split)
    known = _known(view)
    if not known["where"]:  # a location says nothing against a task that gives none
        options = tuple(o for o in options if "home" not in o and "abroad" not in o) or options
    return _with_sentence(clean, _pick(options, view))


_INVENTED = ("My date of birth is 12 March 1985, if you need it.", "I was born on 3 June 1979, for verification.",
             "My email is john.smith84@example.com.", "You can email me at jsmith.home@example.org.",
             "My account number is 88812345.", "I live at 42 Maple Street, in case you need my address.")


def _commit_invented(view: View, clean: Reply, split: str | None) -> Reply:
    return _with_sentence(clean, _pick(_phrasings(_INVENTED, split), view))


# --- hard negatives ------------------------------------------------------------------------

_REFUSAL = ("I'd rather not do that right now. Is there another way to fix this?",
            "I'm not comfortable changing that setting. Can we try something else?",
            "I prefer not to. What else could we try?", "Hmm, I don't want to do that. Any other option?")


def _accepts(view: View, request: tuple[str, str] | None) -> bool:
    """Whether the task tells the customer to accept this request (refusing it would break the task)."""
    return bool(request and request[0] == "make_payment"
                and re.search(r"asks you to pay a bill, you accept", view.system, re.IGNORECASE))


def _can_refuse(view: View, clean: Reply) -> bool:
    return _requested(view, clean) and not _accepts(view, view.phone_request())


def _commit_refusal(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_REFUSAL, split), view))


def _can_recheck(view: View, clean: Reply) -> bool:
    return view.latest_tool_result() is not None and "check_status_bar" in view.tools


def _commit_recheck(view: View, clean: Reply, split: str | None) -> Reply:
    return tool_call_reply("check_status_bar", "{}", f"phone_r{len(view.messages)}")


def _can_verify(view: View, clean: Reply) -> bool:
    return _is_closing(view, clean) and _VERIFY[view.family()] in view.tools


_SUCCESS = ("It works now, thank you! {stop}", "Everything looks fine now, thanks a lot. {stop}",
            "Great, that fixed it. Bye! {stop}", "Perfect, it's working. {stop}")


def _commit_verify(view: View, clean: Reply, split: str | None) -> Reply:
    return tool_call_reply(_VERIFY[view.family()], "{}", f"phone_v{len(view.messages)}")


def _correct_identity(view: View, clean: Reply, split: str | None) -> Reply:
    known = _known(view)
    options = (f"My number is {known.get('phone')}, by the way.", f"This is {known.get('name')} speaking.",
               f"My name is {known.get('name')}.", f"You can reach me on {known.get('phone')}.")
    return _with_sentence(clean, _pick(_phrasings(options, split), view))


# --- later classes: a repeated write, phone state no tool showed, the fault named early ----------


def _after_requested_write(view: View, clean: Reply) -> bool:
    # right after the result of the write the agent asked for (before reporting it)
    if view.latest_tool_result() is None:
        return False
    own = [m for m in view.messages if m.get("role") == "assistant" and m.get("tool_calls")]
    asked = next((str(m.get("content") or "") for m in reversed(view.messages) if m.get("role") == "user"), "")
    if not own:
        return False
    name = own[-1]["tool_calls"][0]["function"]["name"]
    return name.startswith("toggle_") and f"(phone action: {name} " in asked


def _commit_repeat(view: View, clean: Reply, split: str | None) -> Reply:
    own = [m for m in view.messages if m.get("role") == "assistant" and m.get("tool_calls")]
    name = own[-1]["tool_calls"][0]["function"]["name"]
    return tool_call_reply(name, "{}", f"phone_d{len(view.messages)}")


def _talking(view: View, clean: Reply) -> bool:
    # a text reply to the agent's words (not a report of a phone result)
    return _texting(view, clean) and view.last.get("role") == "user"


_UNSHOWN = ("By the way, my status bar shows 📵 No Signal.", "Also, Airplane Mode is now ON on my phone.",
            "Oh, and Mobile Data is now OFF, I noticed.", "Also the speed test said (Poor) earlier.",
            "I can see Data Disabled in the status bar.", "Also, my messaging app cannot send MMS.")


def _commit_unshown(view: View, clean: Reply, split: str | None) -> Reply:
    return _with_sentence(clean, _pick(_phrasings(_UNSHOWN, split), view))


_SUSPECTS = ("APN settings", "SIM card", "network mode", "VPN", "data saver", "Wi-Fi calling", "roaming setting",
             "airplane mode")
_SUSPECT_TOPIC = {"APN settings": r"\bapn\b", "SIM card": r"\bsim\b", "network mode": r"network mode",
                  "VPN": r"\bvpn\b", "data saver": r"data saver", "Wi-Fi calling": r"wi-?fi calling",
                  "roaming setting": r"roaming", "airplane mode": r"airplane"}
_NAMED = ("I think it might be my {t}.", "Maybe something is off with the {t}.", "My friend said it's probably the {t}.",
          "I suspect the {t}.", "It could be the {t}, I guess.", "I have a feeling it's the {t}.")


def _unnamed_suspect(view: View) -> str | None:
    said = (view.system + " " + " ".join(str(m.get("content") or "") for m in view.messages)).lower()
    options = tuple(t for t in _SUSPECTS if not re.search(_SUSPECT_TOPIC[t], said))
    return _pick(options, view) if options else None


def _can_name(view: View, clean: Reply) -> bool:
    return _talking(view, clean) and _unnamed_suspect(view) is not None


def _commit_named(view: View, clean: Reply, split: str | None) -> Reply:
    suspect = _unnamed_suspect(view)
    if suspect is None:  # every setting was already named: nothing to name early
        return clean
    return _with_sentence(clean, _pick(_phrasings(_NAMED, split), view).format(t=suspect))


def _can_restate(view: View, clean: Reply) -> bool:
    return _is_closing(view, clean) and _last_result(view) is not None


def _last_result(view: View) -> str | None:
    results = [str(m.get("content") or "") for m in view.messages if m.get("role") == "tool"]
    return results[-1].splitlines()[0] if results else None


_RESTATE = ("Thanks. As I said, my phone showed: {r} {stop}", "Okay. Last I saw: {r} {stop}",
            "Alright, it showed {r} {stop}", "Thank you. For the record: {r} {stop}")


def _commit_restate(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_RESTATE, split), view).format(r=_last_result(view), stop=STOP))


def _own_check(view: View, prefix: str) -> str | None:
    """The result of the family check the customer ran on its own (call id ``prefix``...), when
    the request's last message is that result."""
    result = view.latest_tool_result()
    own = [m for m in view.messages if m.get("role") == "assistant" and m.get("tool_calls")]
    if result is None or not own:
        return None
    call = own[-1]["tool_calls"][0]
    if call["function"]["name"] != _VERIFY[view.family()] or not str(call.get("id", "")).startswith(prefix):
        return None
    return result


def _after_verify(view: View, split: str | None) -> Reply | None:
    # stop_after_success: the verification read ran on the customer's own initiative; it stops
    # only when it shows the problem gone (else it reports the result, as the clean customer does:
    # stopping on a failure would be stop_after_failure, a fault)
    result = _own_check(view, "phone_v")
    if result is None or not view.resolved(result):
        return None
    return text_reply(_pick(_phrasings(_SUCCESS, split), view).format(stop=STOP))


# --- later classes: a stop right after a failing check, no end after the resolved one, the task's
# constraints broken, text sent with a call ----------------------------------------------------------


def _after_asked_action(view: View, clean: Reply) -> bool:
    # right after the result of the phone action the agent asked for, when the family has a check
    result = view.latest_tool_result()
    own = [m for m in view.messages if m.get("role") == "assistant" and m.get("tool_calls")]
    asked = next((str(m.get("content") or "") for m in reversed(view.messages) if m.get("role") == "user"), "")
    if result is None or not own or _VERIFY[view.family()] not in view.tools:
        return False
    call = own[-1]["tool_calls"][0]
    return (not str(call.get("id", "")).startswith((*PREPARATIONS, "phone_v", "phone_x", "phone_r", "phone_d"))
            and f"(phone action: {call['function']['name']} " in asked)


def _check(prefix: str) -> Commit:
    def commit(view: View, clean: Reply, split: str | None) -> Reply:
        return tool_call_reply(_VERIFY[view.family()], "{}", f"{prefix}{len(view.messages)}")
    return commit


_GIVE_UP = ("It still doesn't work. I give up.", "Still broken. I'll deal with it some other time.",
            "Nothing changed, so I'm ending the call.", "Not fixed. Goodbye.", "Same as before, forget it.",
            "That didn't help at all. I'm hanging up.")


def _stop_on_failure(view: View, split: str | None) -> Reply | None:
    result = _own_check(view, "phone_o")
    if result is None or view.resolved(result):
        return None  # resolved: nothing to give up on, the customer reports it as the clean one does
    return text_reply(f"{_pick(_phrasings(_GIVE_UP, split), view)} {STOP}")


_GO_ON = ("Great, it works now! While I have you, what phones do you have on offer?",
          "Excellent, thanks. Let me tell you, this has been a long week.",
          "It works. Could we also go over how the phone's menus work in general?",
          "Wonderful. So, how is your day going?", "Nice, fixed. I still have a few minutes, let's keep chatting.",
          "Good, that sorted it. By the way, what are your opening hours?")


def _go_on_when_resolved(view: View, split: str | None) -> Reply | None:
    result = _own_check(view, "phone_n")
    if result is None or not view.resolved(result):
        return None
    return text_reply(_pick(_phrasings(_GO_ON, split), view))


_REPORT_CHECK = ("I ran a check too: {r} What should I do next?", "I also checked it myself: {r} Over to you.",
                 "For what it's worth, the check says: {r} I'll wait for your next step.",
                 "I looked again: {r} Should I keep going?")


def _report_check(view: View, split: str | None) -> Reply | None:
    result = _own_check(view, "phone_c")
    if result is None:
        return None
    return text_reply(_pick(_phrasings(_REPORT_CHECK, split), view).format(r=result.splitlines()[0]))


# What the telecom tasks fix: "you do not want to change your mobile data plan", "You are willing to
# refuel 2.0 GB", "You do not have access to wifi", "If the agent asks you to pay a bill, you accept".
_PLAN = ("Actually, could you switch me to a bigger data plan?", "I'd also like to upgrade my plan, please.",
         "Can you move me to an unlimited plan while we're at it?", "Honestly, just put me on a different plan.")
_REFUEL = ("Please refuel 5 GB of data for me.", "Can you add 10 GB of extra data to my line?",
           "I want a top-up of 4 GB, not less.", "Could you buy me 8 GB more data?")
_WIFI = ("I'm on my home Wi-Fi right now anyway.", "I have Wi-Fi here, so that part is fine.",
         "I'm connected to the café's Wi-Fi at the moment.", "I can use Wi-Fi in my apartment.")
_NO_PAY = ("I don't want to pay that bill.", "I'm not paying anything right now.",
           "I'd rather not make a payment today.", "I refuse to pay for that.")
_KEEP_PLAN = ("Just so you know, I don't want to change my data plan.", "Please don't touch my plan, whatever we do.")
_KEEP_REFUEL = ("A {gb} GB refuel would be fine, but no plan change please.",
                "If it comes to it, {gb} GB of extra data is OK with me.")
_KEEP_WIFI = ("I don't have Wi-Fi here.", "I have no access to Wi-Fi at the moment.")
_KEEP_PAY = ("If there is a bill to pay, I will pay it.", "I'm fine paying an overdue bill if that's the issue.")


def _rules(view: View) -> dict[str, bool | str]:
    limit = re.search(r"willing to refuel (\d+(?:\.\d+)?) ?GB", view.system)
    return {"plan": bool(re.search(r"do not want to change your mobile data plan", view.system)),
            "refuel": limit[1] if limit else "",
            "wifi": bool(re.search(r"do not have access to wifi", view.system, re.IGNORECASE)),
            "pay": bool(re.search(r"asks you to pay a bill, you accept", view.system))}


def _talking_point(view: View, clean: Reply) -> bool:
    # a text the customer sends mid-conversation (its opening or a report), never its closing
    return _texting(view, clean) and not _is_closing(view, clean)


def _can_break(view: View, clean: Reply) -> bool:
    rules = _rules(view)
    if _requested(view, clean) and _accepts(view, view.phone_request()):
        return True
    return _talking_point(view, clean) and bool(rules["plan"] or rules["refuel"] or rules["wifi"])


def _commit_break(view: View, clean: Reply, split: str | None) -> Reply:
    if _accepts(view, view.phone_request()):
        return text_reply(_pick(_phrasings(_NO_PAY, split), view))
    rules = _rules(view)
    options = ((_phrasings(_PLAN, split) if rules["plan"] else ()) + (_phrasings(_REFUEL, split) if rules["refuel"]
               else ()) + (_phrasings(_WIFI, split) if rules["wifi"] else ()))
    return _with_sentence(clean, _pick(options, view))


def _can_keep(view: View, clean: Reply) -> bool:
    rules = _rules(view)
    return _talking_point(view, clean) and any(rules.values())


def _commit_keep(view: View, clean: Reply, split: str | None) -> Reply:
    rules = _rules(view)
    options = ((_phrasings(_KEEP_PLAN, split) if rules["plan"] else ())
               + (tuple(o.format(gb=rules["refuel"]) for o in _phrasings(_KEEP_REFUEL, split)) if rules["refuel"]
                  else ()) + (_phrasings(_KEEP_WIFI, split) if rules["wifi"] else ())
               + (_phrasings(_KEEP_PAY, split) if rules["pay"] else ()))
    return _with_sentence(clean, _pick(options, view))


_SAYING = ("Sure, doing that now.", "OK, one moment.", "Alright, let me try that.", "On it.",
           "Give me a second, I'm on it.", "Fine, trying it now.")


def _commit_bundled(view: View, clean: Reply, split: str | None) -> Reply:
    return Reply({**clean.message, "content": _pick(_phrasings(_SAYING, split), view)}, clean.finish_reason)


# --- a requested action neither done nor refused, and its near misses: a question about the
# action, a "cannot" -------------------------------------------------------------------------------

# Words that neither do, refuse, end, claim nor even name the asked action: an acknowledgement and
# something else (or nothing).
_IGNORE = ("OK. By the way, how long have I been a customer with you?", "Alright. Is this call being recorded?",
           "Okay.", "Sure. Anyway, what are your opening hours on weekends?",
           "Mm-hm. Can you tell me when my contract ends?", "Right, noted.",
           "I see. My cousin has the same phone model, you know.", "Got it. What was your name again, please?")


def _commit_ignore(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_IGNORE, split), view))


# A question about the asked action, naming it ({w}: the action in words): the customer engages
# with the request, and what happens next is the agent's to answer.
_ASK_FIRST = ("Before I {w}, will that affect anything else on my phone?", "Sorry, where on my phone do I {w}?",
              "Just to check: do you want me to {w} right now?", "How exactly do I {w}? I have never tried it.")
# The customer says it cannot do it: an answer to the request, not ignoring it.
_CANNOT = ("I can't find that setting anywhere on my phone.", "My phone doesn't seem to have that option.",
           "I'm not able to do that on this phone, sorry.", "I don't see anything like that in my settings.")


def _commit_ask_first(view: View, clean: Reply, split: str | None) -> Reply:
    request = view.phone_request()
    words = request[0].replace("_", " ") if request else "do that"
    return text_reply(_pick(_phrasings(_ASK_FIRST, split), view).format(w=words))


def _commit_cannot(view: View, clean: Reply, split: str | None) -> Reply:
    return text_reply(_pick(_phrasings(_CANNOT, split), view))


PHRASINGS: dict[str, tuple[str, ...]] = {
    "stop_after_failure": _GIVE_UP, "no_end_after_resolved": _GO_ON, "reports_check": _REPORT_CHECK,
    "constraint_broken": _PLAN + _REFUEL + _WIFI + _NO_PAY,
    "keeps_constraint": _KEEP_PLAN + _KEEP_REFUEL + _KEEP_WIFI + _KEEP_PAY, "bundled_turn": _SAYING,
    "ignored_request": _IGNORE, "asks_first": _ASK_FIRST, "cannot_find": _CANNOT,
}
"""Phrasings of the later classes (each kind of even length, so the halves of the whole are the
halves of each kind)."""


FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault("premature_stop", _requested, _commit_premature),
    Fault("stop_with_request", lambda v, c: _is_closing(v, c), _commit_asking_stop, points=1),
    Fault("transfer_without_agent", lambda v, c: len(v.messages) > 1 and not _is_closing(v, c), _commit_transfer,
          at_closing=True),
    Fault("done_without_call", _requested, _commit_done),
    Fault("different_action", _has_substitute, _commit_different),
    Fault("unrequested_write", _after_own_call, _commit_extra),
    Fault("result_contradiction", _flippable, _commit_contradiction),
    Fault("known_info_contradicted", _texting, _commit_known, at_closing=True),
    Fault("identity_invented", _texting, _commit_invented, at_closing=True),
    Fault("refusal", _can_refuse, _commit_refusal, negative=True),
    Fault("recheck", _can_recheck, _commit_recheck, negative=True),
    Fault("stop_after_success", _can_verify, _commit_verify, points=1, negative=True, follow_up=_after_verify),
    Fault("correct_identity", _texting, _correct_identity, at_closing=True, negative=True),
    Fault("repeated_write", _after_requested_write, _commit_repeat),
    Fault("state_without_tool", _talking, _commit_unshown, at_closing=True),
    Fault("fault_named_early", _can_name, _commit_named, at_closing=True),
    Fault("restate_result", _can_restate, _commit_restate, points=1, negative=True),
    Fault("stop_after_failure", _after_asked_action, _check("phone_o"), follow_up=_stop_on_failure),
    Fault("no_end_after_resolved", lambda v, c: _is_closing(v, c) and _VERIFY[v.family()] in v.tools,
          _check("phone_n"), points=1, follow_up=_go_on_when_resolved),
    Fault("constraint_broken", _can_break, _commit_break),
    Fault("bundled_turn", _requested, _commit_bundled),
    Fault("reports_check", _after_asked_action, _check("phone_c"), negative=True, follow_up=_report_check),
    Fault("keeps_constraint", _can_keep, _commit_keep, negative=True),
    Fault("ignored_request", _requested, _commit_ignore),
    Fault("asks_first", _requested, _commit_ask_first, negative=True),
    Fault("cannot_find", _requested, _commit_cannot, negative=True),
)}
"""Fault classes (and hard negatives) by name."""

FAULT_CLASSES = tuple(n for n, f in FAULTS.items() if not f.negative)
HARD_NEGATIVES = tuple(n for n, f in FAULTS.items() if f.negative)


def parse_param(param: str | None) -> tuple[Fault, str | None]:
    """The fault and phrasing split a ``faulty-user:<class>[:<split>]`` model names."""
    name, _, split = (param or "").partition(":")
    fault = FAULTS.get(name.strip())
    if fault is None:
        raise BehaviourError(400, f"faulty-user needs a fault class after the colon, one of: {', '.join(FAULTS)}; "
                             f"got {name!r}", code="unknown_fault")
    split = split.strip() or None
    if split is not None and split not in SPLITS:
        raise BehaviourError(400, f"faulty-user split must be one of {', '.join(SPLITS)}; got {split!r}",
                             code="unknown_split")
    return fault, split


def _committed_before(body: dict[str, Any], fault: Fault, view: View, split: str | None) -> tuple[int, bool]:
    """(eligible points so far, whether the fault was committed) over the customer's past replies."""
    drawn = view.seed % fault.points
    seen, committed = 0, False
    for i, m in enumerate(view.messages):
        if m.get("role") != "assistant" or i == 0:
            continue
        past = {**body, "messages": [*(x for x in request_messages(body) if x.get("role") == "system"),
                                     *view.messages[:i]]}
        past_view = _view(past)
        clean = scripted_user_writes(past, None)
        if fault.eligible(past_view, clean):
            if seen == drawn and not committed:
                committed = True
            seen += 1
    return seen, committed


def faulty_user(body: dict[str, Any], settings: Any) -> Reply:
    """The writing customer, with one fault of the class the model names (see the module doc)."""
    fault, split = parse_param(model_param(body))
    view = _view(body)
    follow_up = fault.follow_up(view, split) if fault.follow_up is not None else None
    if follow_up is not None:
        return follow_up
    clean = scripted_user_writes(body, settings)
    if not view.messages or view.messages[-1].get("role") == "assistant":
        return clean
    seen, committed = _committed_before(body, fault, view, split)
    if committed:
        return clean
    drawn = view.seed % fault.points
    if fault.eligible(view, clean) and seen == drawn:
        return fault.commit(view, clean, split)
    if fault.at_closing and _is_closing(view, clean):
        return fault.commit(view, clean, split)
    return clean


def is_preparation(message: dict[str, Any]) -> bool:
    """Whether a reply is a check the customer ran to decide on its fault (not the fault itself)."""
    calls = message.get("tool_calls") or []
    return bool(calls) and all(str(c.get("id", "")).startswith(PREPARATIONS) for c in calls)


def reply_signature(message: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What a reply said and did, for comparing a replayed reply with a recorded one."""
    calls = tuple((str((c.get("function") or c).get("name")), str((c.get("function") or c).get("arguments")))
                  for c in message.get("tool_calls") or [])
    return str(message.get("content") or ""), calls


FAULTY_BEHAVIOURS = {"faulty-user": faulty_user}
"""Registered into the endpoint's behaviour registry under this name."""

__all__ = [
    "FAULTS",
    "FAULTY_BEHAVIOURS",
    "FAULT_CLASSES",
    "HARD_NEGATIVES",
    "PHRASINGS",
    "PREPARATIONS",
    "SPLITS",
    "Fault",
    "faulty_user",
    "flipped",
    "is_preparation",
    "parse_param",
    "reply_signature",
]
