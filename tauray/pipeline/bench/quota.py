"""``tauray bench quota``: a sweep against a provider-like quota, and how well tauray keeps to it.

The local test endpoint enforces a quota per model (requests and tokens per rolling
minute, a request's ``max_tokens`` refunded when it is answered or, ``accounting="upfront"``,
kept as OpenAI counts it; over it, 429 with or without ``retry-after``; OpenAI's
``x-ratelimit-*`` headers on every answer) and logs every arrival. One model,
``openai/all-roles``, plays agent, user simulator and judge, with the same ``rpm``/``tpm``
in its spec (or none: ``declared=False``, the limits learned from the headers) and
optionally a ``max_tokens``, over several hosts per role and several coordinators, so every
caller of the model must share one quota. From the endpoint's log (tokens: what the
endpoint charged):

* ``max_window_rpm_ratio`` / ``max_window_tpm_ratio``: the busiest 60 s of what tauray
  *sent* (refused requests included) over the quota; at most 1 means it never overshot;
* ``utilisation``: tokens the endpoint served during the steady phase (from one window
  after the first call to one window before the last) over what the quota allowed then;
* ``endpoint_429s``, and from the tables ``infra_rows`` and ``lost`` (units without a row).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tauray.endpoint import start_endpoint
from tauray.endpoint.quota import PERIOD_S, Accounting, busiest_window, charged
from tauray.pipeline.config import SweepConfig
from tauray.pipeline.driver import execute
from tauray.scenarios import select_scenarios


def quota_sweep(base_url: str, rpm: int | None, tpm: int | None, conversations: int, hosts: int,
                coordinators: int, domain: str, max_tokens: int | None = None,
                accounting: Accounting | None = None) -> Any:
    """The benchmark's sweep: one model in every role, ``hosts`` hosts per role (``rpm`` and
    ``tpm`` None: the spec declares no quota; ``accounting``: the spec says how the endpoint
    counts, as a user who knows the provider would; None: the provider's default, up front for
    ``openai/``)."""

    scenarios = len(select_scenarios(None, domain=domain))
    spec = {"model": "openai/all-roles", "api_base": base_url, "concurrency": 256,
            **({"token_accounting": accounting} if accounting else {}),
            **({"rpm": rpm} if rpm else {}), **({"tpm": tpm} if tpm else {}),
            **({"max_tokens": max_tokens} if max_tokens else {})}
    return SweepConfig.model_validate({
        "name": "quota-bench", "models": {"q": spec}, "agents": ["q"], "users": ["q"],
        "judges": [{"model": "q", "prompt": "overall-plain"}],
        "scenarios": [{"domain": domain}], "trials": max(1, -(-conversations // scenarios)),
        "max_in_flight": 256,
        "cluster": {"coordinators": coordinators, "agent_hosts": hosts, "user_hosts": hosts}})


def window_figures(log: list[list[Any]], rpm: int | None, tpm: int | None, period: float = PERIOD_S) -> dict[str, Any]:
    """The figures of an endpoint quota log (see the module docs)."""
    rows = sorted(log, key=lambda r: r[0])
    if not rows:
        return {"calls": 0}
    most_requests, most_tokens = busiest_window(rows, period)
    first, last = rows[0][0], rows[-1][0]
    steady = (first + period, last - period)
    served = [r for r in rows if r[4] == 200]
    out: dict[str, Any] = {
        "calls": len(rows), "served": len(served), "seconds": round(last - first, 1),
        "busiest_window_requests": most_requests, "busiest_window_tokens": most_tokens,
        "max_window_rpm_ratio": round(most_requests / rpm, 4) if rpm else None,
        "max_window_tpm_ratio": round(most_tokens / tpm, 4) if tpm else None,
        "steady_phase_s": round(max(0.0, steady[1] - steady[0]), 1),
    }
    if steady[1] - steady[0] >= period / 2:
        span = steady[1] - steady[0]
        inside = [r for r in served if steady[0] <= r[0] < steady[1]]
        if tpm:
            out["utilisation"] = round(sum(charged(r) for r in inside) / (tpm * span / period), 4)
        if rpm:
            out["request_utilisation"] = round(len(inside) / (rpm * span / period), 4)
    else:
        out["utilisation"] = None  # the run was too short to have a steady phase
    return out


def run_quota_bench(rpm: int | None, tpm: int | None, conversations: int, latency: float = 0.5,
                    retry_after: bool = True, hosts: int = 2, coordinators: int = 2, domain: str = "mock",
                    progress: bool = False, log_file: Path | None = None, max_tokens: int | None = None,
                    accounting: Accounting = "settled", declared: bool = True,
                    headers: bool = True) -> dict[str, Any]:
    """Run the sweep against the quota-enforcing endpoint and return the figures."""

    with tempfile.TemporaryDirectory(prefix="tauray-quota-bench-") as tmp, \
            start_endpoint(latency=latency, latency_jitter=0.2, quota_rpm=rpm, quota_tpm=tpm,
                           quota_retry_after=retry_after, quota_accounting=accounting, quota_headers=headers) as ep:
        cfg = quota_sweep(ep.base_url, rpm if declared else None, tpm if declared else None, conversations, hosts,
                          coordinators, domain, max_tokens, accounting)
        summary = execute(cfg, out=Path(tmp) / "run", probe=False, progress=progress)
        quota = ep.quota()
    if log_file is not None:  # every arrival: [t, model, prompt tokens, completion tokens, status, charged]
        Path(log_file).write_text("\n".join(json.dumps(r) for r in quota["log"]) + "\n")
    figures = window_figures(quota["log"], rpm, tpm)
    return {"rpm": rpm, "tpm": tpm, "declared": declared, "accounting": accounting, "headers": headers,
            "max_tokens": max_tokens, "latency_s": latency, "retry_after": retry_after, "domain": domain,
            "hosts_per_role": hosts, "coordinators": coordinators, "conversations": summary.units,
            "rows": summary.rows, "lost": summary.units - summary.rows, "infra_rows": summary.infra_errors,
            "endpoint_429s": quota["refused"], "sweep_seconds": round(summary.seconds, 1), **figures}


__all__ = ["quota_sweep", "run_quota_bench", "window_figures"]
