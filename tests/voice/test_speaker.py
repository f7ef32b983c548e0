"""The side that speaks carries its own words (actors/voice_client.py ``Speaker``, held by the
hosts): what it says aloud, and which client it carries them on."""

from __future__ import annotations

import asyncio
import pickle

from tauray.actors.speech.spec import as_spec
from tauray.actors.unit import VoiceSettings
from tauray.actors.voice_client import Speaker, ThreadSpeechClient, process_client
from tauray.actors.voice_pool import PoolRef, speech_client
from tauray.scenarios.conventions import STOP_TOKENS


class _Recording:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    async def carry(self, text, **keys):
        self.calls.append(dict(text=text, **keys))
        return "record", None

    def take_audio(self, conversation):
        return {"h": conversation.encode()}


def _speaker(side: str, client=None) -> Speaker:
    return Speaker(client or _Recording(), VoiceSettings(profile="control", tts=as_spec("local/espeak-ng", "tts"),
                                                       asr=as_spec("local/whisper-tiny.en", "asr")), unit_id="u1", attempt=2, side=side,
                   task_id="task")


def test_the_user_simulators_stop_is_not_said_aloud_but_its_words_are():
    user, agent = _speaker("user"), _speaker("agent")
    assert user.says_aloud("My phone shows no service.")
    assert not user.says_aloud("   ")
    for token in STOP_TOKENS:
        assert not user.says_aloud(f"Thanks, bye. {token}")
        assert agent.says_aloud(f"I read {token} back to you")  # only the caller's stop ends the call


def test_a_speaker_carries_with_its_conversations_keys_and_hands_back_its_audio():
    client = _Recording()
    speaker = _speaker("user", client)
    assert asyncio.run(speaker.carry("hello", turn=3, clock_s=4.5)) == ("record", None)
    assert client.calls == [dict(text="hello", turn=3, side="user", clock_s=4.5, voice=speaker.voice,
                                 unit_id="u1", attempt=2, task_id="task")]
    assert speaker.take_audio() == {"h": b"u1"}


def test_a_thread_client_sent_to_another_process_is_that_processs_own():
    sent = ThreadSpeechClient(cpu_threads=1)
    assert pickle.loads(pickle.dumps(sent)) is process_client(1)
    assert process_client(1) is process_client(1) and process_client(2) is not process_client(1)


def test_a_pool_reference_without_a_pool_is_the_processs_thread_client():
    ref = pickle.loads(pickle.dumps(PoolRef("run-x")))
    assert ref.run_id == "run-x"
    assert asyncio.run(speech_client(ref)) is process_client()
    given = _Recording()
    assert asyncio.run(speech_client(given)) is given
