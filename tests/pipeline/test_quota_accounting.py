"""Quota accounting as the provider does it, and limits learned from its answers.

* OpenAI and Azure OpenAI count a request's prompt plus its ``max_tokens`` against the
  token quota when it arrives and refund nothing; Anthropic and Bedrock correct the count
  to the real output when the request ends. A book that always refunds sends more than an
  up-front provider allows.
* Every answer carries the provider's limits and what is left of them
  (``x-ratelimit-limit-*``, ``x-ratelimit-remaining-*``, ``x-ratelimit-reset-*``; Anthropic's
  ``anthropic-ratelimit-*``): a spec that declares no quota is still kept within it.

The end-to-end tests run against the test endpoint's provider-like quota over a 2 s period
and count the endpoint's refusals; the others run the book on a simulated clock.
"""

from __future__ import annotations

import asyncio

import pytest

from tauray.actors.llm import ModelSpec
from tauray.actors.quota import Limits, ModelQuota, QuotaBook, RateInfo, Settlement, rate_info, reset_gate
from tauray.endpoint.launcher import start_endpoint
from tauray.endpoint.quota import busiest_window
from tauray.pipeline.bench.quota import window_figures
from tests.pipeline.test_quota import _calls


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _settled(accounting_upfront: bool) -> float:
    quota = ModelQuota(Limits(rpm=100, tpm=10_000), clock=Clock())
    asyncio.run(quota.acquire(1, "m@", 200, 300, upfront=accounting_upfront))
    quota.settle(1, Settlement(prompt_tokens=50, completion_tokens=10, replied=True))
    return quota.tokens.used


def test_up_front_accounting_keeps_max_tokens_charged_and_settled_refunds_it():
    assert _settled(True) == 50 + 300  # the prompt as reported, max_tokens kept
    assert _settled(False) == 50 + 10  # the real usage


def test_the_provider_default_accounting_is_up_front_for_openai_and_settled_for_anthropic():
    from tauray.actors.llm.ratelimit import upfront_accounting

    assert upfront_accounting(None, "openai") and upfront_accounting(None, "azure")
    assert not upfront_accounting(None, "anthropic") and not upfront_accounting(None, "bedrock")
    assert upfront_accounting("upfront", "anthropic") and not upfront_accounting("settled", "openai")


def test_rate_limit_headers_are_read_as_openai_anthropic_and_litellm_give_them():
    openai = rate_info({"x-ratelimit-limit-requests": "5000", "x-ratelimit-limit-tokens": "160000",
                        "x-ratelimit-remaining-requests": "4999", "x-ratelimit-remaining-tokens": "159976",
                        "x-ratelimit-reset-requests": "12ms", "x-ratelimit-reset-tokens": "6m0s"})
    assert openai == RateInfo(limit_requests=5000, limit_tokens=160000, remaining_requests=4999,
                              remaining_tokens=159976, reset_requests_s=0.012, reset_tokens_s=360.0)
    anthropic = rate_info({"llm_provider-anthropic-ratelimit-requests-limit": "50",
                           "llm_provider-anthropic-ratelimit-requests-remaining": "49",
                           "llm_provider-anthropic-ratelimit-requests-reset": "2026-01-01T00:00:30Z",
                           "llm_provider-anthropic-ratelimit-tokens-limit": "30000"}, now=1767225600.0)
    assert (anthropic.limit_requests, anthropic.remaining_requests, anthropic.limit_tokens) == (50, 49, 30000)
    assert anthropic.reset_requests_s == 30.0
    assert rate_info({"llm_provider-x-ratelimit-limit-tokens": "-1", "content-type": "application/json"}) is None
    assert rate_info({}) is None and rate_info(None) is None


def test_a_limit_nobody_declared_is_learned_from_the_first_answer_and_kept():
    """Nothing declared: the first call goes alone (its answer says the limits), the others
    wait for it; then the learned rpm=2 meters them (the next one is paced 30 s later)."""
    clock = Clock()
    quota = ModelQuota(Limits(), clock=clock, period=60.0)

    async def main() -> list[int]:
        admitted: list[int] = []

        async def call(n: int) -> None:
            await quota.acquire(n, "m@", 40, None)
            admitted.append(n)

        tasks = [asyncio.create_task(call(n)) for n in range(1, 5)]
        await asyncio.sleep(0.05)
        first = list(admitted)
        quota.settle(1, Settlement(prompt_tokens=10, completion_tokens=2, replied=True,
                                   rate=RateInfo(limit_requests=2, remaining_requests=1)))
        await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        return first + [0] + admitted

    order = asyncio.run(main())
    assert order == [1, 0, 1]  # the probe alone until it answered, then the others wait for the quota
    assert quota.stats()["learned_rpm"] == 2 and quota.requests.used == 1
    assert quota.wait(clock.now, 0) > 25


def test_a_model_without_quota_or_headers_is_unmetered_after_its_first_answer():
    quota = ModelQuota(Limits(), clock=Clock())
    first = asyncio.run(quota.acquire(1, "m@", 40, None))
    quota.settle(1, Settlement(prompt_tokens=10, completion_tokens=2, replied=True))
    second = asyncio.run(quota.acquire(2, "m@", 40, None))
    assert first.metered and not second.metered and quota.headers is False


def test_a_remaining_budget_below_the_books_count_is_added_to_it():
    """Another client of the account (or a count the book got wrong) spent 400 tokens the
    book never admitted: the answer's remaining says so, and the book counts them."""
    quota = ModelQuota(Limits(rpm=100, tpm=1000), clock=Clock())
    asyncio.run(quota.acquire(1, "m@", 100, 50, upfront=True))
    quota.settle(1, Settlement(prompt_tokens=50, completion_tokens=5, replied=True,
                               rate=RateInfo(limit_tokens=1000, remaining_tokens=500)))
    assert quota.tokens.used == 500 and quota.corrections == 1


def test_a_stop_refuses_every_later_call_without_admitting_it():
    book = QuotaBook(clock=Clock())
    book.stop("m@", "m: spent")
    ticket = asyncio.run(book.acquire("m@", Limits(), 40, None))
    assert ticket.stopped == "m: spent" and book.stats()["m@"]["admitted"] == 0


def test_bench_figures_count_what_the_endpoint_charged():
    log = [[0.0, "m", 10, 2, 200, 266], [1.0, "m", 10, 0, 429, 266], [2.0, "m", 10, 2, 200, 266]]
    figures = window_figures(log, rpm=None, tpm=1000)
    assert figures["busiest_window_tokens"] == 3 * 266 and figures["max_window_tpm_ratio"] == 0.798
    old = [[0.0, "m", 10, 2, 200], [2.0, "m", 10, 2, 200]]  # a log written before the charged column
    assert window_figures(old, rpm=None, tpm=1000)["busiest_window_tokens"] == 24


# --------------------------------------------------------------------------- against the endpoint

@pytest.fixture()
def short_book():
    reset_gate(QuotaBook(period=2.0))  # the process's own book, metering over the endpoint's 2 s period
    yield
    reset_gate()


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False], ids=["declared", "learned"])
def test_an_up_front_provider_refuses_nothing(declared, short_book):
    """max_tokens=100 against tpm=500 counted up front: at most 4 calls a period. A book that
    refunds the unused max_tokens (the replies use about 12) lets far more through and the
    endpoint refuses them; declared or learned from the headers, none is refused now."""
    with start_endpoint(quota_tpm=500, quota_period_s=2.0, quota_accounting="upfront") as ep:
        spec = ModelSpec(model="openai/scripted-agent-quiet", api_base=ep.base_url, num_retries=0,
                         rate_limit_wait=60, max_tokens=100, **({"tpm": 500} if declared else {}))
        replies = _calls(spec, 12, warm=True)
        quota = ep.quota()
    assert all(not isinstance(r, Exception) for r in replies), replies
    rows = [r for r in quota["log"] if r[1] == "scripted-agent-quiet"]
    assert quota["refused"] == 0 and len(rows) == 12
    assert busiest_window(rows, period=2.0)[1] <= 500


@pytest.mark.slow
def test_limits_learned_from_headers_keep_an_undeclared_spec_within_the_quota(short_book):
    """The same burst that the endpoint refuses 6 times when nobody knows its rpm=3
    (test_quota's control) is refused 0 times when its answers' headers are read."""
    with start_endpoint(quota_rpm=3, quota_period_s=2.0) as ep:
        replies = _calls(ModelSpec(model="openai/scripted-agent-quiet", api_base=ep.base_url, num_retries=0,
                                   rate_limit_wait=30), 9, warm=True)
        refused = ep.quota()["refused"]
    assert all(not isinstance(r, Exception) for r in replies)
    assert refused == 0
