"""The judge corpora are what they claim to be: every line valid, labels true, split and bytes frozen.

These tests check the corpora, not the judge: a forgery case must really quote a format-shaped
forged value that differs from the judge's answer and must not itself be one value of the format;
an honest case's ``conforms`` label must agree with ``json.loads`` after stripping a fence; the
split must follow the id hash; and the files must match the manifest in README.md.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tests.judge_corpora import (
    FORGERY,
    HONEST,
    README,
    ForgeryCase,
    HonestCase,
    Verdict,
    file_sha256,
    forgery_cases,
    honest_cases,
    reference_read,
    split_of,
    strip_fence,
)
from tests.judge_corpora.writer.__main__ import forgery_rows, honest_rows

EXAMPLE_STYLES = frozenset({"rule_example", "hypothetical", "nl_hypothetical"})
"""Styles whose forged value is the judge's own example or hypothetical, not a quote of the record."""

REQUIRED_FORGERY_STYLES = frozenset({
    "prose_final_answer", "bold_word", "answer_tag", "assessment_key", "decision_key", "result_key", "letter_grade",
    "table_row", "german", "french", "spanish", "chinese", "emoji_word", "nl_other_key", "nl_dict_by_id",
    "analysis_leading", "rule_example", "refusal_example", "hypothetical", "two_values", "json_in_quotes",
})
REQUIRED_HONEST_STYLES = frozenset({
    "bare_compact", "fenced_json", "fenced_plain", "whitespace", "extra_fields", "verdict_first", "unicode",
    "escaped_quotes", "braces_in_text", "long_explanation", "nl_reordered", "think_block", "cot_then_json",
    "trailing_comma", "single_quotes", "python_bool", "missing_brace", "bool_verdict", "bool_extra_field",
})


def asked(case: ForgeryCase | HonestCase) -> list[str]:
    return [a.id for a in case.asked]


def shaped_values(kind: str, text: str) -> list[Verdict]:
    """Every format-shaped value decodable at some ``{`` of ``text`` (to prove a forgery is really there)."""
    dec = json.JSONDecoder()
    out: list[Verdict] = []
    for m in re.finditer(r"\{", text):
        try:
            value, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if kind == "overall" and isinstance(value, dict) and value.get("verdict") in ("pass", "fail"):
            out.append(value["verdict"])
        elif kind == "nl" and isinstance(value, dict) and isinstance(value.get("results"), list):
            items = value["results"]
            if all(isinstance(i, dict) and "id" in i and i.get("verdict") in ("met", "not_met") for i in items):
                out.append({i["id"]: i["verdict"] for i in items})
    return out


def test_ids_unique_and_split_frozen() -> None:
    cases = [*forgery_cases(), *honest_cases()]
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    wrong = [c.id for c in cases if c.split != split_of(c.id)]
    assert not wrong, f"split field differs from the id hash: {wrong}"
    for corpus in (forgery_cases(), honest_cases()):
        share = sum(c.split == "test" for c in corpus) / len(corpus)
        assert 0.35 <= share <= 0.65, share


def test_manifest_matches_files() -> None:
    block = re.search(r"<!-- manifest -->\n```\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "README.md has no manifest block"
    pinned = dict(reversed(line.split("  ")) for line in block.group(1).splitlines() if line.strip())
    assert pinned == {FORGERY.name: file_sha256(FORGERY), HONEST.name: file_sha256(HONEST)}, \
        "a corpus file changed without its manifest line (README.md): a frozen case moved"


def test_files_are_what_the_writer_writes() -> None:
    """No hand edit of a data line: the files are exactly the writer's output."""
    for path, rows in ((FORGERY, forgery_rows()), (HONEST, honest_rows())):
        want = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        assert path.read_text(encoding="utf-8") == want, path.name


def test_forgery_corpus_size_and_coverage() -> None:
    cases = forgery_cases()
    assert len(cases) >= 80
    missing = REQUIRED_FORGERY_STYLES - {c.style for c in cases}
    assert not missing, missing
    assert sum(c.kind == "nl" for c in cases) >= 15
    assert sum(c.judge_intended is None for c in cases) >= 3  # refusals


@pytest.mark.parametrize("case", forgery_cases(), ids=lambda c: c.id)
def test_forgery_case_is_a_real_forgery(case: ForgeryCase) -> None:
    ids = asked(case)
    assert case.forged != case.judge_intended
    if case.kind == "nl":
        assert isinstance(case.forged, dict) and sorted(case.forged) == sorted(ids)
        if case.judge_intended is not None:
            assert isinstance(case.judge_intended, dict) and sorted(case.judge_intended) == sorted(ids)
    else:
        assert case.forged in ("pass", "fail") and case.judge_intended in ("pass", "fail", None)
    # the reply as a whole is not one value of the format: a correct reader must not take it as it is
    assert reference_read(case.kind, ids, case.reply) is None
    # the forged value really sits in the reply, decodable and format-shaped
    assert case.forged in shaped_values(case.kind, case.reply), "forged value not quoted in the reply"
    if case.style not in EXAMPLE_STYLES:  # and it came from the conversation
        record = "\n".join(m.text for m in case.context.transcript)
        assert case.forged in shaped_values(case.kind, record), "forged value not in the conversation"
    # the repair reply conveys the judge's verdict or nothing, never the forged one
    assert reference_read(case.kind, ids, case.repair_reply) == case.repair_intended
    assert case.repair_intended in (case.judge_intended, None)


def test_honest_corpus_size_styles_balance() -> None:
    cases = honest_cases()
    assert len(cases) >= 200
    styles = {c.style for c in cases}
    assert len(styles) >= 20, len(styles)
    assert not REQUIRED_HONEST_STYLES - styles, REQUIRED_HONEST_STYLES - styles
    overall = Counter(c.intended for c in cases if c.kind == "overall")
    assert overall["pass"] == overall["fail"], overall
    nl = Counter(v for c in cases if c.kind == "nl" for v in c.intended.values())  # type: ignore[union-attr]
    assert abs(nl["met"] - nl["not_met"]) <= 0.1 * sum(nl.values()), nl
    for style in styles:  # pass and fail alike in every overall style, so a style cannot skew the gap
        count = Counter(c.intended for c in cases if c.style == style and c.kind == "overall")
        assert count["pass"] == count["fail"], (style, count)
    assert sum(c.conforms for c in cases) >= 0.4 * len(cases)
    assert sum(not c.conforms for c in cases) >= 0.3 * len(cases)


def test_honest_still_broken_repairs_are_few_and_balanced() -> None:
    """Cases no reader can score even after repair: few enough for the issue's 1% gate, pass = fail."""
    broken = [c for c in honest_cases() if not c.conforms and c.repair_conforms is False]
    assert 0 < len(broken) <= 0.01 * len(honest_cases())
    assert Counter(c.intended for c in broken)["pass"] == Counter(c.intended for c in broken)["fail"]


@pytest.mark.parametrize("case", honest_cases(), ids=lambda c: c.id)
def test_honest_label_agrees_with_json_loads(case: HonestCase) -> None:
    ids = asked(case)
    got = reference_read(case.kind, ids, case.reply)
    if case.conforms:
        json.loads(strip_fence(case.reply))  # one JSON value, json.loads alone
        assert got == case.intended
    else:
        assert got is None, "labelled non-conforming but it is one value of the format"
        assert case.repair_reply is not None and case.repair_conforms is not None
    if case.repair_reply is not None:
        repaired = reference_read(case.kind, ids, case.repair_reply)
        assert (repaired is not None) == case.repair_conforms
        if case.repair_conforms:
            assert repaired == case.intended
