"""A duplex cell's conversation through the real loop and hosts (in process, no Ray): the engine
drives the sides, the agent's tools run with their sync as in half duplex, and the result carries
the segments, the interaction panel and the recording under the keep policy. The tone voice stands
in for speech (no model), so this runs in the fast loop."""

from __future__ import annotations

import asyncio

import pytest

import tauray.actors.duplex_call as duplex_call
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.voice.duplex import ToneCodec, parse_label_track
from tauray.actors.voice.duplex.metrics import InteractionMetrics
from tauray.results import conversations_df, segments_df
from tauray.results.tables.layout import LABELS_SUFFIX, audio_path
from tauray.results.tables.readers import NATURAL_KEY
from tauray.results.tables.records import records_by_table
from tauray.results.tables.writer import TableWriter
from tests.units import make_units

TASK = "tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off"
DUPLEX = {"profiles": ["control"], "turn_taking": ["duplex"], "duplex_pipeline": {"vad": "energy"}}


@pytest.fixture
def tones(monkeypatch: pytest.MonkeyPatch) -> None:
    def engines(tts, asr):
        codec = ToneCodec()
        return codec.tts(), codec.asr()
    monkeypatch.setattr(duplex_call, "duplex_engines", engines)


def _run(name: str, **voice):
    unit = make_units(name, [TASK], voice={**DUPLEX, **voice})[0]
    assert unit.voice.turn_taking == "duplex"
    return asyncio.run(run_conversation(unit, AgentHost(), UserSimHost(), speech=None))


def test_a_duplex_call_runs_through_the_loop_and_lands_as_rows(tones) -> None:
    result = _run("duplex-loop", keep_audio="all")
    c = result.conversation
    assert c.error_kind is None, c.error_message
    assert c.turn_taking == "duplex" and c.duplex_timing == "declared" and c.duplex_pipeline_id
    assert c.segments == len(result.segments) > 0 and c.segments_sha256 and c.recording_sha256
    assert {s.side for s in result.segments} == {"agent", "user"}
    assert all(s.run_id == c.run_id and s.unit_id == c.unit_id for s in result.segments)
    # the agent's tool calls ran on its DB, as in half duplex: the task's action is among them
    assert any(a.kind == "tool_call" and a.side == "agent" for a in result.actions)
    assert c.success is True, c.success_reason
    metrics = InteractionMetrics.from_columns(c.model_dump(), "duplex_")
    assert metrics.response_rate.n >= 1 and c.duplex_response_latency_n == metrics.response_latency_s.n >= 1
    assert c.duplex_response_latency_s > 0
    # recording and label track kept content-addressed (keep_audio = all)
    assert result.audio[c.recording_sha256][:4] == b"fLaC"
    labels = result.audio[f"{c.labels_sha256}{LABELS_SUFFIX}"].decode()
    assert len([t for t in parse_label_track(labels) if t.side is not None]) == c.segments
    rows = records_by_table(result)
    assert len(rows["segments"]) == c.segments


def test_segments_and_the_panel_land_in_the_tables(tones, tmp_path) -> None:
    result = _run("duplex-tables", keep_audio="all")
    c = result.conversation
    with TableWriter(tmp_path, c.run_id) as w:
        w.add(result)
    run = tmp_path
    seg = segments_df(run)
    assert len(seg) == c.segments and list(seg["index"]) == list(range(c.segments))
    assert seg["side"].dtype == "category" and seg["kind"].dtype == "category"
    assert not seg.duplicated(NATURAL_KEY["segments"]).any()
    conv = conversations_df(run)
    assert conv.loc[0, "turn_taking"] == "duplex" and conv.loc[0, "duplex_response_latency_n"] >= 1
    assert audio_path(run, c.recording_sha256).read_bytes()[:4] == b"fLaC"
    assert audio_path(run, f"{c.labels_sha256}{LABELS_SUFFIX}").read_text() == result.audio[
        f"{c.labels_sha256}{LABELS_SUFFIX}"].decode()


def test_the_keep_policy_decides_whether_the_recording_is_kept(tones) -> None:
    kept_none = _run("duplex-none", keep_audio="none")
    assert kept_none.audio == {} and kept_none.conversation.recording_sha256  # hashed, not kept


def test_a_duplex_call_repeats_bit_for_bit(tones) -> None:
    a, b = _run("duplex-same"), _run("duplex-same")
    assert a.conversation.segments_sha256 == b.conversation.segments_sha256
    assert a.conversation.recording_sha256 == b.conversation.recording_sha256
