"""The LLM judge: per-assertion and overall verdicts over recorded conversations.

A :class:`JudgeConfig` binds a judge model (a :class:`ModelSpec`, the same as
for the agent and user roles) to one versioned prompt and a number of samples.
The driver or coordinator turns a conversation into one :class:`JudgeItem` per
config (the rendered prompt, the transcript hash, which samples are wanted);
a :class:`JudgeHost` (in-process, or on Ray as the judge actor) runs the
samples concurrently through litellm, reads each reply with
:mod:`judge_parse`, and returns finished rows with majority and agreement.

Replies are cached on (judge config id, transcript hash, context hash, sample
index), and the config id covers everything that shapes the request (model,
api base, temperature, seed, max tokens, extra params, structured mode, prompt
id/version/hash, NL pack id/version/hash): a repeated configuration costs
nothing, and any change is another id, so it is never served a stale reply.
Every row carries those fields as columns, so an ablation is a ``groupby``. A
provider failure (after the Router's retries) yields no row, so a later
re-judge retries it, and is counted on the conversation row; a refused request
yields an unscored row with the reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections import Counter
from urllib.parse import urlsplit, urlunsplit
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauray.actors.judge_parse import ParsedVerdict, assertion_id, parse_nl, parse_overall, response_format
from tauray.actors.judge_prompts import JudgePrompt, get_pack, get_prompt
from tauray.actors.judge_render import render_transcript, text_hash
from tauray.actors.models import ModelCallError, ModelReply, ModelSpec, get_client
from tauray.results.records import ConversationRecord, ConversationResult, JudgeVerdictRecord, NLAssertionRecord
from tauray.scenarios.model import SuccessSignal, SuccessSignals

# ModelSpec fields that shape a judge request (so they belong in the config id); the key,
# timeouts, retries, rate limits and concurrency do not.
_OUTPUT_FIELDS = ("model", "temperature", "seed", "max_tokens", "extra_params")


def public_api_base(api_base: str | None) -> str | None:
    """``api_base`` without credentials, query or fragment: what may be hashed and stored."""
    if not api_base:
        return None
    parts = urlsplit(api_base.strip())
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class JudgeConfig(BaseModel):
    """One judge: model and sampling, one prompt, k samples (and, for NL prompts, an optional pack)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSpec = Field(description="Judge model spec; api_base None uses litellm's standard environment.")
    prompt: str = Field(description="Prompt reference id@version (an id alone is resolved to its latest version).")
    samples: int = Field(1, ge=1, le=64, description="Judge samples per item; the majority is stored on every row.")
    nl_pack: str | None = Field(None, description="NL-assertion pack id@version whose assertions join the scenario's.")
    structured: Literal["auto", "always", "never"] = Field(
        "auto", description="Send a JSON schema as response_format: when litellm says the model supports it, "
        "always, or never. The reply is parsed robustly either way.")

    @model_validator(mode="after")
    def _resolve(self) -> JudgeConfig:
        if self.model.is_reference:
            raise ValueError(f"{self.model.model!r} is a reference policy, not a judge model")
        prompt = get_prompt(self.prompt)
        object.__setattr__(self, "prompt", prompt.ref)
        if self.nl_pack is not None:
            if prompt.kind != "nl":
                raise ValueError(f"--nl-pack needs an 'nl' prompt; {prompt.ref} is {prompt.kind!r}")
            object.__setattr__(self, "nl_pack", get_pack(self.nl_pack).ref)
        return self

    @property
    def template(self) -> JudgePrompt:
        return get_prompt(self.prompt)

    @property
    def kind(self) -> str:
        return self.template.kind

    @property
    def params(self) -> dict[str, Any]:
        return self.model.model_dump(include=set(_OUTPUT_FIELDS), mode="json")

    @property
    def pack_hash(self) -> str | None:
        return get_pack(self.nl_pack).pack_hash if self.nl_pack else None

    @property
    def identity(self) -> dict[str, Any]:
        """Everything that shapes the request, as stored beside every verdict (and hashed into the id)."""
        t = self.template
        return {"params": self.params, "api_base": public_api_base(self.model.api_base),
                "structured": self.structured, "prompt_id": t.id, "prompt_version": t.version,
                "prompt_hash": t.prompt_hash, "nl_pack": self.nl_pack, "nl_pack_hash": self.pack_hash}

    @property
    def config_id(self) -> str:
        """Hash of :attr:`identity`."""
        return hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:16]

    def request_spec(self) -> ModelSpec:
        """The model spec calls are made with: the config's, plus the reply schema as
        ``response_format`` when the structured mode asks for it."""
        if self.structured == "always" or (self.structured == "auto" and _supports_schema(self.model.model)):
            return self.model.model_copy(update={"extra_params": {**self.model.extra_params,
                                                                  "response_format": response_format(self.kind)}})
        return self.model

    @property
    def label(self) -> str:
        return f"{self.model.model} {self.prompt}" + (f" +{self.nl_pack}" if self.nl_pack else "")


class JudgeItem(BaseModel):
    """One conversation under one judge config: what to send and which samples are wanted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    conversation_id: str
    scenario: str
    config: JudgeConfig
    chat: list[dict[str, str]] = Field(description="The rendered messages sent to the judge.")
    transcript_hash: str = Field(description="Hash of the rendered transcript.")
    context_hash: str = Field(description="Hash of the per-item text around it (ticket, goal, assertions).")
    assertions: list[str] = Field(default_factory=list, description="Assertions judged (NL prompts only).")
    samples: list[int] = Field(description="Sample indices to produce.")
    prior: dict[int, list[bool | None]] = Field(
        default_factory=dict, description="Verdicts of samples already stored (index -> one per question), "
        "so the majority covers every sample.")


class JudgeOutcome(BaseModel):
    """What judging one item produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    overall: list[JudgeVerdictRecord] = Field(default_factory=list)
    nl: list[NLAssertionRecord] = Field(default_factory=list)
    calls: int = Field(0, description="Model calls made.")
    cache_hits: int = Field(0, description="Samples served from the cache.")
    infra_errors: list[str] = Field(default_factory=list, description="Samples that got no reply (no row written).")


def majority(verdicts: list[bool | None]) -> tuple[bool | None, float | None]:
    """Majority over the scored verdicts (None on a tie or none) and the share of scored ones agreeing."""
    return tally(verdicts)[:2]  # type: ignore[return-value]


def tally(verdicts: list[bool | None]) -> tuple[bool | None, float | None, int, int]:
    """(majority, agreement, scored, total): unscored samples are not votes, and how many
    samples were scored is kept beside the majority, so [pass, unscored, unscored] reads
    as one scored pass out of three, not as a unanimous pass."""
    scored = [v for v in verdicts if v is not None]
    if not scored:
        return None, None, 0, len(verdicts)
    yes = sum(scored)
    no = len(scored) - yes
    if yes == no:
        return None, 0.5, len(scored), len(verdicts)
    return yes > no, max(yes, no) / len(scored), len(scored), len(verdicts)


def scenario_context(scenario: Any) -> dict[str, str]:
    user = getattr(scenario, "user", None)
    goal = (getattr(user, "reason_for_call", None) or getattr(user, "instructions", None) or "(not given)")
    return {"ticket": (getattr(scenario, "ticket", None) or "(no ticket given)").strip(),
            "goal": goal.strip(), "domain": getattr(scenario, "domain", "")}


def assertions_for(scenario: Any, config: JudgeConfig) -> list[str]:
    own = list(getattr(scenario, "nl_assertions", None) or ())
    if config.nl_pack:
        own += [a for a in get_pack(config.nl_pack).assertions_for(scenario.name) if a not in own]
    return own


def build_item(run_id: str, conversation_id: str, scenario: Any, transcript: str, config: JudgeConfig,
               samples: list[int] | None = None, prior: dict[int, list[bool | None]] | None = None
               ) -> JudgeItem | None:
    """The item for one conversation and config; None when there is nothing to judge."""
    values = scenario_context(scenario)
    assertions: list[str] = []
    if config.kind == "nl":
        assertions = assertions_for(scenario, config)
        if not assertions:
            return None
        values["assertions"] = "\n".join(f"{assertion_id(i)}. {a}" for i, a in enumerate(assertions))
    wanted = list(range(config.samples)) if samples is None else samples
    if not wanted:
        return None
    return JudgeItem(
        run_id=run_id, conversation_id=conversation_id, scenario=scenario.name, config=config,
        chat=config.template.render(transcript, values), transcript_hash=text_hash(transcript),
        context_hash=text_hash(json.dumps(values, sort_keys=True)), assertions=assertions, samples=wanted,
        prior=prior or {},
    )


class JudgeHost:
    """Judges items concurrently on one event loop; keeps the reply cache."""

    def __init__(self, cache_size: int = 200_000) -> None:
        self._cache: dict[tuple[str, ...], asyncio.Future[ModelReply]] = {}
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

    async def _reply(self, item: JudgeItem, sample: int) -> tuple[ModelReply, bool]:
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
            reply = await get_client(spec).complete(item.chat, seed=seed)
        except Exception as exc:
            self._cache.pop(key, None)
            future.set_exception(exc)
            future.exception()  # waiters see it; nobody else must
            raise
        except BaseException:
            self._cache.pop(key, None)
            future.cancel()
            raise
        future.set_result(reply)
        return reply, False

    # -- one item --------------------------------------------------------------------
    async def judge(self, item: JudgeItem) -> JudgeOutcome:
        results = await asyncio.gather(*(self._sample(item, s) for s in item.samples))
        done = [r for r in results if r is not None and not isinstance(r, str)]
        errors = [r for r in results if isinstance(r, str)]
        calls = sum(1 for r in done if not r[2])
        hits = len(done) - calls
        self.counts.update(calls=calls, cache_hits=hits, infra_errors=len(errors))
        questions = len(item.assertions) if item.config.kind == "nl" else 1
        by_sample: dict[int, list[bool | None]] = dict(item.prior)
        for sample, parsed, _, _ in done:
            by_sample[sample] = [p.verdict for p in parsed]
        tallies = [tally([v[q] for v in by_sample.values() if len(v) == questions]) for q in range(questions)]
        overall: list[JudgeVerdictRecord] = []
        nl: list[NLAssertionRecord] = []
        c, t = item.config, item.config.template
        spec = self._spec(c)
        now = datetime.now(UTC)
        for sample, parsed, cached, reply in done:
            common = dict(
                run_id=item.run_id, conversation_id=item.conversation_id, scenario=item.scenario,
                judge_model=c.model.model, prompt_id=t.id, prompt_version=t.version, prompt_hash=t.prompt_hash,
                judge_config_id=c.config_id, judge_api_base=public_api_base(c.model.api_base),
                judge_temperature=c.model.temperature,
                judge_seed=None if c.model.seed is None else c.model.seed + sample,
                judge_max_tokens=c.model.max_tokens, judge_extra_params=c.model.extra_params,
                structured=c.structured, response_format_sent="response_format" in spec.extra_params,
                nl_pack=c.nl_pack, nl_pack_hash=c.pack_hash, context_hash=item.context_hash,
                transcript_hash=item.transcript_hash, sample_index=sample,
                raw_output=reply.content if isinstance(reply, ModelReply) else None,
                prompt_tokens=0 if cached or not isinstance(reply, ModelReply) else reply.prompt_tokens,
                completion_tokens=0 if cached or not isinstance(reply, ModelReply) else reply.completion_tokens,
                cost_usd=(0.0 if cached else reply.cost_usd) if isinstance(reply, ModelReply) else None,
                latency_s=(0.0 if cached else reply.latency_s) if isinstance(reply, ModelReply) else None,
                created_at=now,
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
        return JudgeOutcome(overall=overall, nl=nl, calls=calls, cache_hits=hits, infra_errors=errors)

    async def _sample(self, item: JudgeItem, sample: int) -> tuple[int, list[ParsedVerdict], bool, Any] | str:
        try:
            reply, cached = await self._reply(item, sample)
        except ModelCallError as exc:
            if exc.kind == "infra":
                return f"sample {sample}: {exc.message}"
            reason = f"judge request refused: {exc.message}"[:500]
            n = len(item.assertions) if item.config.kind == "nl" else 1
            return sample, [ParsedVerdict(verdict=None, unscored_reason=reason)] * n, False, None
        text = reply.content
        if item.config.kind == "overall":
            parsed = [parse_overall(text)]
        else:
            parsed = parse_nl(text, len(item.assertions))
        return sample, parsed, cached, reply

    async def judge_many(self, items: list[JudgeItem]) -> list[JudgeOutcome]:
        return list(await asyncio.gather(*(self.judge(i) for i in items)))

    async def stats(self) -> dict[str, int]:
        return dict(self.counts) | {"cached_replies": len(self._cache)}


def _supports_schema(model: str) -> bool:
    try:
        from tauray.actors.models import _litellm

        return bool(_litellm().supports_response_schema(model=model))
    except Exception:
        return False


def judge_actor_class() -> Any:
    """The :class:`JudgeHost` as a Ray actor class (async, many items at once)."""
    import ray

    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=4096)(JudgeHost)


async def call_judge(judge: Any, item: JudgeItem) -> JudgeOutcome:
    """Judge ``item`` on a :class:`JudgeHost` or on a judge actor handle alike."""
    method = judge.judge
    if hasattr(method, "remote"):
        return await method.remote(item)
    result = method(item)
    return await result if inspect.isawaitable(result) else result


# --------------------------------------------------------------------------- conversation level


def nl_signal(rows: list[NLAssertionRecord]) -> bool | None:
    """All assertions met by majority -> True; any not met -> False; otherwise unscored."""
    by_q: dict[int, bool | None] = {}
    for r in rows:
        by_q[r.assertion_index] = r.majority
    if not by_q:
        return None
    values = list(by_q.values())
    if any(v is False for v in values):
        return False
    return True if all(v is True for v in values) else None


def overall_signal(rows: list[JudgeVerdictRecord]) -> bool | None:
    return rows[-1].majority if rows else None


async def judge_result(result: ConversationResult, scenario: Any, judge_configs: list[JudgeConfig | dict[str, Any]],
                       judge: Any, *, judge_gates: bool = False) -> ConversationResult:
    """``result`` with its NL-assertion and overall verdict rows filled and its verdict recomputed.

    A conversation that ended in an error is returned unchanged. The first NL
    config gives ``signal_nl_assertion`` and the first overall config gives
    ``signal_judge_passed``. NL_ASSERTION gates only where the scenario's gating
    signals contain it; JUDGE_PASSED gates only with ``judge_gates``. ``judge``
    is a :class:`JudgeHost` or a judge actor handle; configs may be given as
    dicts (as work units carry them).

    Samples that got no reply after retries leave no row and are counted in
    ``judge_infra_errors``; when the verdict waits on them (a gating judge signal
    is left unscored), the row is an infra row, like any other outage.
    """
    judge_configs = [c if isinstance(c, JudgeConfig) else JudgeConfig.model_validate(c) for c in judge_configs]
    conv = result.conversation
    if conv.error_kind is not None or not result.messages or not judge_configs:
        return result
    transcript = render_transcript(sorted(result.messages, key=lambda m: m.seq))
    items = [i for i in (build_item(conv.run_id, conv.conversation_id, scenario, transcript, c)
                         for c in judge_configs) if i is not None]
    outcomes = await asyncio.gather(*(call_judge(judge, i) for i in items))
    by_config = {i.config.config_id: o for i, o in zip(items, outcomes)}
    overall_rows = [r for o in outcomes for r in o.overall]
    nl_rows = [r for o in outcomes for r in o.nl]
    infra = [e for o in outcomes for e in o.infra_errors]
    failure = None
    if infra:
        requested = sum(len(i.samples) for i in items)
        failure = f"{len(infra)} of {requested} samples got no reply after retries (first: {infra[0]})"
    signals = conversation_signals(conv)
    first_nl = next((c for c in judge_configs if c.kind == "nl" and c.config_id in by_config), None)
    first_overall = next((c for c in judge_configs if c.kind == "overall" and c.config_id in by_config), None)
    if first_nl is not None:
        signals["NL_ASSERTION"] = nl_signal(by_config[first_nl.config_id].nl)
    if first_overall is not None:
        signals["JUDGE_PASSED"] = overall_signal(by_config[first_overall.config_id].overall)
    all_rows: list[Any] = [*overall_rows, *nl_rows]
    costs = [r.cost_usd for r in all_rows if r.cost_usd is not None]
    updated = with_judge_verdict(conv, scenario, signals, judge_gates, failure, update=dict(
        judge_model=conv.judge_model or judge_configs[0].model.model,
        judge_prompt_tokens=conv.judge_prompt_tokens + sum(r.prompt_tokens for r in all_rows),
        judge_completion_tokens=conv.judge_completion_tokens + sum(r.completion_tokens for r in all_rows),
        judge_cost_usd=(conv.judge_cost_usd or 0.0) + sum(costs) if costs else conv.judge_cost_usd,
        judge_infra_errors=conv.judge_infra_errors + len(infra),
    ))
    return result.model_copy(update={"conversation": updated,
                                     "judge_verdicts": [*result.judge_verdicts, *overall_rows],
                                     "nl_assertions": [*result.nl_assertions, *nl_rows]})


def conversation_signals(conv: ConversationRecord) -> dict[str, bool | None]:
    """Every success signal of a conversation row, by name."""
    return {s.value: getattr(conv, f"signal_{s.value.lower()}") for s in SuccessSignal}


def with_judge_verdict(conv: ConversationRecord, scenario: Any, signals: dict[str, bool | None], judge_gates: bool,
                       failure: str | None = None, failure_kind: str = "infra",
                       update: dict[str, Any] | None = None) -> ConversationRecord:
    """``conv`` with its verdict recomputed from ``signals`` (JUDGE_PASSED gating with
    ``judge_gates``). ``failure`` says what went wrong judging it: when a judge signal the
    verdict waits on is left unscored by it, the row takes ``failure_kind`` (an outage is
    infra, left out of rates and rerun by ``--retry-errors``); otherwise it is a note."""
    from tauray.scenarios.scoring import combine

    gating = tuple(scenario.success_signals.gating)
    informational = tuple(scenario.success_signals.informational)
    if judge_gates and SuccessSignal.JUDGE_PASSED not in gating:
        gating += (SuccessSignal.JUDGE_PASSED,)
        informational = tuple(s for s in informational if s is not SuccessSignal.JUDGE_PASSED)
    verdict = combine(scenario.model_copy(update={"success_signals": SuccessSignals(
        gating=gating, informational=informational)}), signals)
    fields = dict(update or {}, success=verdict.success, success_reason=verdict.reason,
                  gating_signals=list(verdict.gating), excluded_signals=list(verdict.excluded),
                  signal_nl_assertion=signals["NL_ASSERTION"], signal_judge_passed=signals["JUDGE_PASSED"])
    if failure is not None:
        waits = verdict.success is None and any(
            signals.get(s.value) is None for s in (SuccessSignal.NL_ASSERTION, SuccessSignal.JUDGE_PASSED)
            if s.value in verdict.gating)
        if waits:
            fields.update(error_kind=failure_kind,
                          error_message=f"judging failed, and the verdict waits on it: {failure}")
        else:
            note = f"judging incomplete: {failure}; `tauray judge` on the run fills in what is missing"
            fields["error_message"] = f"{conv.error_message}; {note}" if conv.error_message else note
    return conv.model_copy(update=fields)


__all__ = ["JudgeConfig", "JudgeHost", "JudgeItem", "JudgeOutcome", "build_item", "call_judge",
           "judge_actor_class", "judge_result", "majority", "nl_signal", "overall_signal", "public_api_base",
           "conversation_signals", "scenario_context", "tally", "with_judge_verdict"]
