"""Stop reasons are data: each endpoint stop behaviour, through real HTTP and the model client,
ends as its documented ModelReply (table in tauray.actors.llm.replies). Before, finish_reason
was the only trace (stop was not kept), OpenAI's refusal text was dropped and a cut tool call
looked like the model's malformed JSON."""

from __future__ import annotations

import pytest

from tauray.actors.llm import ModelClient, ModelSpec
from tauray.endpoint.shapes import CUT_ARGUMENTS, CUT_TEXT, REFUSAL

TOOLS = [{"type": "function", "function": {"name": "check_status_bar", "description": "d",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _complete(endpoint, loop, behaviour):
    client = ModelClient(ModelSpec(model=f"openai/{behaviour}", api_base=endpoint.base_url, num_retries=0))
    try:
        return loop.run_until_complete(client.complete([{"role": "user", "content": "hi"}], TOOLS))
    finally:
        loop.run_until_complete(client.aclose())


def test_a_reply_cut_mid_text_is_length(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-length-text")
    assert (reply.stop, reply.finish_reason, reply.content, reply.truncated) == ("length", "length", CUT_TEXT, True)


def test_a_tool_call_cut_mid_arguments_is_truncated_not_the_models_malformed_json(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-length-tool")
    assert reply.truncated and reply.tool_calls[0].arguments == CUT_ARGUMENTS


def test_a_content_filter_stop_is_filtered_not_just_empty(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-content-filter")
    assert reply.stop == "content_filter" and reply.empty == "no_content"


def test_a_refusal_keeps_its_text(endpoint, loop):
    reply = _complete(endpoint, loop, "stop-refusal")
    assert reply.stop == "refusal" and reply.refusal == REFUSAL


@pytest.mark.parametrize("behaviour", ["stop-length-text", "stop-refusal"])
def test_after_a_tool_result_the_stop_behaviours_answer_plainly(endpoint, loop, behaviour):
    client = ModelClient(ModelSpec(model=f"openai/{behaviour}", api_base=endpoint.base_url, num_retries=0))
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "check_status_bar", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    try:
        reply = loop.run_until_complete(client.complete(messages, TOOLS))
    finally:
        loop.run_until_complete(client.aclose())
    assert reply.stop == "stop" and reply.refusal is None


# --- in a side's session: counted, and a cut tool call is not the model's malformed call ---------

from tauray.actors.llm.replies import ModelReply, RawToolCall  # noqa: E402
from tauray.actors.session import SideSession  # noqa: E402
from tauray.scenarios import domain_spec, get_scenario  # noqa: E402

SCENARIO = "tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy"


class Scripted:
    def __init__(self, *replies):
        self.replies = list(replies)

    async def reply(self, view, tools, seed):
        return self.replies.pop(0)


def _session(*replies) -> SideSession:
    state = domain_spec("telecom").fresh_side("user")
    return SideSession(get_scenario(SCENARIO), "user", state, Scripted(*replies), seed=1, run_id="r",
                       conversation_id="c")


def test_a_cut_tool_call_is_truncated_and_counted_apart_from_malformed(loop):
    cut = ModelReply(content=None, tool_calls=[RawToolCall(id="c1", name="check_status_bar", arguments=CUT_ARGUMENTS)],
                       model="openai/m", stop="length", reasoning_tokens=7, cached_tokens=5, adapted=("user_first",))
    session = _session(cut, ModelReply(content="ok", model="openai/m", stop="stop"))
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=3, max_errors=5))
    event = result.rounds[0].events[0]
    assert event.truncated and not event.malformed and "cut at the length limit" in event.outcome.result
    c = session.counters
    assert (c["truncated_tool_calls"], c["malformed_tool_calls"], c["truncated_replies"]) == (1, 0, 1)
    assert (c["reasoning_tokens"], c["cached_tokens"], c["adapted_calls"]) == (7, 5, 1)


def test_the_same_bad_json_without_a_length_stop_is_malformed(loop):
    bad = ModelReply(content=None, tool_calls=[RawToolCall(id="c1", name="check_status_bar", arguments=CUT_ARGUMENTS)],
                       model="openai/m", stop="tool_calls")
    session = _session(bad, ModelReply(content="ok", model="openai/m", stop="stop"))
    loop.run_until_complete(session.step("Check your phone.", max_rounds=3, max_errors=5))
    assert (session.counters["malformed_tool_calls"], session.counters["truncated_tool_calls"]) == (1, 0)


def test_filtered_and_refused_replies_are_counted(loop):
    session = _session(ModelReply(content="", model="openai/m", stop="content_filter", empty="no_content"),
                       ModelReply(content="", model="openai/m", stop="refusal", refusal=REFUSAL))
    loop.run_until_complete(session.step("Hi", max_rounds=1))
    loop.run_until_complete(session.step("Hi again", max_rounds=1))
    assert (session.counters["filtered_replies"], session.counters["refused_replies"]) == (1, 1)


def test_parameters_a_provider_dropped_are_recorded_for_the_side(loop):
    # as seed_applied is: a reasoning model's default temperature left out of the calls is said per row

    first = ModelReply(content="one", model="openai/m", dropped=("temperature",))
    second = ModelReply(content="two", model="openai/m", dropped=("temperature", "top_p"))
    session = _session(first, second)
    loop.run_until_complete(session.step("Hi.", max_rounds=1, max_errors=5))
    loop.run_until_complete(session.step("Again.", max_rounds=1, max_errors=5))
    assert session.final().counters.dropped_params == ("temperature", "top_p")


# --- issue 37 (1): a call cut at max_tokens is never executed ----------------------------------------
# Anthropic and Bedrock hand back a call cut at max_tokens with parsed empty arguments; litellm maps
# their stop_reason "max_tokens" to finish_reason "length" and the arguments to "{}". The reply below
# is that shape, as litellm's ModelResponse carries it (recorded, reduced to its fields).

from tauray.actors.llm.replies import reply_of  # noqa: E402

ANTHROPIC_CUT = {"choices": [{"finish_reason": "length", "message": {
    "content": None, "tool_calls": [{"id": "toolu_01", "type": "function",
                                     "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}]}}],
    "usage": {"prompt_tokens": 900, "completion_tokens": 256}}


def _agent_session(*replies) -> SideSession:
    state = domain_spec("telecom").fresh_side("agent")
    return SideSession(get_scenario(SCENARIO), "agent", state, Scripted(*replies), seed=1, run_id="r",
                       conversation_id="c")


def test_a_cut_call_with_parsed_empty_arguments_is_not_run(loop):
    cut = reply_of(ANTHROPIC_CUT, latency_s=0.1, model="anthropic/claude-x", cost_usd=None, seed_applied=None)
    assert cut.truncated and cut.tool_calls[0].arguments == "{}"
    session = _session(cut, ModelReply(content="ok", model="anthropic/claude-x", stop="stop"))
    before = session.state.db.model_dump() if hasattr(session.state.db, "model_dump") else None
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=3, max_errors=5))
    event = result.rounds[0].events[0]
    assert event.truncated and not event.malformed and not event.outcome.is_write
    assert "cut at the length limit" in event.outcome.result
    c = session.counters
    assert (c["truncated_tool_calls"], c["tool_errors"], c["malformed_tool_calls"]) == (1, 0, 0)
    if before is not None:
        assert session.state.db.model_dump() == before  # the cut call changed nothing
    assert result.kind == "text"  # the model was told and answered again


def test_a_cut_end_conversation_does_not_end_the_call(loop):
    cut = ModelReply(content=None, tool_calls=[RawToolCall(id="e1", name="end_conversation", arguments="{}")],
                     model="anthropic/claude-x", stop="length")
    session = _agent_session(cut, ModelReply(content="Anything else?", model="anthropic/claude-x", stop="stop"))
    result = loop.run_until_complete(session.step("Thanks.", max_rounds=3, max_errors=5))
    assert result.kind == "text"
    assert result.rounds[0].events[0].truncated
    assert session.counters["truncated_tool_calls"] == 1


# --- issue 37 (1): told or retried, as the model spec says; a cut call is never counted as performed -----

def _calls_seen(policy_views: list, call_id: str) -> bool:
    return any(any(c.get("id") == call_id for c in m.get("tool_calls") or ()) for m in policy_views)


class Recording(Scripted):
    """Scripted replies, keeping a copy of each view the policy was asked with."""

    def __init__(self, *replies):
        super().__init__(*replies)
        self.views: list[list[dict]] = []

    async def reply(self, view, tools, seed):
        self.views.append([dict(m) for m in view])
        return await super().reply(view, tools, seed)


def _cut_reply(call_id: str = "cut1") -> ModelReply:
    return ModelReply(content=None, tool_calls=[RawToolCall(id=call_id, name="check_status_bar", arguments="{}")],
                      model="anthropic/claude-x", stop="length", completion_tokens=256)


def test_retry_sends_the_request_again_without_the_cut_reply(loop):
    from tauray.actors.llm import ModelSpec

    assert ModelSpec(model="anthropic/claude-x", cut_tool_calls="retry").cut_tool_calls == "retry"
    whole = ModelReply(content=None, tool_calls=[RawToolCall(id="ok1", name="check_status_bar", arguments="{}")],
                       model="anthropic/claude-x", stop="tool_calls")
    policy = Recording(_cut_reply(), whole, ModelReply(content="All fine.", model="anthropic/claude-x", stop="stop"))
    session = SideSession(get_scenario(SCENARIO), "user", domain_spec("telecom").fresh_side("user"), policy, seed=1,
                          run_id="r", conversation_id="c", cut_calls="retry")
    result = loop.run_until_complete(session.step("Check your phone.", max_rounds=5, max_errors=5))
    assert result.kind == "text" and len(policy.views) == 3
    assert policy.views[1] == policy.views[0]  # the same request again: the cut reply never reached the view
    assert not _calls_seen(session.view, "cut1") and _calls_seen(session.view, "ok1")
    first = result.rounds[0]
    assert first.message.tool_calls and first.events[0].truncated and "sent again" in first.events[0].outcome.result
    c = session.counters
    assert (c["truncated_replies"], c["truncated_tool_calls"], c["llm_calls"], c["completion_tokens"]) == (1, 1, 3, 256)


def test_retry_tells_the_model_when_the_retry_is_cut_too(loop):
    policy = Recording(_cut_reply("cut1"), _cut_reply("cut2"), ModelReply(content="Sorry.", model="m", stop="stop"))
    session = SideSession(get_scenario(SCENARIO), "user", domain_spec("telecom").fresh_side("user"), policy, seed=1,
                          run_id="r", conversation_id="c", cut_calls="retry")
    loop.run_until_complete(session.step("Check your phone.", max_rounds=5, max_errors=5))
    assert not _calls_seen(policy.views[2], "cut1") and _calls_seen(policy.views[2], "cut2")
    told = [m for m in policy.views[2] if m.get("role") == "tool"]
    assert told and "cut at the length limit" in told[0]["content"]
    assert session.counters["truncated_tool_calls"] == 2


def test_the_spec_option_reaches_the_session_and_leaves_unit_ids_alone(loop):
    from tauray.actors.hosts import OpenRequest, UserSimHost
    from tauray.actors.llm import ModelSpec
    from tauray.pipeline.plan import model_identity

    host = UserSimHost()
    for conv, spec in (("c1", ModelSpec(model="scripted", cut_tool_calls="retry")), ("c2", ModelSpec(model="scripted"))):
        loop.run_until_complete(host.open(OpenRequest(conversation_id=conv, run_id="r", scenario=SCENARIO, spec=spec,
                                                      seed=1)))
    assert (host.sessions["c1"].cut_calls, host.sessions["c2"].cut_calls) == ("retry", "tell")
    assert "cut_tool_calls" not in model_identity(ModelSpec(model="openai/x"))
    assert model_identity(ModelSpec(model="openai/x", cut_tool_calls="retry"))["cut_tool_calls"] == "retry"


def test_a_cut_call_is_never_counted_as_performed():
    # ACTION_MATCH looks for the reference actions among the calls made: a cut call that was not run
    # must not satisfy it, whatever its (partial) arguments say
    from datetime import datetime, timezone

    from tauray.actors.conversation import Conversation
    from tauray.actors.session import Round, StepResult, ToolEvent
    from tauray.results.tables.records import MessageRecord
    from tauray.scenarios.state import ToolOutcome
    from tests.units import make_units

    scenario = get_scenario(SCENARIO)
    action = next(a for a in scenario.reference_actions if a.side == "agent")
    outcome = ToolOutcome(side="agent", name=action.name, arguments=dict(action.arguments), result="not run",
                          error=False, is_write=False)
    conv = Conversation(make_units("cut", [SCENARIO])[0], scenario, None, None)
    record = MessageRecord(run_id="r", conversation_id="c", scenario=SCENARIO, seq=0, turn=1, side="agent",
                           role="tool", content="not run", tool_calls=None, tool_call_id="x",
                           created_at=datetime.now(timezone.utc))
    conv.record_step(StepResult(side="agent", kind="text", rounds=(
        Round(events=(ToolEvent(message=record, outcome=outcome, truncated=True),)),)))
    assert conv.calls == [] and len(conv.actions) == 1  # kept in the actions table, not among calls made


def test_the_run_flag_sets_the_option_on_the_role_it_names():
    from tauray.pipeline.cli.main import build_parser
    from tauray.pipeline.cli.run import config_from_args

    args = build_parser().parse_args(["run", "tau2_mock__*", "--domain", "mock", "--agent-model", "openai/x",
                                      "--agent-cut-tool-calls", "retry", "--user-model", "scripted"])
    cfg = config_from_args(args)
    assert [cfg.spec(a).get("cut_tool_calls") for a in cfg.agents] == ["retry"]
    assert [cfg.spec(u).get("cut_tool_calls") for u in cfg.users] == [None]
