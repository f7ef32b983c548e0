"""Live agents: an agent under test that lives in real time outside tauray, reached on the wall
clock (issue 50). One concept per module:

* :mod:`.media_stream`: Twilio Media Streams messages, both ways, validated as one line.
* :mod:`.ulaw`: the stream's audio, raw μ-law in 20 ms frames, through the line's codec.
* :mod:`.lateness`: the harness's own lateness on the wall clock (frame-send p50/p99, longest gap).
* :mod:`.outgoing`: the caller's queued audio, placed at a frame of the call or cut at one.
* :mod:`.phone`: the caller's side of a call to a phone bot's websocket, and its probe.
* :mod:`.bot_stream`: a phone bot's line read into a duplex agent's stream (its speech, its replies).
* :mod:`.call_loop`: one duplex conversation with a phone bot as the agent, on the wall clock
  (``run_live``; imported by name, as :mod:`.phone` is: it needs ``tauray[live]``).
* :mod:`.tool_server`: the scenario's agent tools served to a bot over MCP, one session per
  conversation (needs the optional extra ``tauray[live]``; imported by name, not here).
* :mod:`.settings`: a live call's waits and lateness limit (no websocket client needed).
* :mod:`.agent`: a phone bot as a sweep's agent: its ``[models]`` entry parsed, what of it makes a
  cell, its checks at load and its probe (``tauray models check``).
* :mod:`.realtime_openai`: OpenAI's Realtime event protocol (and Azure's), the client's side.
* :mod:`.realtime_gemini`: Gemini Live's protocol (``BidiGenerateContent``), the client's side, read
  into the same events (tested against a loopback fake; not yet a sweep's agent).
* :mod:`.realtime_call`: a realtime model's session on the call's line (a :class:`~.phone.PhoneCall`
  speaking that protocol): tools, barge-in by truncation, the provider's transcripts and usage
  (imported by name: it needs ``tauray[live]``).
* :mod:`.realtime_agent`: a realtime model as a sweep's agent: its entry, identity, URL and key,
  cost, and probe.
* :mod:`.errors`: a call's faults and bad messages, one line each.
"""

from tauray.actors.voice.live.errors import CallFault, FaultKind, MediaStreamError, ToolServerError

__all__ = ["CallFault", "FaultKind", "MediaStreamError", "ToolServerError"]
