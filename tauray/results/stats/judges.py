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

The same comparison as tables for the HTML report (``judge_agreement``,
``judge_pairwise``) is made against any reference column, predicates' ``success``
by default. Every statistic comes from ``results.metrics``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from tauray.results.stats.metrics import (
    binary_metrics,
    cohen_kappa,
    fleiss_kappa,
    kappa_interval,
    majority,
    scored_mask,
    unscored_by_truth,
    wilson_interval,
)
from tauray.results.tables.readers import conversations_df, judge_verdicts_df, nl_verdicts_df

# --- tables for the HTML report ---------------------------------------------------------------

JUDGE_KEYS = ["judge_config_id", "judge_model", "prompt_id", "prompt_version"]


def judge_labels(judge_verdicts: pd.DataFrame) -> pd.DataFrame:
    """One verdict per conversation and judge config: the majority of its scored
    samples (NA on a tie or when no sample was scored)."""
    jv = judge_verdicts.copy()
    jv["_yes"] = jv["passed"].eq(True).fillna(False).astype(int)
    jv["_no"] = jv["passed"].eq(False).fillna(False).astype(int)
    out = jv.groupby(["run_id", "conversation_id", *JUDGE_KEYS], dropna=False, sort=True, observed=True).agg(
        samples=("sample_index", "size"), yes=("_yes", "sum"), no=("_no", "sum")).reset_index()
    out["judge_passed"] = pd.array([True if y > n else False if n > y else pd.NA
                                    for y, n in zip(out["yes"], out["no"])], dtype="boolean")
    out["unscored_samples"] = out["samples"] - out["yes"] - out["no"]
    return out.drop(columns=["yes", "no"])


def judge_config_label(row: Any) -> str:
    return f"{row['judge_model']} · {row['prompt_id']}@{row['prompt_version']}"


def config_labels(judge_verdicts: pd.DataFrame) -> dict[str, str]:
    """A label per judge config: model · prompt@version, with the config id's start where two configs
    share that (the same judge and prompt with other samples, pack or options)."""
    configs = [dict(zip(JUDGE_KEYS, k)) for k in
               judge_verdicts[JUDGE_KEYS].drop_duplicates("judge_config_id").itertuples(index=False)]
    shared = Counter(judge_config_label(c) for c in configs)
    return {c["judge_config_id"]: judge_config_label(c) + (f" [{str(c['judge_config_id'])[:8]}]"
                                                           if shared[judge_config_label(c)] > 1 else "")
            for c in configs}


def _judged(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str) -> pd.DataFrame:
    labels = judge_labels(judge_verdicts)
    ref = conv[scored_mask(conv)][["run_id", "conversation_id", reference]]
    return labels.merge(ref, on=["run_id", "conversation_id"], how="left")


def judge_agreement(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str = "success") -> pd.DataFrame:
    """Per judge config: confusion against the reference verdict (predicates'
    ``success`` by default), accuracy and κ over conversations both scored."""
    df = _judged(conv, judge_verdicts, reference)
    labels = config_labels(judge_verdicts)
    rows = []
    for key, g in df.groupby(JUDGE_KEYS, dropna=False, sort=True, observed=True):
        both = g[g["judge_passed"].notna() & g[reference].notna()]
        j, r = both["judge_passed"].astype(bool).to_numpy(), both[reference].astype(bool).to_numpy()
        n = len(both)
        rows.append({**dict(zip(JUDGE_KEYS, key)), "label": labels[key[0]],
                     "judged": len(g), "judge_unscored": int(g["judge_passed"].isna().sum()), "n": n,
                     "tp": int((j & r).sum()), "fp": int((j & ~r).sum()), "fn": int((~j & r).sum()),
                     "tn": int((~j & ~r).sum()), "accuracy": float((j == r).mean()) if n else math.nan,
                     "kappa": cohen_kappa(j, r), "judge_pass_rate": float(j.mean()) if n else math.nan,
                     "reference_pass_rate": float(r.mean()) if n else math.nan})
    return pd.DataFrame(rows, columns=[*JUDGE_KEYS, "label", "judged", "judge_unscored", "n", "tp", "fp", "fn", "tn",
                                       "accuracy", "kappa", "judge_pass_rate", "reference_pass_rate"])


def judge_pairwise(conv: pd.DataFrame, judge_verdicts: pd.DataFrame, reference: str = "success",
                   reference_label: str = "predicates") -> pd.DataFrame:
    """Agreement and κ between every two raters (each judge config and the
    reference), on the conversations both scored: the heatmap's cells."""
    df = _judged(conv, judge_verdicts, reference)
    keyed = df.assign(label=df["judge_config_id"].map(config_labels(judge_verdicts)))
    raters: dict[str, pd.Series] = {}
    for label, g in keyed.groupby("label", sort=True, observed=True):
        raters[label] = g.set_index(["run_id", "conversation_id"])["judge_passed"]
    ref = conv[scored_mask(conv)].set_index(["run_id", "conversation_id"])[reference]
    raters = {reference_label: ref, **raters}
    rows = []
    for la, sa in raters.items():
        for lb, sb in raters.items():
            joined = pd.concat([sa.rename("a"), sb.rename("b")], axis=1, join="inner").dropna()
            x, y = joined["a"].astype(bool).to_numpy(), joined["b"].astype(bool).to_numpy()
            rows.append({"rater_a": la, "rater_b": lb, "n": len(joined),
                         "agreement": float((x == y).mean()) if len(joined) else math.nan,
                         "kappa": cohen_kappa(x, y)})
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "n", "agreement", "kappa"])


# --- the judge-report document ---------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    """The report as JSON can carry it: a missing figure (nan) is None, and so is an interval of one."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return None if all(isinstance(v, float) and math.isnan(v) for v in value) else tuple(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


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


def _item_reasons(g: pd.DataFrame, majorities: dict[str, bool | None]) -> dict[str, str]:
    """conversation -> the most frequent unscored reason among the samples of its unscored item (absent
    when every sample was scored and they tied)."""
    latest = _latest_rendering(g)
    rows = g[g["passed"].isna() & g["conversation_id"].map(lambda c: majorities.get(c, True) is None)]
    rows = rows[rows["transcript_hash"] == rows["conversation_id"].map(latest)]
    return {str(c): str(r.value_counts().index[0]) for c, r in rows.groupby("conversation_id")["unscored_reason"]
            if r.notna().any()}


def _repairs(g: pd.DataFrame, sample_keys: list[str]) -> dict[str, Any]:
    """Judge calls, repair turns (a reply that was not one value of the format got one) and how the format
    was enforced, over the distinct samples of one config's rows (rows written before these were recorded
    count as samples without repair)."""
    cols = [k for k in (*sample_keys, "repair_used", "enforcement", "repair_cost_usd") if k in g.columns]
    samples = g[cols].drop_duplicates(sample_keys)
    repaired = samples["repair_used"].fillna(False).astype(bool) if "repair_used" in samples else None
    repairs = int(repaired.sum()) if repaired is not None else 0
    calls = len(samples) + repairs
    enforced = samples["enforcement"].fillna("unrecorded") if "enforcement" in samples else None
    cost = samples["repair_cost_usd"].dropna() if "repair_cost_usd" in samples else pd.Series(dtype=float)
    return {"judge_calls": calls, "repair_calls": repairs, "repair_share": repairs / calls if calls else None,
            "repair_cost_usd": float(cost.sum()) if len(cost) else None,
            "enforcement": {str(k): int(v) for k, v in enforced.value_counts().items()} if enforced is not None
            else {}}


def _overall_judge(config_id: str, g: pd.DataFrame, truth: dict[str, bool]) -> tuple[dict[str, Any],
                                                                                    dict[str, bool | None]]:
    """One overall-verdict judge config's entry, and its verdict per conversation."""
    first = g.iloc[0]
    samples = _verdicts(g, "passed", ["conversation_id", "transcript_hash"])
    majorities = {c: majority(samples[(c, th)])[0] for c, th in _latest_rendering(g).items()}
    with_truth = [c for c in majorities if c in truth]
    scored = [c for c in with_truth if majorities[c] is not None]
    entry = {
        "judge_config_id": config_id, "judge_model": first["judge_model"], "prompt_id": first["prompt_id"],
        "prompt_version": first["prompt_version"], "prompt_hash": first["prompt_hash"],
        "conversations": len(majorities), "items": len(samples),
        "conversations_with_several_renderings": len(samples) - len(majorities), "with_truth": len(with_truth),
        **binary_metrics([bool(majorities[c]) for c in scored], [truth[c] for c in scored]),
        "unscored": len(with_truth) - len(scored),
        "unscored_rate": (len(with_truth) - len(scored)) / len(with_truth) if with_truth else None,
        "sample_rows": len(g), "sample_unscored_rate": float(g["passed"].isna().mean()) if len(g) else None,
        "samples_per_item": max((len(v) for v in samples.values()), default=0),
        "self_consistency": _consistency(list(samples.values())),
        "self_consistency_items": sum(sum(x is not None for x in v) >= 2 for v in samples.values()),
        "unscored_by_truth": unscored_by_truth(majorities, truth, _item_reasons(g, majorities)),
        **_repairs(g, SAMPLE_KEYS),
    }
    return _json_safe(entry), majorities


def _nl_judge(config_id: str, g: pd.DataFrame) -> dict[str, Any]:
    """One NL-assertion judge config's entry (no ground truth: rates and consistency)."""
    first = g.iloc[0]
    samples = _verdicts(g, "met", ["conversation_id", "transcript_hash", "assertion_index"])
    maj = [majority(v)[0] for v in samples.values()]
    scored = [m for m in maj if m is not None]
    return _json_safe({
        "judge_config_id": config_id, "judge_model": first["judge_model"], "prompt_id": first["prompt_id"],
        "prompt_version": first["prompt_version"], "prompt_hash": first["prompt_hash"],
        "conversations": int(g["conversation_id"].nunique()), "assertion_items": len(maj), "n": len(scored),
        "met_rate": sum(scored) / len(scored) if scored else None,
        "met_rate_ci": wilson_interval(sum(scored), len(scored)),
        "unscored_rate": (len(maj) - len(scored)) / len(maj) if maj else None,
        "self_consistency": _consistency(list(samples.values())),
        "sample_unscored_rate": float(g["met"].isna().mean()) if len(g) else None,
        "unscored_reasons": {str(k): int(v) for k, v in g["unscored_reason"].value_counts().head(10).items()},
        **_repairs(g, SAMPLE_KEYS),
    })


SAMPLE_KEYS = ["conversation_id", "transcript_hash", "sample_index"]


def _by_model(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    by_model: dict[str, dict[str, int]] = {}
    for j in entries:
        m = by_model.setdefault(str(j["judge_model"]), {"judge_calls": 0, "repair_calls": 0})
        m["judge_calls"] += j["judge_calls"]
        m["repair_calls"] += j["repair_calls"]
    return by_model


def repair_calls_by_model(*verdicts: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Judge calls and repair turns per judge model over judge and NL verdict rows (as in
    :func:`judge_report`'s ``repair_calls_by_model``, without the rest of the report)."""
    return _by_model([{"judge_model": g["judge_model"].iloc[0], **_repairs(g, SAMPLE_KEYS)}
                      for frame in verdicts if not frame.empty
                      for _, g in frame.groupby("judge_config_id", sort=False)])


def judge_report(run_dir: Path | str) -> dict[str, Any]:
    """The meta-evaluation of every judge config stored in ``run_dir``."""
    run_dir = Path(run_dir)
    conv = conversations_df(run_dir, columns=["conversation_id", "signal_db_state_assertion", "error_kind"])
    truth = {c: bool(t) for c, t, e in conv.itertuples(index=False) if pd.isna(e) and not pd.isna(t)}
    judges: list[dict[str, Any]] = []
    item_verdicts: dict[str, dict[str, bool | None]] = {}
    for config_id, g in judge_verdicts_df(run_dir).groupby("judge_config_id", sort=False):
        entry, item_verdicts[config_id] = _overall_judge(config_id, g, truth)
        judges.append(entry)
    nl_judges = [_nl_judge(config_id, g) for config_id, g in nl_verdicts_df(run_dir).groupby("judge_config_id",
                                                                                            sort=False)]
    by_model = _by_model([*judges, *nl_judges])
    return {"run_dir": str(run_dir), "ground_truth": "signal_db_state_assertion",
            "conversations_with_truth": len(truth), "judges": judges,
            "inter_judge": _inter_judge(judges, item_verdicts), "nl_judges": nl_judges,
            "repair_calls_by_model": by_model}


def _inter_judge(judges: list[dict[str, Any]], verdicts: dict[str, dict[str, bool | None]]) -> dict[str, Any]:
    ids = [j["judge_config_id"] for j in judges]
    names = {j["judge_config_id"]: f"{j['judge_model']} {j['prompt_id']}@{j['prompt_version']}" for j in judges}
    common = set.intersection(*(set(verdicts[i]) for i in ids)) if ids else set()
    complete = sorted(c for c in common if all(verdicts[i][c] is not None for i in ids))
    pairs = []
    for a, b in combinations(ids, 2):
        both = [c for c in verdicts[a].keys() & verdicts[b].keys()
                if verdicts[a][c] is not None and verdicts[b][c] is not None]
        va, vb = [bool(verdicts[a][c]) for c in both], [bool(verdicts[b][c]) for c in both]
        pairs.append(_json_safe({
            "a": a, "b": b, "a_label": names[a], "b_label": names[b], "n": len(both),
            "agreement": sum(x == y for x, y in zip(va, vb)) / len(both) if both else None,
            "kappa": cohen_kappa(va, vb), "kappa_ci": kappa_interval(va, vb),
            "flips": flip_matrix(verdicts[a], verdicts[b]),
        }))
    fleiss = fleiss_kappa([[bool(verdicts[i][c]) for i in ids] for c in complete]) if len(ids) >= 2 else math.nan
    return {"configs": len(ids), "items_all_scored": len(complete), "fleiss_kappa": _json_safe(fleiss),
            "pairs": pairs}


def _unscored_line(u: dict[str, Any]) -> str:
    """Where a judge's unscored items fall on the ground truth, and why (one line)."""
    parts = []
    for label in ("success", "failure"):
        x = u[label]
        rate = "-" if x["rate"] is None else f"{x['rate']:.3f}"
        why = ", ".join(f"{k} {v}" for k, v in x["reasons"].items())
        parts.append(f"{label} {rate} ({x['unscored']}/{x['items']}{'; ' + why if why else ''})")
    gap = "-" if u["gap"] is None else f"{u['gap']:+.3f}"
    return f"  unscored by truth: {'  '.join(parts)}  gap {gap}"


def _repair_line(j: dict[str, Any]) -> str:
    """Repair turns and enforcement of one config (one line)."""
    enforced = ", ".join(f"{k} {v}" for k, v in j.get("enforcement", {}).items()) or "-"
    share = "-" if j.get("repair_share") is None else f"{j['repair_share']:.3f}"
    return f"  repair calls {j.get('repair_calls', 0)} of {j.get('judge_calls', 0)} ({share})  enforcement {enforced}"


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
        lines.append(_unscored_line(j["unscored_by_truth"]))
        lines.append(_repair_line(j))
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
        lines.append(_repair_line(j))
    for model, m in report.get("repair_calls_by_model", {}).items():
        lines.append(f"repair calls {model}: {m['repair_calls']} of {m['judge_calls']} judge calls")
    return "\n".join(lines)


__all__ = ["JUDGE_KEYS", "config_labels", "flip_matrix", "format_report", "judge_agreement", "judge_config_label", "judge_labels",
           "judge_pairwise", "judge_report", "repair_calls_by_model"]
