"""A phone bot as a sweep's agent, without a call: its [models] entry and the refusals at load (one
line naming the field), its cells' identity (no URL) and hearing, the probe that opens its socket,
and a bot's tool call run on the agent host with no model turn and recorded as a model's is.

In-process only: hosts as local objects, servers on this process's loop (no Ray, no child process).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from types import SimpleNamespace

import pytest

from tauray.actors.conversation import Conversation, SideClient
from tauray.actors.hosts import AgentHost, CloseRequest, OpenRequest, RunToolRequest, StepRequest, UserSimHost
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.records import Termination
from tauray.actors.voice.live.agent import phone_agent, probe_phones
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, model_identity, select
from tauray.pipeline.sweep_file import load_sweep
from tauray.scenarios import default_registry, select_scenarios

REFUEL = "tau2_telecom__mobile_data_issue__data_usage_exceeded__user_abroad_roaming_enabled_off__persona_easy"
BOT = 'model = "phone/bot"\nphone = {url = "%s"%s}\n'


def _cfg(tmp_path, *, phone: str = "", url: str = "ws://127.0.0.1:8765/phone-bot", voice: str = 'turn_taking = ["duplex"]\n', agents: str = '["bot"]',
         users: str = '["scripted"]', extra: str = "", domain: str = "mock", patterns: str = "[]"):
    path = tmp_path / "v.toml"
    path.write_text(f'name = "v"\nagents = {agents}\nusers = {users}\n{extra}[[scenarios]]\ndomain = "{domain}"\n'
                    f'patterns = {patterns}\nlimit = 1\n[models.bot]\n{BOT % (url, phone)}[voice]\nprofiles = ["control"]\n'
                    f'tts = "local/espeak-ng"\n{voice}')
    return load_sweep(path)


def _plan(tmp_path, **kwargs) -> SweepPlan:
    cfg = _cfg(tmp_path, **kwargs)
    return SweepPlan(cfg, select(cfg))


# --- the entry and the refusals at load ---------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"voice": ""}, r"agents\[0\]: 'bot' is a phone bot: it runs in duplex only, and voice.turn_taking has 'half'"),
    ({"voice": 'turn_taking = ["half", "duplex"]\n'}, r"agents\[0\]: 'bot' is a phone bot: it runs in duplex only"),
    ({"users": '["bot"]', "agents": '["oracle"]'}, r"users\[0\]: 'bot' is a phone bot \(phone/bot\): it can only "
     r"be an agent"),
    ({"extra": '[[judges]]\nmodel = "bot"\nprompt = "overall-plain@2"\n'}, r"judges\[0\]: 'bot' is a phone bot"),
    ({"voice": 'turn_taking = ["duplex"]\nduplex_rules = {hears = "text"}\n'},
     r"voice.duplex_rules.hears: 'text', but agents\[0\] 'bot' is a phone bot, whose words are known only as audio"),
    ({"phone": ", answer_timeout_s = 0"}, r"models.bot.phone.answer_timeout_s: Input should be greater than 0"),
    ({"phone": ', vad = "loud"'}, r"models.bot.phone.vad: Input should be 'energy' or 'webrtc'"),
    ({"phone": ", bridge_ms = 900"}, r"models.bot.phone: bridge_ms \(900\) is over reply_gap_ms \(700\)"),
    ({"phone": ", answer_timeout = 3"}, r"models.bot.phone: unknown parameter 'answer_timeout'; known: url, "
     r"parameters, connect_timeout_s"),
    ({"phone": ', parameters = {conversation_id = "x"}'}, r"models.bot: 'phone.parameters': parameters may not set "
     r"\['conversation_id'\]"),
])
def test_a_phone_bot_that_cannot_run_as_configured_is_refused_at_load_in_one_line(tmp_path, kwargs, message):
    with pytest.raises(ConfigFileError) as info:
        _cfg(tmp_path, **kwargs)
    line = str(info.value).strip()
    assert "\n" not in line and re.search(message, line.replace("field '", "").replace("':", ":", 1)), line


def test_the_phone_spec_names_its_model_phone_and_its_url_a_websocket_without_echoing_it():
    with pytest.raises(ValueError, match=r"model 'phone/bot' names a phone bot: give its phone"):
        ModelSpec(model="phone/bot")
    with pytest.raises(ValueError, match=r"a model with phone must be written 'phone/<name>'"):
        ModelSpec.model_validate({"model": "openai/bot", "phone": {"url": "ws://127.0.0.1:1/"}})
    with pytest.raises(ValueError) as info:
        ModelSpec.model_validate({"model": "phone/bot", "phone": {"url": "https://user:secret@example.com/"}})
    assert "expected a websocket URL" in str(info.value) and "secret" not in str(info.value)
    spec = ModelSpec.model_validate({"model": "phone/bot", "phone": {"url": "wss://bot.example/x", "reply_gap_ms": 900,
                                                                     "lateness_limit": {"p99_ms": 80}}})
    agent = phone_agent(spec)
    assert spec.is_phone and agent.line.reply_gap_ms == 900 and agent.call.lateness_limit.p99_ms == 80
    assert agent.call.answer_timeout_s == 15.0  # the rest at their defaults


# --- identity and hearing -------------------------------------------------------------------------

def test_a_phone_cells_id_is_its_name_and_settings_not_its_address(tmp_path):
    here = _plan(tmp_path).cells[0].cell_id
    moved = _plan(tmp_path, phone="").cells[0].cell_id
    assert here == moved
    cfg_text = (tmp_path / "v.toml").read_text().replace("127.0.0.1:8765", "10.0.0.7:40123")
    (tmp_path / "v.toml").write_text(cfg_text)
    cfg = load_sweep(tmp_path / "v.toml")
    assert SweepPlan(cfg, select(cfg)).cells[0].cell_id == here  # the endpoint on another port: resumable
    assert _plan(tmp_path, phone=", answer_timeout_s = 15.0").cells[0].cell_id == here  # a default written out
    assert _plan(tmp_path, phone=", answer_timeout_s = 30").cells[0].cell_id != here
    assert _plan(tmp_path, phone=", reply_gap_ms = 900").cells[0].cell_id != here
    assert _plan(tmp_path, phone=', parameters = {prompt = "b"}').cells[0].cell_id != here
    ident = model_identity(ModelSpec.model_validate({"model": "phone/bot", "phone": {"url": "ws://h:1/"}}))
    assert set(ident) == {"model", "phone"} and "ws://" not in json.dumps(ident)
    assert "phone" not in model_identity(ModelSpec(model="openai/gpt-4o-mini"))  # other models' ids stay


def test_a_phone_cell_hears_the_bot_through_the_line_and_waits_for_its_greeting(tmp_path):
    plan = _plan(tmp_path, agents='["bot", "oracle"]', voice='turn_taking = ["duplex"]\nhear_agent = false\n'
                 'duplex_pipeline = [{end_of_turn_ms = 300}, {end_of_turn_ms = 900}]\n')
    bots = [c for c in plan.cells if c.agent_name == "bot"]
    others = [c for c in plan.cells if c.agent_name == "oracle"]
    assert len(bots) == 1 and len(others) == 2  # the bot is its own pipeline: one cell, not one per pipeline
    rules = bots[0].voice.duplex.rules
    assert (rules.hears, rules.opening, bots[0].voice.hear_agent) == ("channel", "agent", True)
    assert {(c.voice.duplex.rules.hears, c.voice.duplex.rules.opening) for c in others} == {("text", "caller")}
    opened = _plan(tmp_path, voice='turn_taking = ["duplex"]\nduplex_rules = {opening = "caller"}\n').cells[0]
    assert opened.voice.duplex.rules.opening == "caller"  # the sweep says who opens
    unit = next(plan.units(bots[0]))
    assert unit.agent.is_phone and unit.voice.turn_taking == "duplex"


# --- the probe ------------------------------------------------------------------------------------

def test_the_probe_opens_the_bots_socket_and_says_unreachable_or_wrong_protocol_in_one_line():
    pytest.importorskip("websockets", reason="the optional extra tauray[live]")
    from websockets.asyncio.server import serve

    async def main():
        async def http(reader, writer):  # a web server, not a websocket
            await reader.read(1024)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
            await writer.drain()
            writer.close()

        async def bot(ws):
            await ws.wait_closed()

        web = await asyncio.start_server(http, "127.0.0.1", 0)
        closed = await asyncio.start_server(http, "127.0.0.1", 0)
        closed_port = closed.sockets[0].getsockname()[1]
        closed.close()
        await closed.wait_closed()
        async with web, serve(bot, "127.0.0.1", 0) as ws_server:
            urls = [f"ws://127.0.0.1:{ws_server.sockets[0].getsockname()[1]}/phone-bot",
                    f"ws://127.0.0.1:{web.sockets[0].getsockname()[1]}/", f"ws://127.0.0.1:{closed_port}/phone-bot"]
            specs = [ModelSpec.model_validate({"model": f"phone/b{i}", "phone": {"url": u}}) for i, u in enumerate(urls)]
            return await asyncio.to_thread(probe_phones, specs)

    ok, web, gone = asyncio.run(main())
    assert ok.ok and ok.kind is None and "reachable" in ok.line and "no call placed" in ok.line
    assert (web.ok, web.kind) == (False, "wrong_protocol") and "answered HTTP 200" in web.line
    assert (gone.ok, gone.kind) == (False, "unreachable") and gone.line.startswith("phone/b2: unreachable: phone: ")
    assert all("\n" not in c.line for c in (ok, web, gone))


def test_models_check_probes_a_phone_bot_beside_a_model_and_exits_2_when_it_cannot_be_called(capsys):
    from tauray.pipeline.cli.main import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bot = json.dumps({"model": "phone/gone", "phone": {"url": f"ws://127.0.0.1:{port}/phone-bot"}})
    speech = json.dumps({"role": "tts", "model": "local/espeak-ng"})
    assert main(["models", "check", bot, speech, "--offline"]) == 2
    out = capsys.readouterr().out
    first, second = out.split("\n\n", 1)
    assert first == f"phone/gone: unreachable: phone: cannot reach the bot at ws://127.0.0.1:{port}/phone-bot: " \
        f"Connect call failed ('127.0.0.1', {port})"
    assert "local/espeak-ng" in second  # the speech model checked as before, in its place
    assert main(["models", "check", bot, "--json"]) == 2
    (found,) = json.loads(capsys.readouterr().out)
    assert (found["model"], found["ok"], found["kind"]) == ("phone/gone", False, "unreachable")


def test_a_sweep_whose_bot_cannot_be_reached_is_refused_by_its_probe_before_anything_runs(tmp_path):
    from tauray.pipeline.driver import run_probe

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nobody answers there
    cfg = _cfg(tmp_path, url=f"ws://127.0.0.1:{port}/phone-bot")
    with pytest.raises(ConfigFileError) as info:
        run_probe(cfg, notes=print)
    line = str(info.value)
    assert "\n" not in line and f"field 'models.bot': phone/bot: unreachable: phone: cannot reach the bot at " \
        f"ws://127.0.0.1:{port}/phone-bot" in line


# --- a bot's tool call on the agent host ----------------------------------------------------------

def _bot_spec() -> ModelSpec:
    return ModelSpec.model_validate({"model": "phone/bot", "phone": {"url": "ws://127.0.0.1:9/phone-bot"}})


def test_run_tool_runs_one_call_on_the_session_with_no_model_turn():
    name = select_scenarios(None, domain="mock")[0].name

    async def main():
        host = AgentHost()
        await host.open(OpenRequest(conversation_id="c", run_id="r", scenario=name, spec=_bot_spec(), seed=1))
        read = await host.run_tool(RunToolRequest(conversation_id="c", name="get_users", arguments={},
                                                  call_id="live-1", turn=2, seq=5))
        write = await host.run_tool(RunToolRequest(conversation_id="c", name="create_task", call_id="live-2",
                                                   arguments={"user_id": "user_1", "title": "Important Meeting"},
                                                   turn=2, seq=7))
        with pytest.raises(RuntimeError, match="a live agent's policy is never stepped"):
            await host.step(StepRequest(conversation_id="c", incoming="hi", max_rounds=1, max_errors=1, turn=3, seq=9))
        return read, write, await host.close(CloseRequest(conversation_id="c"))

    read, write, final = asyncio.run(main())
    (round_,) = read.rounds
    assert (read.kind, read.wrote) == ("tools", False)
    assert round_.message.role == "assistant" and round_.message.content is None
    assert json.loads(round_.message.tool_calls) == [{"id": "live-1", "name": "get_users", "arguments": "{}"}]
    (event,) = round_.events
    assert event.message.role == "tool" and event.message.tool_call_id == "live-1" and "user_1" in event.outcome.result
    assert [(m.seq, m.turn) for m in (round_.message, event.message)] == [(5, 2), (6, 2)]
    assert (write.kind, write.wrote) == ("tools", True) and write.rounds[0].events[0].outcome.is_write
    assert final.counters.tool_calls == 2 and final.counters.llm_calls == 0 and final.check is not None


def test_a_bots_tool_call_lands_in_actions_and_messages_and_a_write_is_synced(tmp_path):
    """The tool server's callback as the coordinator runs it (LiveCall.tool), on telecom, where an
    agent write is followed by a sync; in-process hosts."""
    from tauray.actors.live_call import LiveCall

    plan = _plan(tmp_path, domain="telecom", patterns=f'["{REFUEL}"]')
    unit = next(plan.units(plan.cells[0]))
    scenario = default_registry().get(unit.scenario)

    async def main():
        conv = Conversation(unit, scenario, SideClient(AgentHost()), SideClient(UserSimHost()))
        await conv.initialise()
        before = len(conv.actions)  # the initial syncs
        call = LiveCall(conv)
        customer = json.loads((await call.tool("get_customer_by_id", {"customer_id": "C1001"})).text)
        reply = await call.tool("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0})
        missing = await call.tool("get_customer_by_id", {"customer_id": "nobody"})
        await call.close()
        after = await call.tool("get_customer_by_id", {"customer_id": "C1001"})
        return conv, conv.actions[before:], customer, reply, missing, after

    conv, actions, customer, reply, missing, after = asyncio.run(main())
    assert customer["customer_id"] == "C1001"
    tools = [a for a in actions if a["kind"] == "tool_call"]
    assert [a["tool"] for a in tools] == ["get_customer_by_id", "refuel_data", "get_customer_by_id"]
    assert [a["side"] for a in tools] == ["agent"] * 3 and tools[1]["is_write"] and not reply.error
    assert tools[1]["matched_action_id"] is not None  # the reference action, found among the calls made
    assert missing.error and tools[2]["error"] and conv.errors == 1
    syncs = [a for a in actions if a["kind"] == "sync"]
    assert [a["result"] for a in syncs] == ["sync after agent:refuel_data"]  # the write crossed to the phone
    assert after.error and "ended" in after.text and len(tools) == 3  # nothing recorded after the call
    roles = [(m.side, m.role) for m in conv.messages]
    assert roles == [("agent", "assistant"), ("agent", "tool")] * 3
    assert [m.seq for m in conv.messages] == list(range(6)) and conv.steps == 3


def test_what_the_caller_heard_of_the_bot_is_the_agents_side_of_the_transcript(tmp_path):
    """The bot's words are known only as the caller's recogniser heard them: each reply heard
    becomes the agent's message (and a text the communicated-value check reads), once, in the
    order heard, before the caller's answer to it."""
    from tauray.actors.live_call import LiveCall
    from tauray.actors.voice.duplex.talk import Message

    plan = _plan(tmp_path)
    unit = next(plan.units(plan.cells[0]))
    scenario = default_registry().get(unit.scenario)

    async def main():
        conv = Conversation(unit, scenario, SideClient(AgentHost()), SideClient(UserSimHost()))
        await conv.initialise()
        call = LiveCall(conv)
        greeting = (Message(role="assistant", content="hello, how can i help"),)
        said = await call.caller(greeting)
        later = (*greeting, Message(role="user", content=said or ""), Message(role="assistant", content=""),
                 Message(role="assistant", content="your task is created"))
        call.hear_bot(later)
        call.hear_bot(later)  # heard once
        return conv, said

    conv, said = asyncio.run(main())
    assert said
    agent = [(m.seq, m.content) for m in conv.messages if m.side == "agent" and m.role == "assistant"]
    user = [m.seq for m in conv.messages if m.side == "user" and m.content]
    assert [c for _, c in agent] == ["hello, how can i help", "your task is created"]
    assert agent[0][0] < user[0] < agent[1][0]
    assert conv.agent_texts[-2:] == ["hello, how can i help", "your task is created"]


def test_how_a_live_call_ends_is_what_its_row_says():
    from tauray.actors.live_call import live_ending

    def result(**kw):
        return SimpleNamespace(**{"infra": False, "fault": None, "late": None, "ended": "caller_hung_up",
                                  "protocol": None, **kw})

    assert live_ending(result(infra=True, fault="phone: cannot reach the bot at ws://h:9/", ended="fault"), None) == (
        Termination.INFRA_ERROR, "infra", "phone: cannot reach the bot at ws://h:9/")
    assert live_ending(result(infra=True, late="the harness fell behind: p99 900 ms"), None) == (
        Termination.INFRA_ERROR, "infra", "phone: the harness fell behind: p99 900 ms")
    assert live_ending(result(infra=True, late="the harness fell behind: p99 900 ms", protocol="openai-realtime"),
                       None)[2] == "realtime: the harness fell behind: p99 900 ms"  # a realtime model's row says so
    assert live_ending(result(fault="phone: the bot at ws://h:9/ said nothing within 15 s", ended="fault"),
                       Termination.USER_STOP) == (
        Termination.FAULT, "model", "phone: the bot at ws://h:9/ said nothing within 15 s")
    assert live_ending(result(ended="bot_hung_up"), None) == (Termination.BOT_HUNG_UP, None, None)
    assert live_ending(result(ended="bot_hung_up"), Termination.USER_STOP) == (Termination.USER_STOP, None, None)
    assert live_ending(result(ended="max_duration"), None) == (Termination.MAX_DURATION, None, None)


def test_a_call_whose_harness_fell_behind_has_its_fault_kind_on_the_row():
    """Lateness past the limit is the harness's fault (an infra row): its row says ``harness_late`` as for
    the harness's other faults, so filtering the infra rows by live_fault_kind finds it."""
    from tauray.actors.records import _live_columns

    lateness = SimpleNamespace(frames=500, p50_ms=1.0, p99_ms=119.0, max_ms=300.0, longest_gap_ms=240.0)

    def columns(**kw):
        row = {"protocol": None, "ended_by": "caller", "fault_kind": None, "late": None, "lateness": lateness,
               "caller_moves": 0, "caller_move_max_s": 0.0, "tick_lag_p50_s": 0.0, "tick_lag_max_s": 0.0, **kw}
        return _live_columns(SimpleNamespace(**row))

    assert columns(late="the harness fell behind: frame-send lateness p99 119 ms")["live_fault_kind"] == "harness_late"
    assert columns(fault_kind="unreachable", ended_by="none")["live_fault_kind"] == "unreachable"
    assert columns()["live_fault_kind"] is None  # a call that kept up and ended well
