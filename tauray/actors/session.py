"""One side of one conversation, as hosted by an agent or user-simulator actor.

A ``SideSession`` owns that side's DB and tools (a ``SideState``), its own
view of the conversation, and its policy. ``step`` appends what the other side
said, asks the policy for the next reply and executes the reply's tool calls
one at a time; it returns after each write so the coordinator can sync both
DBs before anything else happens (upstream syncs after every call). The DB
never leaves the session: in a domain with sync, a step hands back the side's
sync view when it changed since the coordinator last got it, and closing hands
back the side's :class:`~tauray.scenarios.scoring.SideCheck` (DB hash and
assertion verdicts). A
malformed call (unknown tool, arguments that are not a JSON object) is
answered with an error message to the model and counted. The calls of a reply cut at the
length limit are never run: the model is told each was cut and replies again, or (the model
spec's ``cut_tool_calls="retry"``) the cut reply is kept out of the model's view and the same
request is sent once more.

Each message of the transcript is made here, once, as the
:class:`~tauray.results.tables.records.MessageRecord` the ``messages`` table stores: the
reply's from the :class:`~tauray.actors.llm.replies.ModelReply` the policy returned
(usage and stop reasons stay in the side's counters), each tool answer from its
outcome. The coordinator keeps them as they come; the writer turns them into Arrow rows.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Literal, get_args

from pydantic import Field

from tauray.actors.llm.replies import ModelReply, RawToolCall
from tauray.actors.policies import Policy
from tauray.actors.voice.heard import HeardAudio, message_content
from tauray.results.tables.records import MessageRecord
from tauray.scenarios.conventions import END_CONVERSATION, TRANSFER_TO_HUMAN
from tauray.scenarios.model import Frozen, Scenario, Side
from tauray.scenarios.scoring import SideCheck, check_side
from tauray.scenarios.state import SideState, ToolOutcome


class ToolEvent(Frozen):
    """One executed tool call: its transcript message (the answer the model got) and what
    the tool did, for the coordinator's action rows."""

    message: MessageRecord = Field(description="The tool message answering the call, as the table stores it.")
    outcome: ToolOutcome = Field(description="What the tool returned.")
    malformed: bool = Field(default=False, description="True when the call itself was invalid (unknown tool, bad JSON).")
    truncated: bool = Field(default=False, description="True when the call came from a reply cut at the length "
                            "limit: not run (its arguments may be a guess), the model told or the request sent "
                            "again; not blamed (not malformed), and never counted as performed.")


class Round(Frozen):
    """One policy reply's message (None when finishing calls left pending by a write) and the
    calls run in the round."""

    message: MessageRecord | None = Field(default=None, description="The reply's transcript message, if a reply "
                                          "was requested.")
    events: tuple[ToolEvent, ...] = Field(default=(), description="Tool calls executed, in order.")


class StepResult(Frozen):
    """What one step produced, for the coordinator: the messages and tool events of its
    rounds, and the side's sync view when a write changed it (never the DB)."""

    side: Side = Field(description="Side that stepped.")
    kind: Literal["text", "tools", "end", "transfer", "budget"] = Field(
        description="text: the last round is a message for the other side; tools: a write ran (sync, then "
        "step again) or the error budget ran out; end: the agent ended the conversation; transfer: the agent "
        "handed over to a human; budget: the step budget ran out.")
    rounds: tuple[Round, ...] = Field(default=(), description="Replies and tool calls of this step, in order.")
    wrote: bool = Field(default=False, description="A write tool ran: the coordinator must sync now.")
    sync_view: dict[str, Any] | None = Field(
        default=None, description="This side's sync view, when it changed since the coordinator last got it "
        "(domains with sync only); None: unchanged.")
    carried: Any = Field(default=None, description="In a voice cell, when this side speaks through the channel: "
                         "what the speech client made of the step's words, (utterance record, line audio or its "
                         "ObjectRef, or None), or the classified failure (actors/failures.py Failure) when the "
                         "carry failed; carried by the speaker's host, so no speech call runs on the "
                         "coordinator's loop. None otherwise.")


class SideCounters(Frozen):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    tool_calls: int = 0
    tool_errors: int = 0
    malformed_tool_calls: int = 0
    seed_applied: bool | None = None
    dropped_params: tuple[str, ...] = ()
    empty_replies: int = 0
    llm_retries: int = 0
    truncated_replies: int = 0
    truncated_tool_calls: int = 0
    filtered_replies: int = 0
    prompt_filtered_replies: int = 0
    refused_replies: int = 0
    malformed_call_replies: int = 0
    text_tool_call_replies: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    adapted_calls: int = 0


class SideFinal(Frozen):
    """What a host hands back when a conversation closes on its side."""

    counters: SideCounters = Field(description="The side's model and tool counters.")
    check: SideCheck | None = Field(default=None, description="What scoring needs of the side's final DB; None "
                                    "for a side without state, or when not asked for (the conversation failed).")
    check_error: str | None = Field(default=None, description="Why the check could not be made.")
    audio: dict[str, bytes] = Field(default_factory=dict, description="Voice cells: the audio files of the "
                                    "utterances this side carried (content hash -> FLAC bytes), held until the "
                                    "verdict decides which are kept.")


def seed_applied(*values: bool | None) -> bool | None:
    """True when every call that asked for a seed carried it, False when any left it out
    (the provider takes none), None when no call asked for one."""
    known = [v for v in values if v is not None]
    return all(known) if known else None


def history_view(scenario: Scenario, side: Side) -> list[dict[str, Any]]:
    """The task's opening messages as ``side`` saw them: its own words and tool calls as
    "assistant" (with their results), the other side's words as "user"; the other side's
    tool calls and results are not its to see."""
    view: list[dict[str, Any]] = []
    for m in scenario.message_history or ():
        if m.side != side:
            if m.role != "tool" and m.content:
                view.append({"role": "user", "content": m.content})
        elif m.role == "tool":
            view.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content or ""})
        elif m.tool_calls:
            view.append({"role": "assistant", "content": m.content, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in m.tool_calls]})
        elif m.content:
            view.append({"role": "assistant", "content": m.content})
    return view


CutCalls = Literal["tell", "retry"]
CUT_CALLS: tuple[str, ...] = get_args(CutCalls)


class SideSession:
    def __init__(self, scenario: Scenario, side: Side, state: SideState | None, policy: Policy, seed: int | None,
                 sync_view: Any = None, *, run_id: str, conversation_id: str, cut_calls: CutCalls = "tell"):
        self.scenario = scenario
        self.side = side
        # what every message record of this side starts with; seq and turn come with each step
        self.keys = dict(run_id=run_id, conversation_id=conversation_id, scenario=scenario.name)
        self.seq = 0
        self.turn = 0
        self.state = state
        # the domain's sync view of this side, and the view the coordinator holds (it starts from
        # the same initial state, built on its side)
        self._sync_view = sync_view if state is not None else None
        self._sent_view = self._sync_view(state.db) if self._sync_view is not None else None
        self.policy = policy
        self.seed = seed
        self.tools = [t.openai() for t in scenario.tools_by_side[side]]
        self.tool_names = {t.name for t in scenario.tools_by_side[side]}
        prompt = scenario.agent_prompt if side == "agent" else scenario.user_prompt
        self.view: list[dict[str, Any]] = [{"role": "system", "content": prompt}]
        self.view += history_view(scenario, side)
        self.pending: list[RawToolCall] = []
        self.pending_cut = False  # the pending calls come from a reply cut at the length limit
        self.cut_calls = cut_calls  # tell: answer each cut call; retry: send the request again once
        self.counters: dict[str, Any] = SideCounters().model_dump()

    # --- the conversation -----------------------------------------------------------
    def hear(self, text: str | HeardAudio) -> None:
        """The other side's message, as this side sees it (an audio-in agent: the caller's audio)."""
        self.view.append({"role": "user", "content": message_content(text)})

    def truncate_reply(self, reply: str, said: str) -> None:
        """Keep only ``said`` of this side's latest reply whose words were ``reply`` (a duplex
        barge-in: the rest was never heard). A reply with no words said and no tool calls leaves
        the view; one with tool calls keeps them (they ran), with the words said."""
        for i in range(len(self.view) - 1, -1, -1):
            m = self.view[i]
            if m.get("role") == "assistant" and (m.get("content") or "") == reply:
                if said or m.get("tool_calls"):
                    self.view[i] = {**m, "content": said}
                else:
                    del self.view[i]
                return

    def say(self, text: str) -> None:
        """A message of this side that no policy produced (the agent's fixed greeting)."""
        self.view.append({"role": "assistant", "content": text})

    async def step(self, incoming: str | None = None, max_rounds: int = 1, max_errors: int = 1, *,
                   turn: int = 0, seq: int = 0) -> StepResult:
        """Reply (and run tool calls) until there is something to say, a write to sync, an
        end, or a budget is spent: read-only tool rounds need no coordinator in between.
        ``turn`` and ``seq`` (the conversation's next message number) place the step's
        messages in the transcript."""
        if incoming is not None:
            self.hear(incoming)
        self.turn, self.seq = turn, seq
        rounds: list[Round] = []
        errors = 0
        retried = False  # the last reply was cut and its request sent again (cut_calls="retry")
        while True:
            reply = message = None
            if not self.pending:
                if sum(r.message is not None for r in rounds) >= max_rounds:
                    return self._result("budget", rounds)
                reply = await self.policy.reply(self.view, self.tools, self.seed)
                self._count_reply(reply)
                message = self._reply_message(reply)
                if not reply.tool_calls:
                    self.view.append({"role": "assistant", "content": reply.content or ""})
                    rounds.append(Round(message=message))
                    return self._result("text", rounds)
                if reply.truncated and self.cut_calls == "retry" and not retried:
                    # recorded with its calls answered as not run, but kept out of the model's view
                    retried = True
                    rounds.append(Round(message=message, events=tuple(self._cut(c, told=False)
                                                                      for c in reply.tool_calls)))
                    continue
                retried = False
                self.view.append({
                    "role": "assistant", "content": reply.content,
                    "tool_calls": [{"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments}}
                                   for c in reply.tool_calls],
                })
                self.pending = list(reply.tool_calls)
                self.pending_cut = reply.stop == "length"
            kind, events = self._run_pending()
            rounds.append(Round(message=message, events=tuple(events)))
            errors += sum(e.outcome.error for e in events)
            if kind != "more":
                return self._result(kind, rounds, wrote=kind == "tools")
            if errors >= max_errors:
                return self._result("tools", rounds)

    def run_tool(self, name: str, arguments: dict[str, Any], *, call_id: str, turn: int = 0,
                 seq: int = 0) -> StepResult:
        """One tool call of a live agent (a phone bot calls the scenario's tools over MCP), run on this
        side's state as a model's would be: recorded as an assistant message carrying the call and
        the tool's answer, with no policy reply. ``kind`` is "transfer" for a transfer that went
        through, else "tools"; ``wrote`` says a sync is due."""
        self.turn, self.seq = turn, seq
        call = RawToolCall(id=call_id, name=name, arguments=json.dumps(arguments))
        message = self._message(role="assistant" if self.side == "agent" else "user", content=None,
                                tool_calls=[call.model_dump()], tool_call_id=None)
        self.view.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]})
        event = self._execute(call)
        transfer = self.side == "agent" and name == TRANSFER_TO_HUMAN and not event.outcome.error
        return self._result("transfer" if transfer else "tools", [Round(message=message, events=(event,))],
                            wrote=event.outcome.is_write)

    def _result(self, kind: str, rounds: list[Round], wrote: bool = False) -> StepResult:
        return StepResult(side=self.side, kind=kind, rounds=tuple(rounds), wrote=wrote,
                          sync_view=self.changed_view())

    def _run_pending(self) -> tuple[str, list[ToolEvent]]:
        """Run pending calls in order; stop after a write (to sync), an end or a transfer."""
        events: list[ToolEvent] = []
        if self.pending_cut:  # a reply cut at the length limit: none of its calls runs, end included
            events = [self._cut(call) for call in self.pending]
            self.pending, self.pending_cut = [], False
            return "more", events
        while self.pending:
            call = self.pending.pop(0)
            if self.side == "agent" and call.name == END_CONVERSATION:
                events.append(self._end(call))
                self.pending = []
                return "end", events
            event = self._execute(call)
            events.append(event)
            if self.side == "agent" and call.name == TRANSFER_TO_HUMAN and not event.outcome.error:
                self.pending = []
                return "transfer", events
            if event.outcome.is_write:
                return "tools", events
        return "more", events

    def _message(self, **fields: Any) -> MessageRecord:
        """The next message record of this side's transcript."""
        record = MessageRecord(**self.keys, seq=self.seq, turn=self.turn, side=self.side,
                               created_at=datetime.now(timezone.utc), **fields)
        self.seq += 1
        return record

    def _reply_message(self, reply: ModelReply) -> MessageRecord:
        calls = [c.model_dump() for c in reply.tool_calls] or None
        return self._message(role="assistant" if self.side == "agent" else "user", content=reply.content,
                             tool_calls=calls, tool_call_id=None,
                             retries=reply.retries if reply.called_model else None,
                             finish_reason=reply.finish_reason, native_finish_reason=reply.native_finish_reason,
                             stop=reply.stop if reply.called_model else None, refusal=reply.refusal)

    def _tool_message(self, call_id: str, text: str) -> MessageRecord:
        return self._message(role="tool", content=text, tool_calls=None, tool_call_id=call_id)

    def _end(self, call: RawToolCall) -> ToolEvent:
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = {}
        text = "The conversation has ended."
        self._answer(call.id, text)
        outcome = ToolOutcome(side=self.side, name=call.name, arguments=arguments if isinstance(arguments, dict) else {},
                              result=text, error=False, is_write=False)
        return ToolEvent(message=self._tool_message(call.id, text), outcome=outcome)

    def _cut(self, call: RawToolCall, told: bool = True) -> ToolEvent:
        """A call from a reply cut at the length limit: never run, since providers hand back a cut
        call with whatever arguments were parsed so far (Anthropic and Bedrock: ``{}``), so a run
        would act on a guess and blame the model for the tool's error. ``told``: the model is told
        and asked again; else (retry) the reply never reaches its view and only the transcript
        answers the call. It counts as truncated, not as a tool error or malformed."""
        if told:
            text = ("Error: your reply was cut at the length limit before this tool call was complete, so it "
                    "was not run; call the tool again.")
            self._answer(call.id, text)
        else:
            text = ("Not run: the reply was cut at the length limit before this tool call was complete; the "
                    "request was sent again.")
        try:
            parsed = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = {}
        self.counters["tool_calls"] += 1
        self.counters["truncated_tool_calls"] += 1
        outcome = ToolOutcome(side=self.side, name=call.name, arguments=parsed if isinstance(parsed, dict) else {},
                              result=text, error=False, is_write=False)
        return ToolEvent(message=self._tool_message(call.id, text), outcome=outcome, truncated=True)

    def _execute(self, call: RawToolCall) -> ToolEvent:
        """Run one call of a reply that was not cut (a cut reply's calls go to :meth:`_cut`)."""
        malformed = None
        arguments: dict[str, Any] = {}
        if call.name not in self.tool_names:
            malformed = f"Error: there is no tool named '{call.name}' available to you."
        else:
            try:
                parsed = json.loads(call.arguments) if call.arguments.strip() else {}
            except json.JSONDecodeError as exc:
                parsed, malformed = None, f"Error: the arguments are not valid JSON ({exc.msg})."
            if malformed is None and not isinstance(parsed, dict):
                malformed = "Error: the arguments must be a JSON object."
            arguments = parsed if isinstance(parsed, dict) else {}
        if malformed is not None:
            outcome = ToolOutcome(side=self.side, name=call.name, arguments=arguments, result=malformed,
                                  error=True, is_write=False)
        else:
            outcome = self.state.call_tool(call.name, arguments)
        self._answer(call.id, outcome.result)
        c = self.counters
        c["tool_calls"] += 1
        c["tool_errors"] += outcome.error
        c["malformed_tool_calls"] += malformed is not None
        return ToolEvent(message=self._tool_message(call.id, outcome.result), outcome=outcome,
                         malformed=malformed is not None)

    def _answer(self, call_id: str, text: str) -> None:
        self.view.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def _count_reply(self, reply: ModelReply) -> None:
        c = self.counters
        if reply.called_model:
            c["llm_calls"] += 1
            c["prompt_tokens"] += reply.prompt_tokens
            c["completion_tokens"] += reply.completion_tokens
            if reply.cost_usd is not None:
                c["cost_usd"] = (c["cost_usd"] or 0.0) + reply.cost_usd
            c["seed_applied"] = seed_applied(c["seed_applied"], reply.seed_applied)
            c["empty_replies"] += reply.empty is not None
            c["llm_retries"] += reply.retries
            stop = reply.stop
            c["truncated_replies"] += stop == "length"
            c["filtered_replies"] += stop == "content_filter"
            c["prompt_filtered_replies"] += stop == "prompt_filter"
            c["refused_replies"] += stop == "refusal"
            c["malformed_call_replies"] += stop == "malformed_call"
            c["text_tool_call_replies"] += reply.tool_call_text is not None
            c["reasoning_tokens"] += reply.reasoning_tokens
            c["cached_tokens"] += reply.cached_tokens
            c["adapted_calls"] += bool(reply.adapted)
            c["dropped_params"] = tuple(sorted({*c["dropped_params"], *reply.dropped}))

    # --- state for the coordinator -----------------------------------------------------
    def changed_view(self) -> dict[str, Any] | None:
        """This side's sync view if it differs from the one the coordinator holds (which
        it then holds), else None."""
        if self._sync_view is None:
            return None
        view = self._sync_view(self.state.db)
        if view == self._sent_view:
            return None
        self._sent_view = view
        return view

    def apply_sync(self, updates: dict[str, Any], apply_fn: Any) -> dict[str, Any] | None:
        """Apply this side's half of a sync; returns the side's sync view if it changed."""
        apply_fn(self.state.db, updates)
        return self.changed_view()

    def final(self, check: bool = True) -> SideFinal:
        """Counters, and (``check``) what scoring needs of the final DB, computed here."""
        counters = SideCounters(**self.counters)
        if not check or self.state is None:
            return SideFinal(counters=counters)
        try:
            return SideFinal(counters=counters, check=check_side(self.scenario, self.state))
        except Exception as exc:  # the row says scoring failed, as when it ran on the coordinator
            return SideFinal(counters=counters, check_error=f"{type(exc).__name__}: {exc}")
