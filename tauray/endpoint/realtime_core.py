"""The endpoint's scripted realtime model, its protocol-free core: hearing, the script, speaking.
Each protocol's server (:mod:`.realtime_bot`: OpenAI's Realtime events; :mod:`.realtime_gemini_bot`:
Gemini Live's ``BidiGenerateContent``) is a subclass that says what it heard and spoke in its own
messages (the ``on_*`` hooks and :meth:`ScriptedVoice.respond`).

* **Hearing.** The caller's frames (any rate) go through the phone bot's level gate, standing in for
  a server's voice activity detection: speech starts at the first frame at or over the level, and a
  turn ends after 700 ms below it (or when the client says its audio stream ended). The packaged
  recogniser (``local/whisper-tiny.en``) hears each turn of at least 200 ms; its words are the
  conversation's next user message, and a response starts when none is running.
* **The script.** The endpoint's scripted agent answers from the conversation and the session's
  tools: a tool call, or words.
* **Speaking.** espeak-ng (the phone bot's voice), the audio handed to the protocol's chunks.
* **Usage.** The endpoint's counts: 10 input audio tokens a second heard, 20 output audio tokens a
  second spoken, a text token per 4 characters.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import numpy as np

from tauray.actors.voice.engines import ESPEAK, make_tts
from tauray.actors.voice.line import resample
from tauray.endpoint.audio_agent import _recogniser
from tauray.endpoint.phone_bot import PhoneBotSettings, _Turns
from tauray.endpoint.scripted import scripted_agent

__all__ = ["ScriptedVoice"]

HEARD_TOKENS_PER_S = 10
SPOKEN_TOKENS_PER_S = 20


class ScriptedVoice:
    """One session's conversation, ears and voice; the protocol's messages are the subclass's."""

    def __init__(self, settings: PhoneBotSettings) -> None:
        self.settings = settings
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a phone support agent."}]
        self.tools: list[dict[str, Any]] = []  # chat-completions function tools
        self.response: asyncio.Task[None] | None = None
        self.turns: asyncio.Queue[tuple[str, np.ndarray, int] | None] = asyncio.Queue()
        self.heard: list[np.ndarray] = []
        self.buffer_ms = self.speech_ms = self.silence_ms = 0
        self.item = ""  # the caller's turn being heard (the protocol names it)
        self.heard_tokens = 0

    # --- what the protocol says (the subclass's) ---------------------------------------------------
    async def on_speech_started(self, at_ms: int) -> None:
        """The caller started speaking, ``at_ms`` on the input's timeline (a running response is
        cancelled next)."""

    async def on_speech_stopped(self, end_ms: int) -> None:
        """The caller's turn ended."""

    async def on_heard(self, item: str, text: str) -> None:
        """The recogniser's words for a turn."""

    async def respond(self) -> None:
        """One response: the script's reply (:meth:`reply`) in the protocol's messages."""
        raise NotImplementedError

    # --- hearing --------------------------------------------------------------------------------
    async def hear(self, audio: np.ndarray, rate: int) -> None:
        """One frame of the caller's audio (float, ``rate`` Hz) through the level gate."""
        ms = len(audio) * 1000 // rate
        at = self.buffer_ms
        self.buffer_ms += ms
        level = 20 * np.log10(max(float(np.sqrt(np.mean(audio ** 2))) if audio.size else 0.0, 1e-9))
        if level >= self.settings.speech_dbfs:
            if not self.speech_ms:
                await self.on_speech_started(at)
                await self.cancel()  # the caller's speech interrupts the response, as a server's VAD does
            self.speech_ms += ms
            self.silence_ms = 0
        elif self.speech_ms:
            self.silence_ms += ms
        if self.speech_ms:
            self.heard.append(resample(audio, rate, 16000) if rate != 16000 else audio)
        if self.speech_ms and self.silence_ms >= self.settings.end_of_turn_ms:
            await self.end_turn()

    async def end_turn(self) -> None:
        """The caller's turn is over (silence, or the client's end of stream): heard if long enough."""
        if not self.speech_ms:
            return
        await self.on_speech_stopped(self.buffer_ms)
        if self.speech_ms >= self.settings.min_speech_ms:
            await self.turns.put((self.item, np.concatenate(self.heard), 16000))
        self.heard_tokens += self.speech_ms * HEARD_TOKENS_PER_S // 1000
        self.heard, self.speech_ms, self.silence_ms = [], 0, 0

    async def hear_turns(self) -> None:
        """The recogniser's worker: each turn's words, then a response when none is running."""
        while (turn := await self.turns.get()) is not None:
            item, audio, _ = turn
            asr = await asyncio.to_thread(_recogniser, self.settings.recogniser)
            text = (await asyncio.wait_for(asyncio.to_thread(asr.transcribe, audio),
                                           self.settings.step_timeout_s)).strip()
            await self.on_heard(item, text)
            if text:
                self.messages.append({"role": "user", "content": text})
                self.start_response()

    # --- answering ------------------------------------------------------------------------------
    def start_response(self) -> bool:
        """Start a response unless one is running; whether one started."""
        if self.response is not None and not self.response.done():
            return False
        self.response = asyncio.create_task(self.respond())
        return True

    async def cancel(self) -> bool:
        """Stop the running response; whether there was one."""
        task = self.response
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        return True

    def reply(self) -> tuple[list[dict[str, Any]], str, dict[str, int]]:
        """The script's next move: its tool calls (chat-completions shape, already in the
        conversation) or its words (not yet: :meth:`said` adds them), and the response's usage so far."""
        body = {"model": "scripted-agent", "messages": self.messages, **({"tools": self.tools} if self.tools else {})}
        reply = scripted_agent(body, _Turns())
        usage = {"input_text": sum(len(str(m.get("content") or "")) for m in self.messages) // 4,
                 "input_audio": self.heard_tokens, "output_text": 0, "output_audio": 0}
        self.heard_tokens = 0
        calls = (reply.message.get("tool_calls") or []) if reply.finish_reason == "tool_calls" else []
        if calls:
            self.messages.append(reply.message)
            return calls, "", usage
        return [], str(reply.message.get("content") or ""), usage

    def said(self, text: str) -> dict[str, Any]:
        """The agent's words in the conversation (the message, to cut when it was interrupted)."""
        message = {"role": "assistant", "content": text}
        self.messages.append(message)
        return message

    async def synth(self, text: str) -> tuple[np.ndarray, int]:
        """The words as audio (float) and its rate, in the phone bot's voice."""
        tts = make_tts(ESPEAK)
        audio = await asyncio.wait_for(asyncio.to_thread(tts.synth, text, self.settings.voice, self.settings.rate_wpm,
                                                         50, 0), self.settings.step_timeout_s)
        return audio, tts.sample_rate

    @staticmethod
    def spoken_tokens(ms: int) -> int:
        return ms * SPOKEN_TOKENS_PER_S // 1000

    async def stop(self, worker: asyncio.Task[None]) -> None:
        """The session is over: the worker and any response ended."""
        await self.turns.put(None)
        for task in (worker, self.response):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
