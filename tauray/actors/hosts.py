"""The agent and user-simulator hosts.

A host serves many conversations at once, keyed by conversation id: per
conversation it holds one side's session (DB, tools, view, policy). It builds
the side's DB itself from the scenario (:mod:`tauray.scenarios.initial`, cached
per process) and scores it there on close, so only small messages cross to
the coordinator: sync views when they change (domains with sync), the sync's
updates, and the final :class:`~tauray.scenarios.scoring.SideCheck`. The same
class runs in-process (tests of the loop without Ray) or as a Ray actor
(:func:`remote_classes`); the model clients it uses are cached per
process, so a host's concurrency limit holds across its conversations.

A coordinator calls four methods, each with one typed request (:class:`OpenRequest`,
:class:`StepRequest`, :class:`SyncRequest`, :class:`CloseRequest`), and a fifth for a live agent's
tool calls (:class:`RunToolRequest`), through
:class:`~tauray.actors.conversation.SideClient`: one Ray argument per call, because Ray
binds and serializes each argument of an actor call apart (docs/architecture.md says what
that saves).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from pydantic import ConfigDict, Field

from tauray.actors import heap
from tauray.actors.failures import classify
from tauray.actors.llm import get_client
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.policies import LiveAgent, make_policy
from tauray.actors.session import SideFinal, SideSession, StepResult
from tauray.actors.voice.config import VoiceSettings
from tauray.actors.voice.heard import HeardAudio
from tauray.actors.voice.policies import make_voice_policy
from tauray.actors.voice.rules import voice_prompt
from tauray.actors.voice.speaker import Speaker, speech_for
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.initial import initial_db
from tauray.scenarios.model import Frozen, Side
from tauray.scenarios.prompts import reference_steps_prompt
from tauray.scenarios.registry import default_registry
from tauray.scenarios.upstream import silence_upstream_logging


class OpenRequest(Frozen):
    """Start one side of a conversation (:meth:`SideHost.open`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    conversation_id: str = Field(description="Keys the side's session and its message records.")
    run_id: str = Field(description="Run the conversation belongs to (its message records' run_id).")
    scenario: str = Field(description="Scenario name; the host builds the side's DB from it.")
    spec: ModelSpec = Field(description="The side's model (or reference policy).")
    seed: int | None = Field(description="The unit's seed, sent with every model call.")
    greeting: str | None = Field(default=None, description="A fixed first message of this side (the agent's).")
    voice: VoiceSettings | None = Field(default=None, description="A voice cell's settings: the side's voice rules "
                                        "and, for a reference policy, the one that speaks plain words.")
    speech: Any = Field(default=None, description="Where the side speaks through the channel: a speech client, or "
                        "the run's PoolRef; None: it does not speak aloud.")
    attempt: int = Field(default=0, description="Scheduler attempt (keys the side's utterances).")


class StepRequest(Frozen):
    """One step of one side (:meth:`SideHost.step`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    conversation_id: str
    incoming: str | HeardAudio | None = Field(description="What the side hears first: the other side's words, or "
                                              "an audio-in agent's caller audio; None: nothing new.")
    max_rounds: int = Field(description="Policy replies the step may make (the conversation's step budget).")
    max_errors: int = Field(description="Tool errors the step may have before it stops.")
    turn: int = Field(description="Turn number of the step's messages.")
    seq: int = Field(description="Transcript number of the step's first message.")
    clock_s: float = Field(default=0.0, description="Voice cells: where an utterance of this step starts on the "
                           "conversation's simulated clock, seconds.")
    truncate: tuple[tuple[str, str], ...] = Field(default=(), description="Duplex: this side's earlier replies "
                                                  "the caller spoke over, as (the reply, the words said of it): "
                                                  "the side's view keeps only the words said, as a realtime API "
                                                  "truncates its audio item, before it hears ``incoming``.")


class RunToolRequest(Frozen):
    """One tool call of a live agent, run on the side's state with no model turn (:meth:`SideHost.run_tool`)."""

    conversation_id: str
    name: str = Field(description="The tool (one of the scenario's tools of this side).")
    arguments: dict[str, Any] = Field(description="Its arguments, as the live agent sent them.")
    call_id: str = Field(description="The call's id in the transcript (the tool message answers it).")
    turn: int = Field(description="Turn number of the call's messages.")
    seq: int = Field(description="Transcript number of the call's first message.")


class SyncRequest(Frozen):
    """This side's half of a sync (:meth:`SideHost.apply_sync`)."""

    conversation_id: str
    updates: dict[str, Any] = Field(description="What the domain's sync changes on this side.")
    domain: str = Field(description="Domain whose sync rules apply the updates.")


class CloseRequest(Frozen):
    """End one side (:meth:`SideHost.close`)."""

    conversation_id: str
    check: bool = Field(default=True, description="Score the side's final DB (False: the conversation failed).")


class SideHost:
    side: Side = "agent"

    def __init__(self) -> None:
        silence_upstream_logging()
        self.sessions: dict[str, SideSession] = {}
        self.speakers: dict[str, Speaker] = {}  # voice cells: the conversations this side speaks aloud
        self.opened = 0
        self.carried = 0  # utterances this host carried across the speech channel

    def _session(self, conv_id: str) -> SideSession:
        try:
            return self.sessions[conv_id]
        except KeyError:
            raise KeyError(f"{self.side} host has no conversation {conv_id!r}") from None

    async def open(self, request: OpenRequest) -> None:
        """Start this side of a conversation on its initialised DB (initialization data and
        actions, each followed by sync), built here from the scenario. With ``request.speech``
        this side speaks through the channel: each step that ends in words carries them
        (:meth:`step`), here and not on the coordinator's loop."""
        r = request
        scenario = default_registry().get(r.scenario)
        dom = domain_spec(scenario.domain)
        db = initial_db(scenario, self.side)
        heap.loaded(f"domain:{scenario.domain}")  # the domain's scenarios stay for the process's life
        # a user without phone tools (airline, retail) has no state of its own
        state = dom.side_from_db(self.side, db) if db is not None else None
        spec = r.spec
        if spec.is_live:  # the live agent on the line speaks for this side; only its tool calls run here
            policy: Any = LiveAgent(spec.model)
        else:
            policy = (r.voice and make_voice_policy(self.side, spec.model, scenario)) or \
                make_policy(self.side, spec.model, scenario, lambda: get_client(spec))
        session = SideSession(scenario, self.side, state, policy, r.seed, dom.sync_view.get(self.side),
                              run_id=r.run_id, conversation_id=r.conversation_id, cut_calls=spec.cut_tool_calls)
        if spec.reference_steps:
            if self.side != "agent":
                raise ValueError("reference_steps is an agent option; the user model must not set it")

            session.view[0]["content"] += "\n\n" + reference_steps_prompt(scenario.reference_actions)
        if r.voice:  # a voice cell: the side's voice rules (actors/voice/rules.py) follow its prompt
            session.view[0]["content"] += "\n\n" + voice_prompt(self.side).text
        if r.greeting:
            session.say(r.greeting)
        if r.voice and r.speech is not None:
            self.speakers[r.conversation_id] = Speaker(await speech_for(r.speech), r.voice,
                                                       unit_id=r.conversation_id, attempt=r.attempt, side=self.side,
                                                       task_id=r.scenario)
        self.sessions[r.conversation_id] = session
        self.opened += 1

    async def step(self, request: StepRequest) -> StepResult:
        """One step of this side; where the side speaks through the channel and the step ends in
        words, the result carries what the channel made of them, starting at ``request.clock_s``."""
        r = request
        session = self._session(r.conversation_id)
        for reply, said in r.truncate:
            session.truncate_reply(reply, said)
        result = await session.step(r.incoming, r.max_rounds, r.max_errors, turn=r.turn, seq=r.seq)
        speaker = self.speakers.get(r.conversation_id)
        if speaker is None or result.kind != "text" or not result.rounds:
            return result
        text = result.rounds[-1].message.content or ""
        if not speaker.says_aloud(text):
            return result
        try:
            carried: Any = await speaker.carry(text, turn=r.turn, clock_s=r.clock_s)
            self.carried += 1
        except Exception as exc:  # handed back with the step, so the coordinator records the step first
            carried = classify(exc)
        return result.model_copy(update={"carried": carried})

    async def run_tool(self, request: RunToolRequest) -> StepResult:
        """One tool call of a live agent on this side's state, with no model turn (the session's
        :meth:`~tauray.actors.session.SideSession.run_tool`): its messages and outcome, and the
        side's sync view when the call changed it, for the coordinator to record and sync as a step."""
        r = request
        if self.side != "agent":
            raise ValueError("run_tool: only the agent side has a live agent")
        return self._session(r.conversation_id).run_tool(r.name, r.arguments, call_id=r.call_id, turn=r.turn,
                                                          seq=r.seq)

    async def apply_sync(self, request: SyncRequest) -> dict[str, Any] | None:
        """Apply this side's half of a sync; returns the side's sync view if that changed it."""
        return self._session(request.conversation_id).apply_sync(request.updates,
                                                                 domain_spec(request.domain).apply_sync[self.side])

    async def close(self, request: CloseRequest) -> SideFinal | None:
        """End this side; with ``request.check``, score its final DB here (hash, assertion verdicts)."""
        session = self.sessions.pop(request.conversation_id, None)
        speaker = self.speakers.pop(request.conversation_id, None)
        if session is None:
            return None
        final = session.final(request.check)
        audio = speaker.take_audio() if speaker is not None else {}
        return final.model_copy(update={"audio": audio}) if audio else final

    async def stats(self) -> dict[str, Any]:
        return {"side": self.side, "open": len(self.sessions), "opened": self.opened, "carried": self.carried}

    async def ping(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"


class AgentHost(SideHost):
    side: Side = "agent"


class UserSimHost(SideHost):
    side: Side = "user"


def remote_classes(agent: type[AgentHost] = AgentHost, user: type[UserSimHost] = UserSimHost) -> tuple[Any, Any]:
    """Ray actor classes of the two hosts (created lazily so importing this module needs no Ray);
    a subclass may stand in for either (a tool that measures from inside the host)."""
    import ray

    return (ray.remote(num_cpus=0, max_restarts=0)(heap.long_lived(agent)),
            ray.remote(num_cpus=0, max_restarts=0)(heap.long_lived(user)))
