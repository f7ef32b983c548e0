"""One rate limit per provider model across the cluster.

A provider meters a model's quota per account, in requests and tokens per minute, over
every call made with it: the agent, the user simulator and the judge of every host and
coordinator on every node. So the quota lives in one place, a
:class:`~tauray.actors.quota.book.QuotaBook` (one named Ray actor per cluster, or one object
per process without Ray), keyed by model and API base, and every
:class:`~tauray.actors.llm.client.ModelClient` asks it for admission right before it sends a
call, whether or not its spec declares ``rpm``/``tpm``.

Admission is decided before the call is sent, never counted after the fact:

* requests: one per call;
* tokens: the prompt, estimated from its size in characters with the tokens-per-character
  ratio the model's own usage reports have shown (conservative until the first report),
  plus a reservation for the completion (``max_tokens`` when the spec sets it, else the
  largest completion seen lately). When the call returns, the reservation is settled as the
  provider settles it: with the real usage (``settled``), or, where the provider counts
  prompt + ``max_tokens`` on arrival and refunds nothing (``upfront``, OpenAI's way), the
  prompt corrected and ``max_tokens`` kept;
* two rules per dimension must both allow it: no 60 s window may hold more than the quota
  (a log of admissions, so the provider's own per-minute count can never be exceeded by
  what was admitted), and calls are spread at the quota's rate with a small burst
  allowance (GCRA pacing), so a sweep's opening wave does not spend a minute's quota in
  its first second, which providers that meter in shorter slices refuse.

The provider's answers teach the book (:mod:`.headers`): a limit no spec declared comes
from their ``x-ratelimit-limit-*`` (or Anthropic's ``anthropic-ratelimit-*``) headers, and
a remaining budget below what the book counted is added to its count. A model with no
declared quota sends one call alone until its answer says whether it reports limits (the
probe); if its answers carry no such headers, it is not metered at all.

A 429 or an overloaded answer pauses the whole model (every caller, every node) for its
``retry-after`` or, without one, for an exponential backoff; a spent quota or spend cap
stops the model's calls; see :meth:`~tauray.actors.llm.client.ModelClient.complete`.
"""

from tauray.actors.quota.book import (
    ACTOR_NAME,
    Gate,
    QuotaBook,
    forget_actor,
    gate,
    quota_actor,
    quota_key,
    reset_gate,
    shared_limits,
    with_quota,
)
from tauray.actors.quota.headers import RateInfo, rate_info, reset_seconds, response_headers
from tauray.actors.quota.model import Limits, ModelQuota, Settlement, Ticket
from tauray.actors.quota.window import Window

__all__ = ["ACTOR_NAME", "Gate", "Limits", "ModelQuota", "QuotaBook", "RateInfo", "Settlement", "Ticket", "Window",
           "forget_actor", "gate", "quota_actor", "quota_key", "rate_info", "reset_gate", "reset_seconds",
           "response_headers", "shared_limits", "with_quota"]
