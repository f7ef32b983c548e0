"""A phone bot as the agent of a duplex conversation: its line, as played on the call, turned into
the agent's :class:`~tauray.actors.voice.duplex.stream.Stream` tick by tick, so the duplex caller
hears it and the timeline, panel and label track are made as for any duplex agent.

What the bot says is known only as audio. A voice-activity detector on the line (the μ-law
energy, or WebRTC's) finds its speech frame by frame; a pause shorter than ``bridge_ms`` inside
its speech is part of the speech (espeak-ng pauses 20–140 ms between words and 320–440 ms
between sentences, measured on the endpoint's bot); silence is never a chunk. A chunk after
``reply_gap_ms`` of silence, or after the caller began a turn, is a new reply (the caller hears
replies whole, through its recogniser). Chunks carry no text: the caller's recogniser hears them,
and the segments' ``text`` stays empty (their ``heard_text`` is what the caller heard).

The simulated frame index is the call's frame index: at tick ``t`` the agent's stream holds the
bot's audio played before frame ``t``, and nothing after it.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauray.actors.voice.duplex.clock import ComputeLedger, frames_of
from tauray.actors.voice.duplex.errors import load_settings
from tauray.actors.voice.duplex.stream import Chunk, Stream
from tauray.actors.voice.duplex.vad import VAD, make_vad
from tauray.actors.voice.live.ulaw import decode_samples

__all__ = ["BotLine", "PhoneAgent", "PhoneAgentSettings"]


class PhoneAgentSettings(BaseModel):
    """How a phone bot's line is read into speech and replies."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vad: Literal["energy", "webrtc"] = Field("energy", description="Voice-activity detector on the bot's line: "
                                             "'energy' (a level threshold) or 'webrtc' (needs webrtcvad). Both "
                                             "read each 20 ms frame alone, as the line arrives tick by tick.")
    vad_threshold: float | None = Field(None, description="dBFS for energy (-40), aggressiveness 0-3 for webrtc "
                                        "(2); None: the default.")
    bridge_ms: int = Field(500, ge=0, le=5000, description="A pause shorter than this inside the bot's speech is "
                           "part of its speech, ms.")
    reply_gap_ms: int = Field(700, ge=20, le=10000, description="Silence after which the bot's next speech is a new "
                              "reply, ms.")

    @model_validator(mode="after")
    def _gaps(self) -> PhoneAgentSettings:
        if self.bridge_ms > self.reply_gap_ms:
            raise ValueError(f"bridge_ms ({self.bridge_ms}) is over reply_gap_ms ({self.reply_gap_ms})")
        return self

    @classmethod
    def parse(cls, data: Any) -> PhoneAgentSettings:
        """From a mapping; one line naming the field on a bad or unknown one."""
        return load_settings(cls, data, "phone_agent")


class BotLine(Protocol):
    """The call as the agent reads it (:class:`~.phone.PhoneCall`): the bot's audio as played."""

    @property
    def frames(self) -> int: ...

    def bot_audio(self, start_frame: int, end_frame: int | None = None) -> bytes: ...


class PhoneAgent:
    """The bot on the duplex clock: :meth:`on_tick` takes the bot's audio played since the last
    tick into :attr:`stream`. It decides nothing: the bot does, on the far side of the call."""

    def __init__(self, line: BotLine, settings: PhoneAgentSettings, *, ledger: ComputeLedger,
                 vad: VAD | None = None) -> None:
        self.line, self.settings, self.ledger = line, settings, ledger
        self.vad = vad or make_vad(settings.vad, settings.vad_threshold)
        self.stream = Stream("agent")
        self.processed = 0
        self.replies = 0  # replies found so far
        self._bridge, self._reply_gap = frames_of(settings.bridge_ms), frames_of(settings.reply_gap_ms)

    async def on_tick(self, t: int, caller: Stream) -> None:
        """Hear the bot's line up to frame ``t`` (or as far as it has played)."""
        self.hear(min(t, self.line.frames), caller)

    def next_wake(self, t: int, caller: Stream) -> float:
        """The bot may speak on any frame: the live loop visits every tick."""
        return t + 1

    def hear(self, upto: int, caller: Stream) -> None:
        """Read the frames from the last one heard up to ``upto`` into the stream."""
        start = self.processed
        if upto <= start:
            return
        samples = decode_samples(self.line.bot_audio(start, upto))
        with self.ledger.timed("vad"):
            flags = np.asarray(self.vad.frames(samples), dtype=bool)
        edges = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(np.int8), [0]))))
        for a, b in zip(edges[::2] + start, edges[1::2] + start, strict=True):
            self._speech(int(a), int(b), caller)
        self.processed = upto

    def _speech(self, a: int, b: int, caller: Stream) -> None:
        """Speech on frames [a, b): the last chunk goes on over a short pause, or a new one starts."""
        last = self.stream.chunks[-1] if self.stream.chunks else None
        if last is not None:
            gap = a - last.end
            spoke = [c for c in caller.chunks if last.end <= c.start < a]  # the caller in the pause
            if gap == 0 or (gap < self._bridge and not spoke):
                last.samples = np.concatenate([last.samples, decode_samples(self.line.bot_audio(last.end, b))])
                last.end = b
                return
            if gap >= self._reply_gap or any(c.kind == "speech" for c in spoke):
                self.replies += 1
        else:
            self.replies = 1
        audio = decode_samples(self.line.bot_audio(a, b))
        self.stream.add(Chunk("agent", "speech", a, audio, "", (), reply=self.replies - 1))
