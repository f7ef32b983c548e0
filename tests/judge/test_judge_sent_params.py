"""A judge row records the sampling parameters its request carried, caught on the wire by a
loopback server answering as each provider documents (OpenAI chat completions, Anthropic
messages, Gemini generateContent); temperature 0 goes to every judge whose provider takes it.

Before: rows copied the spec (``judge_temperature=0.0``, ``judge_max_tokens`` null, the seed)
although an o-series judge was sent no temperature and ``max_tokens=16384`` and Anthropic no
seed; and every model litellm flags as reasoning was sent no temperature, so Claude 4.x and
Gemini 2.5 judges ran at the provider's default although both take 0.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

from tauray.actors.judge import JudgeConfig, JudgeHost
from tauray.actors.judge.config import JudgeItem
from tauray.actors.llm import close_clients
from tests.actors.test_provider_matrix import Capture

VERDICT = json.dumps({"reasoning": "The agent fixed it.", "verdict": "pass"})
THINKING = {"type": "enabled", "budget_tokens": 2048}


class ProviderResponder(Capture):
    """Records each request and answers a judge verdict in the wire format of the path's provider."""

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"path": request.path, "body": body})
        if request.path.endswith("/messages"):  # Anthropic
            return web.json_response({
                "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                "content": [{"type": "text", "text": VERDICT}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5}})
        if ":generateContent" in request.path:  # Gemini
            return web.json_response({
                "candidates": [{"content": {"role": "model", "parts": [{"text": VERDICT}]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})
        return web.json_response({  # OpenAI chat completions
            "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": VERDICT}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


@pytest.fixture(scope="module")
def server():
    return ProviderResponder()


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "test-key")


def _judge(server, spec: dict) -> tuple[dict, dict]:
    """One judge call through the JudgeHost: (the request body as sent, the row as stored)."""
    config = JudgeConfig(model={**spec, "num_retries": 0}, prompt="overall-plain", structured="never")
    item = JudgeItem(run_id="r", conversation_id="c", scenario="s", config=config,
                     chat=[{"role": "system", "content": "Judge."}, {"role": "user", "content": "Transcript."}],
                     transcript_hash="t", context_hash="x", samples=[0])
    before = len(server.requests)

    async def main():
        try:
            return await JudgeHost().judge(item)
        finally:
            await close_clients()

    outcome = asyncio.run(main())
    assert outcome.infra_errors == [] and len(server.requests) == before + 1
    (row,) = outcome.overall
    assert row.passed is True
    return server.requests[-1]["body"], row.model_dump()


def test_an_o_series_judge_row_says_no_temperature_the_cap_sent_and_the_drop(server):
    # OpenAI: o-series models take only temperature=1; litellm refuses 0 before the wire.
    body, row = _judge(server, {"model": "openai/o4-mini", "api_base": f"{server.base}/v1", "seed": 3})
    assert "temperature" not in body and body["max_completion_tokens"] == 16384 and body["seed"] == 3
    assert (row["judge_temperature"], row["judge_max_tokens"], row["judge_seed"]) == (None, 16384, 3)
    assert row["judge_dropped_params"] == "temperature"


def test_a_claude_judge_without_thinking_gets_temperature_0_and_records_the_seed_it_was_not_sent(server):
    body, row = _judge(server, {"model": "anthropic/claude-sonnet-4-5", "api_base": server.base, "seed": 3})
    assert body["temperature"] == 0.0 and body["max_tokens"] == 16384 and "seed" not in json.dumps(body)
    assert (row["judge_temperature"], row["judge_max_tokens"], row["judge_seed"]) == (0.0, 16384, None)
    assert row["judge_dropped_params"] == "seed"


def test_a_claude_judge_with_thinking_sends_no_temperature_and_says_so(server):
    body, row = _judge(server, {"model": "anthropic/claude-sonnet-4-5", "api_base": server.base,
                                "extra_params": {"thinking": THINKING}})
    assert "temperature" not in body and body["thinking"]["budget_tokens"] == 2048
    assert row["judge_temperature"] is None and row["judge_dropped_params"] == "temperature"


def test_a_gemini_2_5_judge_gets_temperature_0(server):
    body, row = _judge(server, {"model": "gemini/gemini-2.5-flash", "api_base": server.base})
    assert body["generationConfig"]["temperature"] == 0.0
    assert body["generationConfig"]["max_output_tokens"] == row["judge_max_tokens"] == 16384
    assert row["judge_temperature"] == 0.0 and row["judge_dropped_params"] is None
