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
"""

from __future__ import annotations

import os
import socket
from typing import Any

from tauray.actors import heap
from tauray.actors.failures import classify
from tauray.actors.llm import get_client
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.policies import make_policy
from tauray.actors.session import SideFinal, SideSession, StepResult
from tauray.actors.unit import VoiceSettings
from tauray.actors.voice_client import Speaker
from tauray.actors.voice_policies import make_voice_policy
from tauray.actors.voice_pool import speech_client
from tauray.scenarios.domains import domain_spec
from tauray.scenarios.initial import initial_db
from tauray.scenarios.model import Side
from tauray.scenarios.prompts import reference_steps_prompt
from tauray.scenarios.registry import default_registry
from tauray.scenarios.upstream import silence_upstream_logging
from tauray.scenarios.voice import voice_prompt

HOST_CALLS = ("open", "step", "apply_sync", "close")
"""What a coordinator calls on a host, through :meth:`SideHost.call`."""


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

    async def open(self, conv_id: str, run_id: str, scenario_name: str, spec: ModelSpec, seed: int | None,
                   greeting: str | None = None, voice: VoiceSettings | None = None, speech: Any = None,
                   attempt: int = 0) -> None:
        """Start this side of a conversation on its initialised DB (initialization data and
        actions, each followed by sync), built here from the scenario; ``run_id`` and
        ``conv_id`` key the side's message records; ``voice`` (a voice cell) gives the side
        its voice rules and, for a reference policy, the one that speaks plain words. With
        ``speech`` (a speech client) this side speaks through the channel: each step that ends
        in words carries them (:meth:`step`), here and not on the coordinator's loop."""

        scenario = default_registry().get(scenario_name)
        dom = domain_spec(scenario.domain)
        db = initial_db(scenario, self.side)
        heap.loaded(f"domain:{scenario.domain}")  # the domain's scenarios stay for the process's life
        # a user without phone tools (airline, retail) has no state of its own
        state = dom.side_from_db(self.side, db) if db is not None else None
        policy = (voice and make_voice_policy(self.side, spec.model, scenario)) or \
            make_policy(self.side, spec.model, scenario, lambda: get_client(spec))
        session = SideSession(scenario, self.side, state, policy, seed, dom.sync_view.get(self.side),
                              run_id=run_id, conversation_id=conv_id, cut_calls=spec.cut_tool_calls)
        if spec.reference_steps:
            if self.side != "agent":
                raise ValueError("reference_steps is an agent option; the user model must not set it")

            session.view[0]["content"] += "\n\n" + reference_steps_prompt(scenario.reference_actions)
        if voice:  # a voice cell: the side's voice rules (scenarios/voice.py) follow its prompt
            session.view[0]["content"] += "\n\n" + voice_prompt(self.side).text
        if greeting:
            session.say(greeting)
        if voice and speech is not None:
            self.speakers[conv_id] = Speaker(await speech_client(speech), voice, unit_id=conv_id, attempt=attempt,
                                             side=self.side, task_id=scenario_name)
        self.sessions[conv_id] = session
        self.opened += 1

    async def step(self, conv_id: str, incoming: str | None, max_rounds: int = 1,
                   max_errors: int = 1, turn: int = 0, seq: int = 0, clock_s: float = 0.0) -> StepResult:
        """One step of this side; where the side speaks through the channel and the step ends in
        words, the result carries what the channel made of them, starting at ``clock_s``."""
        result = await self._session(conv_id).step(incoming, max_rounds, max_errors, turn=turn, seq=seq)
        speaker = self.speakers.get(conv_id)
        if speaker is None or result.kind != "text" or not result.rounds:
            return result
        text = result.rounds[-1].message.content or ""
        if not speaker.says_aloud(text):
            return result
        try:
            carried: Any = await speaker.carry(text, turn=turn, clock_s=clock_s)
            self.carried += 1
        except Exception as exc:  # handed back with the step, so the coordinator records the step first
            carried = classify(exc)
        return result.model_copy(update={"carried": carried})

    async def apply_sync(self, conv_id: str, updates: dict[str, Any], domain: str) -> dict[str, Any] | None:
        """Apply this side's half of a sync; returns the side's sync view if that changed it."""
        return self._session(conv_id).apply_sync(updates, domain_spec(domain).apply_sync[self.side])

    async def close(self, conv_id: str, check: bool = True) -> SideFinal | None:
        """End this side; with ``check``, score its final DB here (hash, assertion verdicts)."""
        session = self.sessions.pop(conv_id, None)
        speaker = self.speakers.pop(conv_id, None)
        if session is None:
            return None
        final = session.final(check)
        audio = speaker.take_audio() if speaker is not None else {}
        return final.model_copy(update={"audio": audio}) if audio else final

    async def call(self, request: tuple[Any, ...] | list[Any]) -> Any:
        """A coordinator's host call, packed in one Ray argument: ``(method, *args)``, where
        ``method`` is one of :data:`HOST_CALLS` (``conversation.SideClient`` says why)."""
        method, *args = request
        if method not in HOST_CALLS:
            raise ValueError(f"request[0]: {method!r} is not a host call (expected one of {', '.join(HOST_CALLS)})")
        return await getattr(self, method)(*args)

    async def stats(self) -> dict[str, Any]:
        return {"side": self.side, "open": len(self.sessions), "opened": self.opened, "carried": self.carried}

    async def ping(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"


class AgentHost(SideHost):
    side: Side = "agent"


class UserSimHost(SideHost):
    side: Side = "user"


def remote_classes() -> tuple[Any, Any]:
    """Ray actor classes (created lazily so importing this module needs no Ray)."""
    import ray

    agent = ray.remote(num_cpus=0, max_restarts=0)(heap.long_lived(AgentHost))
    user = ray.remote(num_cpus=0, max_restarts=0)(heap.long_lived(UserSimHost))
    return agent, user
