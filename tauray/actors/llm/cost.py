"""Whether litellm can price a model, asked the way litellm prices a reply.

litellm resolves prices by its own rules (provider prefixes, Bedrock's ``us.``/``global.``
cross-region ids, Vertex's Gemini entries filed under another provider label), so tauray
asks :func:`litellm.cost_per_token` and keeps no rule of its own. One trap: a Router
registers an empty price entry for every deployment it serves, after which litellm prices
an unknown model at $0. A model is therefore priced only when litellm charges something for
a thousand tokens each way; a free model needs an explicit ``price`` (0 is allowed there).

A missing price must never count as $0 against a budget: :func:`unpriced_models` names the
models a budgeted sweep cannot account for, for the driver to refuse before it starts.
"""

from __future__ import annotations

from collections.abc import Iterable

from tauray.actors.llm.providers import litellm_module
from tauray.scenarios.conventions import REFERENCE_POLICIES


def litellm_price(model: str) -> tuple[float, float] | None:
    """USD for 1,000 prompt and 1,000 completion tokens by litellm's table; None when it has no price."""
    litellm = litellm_module()
    try:
        prompt, completion = litellm.cost_per_token(model=model, prompt_tokens=1000, completion_tokens=1000)
    except Exception:
        return None
    if not (prompt or 0) + (completion or 0) > 0:
        return None
    return float(prompt), float(completion)


def is_priced(model: str) -> bool:
    """Whether litellm prices ``model`` (see the module note on $0)."""
    return litellm_price(model) is not None


def unpriced_models(models: Iterable[tuple[str, str, bool]]) -> list[str]:
    """The models (``(name, litellm model string, has explicit price)``) a budget cannot count.

    Reference policies and models with an explicit price are fine; any other model litellm
    does not price is named, as ``name (model)``, in the order given, each once.
    """

    out: list[str] = []
    for name, model, has_price in models:
        label = f"{name} ({model})" if name != model else model
        if has_price or model in REFERENCE_POLICIES or label in out or is_priced(model):
            continue
        out.append(label)
    return out


def budget_refusal(models: Iterable[tuple[str, str, bool]], budget_usd: float | None) -> str | None:
    """The one line a sweep with ``budget_usd`` is refused with when a model cannot be priced; None if fine."""
    if budget_usd is None:
        return None
    missing = unpriced_models(models)
    if not missing:
        return None
    return (f"budget_usd={budget_usd} is set but litellm has no price for {', '.join(missing)}: "
            "give each a price (input_per_mtok, output_per_mtok) in [models.NAME.price], a speech model "
            "usd_per_minute or usd_per_million_chars, or drop the budget")


__all__ = ["budget_refusal", "is_priced", "litellm_price", "unpriced_models"]
