"""A real model through the whole pipeline, offline: SmolLM2-135M on llama.cpp, served by Ray Serve.

Agent, user simulator and judge are all the served model, on τ²'s mock domain.
The assertions are about the pipeline, never the model's quality (it is far too
small to solve anything): one row per unit, both sides' messages stored, every
tool call executed or counted malformed, every judge row scored or unscored
with a reason, no errors. The only replica is killed while conversations are
in flight: Serve replaces it, the Router retries what it dropped, nothing is lost.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute as run_sweep
from tauray.pipeline.scheduler import Hooks
from tauray.results.tables.readers import conversations_df, judge_verdicts_df, messages_df

from .conftest import local_sweep

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="needs tauray[llamacpp] (make test installs it)")


def _replicas() -> list[str]:
    import ray

    return sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                  if a.get("namespace") == "serve" and a["name"].startswith("SERVE_REPLICA::tauray-smollm2#"))


def test_served_smollm2_on_mock_domain_survives_a_killed_replica(serve_up, tmp_path):
    import ray

    cfg = SweepConfig.model_validate(local_sweep("smol-mock", trials=1, limit=2, max_steps=3))
    killed: list[str] = []

    def kill_first_replica(result) -> None:  # after the first row, while the others are mid-conversation
        if not killed:
            (name,) = _replicas()
            ray.kill(ray.get_actor(name, namespace="serve"), no_restart=True)
            killed.append(name)

    out = tmp_path / "out"
    summary = run_sweep(cfg, out=out, progress=False, keep_actors=True, hooks=Hooks(on_result=kill_first_replica))

    assert killed, "the replica was never killed"
    assert summary.units == summary.rows == 2
    assert (summary.infra_errors, summary.model_errors, summary.internal_errors) == (0, 0, 0)
    assert summary.prompt_tokens > 0 and summary.completion_tokens > 0

    conv = conversations_df(out)
    assert len(conv) == 2 and conv["conversation_id"].is_unique
    assert conv["error_kind"].isna().all()
    assert (conv["agent_llm_calls"] > 0).all() and (conv["user_llm_calls"] > 0).all()

    msgs = messages_df(out)
    for cid, m in msgs.groupby("conversation_id"):
        assert {"agent", "user"} <= set(m["side"]), cid
        assert m[(m["side"] == "user") & (m["role"] == "user")]["content"].notna().any(), cid
        row = conv[conv["conversation_id"] == cid].iloc[0]
        calls = sum(len(json.loads(t)) for t in m["tool_calls"].dropna())
        # every call the model made was executed or answered as malformed: one tool message each
        assert calls == int(row["agent_tool_calls"] + row["user_tool_calls"]) == int((m["role"] == "tool").sum())
        assert row["malformed_tool_calls"] <= calls

    verdicts = judge_verdicts_df(out)
    assert sorted(verdicts["conversation_id"]) == sorted(conv["conversation_id"])
    # the served judge's reply is constrained to the verdict schema (llama.cpp grammar), and each row
    # names the grammar; a row could be unscored only where the completion cap cut the JSON short (first
    # reply and repair turn alike: the grammar allows nothing but the schema's JSON). With room to finish
    # (JUDGE_MAX_TOKENS), the 135M model's every verdict is read.
    assert verdicts["reply_fingerprint"].str.startswith("llama.cpp grammar=json-schema:").all()
    assert (verdicts["enforcement"] == "grammar").all()
    unscored = verdicts[verdicts["passed"].isna()]
    print(f"served SmolLM2 judge: {len(unscored)}/{len(verdicts)} unscored, "
          f"{int(verdicts['repair_used'].sum())} repair turns")
    assert unscored.empty, unscored["unscored_reason"].tolist()

    # calls the dead replica dropped were retried by the Router; the rows count them consistently
    # (whether any message call was in flight at the kill depends on timing: judge calls have no message)
    assert int(conv["agent_llm_retries"].sum() + conv["user_llm_retries"].sum()) == int(msgs["retries"].sum())
    # torn down with the sweep
    assert _replicas() == []
