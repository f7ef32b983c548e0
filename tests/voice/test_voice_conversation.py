"""A real voice conversation end to end, offline: the reference policies speak plain words
over the speech channel (espeak-ng, the telephone line, the packaged Whisper), the scripted
user acts on what it recognised, and the rows say what was said and what was heard."""

from __future__ import annotations

import asyncio
import time

import pyarrow as pa
import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.voice.metrics import normalise
from tauray.actors.voice.speaker import LocalSpeech
from tauray.results.tables.records import records_by_table
from tauray.results.tables.schemas import schema_for
from tauray.scenarios import select_scenarios
from tests.units import make_units

pytestmark = pytest.mark.slow


def test_a_voice_conversation_runs_end_to_end_offline() -> None:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    units = make_units("voice-e2e", names, voice={"profiles": ["control"]})
    assert units[0].voice is not None and units[0].voice.profile.name == "control"
    speech = LocalSpeech()
    t0 = time.perf_counter()
    result = asyncio.run(run_conversation(units[0], AgentHost(), UserSimHost(), speech=speech))
    elapsed = time.perf_counter() - t0
    c = result.conversation
    assert c.error_kind is None, c.error_message
    assert c.speech_profile == "control" and c.voice_prompts and "voice-user@2#" in c.voice_prompts
    said = result.utterances
    assert said and all(u.side == "user" for u in said)  # the user reads the agent's own words by default
    assert c.utterances == len(said) and c.mean_wer is not None
    # on a call the caller speaks first: the first message is the user's, no greeting
    assert result.messages[0].side == "user"
    assert [u.start_s for u in said] == sorted(u.start_s for u in said)
    assert all(u.end_s > u.start_s for u in said)
    rows = records_by_table(result)
    assert len(rows["utterances"]) == len(said)
    print(f"voice conversation: {elapsed:.1f} s, {len(said)} utterances, success={c.success}")


def test_hearing_the_agent_marks_where_the_caller_heard_other_words() -> None:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    units = make_units("voice-hear", names, voice={"profiles": ["control"], "hear_agent": True})
    result = asyncio.run(run_conversation(units[0], AgentHost(), UserSimHost(), speech=LocalSpeech()))
    assert result.conversation.error_kind is None, result.conversation.error_message
    agent = [u for u in result.utterances if u.side == "agent"]
    assert agent, "under hear_agent the agent's words cross the channel too"
    for u in result.utterances:  # an explicit mark per row: the listener got other words than were said
        assert u.heard_differs == (normalise(u.spoken_text) != normalise(u.heard_text))
    assert schema_for("utterances").field("heard_differs").type == pa.bool_()  # a column of the table
