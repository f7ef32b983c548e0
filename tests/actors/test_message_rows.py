"""The messages table, pinned: the rows a fixed set of conversations writes (reference
policies, endpoint models with tool calls, a refusal, a cut tool call, a task that opens on
its own message history) equal a golden file made before the message record was reshaped
(issue 34: one message record from the model reply to the table). Every column is compared
after the record -> Arrow conversion the writer makes, except ``created_at`` (a clock)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pyarrow as pa

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.unit import WorkUnit
from tauray.results.tables.schemas import schema_for

GOLDEN = Path(__file__).parent / "data" / "messages_golden.json"
SCENARIOS = ["tau2_telecom__mobile_data_issue__data_usage_exceeded__persona_easy",
             "tau2_telecom__mms_issue__break_apn_mms_setting__persona_hard",
             "tau2_mock__update_task_with_message_history", "tau2_mock__create_task_1"]


def _units(base_url: str) -> list[WorkUnit]:
    def llm(name: str) -> dict:
        return {"model": f"openai/{name}", "api_base": base_url, "num_retries": 0}

    pairs = [({"model": "oracle"}, {"model": "scripted"}), (llm("scripted-agent"), llm("scripted-user")),
             (llm("stop-refusal"), {"model": "scripted"}), (llm("stop-length-tool"), {"model": "scripted"})]
    units = []
    for scenario in SCENARIOS:
        for agent, user in pairs:
            i = len(units)
            units.append(WorkUnit(unit_id=f"u{i}", run_id="golden", sweep_id="golden", cell_id="c",
                                  scenario=scenario, trial=0, seed=7 + i, agent=agent, user=user,
                                  max_steps=30, max_errors=5))
    return units


def test_the_messages_table_equals_the_golden_rows(endpoint):
    agent, user = AgentHost(), UserSimHost()

    async def run_all():
        return [await run_conversation(u, agent, user) for u in _units(endpoint.base_url)]

    got = []
    for result in asyncio.run(run_all()):
        table = pa.Table.from_pylist([m.model_dump() for m in result.messages], schema=schema_for("messages"))
        stamps = table["created_at"].to_pylist()
        assert all(s.tzinfo is not None for s in stamps) and stamps == sorted(stamps)
        got.append(table.drop(["created_at"]).to_pylist())
    want = json.loads(GOLDEN.read_text())
    assert [len(rows) for rows in got] == [len(rows) for rows in want]
    for rows, golden in zip(got, want):
        assert rows == golden
