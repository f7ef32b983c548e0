"""Full duplex: caller and agent on one clock, talking over each other, and how their turn-taking
is measured (issue 49).

One concept per module:

* :mod:`.segments`: one stretch of one side's speech on the clock (the ``segments`` table's row),
  the timeline built from them, and the Audacity label track of a conversation.
* :mod:`.metrics`: τ-Voice's interaction metrics over a timeline, each with the count of events
  behind it (docs/duplex-metrics.md says where every definition comes from).
* :mod:`.clock`: the simulated clock (ticks of 20-1000 ms, events at 20 ms frames, stepping from
  event to event) and the compute ledger kept apart from it.
* :mod:`.stream`: what each side has put on the line (its chunks, their words and cuts).
* :mod:`.vad`: voice-activity detection on the line (Silero from faster-whisper's package, an
  energy threshold, WebRTC's when installed).
* :mod:`.talk`: messages, replies, tool calls and the model callables.
* :mod:`.caller`: the caller's turn-taking (τ-Voice's rules, seeded; a decision-model hook).
* :mod:`.pipeline`: the cascaded agent pipeline with its declared knobs and identity.
* :mod:`.session`: one conversation end to end: segments, recording, labels, metrics.
* :mod:`.tones`: an exact, instant tone voice and recogniser (tests and the bench).
* :mod:`.errors`: the one-line error of bad duplex input.

docs/duplex.md describes the engine and what is integrated.
"""

from tauray.actors.voice.duplex.caller import (
    DECISION_PROMPT,
    DECISION_PROMPT_SHA256,
    DECISION_PROMPT_VERSION,
    CallerRules,
    Decision,
    DecisionContext,
    DecisionHook,
    DuplexCaller,
    render_decision_prompt,
    seeded_decision,
)
from tauray.actors.voice.duplex.clock import Clock, ClockSettings, ComputeLedger
from tauray.actors.voice.duplex.errors import DuplexConfigError, load_settings
from tauray.actors.voice.duplex.metrics import InteractionEvent, InteractionMetrics, interaction_metrics
from tauray.actors.voice.duplex.pipeline import AgentTurn, CascadedAgent, PipelineSettings
from tauray.actors.voice.duplex.segments import Segment, label_track, parse_label_track, timeline
from tauray.actors.voice.duplex.session import DuplexResult, run_duplex, run_duplex_sync
from tauray.actors.voice.duplex.talk import AgentReply, CallerPolicy, Message, TextAgent, ToolCall, ToolRunner
from tauray.actors.voice.duplex.tones import ToneCodec
from tauray.actors.voice.duplex.vad import EnergyVAD, SileroVAD, WebRTCVAD, make_vad

__all__ = [
    "DECISION_PROMPT", "DECISION_PROMPT_SHA256", "DECISION_PROMPT_VERSION", "AgentReply", "AgentTurn", "CallerPolicy",
    "CallerRules", "CascadedAgent", "Clock", "ClockSettings", "ComputeLedger", "Decision", "DecisionContext",
    "DecisionHook", "DuplexCaller", "DuplexConfigError", "DuplexResult", "EnergyVAD", "InteractionEvent",
    "InteractionMetrics", "Message", "PipelineSettings", "Segment", "SileroVAD", "TextAgent", "ToneCodec", "ToolCall",
    "ToolRunner", "WebRTCVAD", "interaction_metrics", "label_track", "load_settings", "make_vad", "parse_label_track",
    "render_decision_prompt", "run_duplex", "run_duplex_sync", "seeded_decision", "timeline",
]
