"""Meta-evaluation: how far each judge config can be trusted, from the tables alone.

Telecom conversations carry an objective ground truth: whether the final
state met the scenario's predicates (``signal_db_state_assertion``). Each
overall-verdict judge config is scored against it per conversation, using the
majority over the config's scored samples (a tie or no scored sample is
*unscored*). Samples are grouped by (conversation, transcript hash), as judging
keys them: samples of two renderings of one conversation are never merged into
one majority; where a conversation was judged under several renderings, the
rendering judged last stands for it against the ground truth.

* n: conversations with a ground truth and a scored judge verdict;
* accuracy, sensitivity (judge passes | truly successful), specificity (judge
  fails | truly failed), each with a 95% Wilson score interval;
* Cohen's kappa between judge and ground truth, with a 95% interval that does
  not collapse when observed agreement is 0 or 1 (where every plug-in standard
  error, the Fleiss–Cohen–Everitt one included, is zero): the hull of a
  percentile bootstrap over conversations (fixed seed) and the Wilson interval
  of the observed agreement mapped onto the kappa scale at the observed chance
  agreement;
* unscored_rate: share of conversations with a ground truth whose verdict is
  unscored; unscored items are left out of every other figure, never counted
  as a pass or a fail;
* self_consistency: mean share of scored samples agreeing with the majority,
  over items with at least two scored samples, with the share of samples that
  were unscored beside it (``sample_unscored_rate``): agreement among the
  samples that answered says nothing about the ones that did not.

Across configs on the same conversations: Fleiss' kappa over the conversations
every config scored, and for each pair a flip matrix (pass/fail/unscored of one
against the other), their raw agreement and Cohen's kappa.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tauray.actors.judge import majority
from tauray.results.readers import conversations_df, judge_verdicts_df, nl_verdicts_df

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """95% Wilson score interval for ``successes`` out of ``n``; None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


BOOTSTRAP_SEED = 20240601
BOOTSTRAP_SAMPLES = 2000


def _kappas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cohen's kappa per row of two (samples × items) boolean arrays; nan where it is undefined."""
    po = (a == b).mean(axis=1)
    pa, pb = a.mean(axis=1), b.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1.0, (po - pe) / (1 - pe), np.nan)


def cohen_kappa(a: list[bool], b: list[bool], z: float = Z95, n_boot: int = BOOTSTRAP_SAMPLES,
                seed: int = BOOTSTRAP_SEED) -> tuple[float | None, tuple[float, float] | None]:
    """Cohen's kappa of two binary raters over aligned items, and a 95% interval.

    The interval is the hull of (1) a percentile bootstrap over items (fixed
    seed, so a report is reproducible), which carries the uncertainty of the
    chance agreement, and (2) the Wilson interval of the observed agreement
    mapped onto the kappa scale at the observed chance agreement, which keeps
    its width when agreement is perfect or nil (2 items in perfect agreement
    are weak evidence, not kappa = 1 exactly).
    """
    n = len(a)
    if n == 0 or n != len(b):
        return None, None
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    [kappa] = _kappas(x[None, :], y[None, :])
    if math.isnan(kappa):
        return None, None  # both raters constant and equal: kappa is undefined
    pa, pb = x.mean(), y.mean()
    pe = float(pa * pb + (1 - pa) * (1 - pb))
    lo_po, hi_po = wilson(int((x == y).sum()), n, z)  # type: ignore[misc]
    lo, hi = (lo_po - pe) / (1 - pe), (hi_po - pe) / (1 - pe)
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    boot = _kappas(x[idx], y[idx])
    boot = boot[~np.isnan(boot)]
    if boot.size:
        tail = (1 - math.erf(z / math.sqrt(2))) / 2 * 100
        lo, hi = min(lo, float(np.percentile(boot, tail))), max(hi, float(np.percentile(boot, 100 - tail)))
    return float(kappa), (max(-1.0, lo), min(1.0, hi))


def fleiss_kappa(ratings: list[list[bool]]) -> float | None:
    """Fleiss' kappa for items each rated pass/fail by the same number (>= 2) of raters."""
    if not ratings or len(ratings[0]) < 2 or any(len(r) != len(ratings[0]) for r in ratings):
        return None
    n, items = len(ratings[0]), len(ratings)
    per_item = [(sum(r), n - sum(r)) for r in ratings]
    p_pass = sum(c[0] for c in per_item) / (items * n)
    pe = p_pass ** 2 + (1 - p_pass) ** 2
    p_bar = sum((c[0] ** 2 + c[1] ** 2 - n) / (n * (n - 1)) for c in per_item) / items
    if pe >= 1.0:
        return None
    return (p_bar - pe) / (1 - pe)


def binary_metrics(judge: list[bool], truth: list[bool]) -> dict[str, Any]:
    """Agreement of scored judge verdicts with the ground truth (both lists aligned)."""
    tp = sum(j and t for j, t in zip(judge, truth))
    tn = sum((not j) and (not t) for j, t in zip(judge, truth))
    fp = sum(j and not t for j, t in zip(judge, truth))
    fn = sum((not j) and t for j, t in zip(judge, truth))
    n = len(judge)
    kappa, kappa_ci = cohen_kappa(judge, truth)

    def rate(k: int, m: int) -> float | None:
        return k / m if m else None

    return {
        "n": n, "tp": tp, "tn": tn, "fp": fp, "fn": fn,
        "accuracy": rate(tp + tn, n), "accuracy_ci": wilson(tp + tn, n),
        "sensitivity": rate(tp, tp + fn), "sensitivity_ci": wilson(tp, tp + fn),
        "specificity": rate(tn, tn + fp), "specificity_ci": wilson(tn, tn + fp),
        "kappa": kappa, "kappa_ci": kappa_ci,
        "judge_pass_rate": rate(tp + fp, n), "truth_pass_rate": rate(tp + fn, n),
    }


def _label(v: bool | None) -> str:
    return "unscored" if v is None else ("pass" if v else "fail")


def flip_matrix(a: dict[str, bool | None], b: dict[str, bool | None]) -> dict[str, dict[str, int]]:
    """Counts of (verdict of a) -> (verdict of b) over the items both judged."""
    out = {x: {y: 0 for y in ("pass", "fail", "unscored")} for x in ("pass", "fail", "unscored")}
    for key in a.keys() & b.keys():
        out[_label(a[key])][_label(b[key])] += 1
    return out


def _verdicts(df: pd.DataFrame, value: str, keys: list[str]) -> dict[tuple, list[bool | None]]:
    """Sample verdicts per item (the last row wins for a repeated sample)."""
    out: dict[tuple, dict[int, bool | None]] = defaultdict(dict)
    for row in df[[*keys, "sample_index", value]].itertuples(index=False):
        *key, sample, v = row
        out[tuple(key)][int(sample)] = None if pd.isna(v) else bool(v)
    return {k: list(v.values()) for k, v in out.items()}


def _latest_rendering(df: pd.DataFrame) -> dict[str, str]:
    """conversation -> the transcript hash it was judged under last (by verdict time)."""
    last = df.groupby(["conversation_id", "transcript_hash"], sort=False)["created_at"].max().reset_index()
    last = last.sort_values("created_at", kind="stable").drop_duplicates("conversation_id", keep="last")
    return dict(zip(last["conversation_id"], last["transcript_hash"]))


def _consistency(samples: list[list[bool | None]]) -> float | None:
    shares = [majority(s)[1] for s in samples if sum(v is not None for v in s) >= 2]
    shares = [x for x in shares if x is not None]
    return sum(shares) / len(shares) if shares else None


def judge_report(run_dir: Path | str) -> dict[str, Any]:
    """The meta-evaluation of every judge config stored in ``run_dir``."""
    run_dir = Path(run_dir)
    conv = conversations_df(run_dir, columns=["conversation_id", "signal_db_state_assertion", "error_kind"])
    truth = {c: bool(t) for c, t, e in conv.itertuples(index=False) if pd.isna(e) and not pd.isna(t)}
    jv = judge_verdicts_df(run_dir)
    judges: list[dict[str, Any]] = []
    item_verdicts: dict[str, dict[str, bool | None]] = {}
    for config_id, g in jv.groupby("judge_config_id", sort=False):
        first = g.iloc[0]
        samples = _verdicts(g, "passed", ["conversation_id", "transcript_hash"])
        latest = _latest_rendering(g)
        majorities = {c: majority(samples[(c, th)])[0] for c, th in latest.items()}
        item_verdicts[config_id] = majorities
        with_truth = [c for c in majorities if c in truth]
        scored = [c for c in with_truth if majorities[c] is not None]
        metrics = binary_metrics([bool(majorities[c]) for c in scored], [truth[c] for c in scored])
        judges.append({
            "judge_config_id": config_id, "judge_model": first["judge_model"], "prompt_id": first["prompt_id"],
            "prompt_version": first["prompt_version"], "prompt_hash": first["prompt_hash"],
            "conversations": len(majorities), "items": len(samples),
            "conversations_with_several_renderings": len(samples) - len(majorities), "with_truth": len(with_truth),
            **metrics,
            "unscored": len(with_truth) - len(scored),
            "unscored_rate": (len(with_truth) - len(scored)) / len(with_truth) if with_truth else None,
            "sample_rows": len(g), "sample_unscored_rate": float(g["passed"].isna().mean()) if len(g) else None,
            "samples_per_item": max((len(v) for v in samples.values()), default=0),
            "self_consistency": _consistency(list(samples.values())),
            "self_consistency_items": sum(sum(x is not None for x in v) >= 2 for v in samples.values()),
        })
    inter = _inter_judge(judges, item_verdicts)
    nl = nl_verdicts_df(run_dir)
    nl_judges = []
    for config_id, g in nl.groupby("judge_config_id", sort=False):
        first = g.iloc[0]
        samples = _verdicts(g, "met", ["conversation_id", "transcript_hash", "assertion_index"])
        maj = [majority(v)[0] for v in samples.values()]
        scored = [m for m in maj if m is not None]
        nl_judges.append({
            "judge_config_id": config_id, "judge_model": first["judge_model"], "prompt_id": first["prompt_id"],
            "prompt_version": first["prompt_version"], "prompt_hash": first["prompt_hash"],
            "conversations": int(g["conversation_id"].nunique()), "assertion_items": len(maj), "n": len(scored),
            "met_rate": sum(scored) / len(scored) if scored else None,
            "met_rate_ci": wilson(sum(scored), len(scored)),
            "unscored_rate": (len(maj) - len(scored)) / len(maj) if maj else None,
            "self_consistency": _consistency(list(samples.values())),
            "sample_unscored_rate": float(g["met"].isna().mean()) if len(g) else None,
            "unscored_reasons": {str(k): int(v) for k, v in g["unscored_reason"].value_counts().head(10).items()},
        })
    return {"run_dir": str(run_dir), "ground_truth": "signal_db_state_assertion",
            "conversations_with_truth": len(truth), "judges": judges, "inter_judge": inter, "nl_judges": nl_judges}


def _inter_judge(judges: list[dict[str, Any]], verdicts: dict[str, dict[str, bool | None]]) -> dict[str, Any]:
    ids = [j["judge_config_id"] for j in judges]
    names = {j["judge_config_id"]: f"{j['judge_model']} {j['prompt_id']}@{j['prompt_version']}" for j in judges}
    common = set.intersection(*(set(verdicts[i]) for i in ids)) if ids else set()
    complete = sorted(c for c in common if all(verdicts[i][c] is not None for i in ids))
    pairs = []
    for a, b in combinations(ids, 2):
        both = [c for c in verdicts[a].keys() & verdicts[b].keys()
                if verdicts[a][c] is not None and verdicts[b][c] is not None]
        ka, ka_ci = cohen_kappa([bool(verdicts[a][c]) for c in both], [bool(verdicts[b][c]) for c in both])
        pairs.append({
            "a": a, "b": b, "a_label": names[a], "b_label": names[b], "n": len(both),
            "agreement": sum(verdicts[a][c] == verdicts[b][c] for c in both) / len(both) if both else None,
            "kappa": ka, "kappa_ci": ka_ci, "flips": flip_matrix(verdicts[a], verdicts[b]),
        })
    return {
        "configs": len(ids), "items_all_scored": len(complete),
        "fleiss_kappa": fleiss_kappa([[bool(verdicts[i][c]) for i in ids] for c in complete]) if len(ids) >= 2 else None,
        "pairs": pairs,
    }


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table of the report."""

    def f(x: Any) -> str:
        return "-" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))

    def ci(x: Any) -> str:
        return "" if not x else f" [{x[0]:.2f},{x[1]:.2f}]"

    lines = [f"ground truth: {report['ground_truth']} ({report['conversations_with_truth']} conversations)"]
    for j in report["judges"]:
        lines.append(f"{j['judge_model']} {j['prompt_id']}@{j['prompt_version']} ({j['judge_config_id']})")
        lines.append(f"  n {j['n']}  accuracy {f(j['accuracy'])}{ci(j['accuracy_ci'])}  kappa {f(j['kappa'])}"
                     f"{ci(j['kappa_ci'])}  sensitivity {f(j['sensitivity'])}{ci(j['sensitivity_ci'])}  "
                     f"specificity {f(j['specificity'])}{ci(j['specificity_ci'])}")
        lines.append(f"  unscored_rate {f(j['unscored_rate'])}  self_consistency {f(j['self_consistency'])} "
                     f"(sample unscored rate {f(j['sample_unscored_rate'])})  samples {j['samples_per_item']}")
    inter = report["inter_judge"]
    if inter["configs"] >= 2:
        lines.append(f"inter-judge: Fleiss kappa {f(inter['fleiss_kappa'])} over {inter['items_all_scored']} items")
        for p in inter["pairs"]:
            flips = p["flips"]
            lines.append(f"  {p['a_label']} vs {p['b_label']}: agreement {f(p['agreement'])} kappa {f(p['kappa'])}"
                         f"{ci(p['kappa_ci'])}"
                         f"  pass->fail {flips['pass']['fail']}  fail->pass {flips['fail']['pass']}")
    for j in report["nl_judges"]:
        lines.append(f"NL {j['judge_model']} {j['prompt_id']}@{j['prompt_version']}: {j['assertion_items']} "
                     f"assertion items, met_rate {f(j['met_rate'])}, unscored_rate {f(j['unscored_rate'])}")
    return "\n".join(lines)


__all__ = ["binary_metrics", "cohen_kappa", "fleiss_kappa", "flip_matrix", "format_report", "judge_report", "wilson"]
