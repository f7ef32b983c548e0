"""Rows say which model calls the Router had to retry (a served replica that died, a 500)."""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.llm import ModelClient, ModelSpec
from tauray.endpoint import start_endpoint
from tauray.pipeline.driver import execute as run_sweep
from tauray.results.tables.readers import conversations_df, messages_df
from tests.pipeline.conftest import make_sweep


@pytest.mark.slow
def test_reply_counts_router_retries():
    with start_endpoint(latency=0.0, fault_rate=0.5, fault_kinds=("500",), fault_seed=3) as ep:
        client = ModelClient(ModelSpec(model="openai/scripted-user", api_base=ep.base_url, num_retries=8))

        async def calls() -> list[int]:
            return [(await client.complete([{"role": "user", "content": "hi"}])).retries for _ in range(12)]

        retries = asyncio.run(calls())
        asyncio.run(client.aclose())
        faults = ep.stats()["faults"].get("500", 0)
    assert any(r > 0 for r in retries) and any(r == 0 for r in retries)
    assert sum(retries) == faults


def test_message_and_conversation_rows_carry_retries(ray_local, tmp_path):
    with start_endpoint(latency=0.0, fault_rate=0.25, fault_kinds=("500",), fault_seed=5) as ep:
        cfg = make_sweep(ep.base_url, name="retries", agents=("a1",), users=("u1",), limit=2, trials=1,
                         spec={"num_retries": 8})
        summary = run_sweep(cfg, out=tmp_path / "out", progress=False, keep_actors=True)
        faults = ep.stats()["faults"].get("500", 0)
    assert summary.rows == 2 and summary.infra_errors == 0 and faults > 0
    messages = messages_df(tmp_path / "out")
    model_made = messages[messages["retries"].notna()]
    assert messages[messages["role"] == "user"]["retries"].notna().all()  # every user turn is a model call
    assert messages[messages["role"] == "tool"]["retries"].isna().all()
    conv = conversations_df(tmp_path / "out")
    per_side = int(conv["agent_llm_retries"].sum() + conv["user_llm_retries"].sum())
    assert per_side == int(model_made["retries"].sum()) > 0
    # judge calls are retried too, but they are not messages: the conversation sides never exceed the faults
    assert per_side <= faults
