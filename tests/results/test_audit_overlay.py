"""The readers show each conversation's newest audit: the in-loop audit's rows, written
with the conversation's, until ``tauray audit`` appends newer ones (without Ray:
conversations run in this process, re-audits written with the audit's store)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from tauray.actors.audit.store import write_audit
from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.results.tables.readers import conversations_df
from tauray.results.tables.records import SimAttributionRecord
from tauray.results.tables.writer import TableWriter
from tests.units import make_units

SCENARIOS = ["tau2_telecom__mobile_data_issue__airplane_mode_on__user_abroad_roaming_enabled_off",
             "tau2_telecom__mms_issue__bad_network_preference__unseat_sim_card"]
T0 = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("overlay") / "run"

    async def go():
        a, u = AgentHost(), UserSimHost()
        units = make_units("r", SCENARIOS, 1, {"model": "oracle"}, {"model": "scripted"})
        return await asyncio.gather(*(run_conversation(x, a, u) for x in units))

    results = asyncio.run(go())
    # as the in-loop audit sends them, inside the result: the first is superseded below, the second is not
    for i, (who, finding, turn) in enumerate((("undetermined", "old@1", 9), ("agent", "own@1", 5))):
        results[i] = results[i].model_copy(update={"sim_attributions": [
            _row(results[i].conversation, "inloop-x", T0 - timedelta(hours=1), who, finding, turn)]})
    with TableWriter(out, "r") as writer:
        for r in results:
            writer.add(r)
    return out, [r.conversation for r in results]


def _row(conv, audit_id: str, at: datetime, attribution: str, finding: str | None, turn: int | None):
    return SimAttributionRecord(run_id=conv.run_id, conversation_id=conv.conversation_id, unit_id=conv.unit_id,
                                attempt=conv.attempt, scenario=conv.scenario, audit_id=audit_id,
                                attribution=attribution, decisive_finding=finding, decisive_class=None,
                                decisive_turn=turn, reason="r", findings=0, user_findings=0, success=conv.success,
                                detectors=["d@1"], audited_at=at)


def test_the_in_loop_audit_speaks_until_a_newer_audit_is_stored(run):
    out, convs = run
    frame = conversations_df(out).set_index("conversation_id")
    first, second = (c.conversation_id for c in convs)
    assert (frame.loc[first, "attribution"], frame.loc[first, "decisive_finding"]) == ("undetermined", "old@1")
    assert frame.loc[first, "decisive_turn"] == 9
    assert frame.loc[second, ["attribution", "decisive_finding", "decisive_turn"]].tolist() == ["agent", "own@1", 5]


def test_the_newest_audit_shows_through_and_an_unaudited_row_keeps_its_own(run):
    out, convs = run
    first, second = convs
    write_audit(out, "r", [], [_row(first, "a1", T0, "agent", "agent_rule@1", 4),
                               _row(second, "a1", T0, "simulator", "user_rule@2", 2)])
    write_audit(out, "r", [], [_row(first, "a2", T0 + timedelta(hours=1), "none", None, None)])  # newer, first only
    frame = conversations_df(out).set_index("conversation_id")
    assert frame.loc[first.conversation_id, "attribution"] == "none"
    assert pd.isna(frame.loc[first.conversation_id, "decisive_finding"])
    assert pd.isna(frame.loc[first.conversation_id, "decisive_turn"])
    # a2 did not cover the second conversation: its own newest audit (a1) speaks for it
    assert frame.loc[second.conversation_id, ["attribution", "decisive_finding", "decisive_turn"]].tolist() == [
        "simulator", "user_rule@2", 2]
    assert list(conversations_df(out, attribution="none")["conversation_id"]) == [first.conversation_id]
    assert conversations_df(out, columns=["conversation_id", "decisive_turn"]).shape == (2, 2)
    assert "attribution" not in pd.read_parquet(out / "conversations").columns  # one home: the audit's rows
    stored = pd.read_parquet(out / "sim_attributions")
    assert sorted(stored["audit_id"]) == ["a1", "a1", "a2", "inloop-x", "inloop-x"]  # nothing rewritten


def test_an_older_audit_alone_fills_every_column(run, tmp_path):
    import shutil

    out, convs = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("sim_*"))
    first, second = convs
    write_audit(copy, "r", [], [_row(first, "a1", T0, "agent", "agent_rule@1", 4),
                                _row(second, "a1", T0, "simulator", "user_rule@2", 2)])
    frame = conversations_df(copy).set_index("conversation_id")
    assert frame.loc[first.conversation_id, ["attribution", "decisive_finding", "decisive_turn"]].tolist() == [
        "agent", "agent_rule@1", 4]
    assert frame.loc[second.conversation_id, ["attribution", "decisive_finding", "decisive_turn"]].tolist() == [
        "simulator", "user_rule@2", 2]
    assert str(frame["attribution"].dtype) == "category"
