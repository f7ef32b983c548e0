"""A realtime model as a live agent, without a sweep: OpenAI's Realtime events both ways
(:mod:`tauray.actors.voice.live.realtime_openai`), a session on the call's line against a small
scripted server in this process (:class:`RealtimeCall`: audio, a tool call answered per the
protocol, barge-in truncated at the ms played, the provider's transcripts and usage), its faults
in one line with the key never in them, and the sweep entry (refusals, identity, cost, probe).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket

import numpy as np
import pytest

from tauray.actors.llm.spec import ModelSpec
from tauray.actors.voice.duplex.segments import Segment
from tauray.actors.voice.live import realtime_openai as rt
from tauray.actors.voice.live.errors import CallFault, MediaStreamError
from tauray.actors.voice.live.realtime_agent import realtime_agent
from tauray.actors.voice.live.settings import PhoneSettings
from tauray.actors.voice.live.ulaw import to_ulaw
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, model_identity, select
from tauray.pipeline.sweep_file import load_sweep

pytest.importorskip("websockets", reason="the optional extra tauray[live]")

from websockets.asyncio.server import serve  # noqa: E402

from tauray.actors.voice.live.realtime_call import ProviderTranscript, RealtimeCall, place_transcripts  # noqa: E402

KEY = "sk-test-1234567890abcdef"
TONE = to_ulaw((0.3 * np.sin(2 * np.pi * 440 * np.arange(8000 * 6) / 8000)).astype(np.float32), 8000)  # 6 s


def _protocol(**kwargs) -> rt.OpenAIRealtime:
    tools = [{"name": "get_users", "description": "List users.", "parameters": {"type": "object", "properties": {}}}]
    return rt.OpenAIRealtime(instructions="You are the agent.", tools=tools, **kwargs)


def _ev(kind: str, **fields) -> str:
    return json.dumps({"type": kind, **fields})


def _delta(item: str, raw: bytes) -> str:
    return _ev("response.audio.delta", item_id=item, delta=base64.b64encode(raw).decode())


USAGE = {"input_tokens": 30, "output_tokens": 60, "input_token_details": {"text_tokens": 20, "audio_tokens": 10,
                                                                          "cached_tokens": 0},
         "output_token_details": {"text_tokens": 10, "audio_tokens": 50}}


async def _session(script, **open_kwargs):
    """Run ``script(ws, got)`` as the server of one session; the client opens it, waits for the
    script to finish, hangs up. Returns (record, events the server received, tool calls run)."""
    got: list[dict] = []
    finished = asyncio.Event()
    tools: list[tuple[str, dict]] = []

    async def handler(ws):
        await ws.send(_ev("session.created", session={"id": "sess_1"}))

        async def listen():
            async for text in ws:
                got.append(json.loads(text))
        listener = asyncio.create_task(listen())
        try:
            await script(ws, got)
        finally:
            finished.set()
            await asyncio.sleep(0.3)
            listener.cancel()

    class Reply:
        def __init__(self, text):
            self.text, self.error = text, False

    async def run_tool(name, arguments):
        tools.append((name, arguments))
        return Reply('[{"user_id": "user_1"}]')

    async with serve(handler, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/realtime?model=gpt-realtime"
        call = await RealtimeCall.open(url, protocol=_protocol(), key=KEY, conversation_id="c1", run_tool=run_tool,
                                       settings=PhoneSettings(answer_timeout_s=5), **open_kwargs)
        await asyncio.wait_for(finished.wait(), 20)
        await asyncio.sleep(0.2)
        record = await call.hang_up()
    return record, got, tools


# --- the protocol's events ------------------------------------------------------------------------

def test_the_session_is_configured_for_the_lines_ulaw_with_the_scenarios_prompt_and_tools_and_server_vad():
    beta = json.loads(_protocol().session_update())["session"]
    assert (beta["input_audio_format"], beta["output_audio_format"]) == ("g711_ulaw", "g711_ulaw")
    assert beta["instructions"] == "You are the agent." and beta["turn_detection"]["type"] == "server_vad"
    assert beta["tools"] == [{"type": "function", "name": "get_users", "description": "List users.",
                              "parameters": {"type": "object", "properties": {}}}]
    assert beta["input_audio_transcription"] == {"model": "whisper-1"}
    ga = json.loads(_protocol(shape="ga").session_update())["session"]
    assert ga["type"] == "realtime" and ga["audio"]["input"]["format"] == {"type": "audio/pcmu"}
    assert ga["audio"]["output"]["voice"] == "alloy" and ga["audio"]["input"]["transcription"]["model"] == "whisper-1"
    assert json.loads(_protocol().append(b"\xff" * 160)) == {"type": "input_audio_buffer.append",
                                                            "audio": base64.b64encode(b"\xff" * 160).decode()}
    item, create = map(json.loads, _protocol().function_output("call_1", "done"))
    assert item == {"type": "conversation.item.create", "item": {"type": "function_call_output",
                                                                 "call_id": "call_1", "output": "done"}}
    assert create == {"type": "response.create"}
    assert json.loads(_protocol().truncate("item_1", 480)) == {"type": "conversation.item.truncate",
                                                               "item_id": "item_1", "content_index": 0,
                                                               "audio_end_ms": 480}


def test_server_events_are_read_under_both_namings_and_a_bad_one_is_one_line():
    p = _protocol()
    for kind in ("response.audio.delta", "response.output_audio.delta"):
        assert p.decode(_ev(kind, item_id="i", delta=base64.b64encode(b"ab").decode())) == rt.AudioDelta("i", b"ab")
    for kind in ("response.audio_transcript.done", "response.output_audio_transcript.done"):
        assert p.decode(_ev(kind, item_id="i", transcript="hi")) == rt.Transcript("agent", "i", "hi")
    assert p.decode(_ev("conversation.item.input_audio_transcription.completed", item_id="u", transcript="yo")) == \
        rt.Transcript("caller", "u", "yo")
    done = p.decode(_ev("response.done", response={"id": "r", "status": "completed", "usage": USAGE}))
    assert done.usage == {"input_text_tokens": 20, "input_audio_tokens": 10, "input_cached_tokens": 0,
                          "output_text_tokens": 10, "output_audio_tokens": 50}
    assert isinstance(p.decode(_ev("rate_limits.updated")), rt.Ignored)
    for bad, line in [("not json", "realtime: a frame that is not JSON"), ('{"no": 1}', "the event has no 'type'"),
                      (_ev("response.function_call_arguments.done", call_id="c"),
                       "realtime: response.function_call_arguments.done: a bad or missing field 'name'"),
                      (_ev("response.audio.delta", item_id="i", delta="%%%"), "response.audio.delta: a bad")]:
        with pytest.raises(MediaStreamError, match=re.escape(line)) as info:
            p.decode(bad)
        assert "\n" not in str(info.value)


def test_the_url_names_the_model_or_the_azure_deployment_and_the_key_goes_in_a_header_only():
    assert rt.realtime_url("openai/gpt-realtime", None) == ("wss://api.openai.com/v1/realtime?model=gpt-realtime",
                                                            "Authorization")
    assert rt.realtime_url("openai/gpt-realtime", "http://127.0.0.1:8791/v1")[0] == \
        "ws://127.0.0.1:8791/v1/realtime?model=gpt-realtime"
    url, header = rt.realtime_url("azure/my-rt", "https://res.openai.azure.com", api_version="2025-04-01-preview")
    assert (url, header) == ("wss://res.openai.azure.com/openai/realtime?api-version=2025-04-01-preview&"
                             "deployment=my-rt", "api-key")
    assert _protocol().headers("Authorization", KEY) == {"OpenAI-Beta": "realtime=v1", "Authorization": f"Bearer {KEY}"}
    assert _protocol(shape="ga").headers("api-key", KEY) == {"api-key": KEY}
    assert _protocol().headers("Authorization", None) == {"OpenAI-Beta": "realtime=v1"}  # a loopback server


# --- a session on the line --------------------------------------------------------------------------

def test_the_models_audio_is_played_its_tool_call_answered_per_the_protocol_and_its_usage_and_words_kept():
    async def script(ws, got):
        await asyncio.sleep(0.1)
        await ws.send(_ev("response.created", response={"id": "r1"}))
        await ws.send(_delta("item_a", TONE[:4000]))  # 0.5 s
        await ws.send(_ev("response.audio_transcript.done", item_id="item_a", transcript="Hello there."))
        await ws.send(_ev("response.done", response={"id": "r1", "status": "completed", "usage": USAGE}))
        await ws.send(_ev("response.function_call_arguments.done", call_id="call_9", name="get_users",
                          arguments="{}", item_id="fc"))
        await ws.send(_ev("response.done", response={"id": "r2", "status": "completed", "usage": USAGE}))
        for _ in range(40):
            if any(e["type"] == "conversation.item.create" for e in got):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.8)

    record, got, tools = asyncio.run(_session(script))
    kinds = [e["type"] for e in got]
    assert kinds[:2] == ["session.update", "response.create"]  # configured, then asked to greet
    assert kinds.count("input_audio_buffer.append") >= 40  # a frame every 20 ms on the wall clock
    assert tools == [("get_users", {})]
    at = kinds.index("conversation.item.create")
    assert got[at]["item"] == {"type": "function_call_output", "call_id": "call_9", "output": '[{"user_id": "user_1"}]'}
    assert kinds[at + 1] == "response.create"  # then the next response is asked for
    assert record.bot_audio_s == pytest.approx(0.5, abs=0.021) and record.tool_calls == 1 and record.responses == 2
    assert record.usage == {"input_text_tokens": 40, "input_audio_tokens": 20, "input_cached_tokens": 0,
                            "output_text_tokens": 20, "output_audio_tokens": 100}
    (said,) = record.transcripts
    assert (said.side, said.text, said.truncated_ms) == ("agent", "Hello there.", None)
    assert said.start_s is not None and said.end_s - said.start_s == pytest.approx(0.5, abs=0.021)
    assert record.ended_by == "caller" and record.fault is None and record.protocol == "openai-realtime"


def test_barge_in_drops_the_queue_truncates_the_item_at_the_ms_played_and_cancels_the_response():
    async def script(ws, got):
        await ws.send(_ev("response.created", response={"id": "r1"}))
        await ws.send(_delta("item_a", TONE))  # 6 s, far ahead of playback, however late this machine runs
        await asyncio.sleep(0.6)
        await ws.send(_ev("input_audio_buffer.speech_started", audio_start_ms=600, item_id="user_1"))
        await ws.send(_delta("item_a", TONE[:800]))  # a late delta of the cut response: not played
        await asyncio.sleep(0.4)
        await ws.send(_ev("input_audio_buffer.speech_stopped", audio_end_ms=900, item_id="user_1"))
        await ws.send(_ev("conversation.item.input_audio_transcription.completed", item_id="user_1",
                          transcript="wait a second"))
        await asyncio.sleep(0.3)

    record, got, _ = asyncio.run(_session(script))
    (truncate,) = [e for e in got if e["type"] == "conversation.item.truncate"]
    assert truncate["item_id"] == "item_a" and truncate["content_index"] == 0
    played_ms = round(record.bot_audio_s * 1000)
    assert 200 <= played_ms <= 5000 and abs(truncate["audio_end_ms"] - played_ms) <= 20  # what was actually played
    assert any(e["type"] == "response.cancel" for e in got)
    assert record.truncations == 1 and record.clears == 1
    heard = next(t for t in record.transcripts if t.side == "caller")
    assert (heard.text, heard.start_s, heard.end_s) == ("wait a second", 0.6, 0.9)


def test_a_provider_error_or_a_bad_event_ends_the_call_in_one_line_without_the_key():
    async def refused(ws, got):
        await ws.send(_ev("error", error={"type": "invalid_request_error", "code": "bad_key",
                                          "message": f"Incorrect API key provided: {KEY}.\nSee the docs."}))
        await asyncio.sleep(0.3)

    async def garbled(ws, got):
        await ws.send("{not json")
        await asyncio.sleep(0.3)

    async def benign(ws, got):
        await ws.send(_ev("error", error={"type": "invalid_request_error", "code": "response_cancel_not_active",
                                          "message": "no active response"}))
        await asyncio.sleep(0.3)

    record, _, _ = asyncio.run(_session(refused))
    assert record.fault_kind == "provider_error" and "\n" not in record.fault and KEY not in record.fault
    assert record.fault.startswith("realtime: the model at ws://127.0.0.1:") and "(bad_key): Incorrect API key " \
        "provided: ***." in record.fault and "?model" not in record.fault
    record, _, _ = asyncio.run(_session(garbled))
    assert record.fault_kind == "wrong_protocol" and record.fault.endswith("does not speak the realtime protocol: "
                                                                          "realtime: a frame that is not JSON")
    record, _, _ = asyncio.run(_session(benign))
    assert record.fault is None and record.provider_errors == ("response_cancel_not_active",)
    assert CallFault("provider_error", "x").infra  # the harness's side: rerun


def test_opening_a_session_fails_in_one_line_naming_what_the_peer_did():
    async def main():
        async def wrong_first(ws):
            await ws.send(_ev("session.updated", session={}))
            await ws.wait_closed()

        async def silent(ws):
            await ws.wait_closed()

        out = []
        for handler in (wrong_first, silent):
            async with serve(handler, "127.0.0.1", 0) as server:
                url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/realtime?model=m"
                try:
                    await RealtimeCall.open(url, protocol=_protocol(), key=KEY, conversation_id="c",
                                            settings=PhoneSettings(connect_timeout_s=0.5))
                except CallFault as fault:
                    out.append(fault)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            await RealtimeCall.open(f"ws://127.0.0.1:{port}/v1/realtime?model=m", protocol=_protocol(), key=KEY,
                                    conversation_id="c")
        except CallFault as fault:
            out.append(fault)
        return out

    wrong, silent, gone = asyncio.run(main())
    assert wrong.kind == "wrong_protocol" and "its first event was 'session.updated', not 'session.created'" in str(wrong)
    assert silent.kind == "no_answer" and "sent no session.created within 0.5 s" in str(silent)
    assert gone.kind == "unreachable" and str(gone).startswith("realtime: cannot reach the model at ws://127.0.0.1:")
    assert all(KEY not in str(f) and "\n" not in str(f) and "?model" not in str(f) for f in (wrong, silent, gone))


def test_the_providers_words_go_on_the_segments_they_overlap_most():
    def seg(side, start, end):
        return Segment(unit_id="u", attempt=0, side=side, kind="speech", start_s=start, end_s=end, cut_at_s=None,
                       words_spoken=1, words_cut=0, text="", heard_text="heard by the caller" if side == "agent" else "")

    segments = (seg("agent", 0.5, 3.0), seg("user", 3.5, 5.0), seg("agent", 5.5, 8.0))
    placed = place_transcripts(segments, (
        ProviderTranscript(side="agent", item_id="a", text="Hello.", start_s=0.5, end_s=3.0),
        ProviderTranscript(side="caller", item_id="u", text="my phone", start_s=3.2, end_s=5.3),
        ProviderTranscript(side="agent", item_id="b", text="Found it.", start_s=5.5, end_s=7.0, truncated_ms=1500)))
    assert [(s.text, s.heard_text) for s in placed] == [("Hello.", "heard by the caller"), ("", "my phone"),
                                                        ("Found it.", "heard by the caller")]


# --- the sweep's entry --------------------------------------------------------------------------------

RT = 'model = "openai/gpt-realtime"\napi_base = "http://127.0.0.1:8791/v1"\nrealtime = {%s}\n'


def _cfg(tmp_path, *, realtime="", voice='turn_taking = ["duplex"]\n', agents='["rt"]', users='["scripted"]',
         model=RT):
    path = tmp_path / "v.toml"
    path.write_text(f'name = "v"\nagents = {agents}\nusers = {users}\n[[scenarios]]\ndomain = "mock"\nlimit = 1\n'
                    f'[models.rt]\n{model % realtime}[voice]\nprofiles = ["control"]\ntts = "local/espeak-ng"\n{voice}')
    return load_sweep(path)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"voice": ""}, r"agents\[0\]: 'rt' is a realtime model: it runs in duplex only, and voice.turn_taking has 'half'"),
    ({"users": '["rt"]', "agents": '["oracle"]'}, r"users\[0\]: 'rt' is a realtime model \(openai/gpt-realtime\): "
     r"it can only be an agent"),
    ({"voice": 'turn_taking = ["duplex"]\nduplex_rules = {hears = "text"}\n'},
     r"voice.duplex_rules.hears: 'text', but agents\[0\] 'rt' is a realtime model, whose words reach its caller"),
    ({"realtime": "answer_timeout_s = 0"}, r"models.rt.realtime.answer_timeout_s: Input should be greater than 0"),
    ({"realtime": 'shape = "v2"'}, r"models.rt.realtime.shape: Input should be 'beta' or 'ga'"),
    ({"realtime": "voices = 1"}, r"models.rt.realtime: unknown parameter 'voices'; known: voice, transcription_model"),
    ({"model": 'model = "openai/gpt-realtime"\napi_key_env = "TAURAY_NO_SUCH_KEY_VAR"\nrealtime = {%s}\n'},
     r"models.rt: openai/gpt-realtime: the key's variable TAURAY_NO_SUCH_KEY_VAR is not set"),
    ({"model": 'model = "phone/rt"\nrealtime = {%s}\n'}, r"a realtime model must be written 'openai/<model>', "
     r"'azure/<deployment>' or 'gemini/<model>'"),
])
def test_a_realtime_model_that_cannot_run_as_configured_is_refused_at_load_in_one_line(tmp_path, kwargs, message):
    with pytest.raises(ConfigFileError) as info:
        _cfg(tmp_path, **kwargs)
    line = str(info.value).strip()
    assert "\n" not in line and re.search(message, line.replace("field '", "").replace("':", ":", 1)), line


def test_a_realtime_cells_id_is_its_model_and_settings_never_its_address_or_key(tmp_path, monkeypatch):
    here = SweepPlan(cfg := _cfg(tmp_path), select(cfg)).cells[0]
    assert here.agent.is_realtime and here.voice.duplex.rules.hears == "channel"
    assert here.voice.duplex.rules.opening == "agent"  # it greets, as the text agent does
    moved = _cfg(tmp_path, model=RT.replace("8791", "40123"))
    assert SweepPlan(moved, select(moved)).cells[0].cell_id == here.cell_id
    voiced = _cfg(tmp_path, realtime='voice = "verse"')
    assert SweepPlan(voiced, select(voiced)).cells[0].cell_id != here.cell_id
    spec = ModelSpec.model_validate({"model": "openai/gpt-realtime", "api_base": "https://x.example/v1",
                                     "api_key_env": "MY_KEY", "realtime": {"voice": "verse"}})
    ident = model_identity(spec)
    assert set(ident) == {"model", "realtime"} and "x.example" not in json.dumps(ident) and "MY_KEY" not in json.dumps(ident)
    monkeypatch.setenv("MY_KEY", KEY)
    assert realtime_agent(spec).key() == KEY and KEY not in spec.model_dump_json()


def test_a_sessions_cost_is_litellms_audio_price_or_the_specs():
    usage = {"input_audio_tokens": 1_000_000, "output_audio_tokens": 1_000_000, "input_text_tokens": 0}
    litellm_priced = realtime_agent(ModelSpec.model_validate({"model": "openai/gpt-realtime", "realtime": {}}))
    assert litellm_priced.cost(usage) == pytest.approx(32.0 + 64.0)  # litellm's gpt-realtime: $32 / $64 per M
    own = realtime_agent(ModelSpec.model_validate({"model": "openai/my-rt", "realtime": {
        "input_audio_per_mtok": 10.0, "output_audio_per_mtok": 20.0}}))
    assert own.cost(usage) == pytest.approx(30.0)
    assert realtime_agent(ModelSpec.model_validate({"model": "openai/my-rt", "realtime": {}})).cost(usage) is None


def test_models_check_opens_a_session_and_closes_it_at_session_created(capsys):
    from tauray.pipeline.cli.main import main

    async def handler(ws):
        await ws.send(_ev("session.created", session={"id": "s"}))
        await ws.wait_closed()

    found: list[int] = []

    async def run():
        async with serve(handler, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            spec = json.dumps({"model": "openai/gpt-realtime", "api_base": f"http://127.0.0.1:{port}/v1",
                               "realtime": {}})
            found.append(await asyncio.to_thread(main, ["models", "check", spec, "--offline"]))

    asyncio.run(run())
    line = capsys.readouterr().out.strip()
    assert found == [0] and re.fullmatch(r"openai/gpt-realtime: reachable: a realtime session at ws://127\.0\.0\.1:\d+"
                                         r"/v1/realtime opened \(session.created\) and closed in [\d.]+ s \(no audio "
                                         r"sent\); audio \$32/\$64 per million tokens in/out \(litellm\)", line), line
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = json.dumps({"model": "openai/gpt-realtime", "api_base": f"http://127.0.0.1:{port}/v1", "realtime": {}})
    assert main(["models", "check", gone, "--offline"]) == 2
    assert capsys.readouterr().out.strip().startswith(f"openai/gpt-realtime: unreachable: realtime: cannot reach the "
                                                      f"model at ws://127.0.0.1:{port}/v1/realtime")


@pytest.mark.provider
def test_a_real_openai_realtime_session_opens_and_closes():
    import os

    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("needs OPENAI_API_KEY")
    from tauray.actors.voice.live.realtime_agent import probe_realtime

    agent = realtime_agent(ModelSpec.model_validate({"model": "openai/gpt-realtime", "realtime": {"shape": "ga"}}))
    assert asyncio.run(probe_realtime(agent)) > 0


def test_a_session_is_admitted_against_the_models_tpm_and_settled_to_its_usage():
    from tauray.actors.live_call import _admit
    from tauray.actors.quota.book import QuotaBook, gate, reset_gate
    from tauray.actors.quota.model import Settlement

    spec = ModelSpec.model_validate({"model": "openai/gpt-realtime", "tpm": 10_000,
                                     "realtime": {"session_tokens": 6000}})
    agent = realtime_agent(spec)

    async def main():
        reset_gate(QuotaBook())
        try:
            assert await _admit(ModelSpec.model_validate({"model": "openai/gpt-realtime", "realtime": {}}), agent) \
                is None  # no quota: nothing asked
            first = await asyncio.wait_for(_admit(spec, agent), 1)
            with pytest.raises(TimeoutError):  # 6000 held + 6000 more is past 10,000 a minute: it waits
                await asyncio.wait_for(_admit(spec, agent), 0.5)
            gate().settle(first, Settlement(prompt_tokens=100, completion_tokens=200, replied=True))
            second = await asyncio.wait_for(_admit(spec, agent), 1)  # settled to its usage: room again
            assert second.stopped is None
        finally:
            reset_gate()

    asyncio.run(main())
