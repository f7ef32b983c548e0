"""One quota per provider model (tauray.actors.quota), the endpoint's provider-like quota,
and the client waiting out 429s.

Provider rules these tests check (from the providers' rate-limit documentation):

* OpenAI and Anthropic meter requests and tokens per minute over a rolling window, input
  and output tokens both counting; OpenAI counts ``max_tokens`` against the quota when a
  request sets it.
* Anthropic replenishes capacity continuously (a token bucket), and OpenAI may enforce a
  per-minute quota over shorter slices: a minute's quota sent in its first second is refused.
* Over quota the answer is HTTP 429, usually with ``retry-after`` (seconds, or an HTTP date;
  OpenAI also sends ``retry-after-ms``); some providers send none.
"""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest

from tauray.actors.llm import ModelCallError, ModelSpec
from tauray.actors.llm.client import ModelClient
from tauray.actors.llm.ratelimit import backoff_s, retry_after_s
from tauray.actors.quota import Limits, ModelQuota, QuotaBook, Settlement, Window, shared_limits, with_quota
from tauray.endpoint.launcher import start_endpoint
from tauray.endpoint.quota import EndpointQuota, busiest_window


def _admit_all(window: Window, amounts: list[float]) -> list[float]:
    """Admission times of ``amounts`` sent at once, on a simulated clock."""
    now, times = 0.0, []
    for amount in amounts:
        now += window.wait(now, amount)
        window.take(now, amount)
        times.append(now)
    return times


def _busiest(times: list[float], amounts: list[float], period: float) -> float:
    return max(sum(a for t2, a in zip(times, amounts) if t <= t2 < t + period) for t in times)


def test_a_burst_never_overshoots_the_token_quota():
    """The issue's case: 40 calls of 1,845 tokens at once against tpm=5000 (the Router sent
    73,800 tokens, 14.8x). Admitted before sending, no 60 s window holds more than 5000."""
    window = Window(5000)
    amounts = [1845.0] * 40
    times = _admit_all(window, amounts)
    assert _busiest(times, amounts, 60.0) <= 5000
    # and it is spent as fully as a rolling window allows: two such calls per minute
    assert times[-1] < 20 * 60


def test_requests_are_paced_not_sent_as_a_minute_in_one_second():
    window = Window(600)  # 10 per second
    times = _admit_all(window, [1.0] * 100)
    first_second = sum(1 for t in times if t < 1.0)
    assert first_second <= 600 * 0.05 + 10  # the burst allowance plus one second of rate
    assert _busiest(times, [1.0] * 100, 60.0) <= 600


def test_a_settled_reservation_frees_the_rest_and_a_larger_one_takes_more():
    window = Window(1000)
    entry = window.take(0.0, 800)
    assert window.wait(0.0, 500) > 0
    window.settle(entry, 300)  # the call used less than was reserved
    assert window.used == 300
    entry2 = window.take(window.wait(0.0, 500), 500)
    window.settle(entry2, 900)  # more than reserved: counted, later calls wait for it
    assert window.used == 1000 + 200


def test_quota_estimates_learn_from_usage():
    quota = ModelQuota(Limits(rpm=1000, tpm=100_000))
    prompt, reserve = quota.estimate(4000, None)
    assert prompt == 2000 and reserve == 1024  # conservative before any usage report
    ticket = asyncio.run(quota.acquire(1, "m@", 4000, None))
    assert (ticket.prompt_tokens, ticket.reserved) == (2000, 1024)
    quota.settle(1, Settlement(prompt_tokens=1000, completion_tokens=40, replied=True, delay=2.0))
    assert quota.estimate(4000, None) == (1000, 40)
    # the call went out up to 2 s after its admission: the log holds it 60 + 2 s
    assert quota.tokens.hold == 62.0
    assert quota.estimate(4000, 256) == (1000, 256)  # max_tokens is reserved when set (OpenAI counts it)
    assert quota.tokens.used == 1040


@pytest.mark.slow  # about 3 s on 2 cores: too long for the fast loop
def test_one_book_for_every_caller_of_a_model_admits_in_order_within_the_quota():
    async def main() -> list[float]:
        book = QuotaBook(period=1.0)
        start = time.monotonic()
        times: list[float] = []

        async def call(i: int) -> None:
            await book.acquire("m@", Limits(rpm=5), 0)
            times.append(time.monotonic() - start)

        await asyncio.gather(*(call(i) for i in range(12)))
        return times

    times = asyncio.run(main())
    assert len(times) == 12
    assert max(sum(1 for t2 in times if t <= t2 < t + 1.0) for t in times) <= 5


def test_the_tightest_limit_of_any_role_applies_to_all_roles_of_the_model():
    specs = [{"model": "openai/m", "api_base": "http://h/v1", "rpm": 100},
             {"model": "openai/m", "api_base": "http://h/v1/", "rpm": 60, "tpm": 9000},
             {"model": "openai/m", "api_base": "http://other/v1", "rpm": 5},
             {"model": "openai/n"}]
    limits = shared_limits(specs)
    assert limits["openai/m@http://h/v1"] == Limits(rpm=60, tpm=9000)
    judge = with_quota({"model": "openai/m", "api_base": "http://h/v1"}, limits)  # sets no limit itself
    assert (judge["rpm"], judge["tpm"]) == (60, 9000)
    assert with_quota({"model": "openai/n"}, limits) == {"model": "openai/n"}


def test_the_cluster_shares_one_book(ray_local):
    """Two actors on Ray (two processes) draw on one quota: together they get the burst
    allowance once, not once each."""
    import ray

    from tauray.actors import quota

    @ray.remote(num_cpus=0)
    class Caller:
        async def burst(self, n: int) -> list[float]:
            from tauray.actors.quota import Limits, Settlement, gate

            g, out = gate(), []
            for _ in range(n):
                ticket = await g.acquire("shared@test", Limits(rpm=600), 0, None)
                out.append(time.time())
                g.settle(ticket, Settlement())
            return out

    book = quota.quota_actor()
    try:
        callers = [Caller.remote(), Caller.remote()]
        ray.get([c.__ray_ready__.remote() for c in callers])
        times = sorted(sum(ray.get([c.burst.remote(40) for c in callers]), []))
        # One book: 30 at once (5% of 600), then 10 a second, so the 80 calls span 5 s and no
        # half second holds more than 30 + 5. A book per process: each caller's 40 in 1 s.
        assert times[-1] - times[0] >= 4.5
        assert max(sum(1 for t2 in times if t <= t2 < t + 0.5) for t in times) <= 36
        assert ray.get(book.stats.remote())["shared@test"]["admitted"] == 80
    finally:
        ray.kill(book)
        quota.forget_actor()  # the next driver creates a fresh one


# --------------------------------------------------------------------------- the endpoint's quota


def test_endpoint_quota_refuses_over_rpm_and_tpm_with_or_without_retry_after():
    q = EndpointQuota(rpm=2, tpm=None, send_headers=False)
    assert q.admit("m", 10, None)[0] is not None and q.admit("m", 10, None)[0] is not None
    row, wait = q.admit("m", 10, None)
    assert row is None and 59 < wait <= 60
    assert q.headers("m", wait) == {"retry-after": "60"}
    assert q.admit("other", 10, None)[0] is not None  # per model
    assert EndpointQuota(rpm=1, tpm=None, retry_after=False, send_headers=False).headers("m", 3.0) == {}

    t = EndpointQuota(rpm=None, tpm=100)
    row, _ = t.admit("m", 30, 50)  # max_tokens counts up front
    assert row is not None and t.admit("m", 30, None)[0] is None
    t.settle(row, 10)  # answered with 10 completion tokens: 40 used
    assert t.admit("m", 30, None)[0] is not None
    rows = t.snapshot()["log"]
    assert [r[4] for r in rows] == [200, 429, 200] and rows[0][2:6] == [30, 10, 200, 40]
    assert busiest_window(rows) == (3, 40 + 30 + 30)


# --------------------------------------------------------------------------- 429s waited out


class _Limited(Exception):
    status_code = 429

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("rate limited")
        self.litellm_response_headers = headers


def test_retry_after_is_read_in_its_three_forms():
    assert retry_after_s(_Limited({"retry-after": "7"})) == 7.0
    assert retry_after_s(_Limited({"Retry-After-Ms": "1500"})) == 1.5
    now = time.time()
    assert 28 <= retry_after_s(_Limited({"retry-after": formatdate(now + 30, usegmt=True)}), now) <= 31
    assert retry_after_s(_Limited({})) is None
    assert [round(backoff_s(a, rng=type("R", (), {"random": lambda self: 0.5})()), 3) for a in range(7)] == \
        [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def _spec(base_url: str, **kw) -> ModelSpec:
    return ModelSpec(model="openai/scripted-agent-quiet", api_base=base_url, num_retries=0, **kw)


def _calls(spec: ModelSpec, n: int, warm: bool = False) -> list:
    """``n`` concurrent calls through one client; with ``warm``, one call on another model (another
    quota) first: litellm's first call in a process spends a while between admission and
    sending, more than a 2 s quota period allows for."""

    async def main() -> list:
        if warm:
            other = ModelClient(spec.model_copy(update={"model": "openai/scripted-user", "tpm": None}))
            await other.complete([{"role": "user", "content": "hi"}])
            await other.aclose()
        client = ModelClient(spec)
        try:
            return await asyncio.gather(*(client.complete([{"role": "user", "content": f"hi {i}"}]) for i in range(n)),
                                        return_exceptions=True)
        finally:
            await client.aclose()

    return asyncio.run(main())


@pytest.mark.slow
@pytest.mark.parametrize("retry_after", [True, False])
def test_a_quota_dip_is_waited_out_not_turned_into_infra_errors(retry_after):
    # no rate-limit headers: the client knows nothing of the quota, only its 429s
    with start_endpoint(quota_rpm=2, quota_period_s=2.0, quota_retry_after=retry_after, quota_headers=False) as ep:
        replies = _calls(_spec(ep.base_url, rate_limit_wait=30), 5)
        refused = ep.quota()["refused"]
    assert all(not isinstance(r, Exception) for r in replies), replies
    assert refused >= 3 and sum(r.retries for r in replies) == refused


@pytest.mark.slow
def test_the_wait_is_bounded_and_then_the_call_is_an_infra_error():
    with start_endpoint(quota_rpm=1, quota_period_s=600.0, quota_headers=False) as ep:
        first, second = _calls(_spec(ep.base_url, rate_limit_wait=0), 2)
        requests = ep.stats()["requests"]
    errors = [r for r in (first, second) if isinstance(r, ModelCallError)]
    assert len(errors) == 1 and errors[0].kind == "infra" and errors[0].status_code == 429
    assert requests == 2  # rate_limit_wait=0: no retry of the refused call


@pytest.mark.slow
@pytest.mark.parametrize("metered", [True, False])
def test_a_spec_with_a_quota_is_admitted_before_sending_so_the_endpoint_refuses_nothing(metered):
    """No Ray here: the process's own book meters the client (over a 2 s period, to keep
    the test short). Unmetered, the same burst is refused by the endpoint: the control."""
    from tauray.actors.quota import reset_gate

    reset_gate(QuotaBook(period=2.0))
    try:
        with start_endpoint(quota_rpm=3, quota_period_s=2.0, quota_headers=False) as ep:
            replies = _calls(_spec(ep.base_url, rate_limit_wait=30, **({"rpm": 3} if metered else {})), 9)
            refused = ep.quota()["refused"]
    finally:
        reset_gate()
    assert all(not isinstance(r, Exception) for r in replies)
    assert (refused == 0) if metered else (refused >= 6)


def test_a_cap_that_binds_before_the_quota_is_named(ray_local, tmp_path):
    """max_in_flight=1 against a quota far above what one conversation at a time can use:
    the run says the cap, not the quota, bound it; when the quota binds too, no warning."""
    from tauray.pipeline.config import SweepConfig
    from tauray.pipeline.driver import execute

    def run(max_in_flight: int, rpm: int, name: str) -> list[str]:
        notes: list[str] = []
        with start_endpoint() as ep:
            cfg = SweepConfig.model_validate({
                "name": name, "models": {"a": {"model": "openai/scripted-agent", "api_base": ep.base_url,
                                               "rpm": rpm}},
                "agents": ["a"], "users": ["scripted"], "scenarios": [{"domain": "mock", "limit": 4}],
                "max_in_flight": max_in_flight})
            execute(cfg, out=tmp_path / name, probe=False, progress=False, notes=notes.append)
        return [n for n in notes if "bound this run before the quota" in n]

    warned = run(1, 60_000, "capped")
    assert len(warned) == 1 and "max_in_flight=1" in warned[0] and "openai/scripted-agent@" in warned[0]
    assert run(1, 30, "quota-bound") == []  # the same cap, but a call every 2 s: the quota made calls wait
