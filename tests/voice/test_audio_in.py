"""The audio-in agent: a model that hears the caller's line audio itself, through litellm's
audio message parts, instead of the recogniser's text; offline end to end against the
local endpoint's ``audio-agent`` (which refuses a caller message without audio)."""

from __future__ import annotations

import asyncio
import base64
import io
import re

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.session import SideSession
from tauray.actors.voice.heard import HeardAudio, audio_parts, message_content
from tauray.actors.voice.speaker import LocalSpeech
from tauray.endpoint.audio_agent import HEARD_PREFIX
from tauray.scenarios import select_scenarios
from tauray.scenarios.registry import default_registry
from tests.units import make_units

pytest.importorskip("soundfile")


def _line_audio(seconds: float = 0.25) -> bytes:
    """A short μ-law WAV at the line's 8 kHz, as the telephone line codes it."""
    import numpy as np
    import soundfile

    t = np.arange(int(8000 * seconds)) / 8000
    buffer = io.BytesIO()
    soundfile.write(buffer, 0.3 * np.sin(2 * np.pi * 440 * t), 8000, format="WAV", subtype="ULAW")
    return buffer.getvalue()


def test_heard_audio_becomes_one_litellm_input_audio_part_of_pcm_wav() -> None:
    import soundfile

    content = message_content(HeardAudio(wav=_line_audio(), recognised="hello"))
    assert isinstance(content, list) and len(content) == 1
    part = content[0]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    info = soundfile.info(io.BytesIO(base64.b64decode(part["input_audio"]["data"])))
    assert (info.samplerate, info.subtype, info.channels) == (8000, "PCM_16", 1)
    assert "hello" not in str(content)  # the recogniser's reading never reaches the agent
    assert audio_parts(content) and message_content("plain words") == "plain words"


def test_a_malformed_audio_part_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"content\[0\]\.input_audio\.format"):
        audio_parts([{"type": "input_audio", "input_audio": {"data": "", "format": "ogg"}}])


@pytest.mark.slow  # the scenario registry takes seconds to load
def test_an_audio_in_agents_view_holds_the_audio_not_the_text() -> None:
    scenario = default_registry().get(select_scenarios(None, domain="telecom", split="base")[0].name)
    session = SideSession(scenario, "agent", None, None, 0, run_id="r", conversation_id="c")
    session.hear(HeardAudio(wav=_line_audio(), recognised="my phone number is five five five"))
    assert session.view[-1]["role"] == "user" and session.view[-1]["content"][0]["type"] == "input_audio"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


@pytest.mark.slow
def test_an_audio_in_agent_hears_the_caller_end_to_end_offline(endpoint) -> None:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    agent = {"model": "openai/audio-agent", "api_base": endpoint.base_url, "num_retries": 0}
    user = {"model": "openai/scripted-user:2", "api_base": endpoint.base_url, "num_retries": 0}
    units = make_units("voice-audio-in", names, agent=agent, user=user,
                       voice={"profiles": ["control"], "audio_agents": ["openai/audio-agent"]})
    assert units[0].voice is not None and units[0].voice.audio_in
    result = asyncio.run(run_conversation(units[0], AgentHost(), UserSimHost(), speech=LocalSpeech()))
    c = result.conversation
    assert c.error_kind is None, c.error_message
    said = [u for u in result.utterances if u.side == "user"]
    assert said and all(u.heard_as == "audio" for u in said)
    replies = [m.content for m in result.messages if m.side == "agent" and m.role == "assistant" and m.content]
    assert replies and all(r.startswith(HEARD_PREFIX) for r in replies)
    # what the endpoint recognised from the audio parts is the caller's words, not an echo of a text
    first = replies[0][len(HEARD_PREFIX):].split(". ")[0]
    spoken = _words(said[0].spoken_text)
    assert len(_words(first) & spoken) >= 0.5 * len(spoken), (first, said[0].spoken_text)
    print(f"audio-in: {len(said)} caller utterances heard as audio; said {said[0].spoken_text!r}, "
          f"the agent heard {first!r}")
