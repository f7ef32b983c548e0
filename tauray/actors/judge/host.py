"""The judge host: runs judge samples concurrently through litellm and keeps the reply cache.

Replies are cached on (judge config id, transcript hash, context hash, sample
index), a repair turn (:mod:`.repair`) with the reply it repaired. A provider failure (after the Router's retries) yields no row, so a later
re-judge retries it, and is counted on the conversation row; a refused request
yields an unscored row with the reason. The same class runs in-process or as the
Ray judge actor (:func:`judge_actor_class`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from tauray.actors import heap
from tauray.actors.judge.config import JudgeConfig, JudgeItem, JudgeOutcome, public_api_base
from tauray.actors.judge.parse import ParsedVerdict
from tauray.actors.judge.repair import Exchange, converse, repair_hash, repair_ref
from tauray.actors.llm import ModelCallError, ModelReply, ModelSpec, get_client
from tauray.actors.llm.errors import redacted_params
from tauray.results.stats.metrics import tally_votes
from tauray.results.tables.records import INFRA, JudgeVerdictRecord, NLAssertionRecord


class JudgeHost:
    """Judges items concurrently on one event loop; keeps the reply cache."""

    def __init__(self, cache_size: int = 200_000) -> None:
        self._cache: dict[tuple[str, ...], asyncio.Future[Exchange]] = {}
        self._cache_size = cache_size
        self._specs: dict[str, ModelSpec] = {}
        self.counts: Counter[str] = Counter()

    # -- model access ---------------------------------------------------------------
    def _spec(self, config: JudgeConfig) -> ModelSpec:
        key = f"{config.model.model_dump_json()}|{config.kind}|{config.structured}"
        spec = self._specs.get(key)
        if spec is None:
            spec = self._specs[key] = config.request_spec()
        return spec

    async def _reply(self, item: JudgeItem, sample: int) -> tuple[Exchange, bool]:
        c = item.config
        key = (c.config_id, item.transcript_hash, item.context_hash, str(sample))
        future = self._cache.get(key)
        if future is not None:
            try:
                return await asyncio.shield(future), True
            except ModelCallError:
                pass  # a failed call is not cached; try again below
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if len(self._cache) >= self._cache_size:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = future
        spec = self._spec(c)
        seed = None if spec.seed is None else spec.seed + sample
        try:
            client = get_client(spec)
            exchange = await converse(lambda chat: client.complete(chat, seed=seed), item.chat, c.kind,
                                      len(item.assertions))
        except Exception as exc:
            self._cache.pop(key, None)
            future.set_exception(exc)
            future.exception()  # waiters see it; nobody else must
            raise
        except BaseException:
            self._cache.pop(key, None)
            future.cancel()
            raise
        future.set_result(exchange)
        return exchange, False

    # -- one item --------------------------------------------------------------------
    async def judge(self, item: JudgeItem) -> JudgeOutcome:
        results = await asyncio.gather(*(self._sample(item, s) for s in item.samples))
        done = [r for r in results if r is not None and not isinstance(r, str)]
        errors = [r for r in results if isinstance(r, str)]
        calls = sum(1 for r in done if not r[2])
        repairs = sum(1 for r in done if not r[2] and r[3] is not None and r[3].repair is not None)
        hits = len(done) - calls
        self.counts.update(calls=calls, repair_calls=repairs, cache_hits=hits, infra_errors=len(errors))
        questions = len(item.assertions) if item.config.kind == "nl" else 1
        by_sample: dict[int, list[bool | None]] = dict(item.prior)
        for sample, parsed, _, _ in done:
            by_sample[sample] = [p.verdict for p in parsed]
        tallies = [tally_votes([v[q] for v in by_sample.values() if len(v) == questions]) for q in range(questions)]
        overall: list[JudgeVerdictRecord] = []
        nl: list[NLAssertionRecord] = []
        c, t = item.config, item.config.template
        spec = self._spec(c)
        sent = get_client(spec).request if done else None  # what every call of this spec carried
        now = datetime.now(UTC)
        for sample, parsed, cached, ex in done:
            reply = ex.reply if ex is not None else None
            repair = ex.repair if ex is not None else None
            common = dict(
                run_id=item.run_id, conversation_id=item.conversation_id, scenario=item.scenario,
                judge_model=c.model.model, prompt_id=t.id, prompt_version=t.version, prompt_hash=t.prompt_hash,
                judge_config_id=c.config_id, judge_api_base=public_api_base(c.model.api_base),
                judge_temperature=sent.params.get("temperature") if sent else None,
                judge_seed=None if c.model.seed is None or not (sent and sent.seed) else c.model.seed + sample,
                judge_max_tokens=sent.params.get("max_tokens") if sent else None,
                judge_dropped_params=",".join(sent.dropped) if sent and sent.dropped else None,
                judge_extra_params=redacted_params(c.model.extra_params),
                structured=c.structured, response_format_sent="response_format" in spec.extra_params,
                reply_fingerprint=reply.fingerprint if isinstance(reply, ModelReply) else None,
                nl_pack=c.nl_pack, nl_pack_hash=c.pack_hash, context_hash=item.context_hash,
                transcript_hash=item.transcript_hash, sample_index=sample,
                raw_output=reply.content if isinstance(reply, ModelReply) else None,
                prompt_tokens=0 if cached or not isinstance(reply, ModelReply) else reply.prompt_tokens,
                completion_tokens=0 if cached or not isinstance(reply, ModelReply) else reply.completion_tokens,
                cost_usd=(0.0 if cached else reply.cost_usd) if isinstance(reply, ModelReply) else None,
                latency_s=(0.0 if cached else reply.latency_s) if isinstance(reply, ModelReply) else None,
                created_at=now,
                enforcement=enforcement(c, spec), repair_used=repair is not None,
                repair_prompt=repair_ref() if repair is not None else None,
                repair_prompt_hash=repair_hash(c.kind) if repair is not None else None,
                first_unscored_reason=ex.first_why if ex is not None else None,
                repair_output=repair.content if repair is not None else None,
                repair_prompt_tokens=0 if cached or repair is None else repair.prompt_tokens,
                repair_completion_tokens=0 if cached or repair is None else repair.completion_tokens,
                repair_cost_usd=None if repair is None else (0.0 if cached else repair.cost_usd),
                repair_latency_s=None if repair is None else (0.0 if cached else repair.latency_s),
            )
            for q, p in enumerate(parsed):
                maj, agree, scored, total = tallies[q]
                figures = dict(majority=maj, agreement=agree, scored_samples=scored, item_samples=total,
                               unscored_share=(total - scored) / total if total else None,
                               unscored_reason=p.unscored_reason, reasoning=p.reasoning)
                if c.kind == "overall":
                    overall.append(JudgeVerdictRecord(**common, **figures, passed=p.verdict))
                else:
                    nl.append(NLAssertionRecord(**common, **figures, assertion_index=q, assertion=item.assertions[q],
                                                met=p.verdict))
        return JudgeOutcome(overall=overall, nl=nl, calls=calls, repair_calls=repairs, cache_hits=hits,
                            infra_errors=errors)

    async def _sample(self, item: JudgeItem, sample: int
                      ) -> tuple[int, list[ParsedVerdict], bool, Exchange | None] | str:
        try:
            exchange, cached = await self._reply(item, sample)
        except ModelCallError as exc:
            if exc.kind == INFRA:
                return f"sample {sample}: {exc.message}"
            reason = f"judge request refused: {exc.message}"[:500]
            n = len(item.assertions) if item.config.kind == "nl" else 1
            return sample, [ParsedVerdict(verdict=None, unscored_reason=reason)] * n, False, None
        return sample, exchange.parsed, cached, exchange

    async def stats(self) -> dict[str, int]:
        return dict(self.counts) | {"cached_replies": len(self._cache)}


def enforcement(config: JudgeConfig, spec: ModelSpec) -> str:
    """How the reply format was enforced at the source: ``grammar`` (tauray's llama.cpp models turn the
    schema into a grammar), ``guided`` (vLLM's guided decoding), ``json_schema`` (the provider's structured
    output, sent as litellm ``response_format``) or ``prompt`` (only the prompt asks for it)."""
    if "response_format" not in spec.extra_params:
        return "prompt"
    if config.model.serve is not None:
        return "grammar" if config.model.serve.backend == "llamacpp" else "guided"
    return "json_schema"


def judge_actor_class() -> Any:
    """The :class:`JudgeHost` as a Ray actor class (async, many items at once)."""
    import ray

    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=4096)(heap.long_lived(JudgeHost))


async def call_judge(judge: Any, item: JudgeItem) -> JudgeOutcome:
    """Judge ``item`` on a :class:`JudgeHost` or on a judge actor handle alike."""
    method = judge.judge
    if hasattr(method, "remote"):
        return await method.remote(item)
    result = method(item)
    return await result if inspect.isawaitable(result) else result
