"""The side that speaks carries its own words (tauray/actors/voice/speaker.py ``Speaker``, held by the
hosts): what it says aloud, and which client it carries them on."""

from __future__ import annotations

import asyncio
import pickle

from tauray.actors.voice.config import VoiceSettings
from tauray.actors.voice.pool import PoolRef
from tauray.actors.voice.speaker import LocalSpeech, Speaker, local_speech, speech_for
from tauray.actors.voice.spec import as_spec
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
    sent = LocalSpeech(cpu_threads=1)
    assert pickle.loads(pickle.dumps(sent)) is local_speech(1)
    assert local_speech(1) is local_speech(1) and local_speech(2) is not local_speech(1)


def test_a_pool_reference_without_a_pool_is_the_processs_thread_client():
    ref = pickle.loads(pickle.dumps(PoolRef("run-x")))
    assert ref.run_id == "run-x"
    assert asyncio.run(speech_for(ref)) is local_speech()
    given = _Recording()
    assert asyncio.run(speech_for(given)) is given


# --- a voice conversation whose speech or hosts fail midway keeps what happened -------------

from tauray.actors.conversation import run_conversation  # noqa: E402
from tauray.actors.hosts import AgentHost, UserSimHost  # noqa: E402
from tauray.scenarios import select_scenarios  # noqa: E402
from tests.units import make_units  # noqa: E402


class _FailingSpeech:
    """A speech client whose every carry fails, as a hosted one does when its quota is spent."""

    async def carry(self, text, **keys):
        raise RuntimeError("speech quota exceeded")


def _voice_unit(name: str):
    scenario = [e.name for e in select_scenarios(None, domain="mock", split=None)[:1]]
    units = make_units(name, scenario, voice={"profiles": ["control"], "keep_audio": "all"})
    return next(u for u in units if u.voice is not None)


def test_a_failed_carry_ends_the_conversation_with_the_step_that_said_it_recorded():
    result = asyncio.run(run_conversation(_voice_unit("carry-fails"), AgentHost(), UserSimHost(),
                                          speech=_FailingSpeech()))
    c = result.conversation
    assert c.error_kind is not None and "speech quota exceeded" in c.error_message
    said = [m for m in result.messages if m.side == "user" and m.role == "user" and m.content]
    assert said, "the caller's words that failed to cross are in the transcript"
    assert result.utterances == []


def test_a_side_whose_open_is_still_running_is_not_overtaken_by_close():
    events: list[str] = []

    class FailingAgent(AgentHost):
        async def open(self, *args, **kwargs):
            raise ValueError("agent open failed")

    class SlowUser(UserSimHost):
        async def open(self, *args, **kwargs):
            await asyncio.sleep(0.05)  # a pool lookup on a thread
            await super().open(*args, **kwargs)
            events.append("opened")

        async def close(self, request):
            events.append("closed")
            return await super().close(request)

    user = SlowUser()
    result = asyncio.run(run_conversation(_voice_unit("open-fails"), FailingAgent(), user,
                                          speech=_Recording()))
    assert "agent open failed" in (result.conversation.error_message or "")
    assert events == ["opened", "closed"] and user.sessions == {} and user.speakers == {}


def test_an_utterance_whose_audio_did_not_come_back_names_no_file():
    from tauray.actors.records import _kept_audio

    class _Utterance:
        def __init__(self, audio_ref, spoken_audio_ref):
            self.audio_ref, self.spoken_audio_ref = audio_ref, spoken_audio_ref

        def model_copy(self, update):
            copy = _Utterance(self.audio_ref, self.spoken_audio_ref)
            copy.__dict__.update(update)
            return copy

    class _Conv:
        voice = VoiceSettings(profile="control", tts=as_spec("local/espeak-ng", "tts"),
                              asr=as_spec("local/whisper-tiny.en", "asr"), keep_audio="all")
        audio = {"a1": b"x", "s1": b"y"}

    kept, files = _kept_audio(_Conv(), [_Utterance("a1", "s1"), _Utterance("a2", "s2")], failed=True)
    assert files == {"a1": b"x", "s1": b"y"}
    assert [(u.audio_ref, u.spoken_audio_ref) for u in kept] == [("a1", "s1"), (None, None)]


def test_the_line_audio_travels_back_only_to_an_audio_in_agent():
    class _WithAudio(_Recording):
        async def carry(self, text, **keys):
            return "record", b"line audio"

    def speaker(side, audio_in):
        voice = VoiceSettings(profile="control", tts=as_spec("local/espeak-ng", "tts"),
                              asr=as_spec("local/whisper-tiny.en", "asr"), audio_in=audio_in)
        return Speaker(_WithAudio(), voice, unit_id="u", attempt=0, side=side, task_id="t")

    assert asyncio.run(speaker("user", True).carry("hi", turn=1, clock_s=0.0)) == ("record", b"line audio")
    assert asyncio.run(speaker("user", False).carry("hi", turn=1, clock_s=0.0)) == ("record", None)
    assert asyncio.run(speaker("agent", True).carry("hi", turn=1, clock_s=0.0)) == ("record", None)
