"""Re-judging stored runs: judge recorded conversations without re-running them.

Reads the ``conversations`` and ``messages`` tables of a run directory, renders
each transcript once, builds one judge item per conversation and judge config
holding only the samples that are not stored yet, runs the items at bounded
concurrency on a judge host (in-process by default, or a Ray judge actor), and
appends the verdict rows with :func:`write_records`. A sample is stored once per
(judge_config_id, conversation, transcript_hash, sample_index), so running the
same configuration again writes nothing; asking for more samples writes only
the new ones, whose majority covers the stored samples too.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from tauray.actors.judge import (
    JudgeConfig,
    JudgeHost,
    JudgeItem,
    JudgeOutcome,
    build_item,
    call_judge,
    judge_actor_class,
)
from tauray.actors.judge.render import render_transcript, text_hash
from tauray.actors.llm import check_model_ready, close_clients
from tauray.actors.llm.usable import probe_models
from tauray.pipeline.ray_runtime import connect
from tauray.results.tables import layout
from tauray.results.tables.lock import RunLock
from tauray.results.tables.readers import (
    conversations_df,
    judge_verdicts_df,
    messages_df,
    nl_verdicts_df,
)
from tauray.results.tables.writer import write_records
from tauray.scenarios.registry import default_registry


class JudgeRunSummary(BaseModel):
    """What one ``tauray judge`` call did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    configs: list[dict[str, Any]] = Field(description="label, judge_config_id, kind and samples of each config.")
    conversations: int = Field(description="Conversations eligible for judging (no error, with messages).")
    items: int = Field(description="Conversation × config items that needed at least one new sample.")
    skipped_items: int = Field(description="Items whose samples were all stored already.")
    calls: int = Field(description="Judge model calls made.")
    cache_hits: int = Field(description="Samples served from the in-process cache.")
    repair_calls: dict[str, int] = Field(default_factory=dict, description="Repair turns asked per judge model "
                                         "(a reply that was not one value of the format gets one; docs/judge.md).")
    judge_calls: dict[str, int] = Field(default_factory=dict, description="Judge model calls per judge model, "
                                        "repair turns included.")
    rows: dict[str, int] = Field(description="Rows appended per table.")
    unscored_rows: int = Field(description="Appended rows whose verdict is unscored.")
    infra_errors: int = Field(description="Samples with no reply after retries (no row; a rerun retries them).")
    infra_error_examples: list[str] = Field(default_factory=list)
    seconds: float


def _stored(run_dir: Path) -> tuple[dict[tuple[str, str, str], dict[int, list[bool | None]]], ...]:
    """Stored verdicts per (config, conversation, transcript) -> sample -> verdict per question."""
    overall: dict[tuple[str, str, str], dict[int, list[bool | None]]] = defaultdict(dict)
    df = judge_verdicts_df(run_dir,
                           columns=["judge_config_id", "conversation_id", "transcript_hash", "sample_index", "passed"])
    for cfg, conv, th, s, passed in df.itertuples(index=False):
        overall[(cfg, conv, th)][int(s)] = [None if pd.isna(passed) else bool(passed)]
    nl: dict[tuple[str, str, str], dict[int, list[bool | None]]] = defaultdict(dict)
    df = nl_verdicts_df(run_dir, columns=[
        "judge_config_id", "conversation_id", "transcript_hash", "sample_index", "assertion_index", "met"])
    grouped: dict[tuple[str, str, str, int], dict[int, bool | None]] = defaultdict(dict)
    for cfg, conv, th, s, q, met in df.itertuples(index=False):
        grouped[(cfg, conv, th, int(s))][int(q)] = None if pd.isna(met) else bool(met)
    for (cfg, conv, th, s), by_q in grouped.items():
        nl[(cfg, conv, th)][s] = [by_q.get(q) for q in range(max(by_q) + 1)]
    return overall, nl


def plan_items(run_dir: Path | str, configs: list[JudgeConfig]) -> tuple[list[JudgeItem], int, int]:
    """The items still to judge, the number skipped as complete, and the eligible conversations."""

    run_dir = Path(run_dir)
    conv = conversations_df(run_dir, columns=["run_id", "conversation_id", "scenario", "error_kind"])
    conv = conv[conv["error_kind"].isna()].drop_duplicates("conversation_id")
    msgs = messages_df(run_dir, columns=["conversation_id", "seq", "side", "role", "content",
                                                    "tool_calls", "tool_call_id"])
    msgs = msgs.sort_values(["conversation_id", "seq"])
    by_conv = {cid: g.to_dict("records") for cid, g in msgs.groupby("conversation_id", sort=False)}
    stored_overall, stored_nl = _stored(run_dir)
    registry = default_registry()
    items: list[JudgeItem] = []
    skipped = eligible = 0
    for run_id, cid, scenario_name, _ in conv.itertuples(index=False):
        messages = by_conv.get(cid)
        if not messages:
            continue
        eligible += 1
        scenario = registry.get(scenario_name)
        transcript = render_transcript(messages)
        th = text_hash(transcript)
        for config in configs:
            stored = (stored_nl if config.kind == "nl" else stored_overall).get((config.config_id, cid, th), {})
            wanted = [s for s in range(config.samples) if s not in stored]
            if not wanted:
                skipped += 1
                continue
            item = build_item(run_id, cid, scenario, transcript, config, samples=wanted, prior=stored)
            if item is not None:
                items.append(item)
    return items, skipped, eligible


async def run_items(items: list[JudgeItem], judge: Any, concurrency: int, on_done: Any = None) -> list[JudgeOutcome]:
    """Judge ``items`` with at most ``concurrency`` items in flight; results in input order."""
    slots = asyncio.Semaphore(concurrency)

    async def one(item: JudgeItem) -> JudgeOutcome:
        async with slots:
            outcome = await call_judge(judge, item)
        if on_done is not None:
            on_done(item, outcome)
        return outcome

    return list(await asyncio.gather(*(one(i) for i in items)))


class _Sink:
    """Buffers verdict rows and appends them to the run directory, one file per table and run id."""

    def __init__(self, run_dir: Path, flush_rows: int, attempts: dict[tuple[str, str], int] | None = None) -> None:
        self.run_dir, self.flush_rows = run_dir, flush_rows
        self.attempts = attempts or {}  # (run_id, conversation_id) -> attempt judged: rows belong to it
        self.buffers: dict[str, list[Any]] = {"judge_verdicts": [], "nl_assertion_verdicts": []}
        self.rows = {t: 0 for t in self.buffers}
        self.unscored = 0

    def add(self, outcome: JudgeOutcome) -> None:
        self.buffers["judge_verdicts"] += outcome.overall
        self.buffers["nl_assertion_verdicts"] += outcome.nl
        self.unscored += sum(r.passed is None for r in outcome.overall) + sum(r.met is None for r in outcome.nl)
        if sum(len(b) for b in self.buffers.values()) >= self.flush_rows:
            self.flush()

    def flush(self) -> None:
        for table, rows in self.buffers.items():
            by_run: dict[str, list[Any]] = defaultdict(list)
            for row in rows:
                attempt = self.attempts.get((row.run_id, row.conversation_id), row.attempt)
                by_run[row.run_id].append(row if row.attempt == attempt else row.model_copy(update={"attempt": attempt}))
            for run_id, run_rows in by_run.items():
                write_records(self.run_dir, table, run_rows, run_id)
                self.rows[table] += len(run_rows)
            self.buffers[table] = []


def probe_judges(configs: list[JudgeConfig], notes: Any = None) -> None:
    """One real call per distinct judge request spec (the model with its ``response_format``
    where the config sends one), before any item: an unknown model, a refused key or an
    unsupported parameter stops here with :class:`~tauray.actors.llm.probe.ProbeError` naming
    the model and the provider's answer, instead of as a column of unscored rows."""

    probe_models({f"judge ({c.label})": c.request_spec() for c in configs}, seed=None, notes=notes)


def rejudge(run_dir: Path | str, configs: list[JudgeConfig], *, concurrency: int = 32, judge: Any = None,
            use_ray: bool = False, progress: bool = False, flush_rows: int = 5000, probe: bool = True,
            notes: Any = None) -> JudgeRunSummary:
    """Judge the stored conversations of ``run_dir`` under every config; append the new rows.

    ``judge`` may be a :class:`JudgeHost` or a judge actor handle; by default an
    in-process host is used (``use_ray`` starts a judge actor instead). With
    ``probe`` (the default) every judge model is called once first and a
    failure raises before any row is written.
    """

    if not configs:
        raise ValueError("no judge config given")
    ids = [c.config_id for c in configs]
    if len(set(ids)) != len(ids):
        raise ValueError("the same judge config is given twice")
    for c in configs:
        check_model_ready(c.model)
    run_dir = Path(run_dir)
    if not layout.has_conversations(run_dir):
        raise ValueError(f"{run_dir} holds no conversations table; is it a run directory?")
    if probe:
        probe_judges(configs, notes)
    started = time.perf_counter()
    lock = RunLock(run_dir)  # one writer per run directory: fails here, naming it, if a sweep is writing
    try:
        items, skipped, eligible = plan_items(run_dir, configs)
        judged = conversations_df(run_dir, columns=["run_id", "conversation_id", "attempt"])
    except BaseException:
        lock.release()
        raise
    attempts = {(str(r), str(c)): int(a) for r, c, a in judged.itertuples(index=False)}
    if judge is None and use_ray:
        connect()
        judge = judge_actor_class().remote()
    judge = judge if judge is not None else JudgeHost()
    sink = _Sink(run_dir, flush_rows, attempts)
    counts = {"calls": 0, "hits": 0, "errors": 0}
    repairs: Counter[str] = Counter()
    model_calls: Counter[str] = Counter()
    examples: list[str] = []


    bar = tqdm(total=len(items), unit="item", desc="judge", disable=not progress, dynamic_ncols=True)

    def done(item: JudgeItem, outcome: JudgeOutcome) -> None:
        counts["calls"] += outcome.calls
        counts["hits"] += outcome.cache_hits
        repairs[item.config.model.model] += outcome.repair_calls
        model_calls[item.config.model.model] += outcome.calls + outcome.repair_calls
        counts["errors"] += len(outcome.infra_errors)
        examples.extend(outcome.infra_errors[: max(0, 5 - len(examples))])
        sink.add(outcome)
        bar.update(1)

    async def main() -> None:
        try:
            await run_items(items, judge, concurrency, done)
        finally:
            sink.flush()
            await close_clients()

    try:
        asyncio.run(main())
    finally:
        bar.close()
        lock.release()
    return JudgeRunSummary(
        run_dir=str(run_dir),
        configs=[{"label": c.label, "judge_config_id": c.config_id, "kind": c.kind, "samples": c.samples,
                  "judge_model": c.model.model, "prompt": c.prompt, "nl_pack": c.nl_pack} for c in configs],
        conversations=eligible, items=len(items), skipped_items=skipped, calls=counts["calls"],
        cache_hits=counts["hits"], repair_calls=dict(repairs), judge_calls=dict(model_calls), rows=sink.rows, unscored_rows=sink.unscored, infra_errors=counts["errors"],
        infra_error_examples=examples, seconds=round(time.perf_counter() - started, 3),
    )


__all__ = ["JudgeRunSummary", "plan_items", "probe_judges", "rejudge", "run_items"]
