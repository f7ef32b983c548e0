"""A voice caller says what a person says: its phone's screen in words (no glyph, pipe or
layout, every fact kept), its task as a first-person opening (never a direction to the
simulator), and nothing a voice cannot say. The checks run on every telecom phone tool over
real task states and on every scenario's opening, in process (no Ray, no speech models)."""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
from collections.abc import Callable
from functools import cache

import pytest

from tauray.actors.voice.policies import VoiceOracleAgent, VoiceScriptedUser
from tauray.actors.voice.rules import VOICE_USER, spell_identifiers
from tauray.actors.voice.spoken import opening_source, speakable, spoken_opening, spoken_screen
from tauray.scenarios import get_scenario, select_scenarios
from tauray.scenarios.conventions import STOP
from tauray.scenarios.gold import fresh_state, gold_replay, replay
from tauray.scenarios.model import Scenario
from tauray.scenarios.state import DualState

# --- what a voice cannot say ------------------------------------------------------------------

_UNSAYABLE = frozenset({"So", "Sk", "No", "Cf", "Co", "Cs", "Cn"})


def _unsayable(text: str) -> list[str]:
    """The characters and marks of ``text`` no voice can say: pictographs and other symbols,
    modifiers, superscripts, format characters, variation selectors, pipes, braces, markup,
    line breaks."""
    bad = [ch for ch in text if unicodedata.category(ch) in _UNSAYABLE or "\ufe00" <= ch <= "\ufe0f"
           or ch in "|{}[]<>*#`\n\r\t"]
    return bad + re.findall(r"\b[a-z0-9]+_[a-z0-9_]*[a-z]\b", text)  # snake_case setting names


# --- phone tool outputs on real task states -------------------------------------------------


def _telecom_states() -> dict[str, Callable[[], DualState]]:
    """A few real phone states (each a builder: a tool call may change the state): for each
    telecom issue family, its tasks with the fewest and the most reference actions (the least
    and the most broken phone), as they start and as their gold replay leaves them, and one of
    them with the indicators no task reaches switched on (Wi-Fi connected to a network, data
    saver, VPN, a low battery) under each network mode, so every icon of the status bar is said."""
    tasks: dict[str, list[str]] = {}
    for entry in select_scenarios(None, domain="telecom", variant="manual"):
        tasks.setdefault(entry.issue_type or "", []).append(entry.name)
    states: dict[str, Callable[[], DualState]] = {}
    for family, names in sorted(tasks.items()):
        ranked = sorted(names, key=lambda n: (len(get_scenario(n).reference_actions), n))
        for rank, name in (("fewest", ranked[0]), ("most", ranked[-1])):
            scenario = get_scenario(name)
            states[f"{family}:{rank}:start"] = lambda scenario=scenario: fresh_state(scenario)
            states[f"{family}:{rank}:fixed"] = lambda scenario=scenario: replay(scenario)[0]

    def varied(mode: str) -> DualState:
        state = states[f"{min(tasks)}:most:fixed"]()
        device = state.user.db.device
        device.wifi_enabled, device.wifi_connected, device.wifi_ssid = True, True, "HomeNet-5G"
        device.data_saver_mode, device.battery_level = True, 7
        state.user.call_tool("connect_vpn", {})
        state.user.call_tool("set_network_mode_preference", {"mode": mode})  # each network's own signal
        return state

    for mode in ("4g_5g_preferred", "4g_only", "3g_only", "2g_only"):
        states[f"varied:{mode}"] = lambda mode=mode: varied(mode)
    return states


def _calls(state: DualState, tool: dict) -> list[dict]:
    """Arguments to call ``tool`` with: none, or for each parameter the values its schema or
    the phone names (installed apps, their permissions, network modes), one wrong value each."""
    fn = tool["function"]
    params = (fn.get("parameters") or {}).get("properties") or {}
    if not params:
        return [{}]
    device = state.user.db.device
    apps = sorted(device.app_statuses)
    if "apn_settings" in params:
        return [{"apn_settings": {"apn_name": "internet"}}, {"apn_settings": {"apn_name": "broken", "mmsc_url": None}}]
    if "mode" in params:
        modes = json.dumps(fn["parameters"])
        return [{"mode": m} for m in re.findall(r'"(\dg_[a-z0-9_]+)"', modes)] + [{"mode": "6g_only"}]
    calls = [{"app_name": "no_such_app"}]
    for app in apps:
        permissions = sorted(device.app_statuses[app].permissions.model_dump())
        calls += [{"app_name": app, "permission": p} for p in permissions] + \
                 [{"app_name": app, "permission": "camera"}]
    return [{k: v for k, v in c.items() if k in params} for c in calls]


@cache
def _screens() -> tuple[tuple[str, str], ...]:
    """(tool, output) of every user tool of the telecom domain, with each of its argument
    sets, on each state of :func:`_telecom_states` (a fresh copy of the state per call)."""
    scenario = get_scenario(select_scenarios(None, domain="telecom")[0].name)
    tools = [t.openai() for t in scenario.tools_by_side["user"]]
    seen: dict[tuple[str, str], None] = {}
    for build in _telecom_states().values():
        for tool in tools:
            for args in _calls(build(), tool):
                outcome, _ = build().execute("user", tool["function"]["name"], args)
                seen[(tool["function"]["name"], outcome.result)] = None
    return tuple(seen)


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_PERCENT_WORDS = {7: "seven", 80: "eighty"}  # the battery levels of the states above
# layout and wording a sentence says otherwise: a label's "Status Bar", "Yes"/"No" (said as "is
# enabled" / "is not enabled"), units in words, a URL's scheme, an enum's class, the screen's
# "you" (the caller says "I", "my")
_RESTATED = frozenset({"status", "bar", "yes", "no", "mbps", "usd", "http", "https", "performancelevel", "you",
                       "your"})


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+(?:\.[0-9]+)*", text.lower()))


def _facts(raw: str) -> tuple[set[str], list[str]]:
    """What a listener must still hear of a screen: its words and values (settings split into
    words, numbers as values, ON/OFF as on/off), less the layout words a sentence restates
    (:data:`_RESTATED`); and phrases that must be said (bars of signal, a battery percentage,
    "not" for each ``Label: No``)."""
    plain = re.sub(r"(\d+)\.(\d*?)0*(?=\D|$)", lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), raw)
    plain = plain.replace("_", " ")
    words = {w for w in _words(plain) if w not in _RESTATED and not re.fullmatch(r"\d+", w) or
             re.fullmatch(r"\d+", w) and f"{w}%" not in raw}
    phrases = [f"{word} bar" for ch in raw if unicodedata.category(ch) == "No"
               for word, n in _NUMBERS.items() if unicodedata.digit(ch, None) == n]
    phrases += [f"{_PERCENT_WORDS[int(n)]} percent" for n in re.findall(r"\b(\d+)%", raw)]
    phrases += [" not " for _ in re.findall(r": No$", raw, re.MULTILINE)]
    return words, phrases


def test_every_phone_tool_output_is_said_in_words_and_keeps_its_facts() -> None:
    screens = _screens()  # every phone tool, and every icon its status bar has, on real states
    scenario = get_scenario(select_scenarios(None, domain="telecom")[0].name)
    assert {t for t, _ in screens} == {t.name for t in scenario.user_tools}
    glyphs = {ch for _, out in screens for ch in out if not ch.isascii()}
    assert {"✈", "📶", "📵", "📱", "🔋", "📡", "🔒", "🔽", "¹", "²", "³", "⁴"} <= glyphs
    for tool, raw in screens:
        said = spoken_screen(raw)
        assert said and not _unsayable(said), (tool, raw, said, _unsayable(said))
        words, phrases = _facts(raw)
        heard = _words(said.replace("_", " "))
        assert words <= heard, (tool, raw, said, words - heard)
        for phrase in phrases:
            assert said.lower().count(phrase) >= phrases.count(phrase), (tool, raw, said, phrase)
        # the voice oracle takes "again" for a request to repeat what it asked
        assert "again" not in heard, (tool, said)


@pytest.mark.parametrize(("raw", "said"), [
    ("Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%",
     "Airplane Mode is now on. At the top of my screen I see airplane mode on and the battery at eighty percent."),
    ("Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔽 Data Saver | 📡 Connected to HomeNet | 🔒 VPN Connected"
     " | 🔋 7%",
     "At the top of my screen I see excellent signal with four bars on 5G, data enabled, data saver on, Wi-Fi "
     "connected to HomeNet, VPN connected and the battery at seven percent."),
    ("Airplane Mode: OFF\nSIM Card Status: locked_pin\nCellular Connection: no_service\nMobile Data Enabled: No",
     "Airplane mode is off. The SIM card status is locked PIN. Cellular connection: no service. "
     "Mobile data is not enabled."),
    ("Current APN Name: internet\nMMSC URL (for picture messages): http://mms.carrier.com/mms/wapenc",
     "The current APN name is internet. MMSC URL (for picture messages): MMS dot carrier dot com slash MMS slash "
     "wapenc."),
    ("Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.",
     "Speed test result: 275 megabits per second (Excellent). Connection is very fast."),
    ("Status for App: messaging\n - Permissions Granted:\n   - sms\n   - phone",
     "Status for the messaging app. Permissions granted: SMS and phone."),
    ("VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', "
     "'server_performance': <PerformanceLevel.POOR: 'poor'>}",
     "VPN is on and connected. Details: server address 192.168.1.1, protocol OpenVPN, server performance poor."),
    ("Payment of 65.0 USD has been made for bill B1234321.", "Payment of 65 dollars has been made for bill B1234321."),
    ("Your messaging app cannot send MMS messages.", "My messaging app cannot send MMS messages."),
    ("Error: the user side has no tool named 'fly'.", "It shows an error: the user side has no tool named fly."),
])
def test_a_screen_is_said_as_a_caller_says_it(raw: str, said: str) -> None:
    assert spoken_screen(raw) == said


# --- openings -------------------------------------------------------------------------------

_PRONOUNS = frozenset({"you", "your", "you're", "you'll", "it", "the", "this", "there", "a", "an", "my", "i", "he",
                       "she", "they", "we", "that", "these", "those"})
_CONNECTORS = re.compile(r"^(?:(?:first|then|also|and|but|so|now|finally|lastly|additionally|next|hi)\b[,.]?\s*)+",
                         re.IGNORECASE)


@cache
def _distinct_scenarios() -> tuple[Scenario, ...]:
    """One scenario per distinct caller text (domain, reason for call, ticket, instructions,
    known info): the policy variants and the thousands of telecom tasks share a few."""
    distinct: dict[tuple, Scenario] = {}
    for entry in select_scenarios(None):
        scenario = get_scenario(entry.name)
        user = scenario.user
        distinct.setdefault((scenario.domain, user.reason_for_call, scenario.ticket, user.instructions,
                             user.known_info), scenario)
    return tuple(distinct.values())


@cache
def _directive_openers() -> frozenset[tuple[str, ...]]:
    """How the tasks' directions to the simulator begin, read off the data: the first two words
    of every sentence of every scenario's user instructions (text written to the simulator),
    unless it begins with a pronoun or determiner (a statement, not a direction); a conditional
    counts by its first word alone."""
    openers: set[tuple[str, ...]] = {("if",), ("when",), ("whenever",), ("unless",)}
    for scenario in _distinct_scenarios():
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", scenario.user.instructions):
            words = re.findall(r"[a-z']+", _CONNECTORS.sub("", sentence.strip()).lower())
            if len(words) >= 2 and words[0] not in _PRONOUNS:
                openers.add(tuple(words[:2]))
    return frozenset(openers)


def _directions(opening: str) -> list[str]:
    """What in ``opening`` is a direction to the simulator rather than a caller's words: the
    second person (every task addresses the simulator as "you"), the conversation's roles named
    ("the agent", "the user"), a sentence that begins as a direction in the tasks begins."""
    found = re.findall(r"\byou(?:r|rs|rself|'re|'ll|'d|'ve)?\b", opening, re.IGNORECASE)
    found += re.findall(r"\bthe (?:service |customer service )?(?:agent|user|customer)\b", opening, re.IGNORECASE)
    for sentence in re.split(r"(?<=[.!?])\s+", opening):
        words = tuple(re.findall(r"[a-z']+", _CONNECTORS.sub("", sentence.strip()).lower()))
        found += [sentence for opener in _directive_openers() if words[: len(opener)] == opener]
    return found


def test_every_opening_is_a_callers_words_and_no_direction_to_the_simulator() -> None:
    # the check is no empty one: it flags the task text as the caller used to read it out
    scenarios = _distinct_scenarios()
    assert sum(bool(_directions(opening_source(s))) for s in scenarios) > 0.9 * len(scenarios)
    assert _directions("Continue the conversation about task management.")
    assert _directions("Then, compliment the user.") and _directions("Do not ask to be transferred.")
    assert not _directions("Hi, this is John Smith. My phone has been showing 'No Service' for the past few hours.")
    for scenario in scenarios:
        opening = spoken_opening(scenario)
        assert opening and not _directions(opening), (scenario.name, opening, _directions(opening))
        assert not _unsayable(opening), (scenario.name, opening)


def test_the_mock_caller_asks_for_its_task_and_no_compliment() -> None:
    """The ticket of the mock NL task ends with a direction to the agent about the caller
    ("Then, compliment the user."); the caller asks for the task, in its own words."""
    scenario = get_scenario("tau2_mock__create_task_1_nl_eval")
    assert "compliment the user" in opening_source(scenario)
    opening = spoken_opening(scenario)
    assert "compliment" not in opening.lower() and "the user" not in opening.lower()
    assert opening == ("Hi. I need to create a task for an upcoming meeting. Please create a new task called "
                       "'Important Meeting' for user_1.")
    history = spoken_opening(get_scenario("tau2_mock__update_task_with_history_and_env_assertions"))
    assert history == ("Hi. Earlier we talked about creating a task with ID task_2. Now I want to mark the task as "
                       "completed.")


def test_a_telecom_and_an_airline_caller_say_who_they_are_and_what_is_wrong() -> None:
    mms = next(e for e in select_scenarios(None, domain="telecom") if e.issue_type == "mms_issue")
    assert spoken_opening(get_scenario(mms.name)) == (
        "Hi, this is John Smith. I am unable to send MMS messages using my messaging app for the past few hours. "
        "I want to fix it and successfully send an MMS message.")
    airline = spoken_opening(get_scenario("tau2_airline__task_2"))  # a plan for the call, not what is said
    assert airline == ("Hi, this is Noah Muller. First, I'd like to book a flight from sf to ny. I will have 3 "
                       "passengers.")


# --- speakable ------------------------------------------------------------------------------


def test_speakable_takes_out_what_no_voice_can_say_and_keeps_identifiers() -> None:
    text = ("## Steps\n**Restart** your phone 📱 → then check `Settings`.\n- Toggle ✈️ off\n• Call 555-123-2002 or "
            "mail joe@example.com about order #W2378156 for user_1 | line L1002 | signal 📶³\n[help](http://x.y)")
    said = speakable(text)
    assert not _unsayable(said), _unsayable(said)
    assert said == ("Steps. Restart your phone to then check Settings. Toggle off. Call 555-123-2002 or mail "
                    "joe@example.com about order number W2378156 for user_1, line L1002, signal 3. help.")
    assert speakable(said) == said
    assert speakable(f"Thanks, bye. {STOP}") == f"Thanks, bye. {STOP}"  # the stop token is no speech; it stays
    assert speakable("I'd like a refund (about $12.50), please: it's urgent!") == \
        "I'd like a refund (about $12.50), please: it's urgent!"


# --- the scripted voice caller speaks through them --------------------------------------------


def _talk(name: str) -> tuple[bool, list[str]]:
    """One voice call of the reference policies in process, words passed as said: whether it
    leaves both sides' state as the gold replay does, and what the caller said."""
    scenario = get_scenario(name)
    state = fresh_state(scenario)
    user, oracle = VoiceScriptedUser(scenario), VoiceOracleAgent(scenario)
    user_tools = [t.openai() for t in scenario.tools_by_side["user"]]
    agent_tools = [t.openai() for t in scenario.tools_by_side["agent"]]
    views: dict[str, list[dict]] = {"user": [{"role": "system", "content": ""}],
                                    "agent": [{"role": "system", "content": ""}]}
    said: list[str] = []
    side = "user"
    for _ in range(200):
        policy, tools = (user, user_tools) if side == "user" else (oracle, agent_tools)
        reply = asyncio.run(policy.reply(views[side], tools, 0))
        if reply.tool_calls:
            call = reply.tool_calls[0]
            if call.name == "end_conversation":
                break
            outcome, _ = state.execute(side, call.name, json.loads(call.arguments))
            views[side] += [{"role": "assistant", "content": None, "tool_calls": [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
                {"role": "tool", "tool_call_id": call.id, "content": outcome.result}]
            continue
        other = "agent" if side == "user" else "user"
        views[side].append({"role": "assistant", "content": reply.content})
        views[other].append({"role": "user", "content": reply.content})
        if side == "user":
            said.append(reply.content or "")
            if STOP in (reply.content or ""):
                break
        side = other
    gold, hashes = gold_replay(scenario), state.hashes()
    return (hashes["agent"], hashes["user"]) == (gold.agent_hash, gold.user_hash), said


def _hardest(issue: str) -> str:
    """The telecom task of an issue family with the most phone actions (the longest call)."""
    return max((e.name for e in select_scenarios(None, domain="telecom", variant="manual") if e.issue_type == issue),
               key=lambda n: sum(a.side == "user" for a in get_scenario(n).reference_actions))


@pytest.mark.parametrize("name", ["tau2_mock__create_task_1", "tau2_mock__update_task_with_history_and_env_assertions",
                                  "tau2_airline__task_12", "mms_issue", "mobile_data_issue", "service_issue"])
def test_a_whole_voice_call_still_works_with_the_callers_words(name: str) -> None:
    """The oracle and the scripted caller finish the task together, the caller opens in its own
    words, every caller line is speakable, and the caller never reads a screen's glyphs out
    (the airline task's reservation id is spelled just before the caller's "I": the oracle
    still hears it alone)."""
    ok, said = _talk(_hardest(name) if name.endswith("_issue") else name)
    assert ok, said
    assert not _directions(said[0]), said[0]
    for line in said:
        assert not _unsayable(line.replace(STOP, "")), (line, _unsayable(line))
        assert "shows:" not in line and "Status Bar" not in line


def test_the_scripted_caller_opens_and_reports_through_the_spoken_forms() -> None:
    scenario = get_scenario(_hardest("mms_issue"))
    user = VoiceScriptedUser(scenario)
    opening = asyncio.run(user.reply([{"role": "system", "content": ""}], [], 0)).content
    assert opening == speakable(spell_identifiers(spoken_opening(scenario)))
    screen = "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    done = asyncio.run(user.reply([{"role": "tool", "tool_call_id": "1", "content": screen}], [], 0)).content
    assert done == f"Done. {spoken_screen(screen)}"
    assert not _unsayable(done)


def test_the_voice_rules_tell_a_model_caller_the_same() -> None:
    text = VOICE_USER.text.lower()
    assert VOICE_USER.version >= 2
    assert "emoji" in text and "symbols" in text and "instructions" in text and "never read" in text
