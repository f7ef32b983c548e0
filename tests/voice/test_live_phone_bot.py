"""The endpoint's phone bot, called end to end by tauray's caller: the endpoint (a child process)
serves the bot at ws://127.0.0.1:PORT/phone-bot; the caller dials it with the conversation id and
the URL of a tool server in this process, speaks through espeak-ng and hears the bot back; the
bot hears through the packaged recogniser, calls a τ² telecom agent tool through MCP (landing in
the callback on the scenario's DB), answers, and hangs up when the caller says goodbye."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="the optional extra tauray[live]")
pytest.importorskip("faster_whisper", reason="the optional extra tauray[voice]")

from tauray.actors.voice.engines import ESPEAK, make_asr, make_tts
from tauray.actors.voice.line import resample
from tauray.actors.voice.live.phone import PhoneCall, PhoneSettings
from tauray.actors.voice.live.tool_server import ToolServer, state_callback
from tauray.actors.voice.live.ulaw import from_ulaw, to_ulaw
from tauray.scenarios import default_registry, fresh_state, select_scenarios


def _speak(tts, text) -> bytes:
    """The caller's line, made before the call: synthesis belongs to the speech pool, not the pacing loop."""
    return to_ulaw(tts.synth(text, "en-us+f2", 170, 50, 0), tts.sample_rate)


@pytest.mark.slow  # the endpoint is a child process; the bot and this test load Whisper
def test_the_caller_talks_to_the_endpoints_phone_bot_end_to_end(endpoint):
    scenario = default_registry().get(select_scenarios(None, domain="telecom", split="base")[0].name)
    state = fresh_state(scenario)
    outcomes: list = []
    tts = make_tts(ESPEAK)
    settings = PhoneSettings(answer_timeout_s=60.0, max_call_s=120.0)
    problem, bye = _speak(tts, "Hi, my mobile data stopped working this morning."), _speak(tts, "Okay, thank you. Goodbye.")

    async def main():
        async with ToolServer() as tools:
            url = tools.register("conv-e2e", scenario.agent_tools, state_callback(state, outcomes))
            call = await PhoneCall.dial(f"ws://127.0.0.1:{endpoint.port}/phone-bot", conversation_id="conv-e2e",
                                        tool_server_url=url, settings=settings)
            try:
                greeting = call.bot_audio(*await call.wait_bot_turn(silence_s=1.0, timeout_s=60))
                call.say_ulaw(problem)
                answer = call.bot_audio(*await call.wait_bot_turn(silence_s=1.0, timeout_s=60))
                call.say_ulaw(bye)
                record = await call.wait_ended(timeout_s=60)
            except BaseException:
                await call.hang_up()
                raise
            return greeting, answer, record

    greeting, answer, record = asyncio.run(asyncio.wait_for(main(), 200))
    asr = make_asr("local/whisper-tiny.en")
    heard = [asr.transcribe(resample(from_ulaw(a), 8000, 16000)).lower() for a in (greeting, answer)]
    assert any(w in heard[0] for w in ("help", "support", "service", "assist")), heard
    assert [o.name for o in outcomes] and outcomes[0].name.startswith(("get_", "check_"))  # the tool landed
    # one of the scripted agent's three answers after a tool (tauray/endpoint/scripted.py), as Whisper heard it
    assert any(w in heard[1] for w in ("system", "details", "account", "order", "waiting", "information", "file")), heard
    assert record.ended_by == "bot" and record.fault is None
    assert record.marks_answered[:2] == ("reply-1", "reply-2")
    print(f"\nphone bot call: {record.lateness.frames} frames, lateness p50 {record.lateness.p50_ms:.2f} ms, "
          f"p99 {record.lateness.p99_ms:.2f} ms, longest gap {record.lateness.longest_gap_ms:.1f} ms; "
          f"late: {record.late}; heard {heard}; tools {[o.name for o in outcomes]}")
    # Whether the harness kept up depends on the machine's load (2 shared cores here): measured, not asserted.
    assert record.lateness.frames * 160 == len(record.caller_line) == len(record.bot_line)
