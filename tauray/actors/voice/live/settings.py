"""The waits and limits of a live call (:class:`PhoneSettings`), apart from the call itself so that a
sweep's phone agent is checked at load without the websocket client (the optional extra
``tauray[live]``) being imported."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.voice.live.lateness import LatenessLimit

__all__ = ["PhoneSettings"]


class PhoneSettings(BaseModel):
    """The waits of a live call, each bounded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    connect_timeout_s: float = Field(default=5.0, gt=0, description="To open the websocket (TCP and handshake).")
    answer_timeout_s: float = Field(default=15.0, gt=0, description=(
        "The bot's first audio must come within this of the call's start, or of the end of the caller's "
        "speech queued before the bot first spoke."))
    send_timeout_s: float = Field(default=2.0, gt=0, description="A frame not taken by the bot within this ends the call.")
    close_timeout_s: float = Field(default=2.0, gt=0, description="For the closing handshake.")
    max_call_s: float = Field(default=900.0, gt=0, description="A call still going after this is ended (timeout).")
    lateness_limit: LatenessLimit = Field(default_factory=LatenessLimit, description="How far behind the harness may fall.")
